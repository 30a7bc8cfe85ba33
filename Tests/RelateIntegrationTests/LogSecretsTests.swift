import Foundation
import Logging
import RelatePostgres
import Testing

@testable import Relate

/// Logs without secrets (issue 40, item 3): at every level, down to `.trace`, no bound value
/// and no row value is in a log line or its metadata; statements are logged at
/// `Configuration.queryLogLevel`; `logsValuesForDebugging` shows values, and only it.
@Suite struct LogSecretsTests {
    /// A log handler that keeps every record, at every level.
    struct Capture: LogHandler {
        struct Record: Sendable {
            var level: Logger.Level
            var message: String
            var metadata: Logger.Metadata
            /// The message and every metadata value, as a log backend would print them.
            var text: String { message + " " + metadata.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ") }
        }

        let records: Locked<[Record]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            records.withLock { $0.append(Record(level: event.level, message: "\(event.message)", metadata: merged)) }
        }
    }

    /// A logger at `.trace` that captures into `records`.
    static func logger(_ records: Locked<[Capture.Record]>) -> Logger {
        Logger(label: "relate.test") { _ in Capture(records: records) }
    }

    static let secret = "s3cr3t-Value-4711"

    /// A unit of work that binds the secret, stores it in a row, reads it back, makes the
    /// server refuse it (its DETAIL quotes it, so does a bad cast's message) and has a
    /// trigger quote the row in a notice and a warning.
    static func handleSecrets(_ database: Database) async throws {
        try await database.write { context in
            try context.connection.executeScript(
                """
                CREATE TABLE vault (id int PRIMARY KEY, code text UNIQUE, amount int);
                CREATE FUNCTION vault_said() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE NOTICE 'stored %', NEW.code; RAISE WARNING 'row %', NEW; RETURN NEW; END $$;
                CREATE TRIGGER vault_said BEFORE INSERT ON vault FOR EACH ROW EXECUTE FUNCTION vault_said();
                """)
        }
        try await database.reloadModel()
        try await database.write { context in
            _ = try context.insert("vault", values: ["id": 1, "code": secret, "amount": 1])
        }
        _ = try await database.read { context in
            try context.fetch("vault", where: Key("code") == secret).map { try $0.value(forKey: "code", as: String.self) }
        }
        // The server refuses it: a unique violation (DETAIL: Key (code)=(…) already exists)…
        await #expect(throws: RelateError.self) {
            try await database.write { context in _ = try context.insert("vault", values: ["id": 2, "code": secret]) }
        }
        // … and a value that is not an integer (the message quotes the input).
        await #expect(throws: RelateError.self) {
            try await database.read { try $0.connection.query("SELECT $1::int", [secret]) }
        }
        try await database.read { context in
            _ = try context.connection.pipeline([
                PostgresStatement("SELECT $1::text", [secret]), PostgresStatement("SELECT code FROM vault WHERE code = $1", [secret]),
            ])
        }
    }

    @Test func noBoundOrRowValueIsLoggedAtAnyLevel() async throws {
        try await TestDatabase.withDatabase { url in
            let records = Locked<[Capture.Record]>([])
            var configuration = Configuration(maxConnections: 1, logger: Self.logger(records))
            configuration.preparesStatements = true
            let database = try Database(url: url, configuration: configuration)
            defer { database.close() }
            try await Self.handleSecrets(database)

            let all = records.withLock { $0 }
            // The capture saw the statements, the notices and the failures…
            #expect(all.contains { $0.level == .debug && $0.message == "query" && $0.metadata["relate.sql"] != nil })
            #expect(all.contains { $0.level == .debug && $0.message == "pipeline" })
            #expect(all.contains { $0.level == .warning && $0.metadata["relate.source"] == "server" })
            // … and none holds the value.
            let leaks = all.filter { $0.text.contains(Self.secret) }
            #expect(leaks.isEmpty, "\(leaks.map(\.text))")
        }
    }

    @Test func valuesAreLoggedOnlyWhenAskedForDebugging() async throws {
        try await TestDatabase.withDatabase { url in
            let records = Locked<[Capture.Record]>([])
            var configuration = Configuration(maxConnections: 1, logger: Self.logger(records))
            configuration.logsValuesForDebugging = true
            let database = try Database(url: url, configuration: configuration)
            defer { database.close() }
            try await Self.handleSecrets(database)
            let all = records.withLock { $0 }
            #expect(all.contains { $0.metadata["relate.parameters"].map { "\($0)" }?.contains(Self.secret) ?? false })
            #expect(all.contains { $0.metadata["relate.source"] == "server" && $0.message.contains(Self.secret) })
        }
    }

    @Test func statementsAreLoggedAtTheQueryLogLevel() async throws {
        let records = Locked<[Capture.Record]>([])
        var configuration = Configuration(maxConnections: 1, logger: Self.logger(records))
        configuration.queryLogLevel = .trace
        let database = try Database(url: TestDatabase.url(), configuration: configuration)
        defer { database.close() }
        records.withLock { $0 = [] }
        _ = try await database.read { try $0.connection.query("SELECT $1::int", [42]) }
        let statements = records.withLock { $0 }.filter { $0.metadata["relate.sql"] == "SELECT $1::int" }
        #expect(statements.map(\.level) == [.trace])
        #expect(statements.first?.metadata["relate.parameter_count"] == "1")
    }
}
