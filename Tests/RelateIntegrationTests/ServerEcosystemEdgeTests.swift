import Configuration
import Foundation
import InMemoryTracing
import Logging
import MetricsTestKit
import RelateConfiguration
import RelatePostgres
import ServiceLifecycle
import Testing
import Tracing

@testable import Relate

/// The server ecosystem at its edges (an adversarial review's findings, each failing before
/// its fix, and what it found to hold): change feeds opened as the pool's connections are,
/// settings out of range, a script's literals kept out of spans, the pool's gauges after a
/// checkout that got no connection, units waiting when a shutdown begins.
@Suite struct ServerEcosystemEdgeTests {
    /// `url` without its password, and the password.
    static func withoutPassword(_ url: String) throws -> (url: String, password: String) {
        var components = try #require(URLComponents(string: url))
        let password = try #require(components.password)
        components.password = nil
        return (try #require(components.string), password)
    }

    // MARK: - Configuration: the `password` key

    /// `Database(config:)` with the password under its documented `password` key (the URL
    /// without one): units work, and a change feed of the same database should too.
    @Test func aChangeFeedConnectsWithTheConfiguredPassword() async throws {
        try await TestDatabase.withDatabase { base in
            let setup = try Connection(url: base)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTracking.enable(on: setup)
            let (url, password) = try Self.withoutPassword(base)
            let provider = InMemoryProvider(values: [
                "database.url": .init(.string(url), isSecret: true),
                "database.password": .init(.string(password), isSecret: true),
            ])
            let database = try Database(config: ConfigReader(provider: provider).scoped(to: "database"))
            defer { database.close() }
            // The pool honours the password…
            #expect(try await database.ping() > .zero)
            // … the change feed (and the live queries' feed) should too.
            await #expect(throws: Never.self) {
                let stream = try await database.changes()
                _ = stream
            }
            await #expect(throws: Never.self) {
                _ = try await database.observe(FetchRequest("person"))
            }
        }
    }

    // MARK: - Configuration: durations out of range

    /// A duration too large for `Duration`'s milliseconds, or `inf` (an operator's "no
    /// limit"), is refused naming the key: it trapped, and the process died at start-up.
    @Test func aHugeDurationIsRefusedNamingItsKey() throws {
        let huge = InMemoryProvider(values: ["statementTimeout": 1e300])
        let error = #expect(throws: RelateError.self) { try Relate.Configuration(config: ConfigReader(provider: huge)) }
        #expect(error?.kind == .invalidRequest && error?.key == "statementTimeout", "\(error.map { "\($0)" } ?? "")")
        let infinite = EnvironmentVariablesProvider(environmentVariables: ["DATABASE_STATEMENT_TIMEOUT": "inf"])
        #expect(throws: RelateError.self) { try Relate.Configuration(config: ConfigReader(provider: infinite).scoped(to: "database")) }
        let fine = InMemoryProvider(values: ["statementTimeout": 2.5])
        #expect(try Relate.Configuration(config: ConfigReader(provider: fine)).statementTimeout == .milliseconds(2_500))
    }

    // MARK: - Shutdown: units waiting for a connection

    /// A lock another connection holds until `open()`: a unit that asks for it holds its
    /// connection until then, however slow the machine (a sleep of a fixed time ended
    /// before the test looked, in the full suite).
    final class Gate {
        let key = Int.random(in: 1...Int(Int32.max))
        private let holder: Connection
        /// On the database of `url` (advisory locks are a database's own).
        init(url: String? = nil) throws {
            holder = try url.map { try Connection(url: $0) } ?? TestDatabase.connect()
            try holder.execute("SELECT pg_advisory_lock($1)", [key])
        }
        /// The statement a unit waits on the gate with.
        var waitSQL: String { "SELECT pg_advisory_xact_lock(\(key))" }
        func open() throws { try holder.execute("SELECT pg_advisory_unlock($1)", [key]) }
    }

    /// A database of one connection run by a service group (its shutdown's grace period
    /// `grace`): a unit holds the connection running `holding`, another (`SELECT 42`) waits.
    static func oneHeldOneWaiting(grace: Duration, holding sql: String) async throws
        -> (group: ServiceGroup, running: Task<Void, any Error>, holder: Task<Int, any Error>, waiter: Task<Int, any Error>)
    {
        var configuration = Configuration(maxConnections: 1)
        configuration.shutdownGracePeriod = grace
        let database = try Database(url: TestDatabase.url(), configuration: configuration)
        let group = ServiceGroup(services: [database], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        let holder = Task { try await database.read { try $0.connection.query(sql).count } }
        #expect(try await eventually { database.status.primary.inUse == 1 })
        let waiter = Task { try await database.read { try $0.connection.query("SELECT 42")[0].decode(Int.self, at: 0) } }
        #expect(try await eventually { database.status.primary.waiting == 1 })
        return (group, running, holder, waiter)
    }

    /// "units already running — and those already waiting for a connection — go on": one
    /// holds the only connection, another waits for it when the shutdown begins; both finish.
    @Test func aUnitWaitingForAConnectionWhenTheShutdownBeginsGoesOn() async throws {
        let gate = try Gate()
        let (group, running, holder, waiter) = try await Self.oneHeldOneWaiting(grace: .seconds(30), holding: gate.waitSQL)
        await group.triggerGracefulShutdown()
        try gate.open()
        #expect(try await holder.value == 1)
        #expect(try await waiter.value == 42)
        try await running.value
    }

    /// At the grace period's end, a unit still waiting for a connection throws shuttingDown.
    @Test func aUnitStillWaitingAtTheGracePeriodsEndThrowsShuttingDown() async throws {
        let (group, running, holder, waiter) = try await Self.oneHeldOneWaiting(grace: .milliseconds(300), holding: "SELECT pg_sleep(600)")
        await group.triggerGracefulShutdown()
        await #expect { try await holder.value } throws: { ($0 as? RelateError)?.kind == .shuttingDown }
        await #expect { try await waiter.value } throws: { ($0 as? RelateError)?.kind == .shuttingDown }
        try await running.value
    }

    // MARK: - Tracing: a script's literals

    static let secret = "s3cr3t-Value-4711"

    /// A script's text is kept out of `db.query.text` because it "may hold values"; the error
    /// recorded on the same span (and on the unit's) should not bring it back.
    @Test func aFailedScriptsLiteralsAreNotRecordedOnItsSpan() async throws {
        let tracer = InMemoryTracer()
        var configuration = Configuration(maxConnections: 1)
        configuration.tracer = tracer
        let database = try Database(url: TestDatabase.url(), configuration: configuration)
        defer { database.close() }
        tracer.clearAll()
        await #expect(throws: RelateError.self) {
            try await database.read { context in
                try context.connection.executeScript("SELECT '\(Self.secret)' AS code; SELECT 1/0")
            }
        }
        let spans = tracer.finishedSpans
        let script = try #require(spans.first { $0.kind == .client && $0.status?.code == .error })
        #expect(script.attributes.get("db.query.text") == nil)
        for span in spans {
            for recorded in span.errors {
                let text = "\(recorded.error)"
                #expect(!text.contains(Self.secret), "span \(span.operationName) recorded: \(text)")
            }
        }
    }

    // MARK: - Metrics: the pool's gauges after a checkout that ends without a connection

    /// A task in line that is cancelled leaves the line: `relate.pool.waiting` should say so
    /// (Database.status does), not keep counting it until some other checkout or release.
    @Test func theWaitingGaugeDropsWhenAWaiterIsCancelled() async throws {
        let metrics = TestMetrics()
        var configuration = Configuration(maxConnections: 1)
        configuration.metricsFactory = metrics
        let database = try Database(url: TestDatabase.url(), configuration: configuration)
        defer { database.close() }
        let gate = try Gate()
        let wait = gate.waitSQL
        let holder = Task { try await database.read { try $0.connection.execute(wait) } }
        #expect(try await eventually { database.status.primary.inUse == 1 })
        let waiter = Task { try await database.read { _ in 1 } }
        #expect(try await eventually { database.status.primary.waiting == 1 })
        waiter.cancel()
        _ = try? await waiter.value
        #expect(database.status.primary.waiting == 0)
        let waiting = try metrics.expectGauge("relate.pool.waiting", [("pool", "primary")])
        // While the holder still holds the connection: the gauge should read 0.
        #expect(database.status.primary.inUse == 1)
        #expect(waiting.lastValue == 0, "relate.pool.waiting reads \(waiting.lastValue ?? -1) with nobody waiting")
        try gate.open()
        _ = try? await holder.value
    }

    /// A connection that cannot be opened fails its checkout: `relate.pool.waiting` should
    /// not keep counting that task afterwards.
    @Test func theWaitingGaugeDropsWhenAnOpeningFails() async throws {
        try await TestDatabase.withDatabase { url in
            let name = try #require(URLComponents(string: url)?.path.dropFirst())
            let metrics = TestMetrics()
            var configuration = Configuration(maxConnections: 2)
            configuration.metricsFactory = metrics
            let database = try Database(url: url, configuration: configuration)
            defer { database.close() }
            let gate = try Gate(url: url)
            let admin = try TestDatabase.connect()
            try admin.execute("ALTER DATABASE \(name) ALLOW_CONNECTIONS false")
            defer { _ = try? admin.execute("ALTER DATABASE \(name) ALLOW_CONNECTIONS true") }
            let wait = gate.waitSQL
        let holder = Task { try await database.read { try $0.connection.execute(wait) } }
            #expect(try await eventually { database.status.primary.inUse == 1 })
            await #expect(throws: RelateError.self) { try await database.read { _ in 1 } }
            #expect(database.status.primary.waiting == 0)
            let waiting = try metrics.expectGauge("relate.pool.waiting", [("pool", "primary")])
            #expect(waiting.lastValue == 0, "relate.pool.waiting reads \(waiting.lastValue ?? -1) after the failed checkout")
            try gate.open()
            _ = try? await holder.value
        }
    }

    /// `queryLogLevel = .trace` keeps statements out of a debug log ("`.trace` keeps
    /// statements out of a debug log"): the change feed's statements too.
    @Test func aChangeFeedLogsItsStatementsAtTheQueryLogLevel() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTracking.enable(on: setup)
            let records = Locked<[LogSecretsTests.Capture.Record]>([])
            var configuration = Configuration(maxConnections: 1, logger: LogSecretsTests.logger(records))
            configuration.queryLogLevel = .trace
            let database = try Database(url: url, configuration: configuration)
            defer { database.close() }
            records.withLock { $0 = [] }
            let stream = try await database.changes()
            _ = stream
            let statements = records.withLock { $0 }.filter { $0.metadata["relate.sql"] != nil }
            #expect(!statements.isEmpty)
            let louder = statements.filter { $0.level != .trace }
            #expect(louder.isEmpty, "\(louder.map { "\($0.level) \($0.text)" })")
        }
    }
}
