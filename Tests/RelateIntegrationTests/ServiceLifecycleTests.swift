import Foundation
import Logging
import RelatePostgres
import ServiceLifecycle
import Testing

@testable import Relate

/// `Database` as a ServiceLifecycle `Service` (issue 40, item 1): in a `ServiceGroup`, a
/// graceful shutdown lets running units commit, refuses new ones, ends live streams
/// without an error, cancels what outlives the grace period on the server, and closes
/// every connection before `run()` returns (`pg_stat_activity` shows none).
@Suite struct ServiceLifecycleTests {
    /// `url` with an `application_name` of its own, so that `pg_stat_activity` tells this
    /// test's connections (the feed's copy it) from every other.
    static func tagged(_ url: String) -> (url: String, name: String) {
        let name = "relate_" + UUID().uuidString.prefix(8).lowercased()
        if url.contains("://") { return (url + (url.contains("?") ? "&" : "?") + "application_name=\(name)", name) }
        return (url + " application_name=\(name)", name)
    }

    /// How many connections named `name` the server has (asked on a connection of its own).
    static func connections(named name: String) throws -> Int {
        let admin = try TestDatabase.connect()
        return try admin.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", [name])[0].decode(Int.self, at: 0)
    }

    /// How an observer's stream ended.
    private enum Ending: Equatable { case running, finished, failed(String) }

    @Test func gracefulShutdownLetsUnitsCommitAndClosesEveryConnection() async throws {
        try await TestDatabase.withDatabase { base in
            let setup = try Connection(url: base)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTracking.enable(on: setup)
            let (url, name) = Self.tagged(base)
            var configuration = Configuration(maxConnections: 3)
            configuration.shutdownGracePeriod = .seconds(20)
            let database = try Database(url: url, configuration: configuration)
            let group = ServiceGroup(services: [database], logger: Logger(label: "test"))
            let running = Task { try await group.run() }

            // A live query, open across the shutdown.
            let ending = Locked(Ending.running)
            let snapshots = Locked(0)
            let stream = try await database.observe(FetchRequest("person"))
            let observer = Task {
                do {
                    for try await _ in stream { snapshots.withLock { $0 += 1 } }
                    ending.withLock { $0 = .finished }
                } catch {
                    ending.withLock { $0 = .failed("\(error)") }
                }
            }
            #expect(try await eventually { snapshots.withLock { $0 } >= 1 })

            // A write unit that is under way when the shutdown begins, and takes a while.
            let write = Task {
                try await database.write { context in
                    try context.connection.execute("SELECT pg_sleep(0.6)")
                    _ = try context.insert("person", values: ["firstname": "Katherine", "surname": "Johnson"])
                }
            }
            #expect(try await eventually { database.status.unitsInFlight == 1 })
            await group.triggerGracefulShutdown()
            #expect(try await eventually { database.status.isShuttingDown })

            // Asked for now: refused at once.
            await #expect {
                try await database.read { try $0.fetch("person").count }
            } throws: { ($0 as? RelateError)?.kind == .shuttingDown }
            await #expect {
                try await database.ping()
            } throws: { ($0 as? RelateError)?.kind == .shuttingDown }

            // The unit under way committed; the stream ended without an error; run() returned.
            try await write.value
            try await running.value
            await observer.value
            #expect(ending.withLock { $0 } == .finished)
            #expect(try setup.query("SELECT count(*) FROM person WHERE surname = 'Johnson'")[0].decode(Int.self, at: 0) == 1)
            #expect(try Self.connections(named: name) == 0)
            #expect(database.status.primary.isClosed)
            #expect(database.status.changeFeeds.isEmpty)
        }
    }

    @Test func unitsThatOutliveTheGracePeriodAreCancelledOnTheServer() async throws {
        let (url, name) = Self.tagged(try TestDatabase.url())
        var configuration = Configuration(maxConnections: 2)
        configuration.shutdownGracePeriod = .milliseconds(300)
        let database = try Database(url: url, configuration: configuration)
        let group = ServiceGroup(services: [database], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        let slow = Task {
            try await database.write { context in
                _ = try context.connection.execute("CREATE TEMPORARY TABLE scratch (n int)")
                return try context.connection.execute("SELECT pg_sleep(600)")
            }
        }
        #expect(try await eventually { try Self.connections(named: name) >= 1 && database.status.primary.inUse == 1 })
        let started = ContinuousClock.now
        await group.triggerGracefulShutdown()
        await #expect {
            try await slow.value
        } throws: { ($0 as? RelateError)?.kind == .shuttingDown }
        try await running.value
        // Cancelled on the server, not waited for: well before pg_sleep's 600 s. The bound is
        // loose on purpose: in the full suite, synchronous tests hold the two threads of
        // Swift's cooperative pool for up to 90 s, and this task waits for one.
        #expect(ContinuousClock.now - started < .seconds(300))
        #expect(try Self.connections(named: name) == 0)
    }

    @Test func cancellingRunShutsDownWithoutGrace() async throws {
        let (url, name) = Self.tagged(try TestDatabase.url())
        var configuration = Configuration(maxConnections: 2)
        configuration.shutdownGracePeriod = .seconds(60)
        let database = try Database(url: url, configuration: configuration)
        let running = Task { try await database.run() }
        let slow = Task { try await database.read { try $0.connection.execute("SELECT pg_sleep(600)") } }
        #expect(try await eventually { database.status.primary.inUse == 1 })
        let started = ContinuousClock.now
        running.cancel()
        try await running.value
        await #expect {
            try await slow.value
        } throws: { ($0 as? RelateError)?.kind == .shuttingDown }
        #expect(ContinuousClock.now - started < .seconds(300))
        #expect(try Self.connections(named: name) == 0)
        await #expect {
            try await database.write { _ in }
        } throws: { ($0 as? RelateError)?.kind == .shuttingDown }
        await #expect {
            try await database.writeWithoutTransaction { _ in }
        } throws: { ($0 as? RelateError)?.kind == .shuttingDown }
    }

    @Test func aDatabaseWithoutAGroupWorksAsBefore() async throws {
        let database = try Database(url: TestDatabase.url(), maxConnections: 1)
        defer { database.close() }
        #expect(try await database.read { try $0.connection.query("SELECT 1")[0].decode(Int.self, at: 0) } == 1)
        #expect(!database.status.isShuttingDown)
        #expect(database.status.unitsInFlight == 0)
    }
}
