import Foundation
import RelatePostgres
import Testing

/// The live server the integration tests use: `RELATE_TEST_URL` and nothing else.
enum TestDatabase {
    struct NotConfigured: Error, CustomStringConvertible {
        var description: String {
            """
            RELATE_TEST_URL is not set, so there is no PostgreSQL server to test against.
            Run ./scripts/test, which starts a throwaway server, or point the tests at one:
              docker compose up -d
              RELATE_TEST_URL=postgresql://relate:relate@127.0.0.1:54329/relate swift test
            """
        }
    }

    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["RELATE_TEST_URL"], !url.isEmpty else {
            throw NotConfigured()
        }
        return url
    }

    static func connect() throws -> Connection {
        try Connection(url: url())
    }

    /// Runs `body` with a connection whose `search_path` is a new schema of its own, so tests
    /// run in parallel without seeing each other's tables; the schema is dropped afterwards.
    static func withSchema<Result>(
        _ body: (_ connection: Connection, _ schema: String) throws -> Result
    ) throws -> Result {
        let connection = try connect()
        let schema = "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try connection.execute("CREATE SCHEMA \(schema)")
        try connection.execute("SET search_path TO \(schema)")
        defer {
            if let cleaner = try? connect() {
                _ = try? cleaner.execute("DROP SCHEMA IF EXISTS \(schema)_other CASCADE")
                _ = try? cleaner.execute("DROP SCHEMA \(schema) CASCADE")
            }
        }
        return try body(connection, schema)
    }

    /// Runs `body` with the URL of a new database of its own (for what is installed once per
    /// database, such as change tracking), dropped afterwards.
    static func withDatabase<Result>(_ body: (_ url: String) throws -> Result) throws -> Result {
        let (url, drop) = try newDatabase()
        defer { drop() }
        return try body(url)
    }

    static func withDatabase<Result>(_ body: (_ url: String) async throws -> Result) async throws -> Result {
        let (url, drop) = try newDatabase()
        defer { drop() }
        return try await body(url)
    }

    private static func newDatabase() throws -> (url: String, drop: () -> Void) {
        let base = try url()
        let name = "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try connect()
        try admin.execute("CREATE DATABASE \(name)")
        let drop = { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        if var components = URLComponents(string: base), components.scheme?.hasPrefix("postgres") == true {
            components.path = "/" + name
            return (components.string ?? base, drop)
        }
        return (base + " dbname=\(name)", drop)
    }

    /// The repository's root, found from this file.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Loads `sql/examples/NAME.sql` into the connection's current schema. The psql
    /// variable of `hard_cases.sql` names its second schema `<schema>_other`.
    static func loadExample(_ name: String, into connection: Connection, schema: String) throws {
        let file = repository.appendingPathComponent("sql/examples/\(name).sql")
        let text = try String(contentsOf: file, encoding: .utf8)
        let script = text
            .split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("\\") }
            .joined(separator: "\n")
            .replacingOccurrences(of: ":\"other_schema\"", with: "\"\(schema)_other\"")
        try connection.executeScript(script)
    }
}
