import Foundation
import Logging
import RelatePostgres
import ServiceLifecycle
import Testing

@testable import Relate

/// A `Database`'s background work (issue 40, "How to shape it"): the pool's housekeeping and
/// checkout timers, the live queries' feed, the change feeds' ends are jobs of
/// ``BackgroundTasks``: children of `run()`'s task group in a `ServiceGroup`, so that `run()`
/// returns only once every one ended (gracefully or cancelled); without a group, tasks of
/// their own that `close()` ends.
@Suite struct BackgroundWorkTests {
    /// Reads a stream to its end on a task of its own: how many elements came, and how it
    /// ended (waited for with `eventually`, so that a stream that never ends fails the test
    /// rather than hangs it).
    final class Reader: Sendable {
        enum Ending: Equatable, Sendable { case running, finished, failed(String) }
        let count = Locked(0)
        let ending = Locked(Ending.running)

        init<Element: Sendable>(_ stream: AsyncThrowingStream<Element, any Error>) {
            let (count, ending) = (self.count, self.ending)
            Task {
                do {
                    for try await _ in stream { count.withLock { $0 += 1 } }
                    ending.withLock { $0 = .finished }
                } catch {
                    ending.withLock { $0 = .failed("\(error)") }
                }
            }
        }

        /// Whether the stream finished without an error, waiting for it.
        func finishes() async throws -> Bool {
            _ = try await eventually { ending.withLock { $0 } != .running }
            return ending.withLock { $0 } == .finished
        }
    }

    /// A pool with a housekeeping loop (an idle timeout, a connection kept ahead) and
    /// checkout timers, over the tracked tables of ``ChangeTrackingTests/schema``.
    private static func database(_ base: String, grace: Duration) throws -> (Database, name: String, setup: Connection) {
        let setup = try Connection(url: base)
        try setup.executeScript(ChangeTrackingTests.schema)
        try ChangeTracking.enable(on: setup)
        let (url, name) = ServiceLifecycleTests.tagged(base)
        var configuration = Configuration(maxConnections: 2)
        configuration.minIdleConnections = 1
        configuration.idleTimeout = .seconds(30)
        configuration.checkoutTimeout = .seconds(120)
        configuration.shutdownGracePeriod = grace
        return (try Database(url: url, configuration: configuration), name, setup)
    }

    @Test func afterAGracefulShutdownNoBackgroundTaskRuns() async throws {
        try await TestDatabase.withDatabase { base in
            let (database, name, setup) = try Self.database(base, grace: .seconds(20))
            let group = ServiceGroup(services: [database], logger: Logger(label: "test"))
            let running = Task { try await group.run() }
            #expect(try await eventually { database.background.hasGroup })
            // The housekeeping loop started with the pool, before run(): a task of its own,
            // which run()'s group awaits. What starts from now on joins the group.
            #expect(database.background.detachedCount == 1)

            let observer = Reader(try await database.observe(FetchRequest("person")))
            let changes = Reader(try await database.changes())
            #expect(try await eventually { observer.count.withLock { $0 } >= 1 })
            // The housekeeping, the live queries' feed, and the ends of both change feeds.
            #expect(database.background.count >= 4)
            #expect(database.background.detachedCount == 1)

            let write = Task {
                try await database.write { context in
                    try context.connection.execute("SELECT pg_sleep(0.5)")
                    _ = try context.insert("person", values: ["firstname": "Mary", "surname": "Jackson"])
                }
            }
            #expect(try await eventually { database.status.unitsInFlight == 1 })
            await group.triggerGracefulShutdown()
            try await write.value
            try await running.value

            #expect(database.background.count == 0)
            #expect(database.background.detachedCount == 0)
            #expect(!database.background.hasGroup)
            #expect(try await observer.finishes())
            #expect(try await changes.finishes())
            #expect(try ServiceLifecycleTests.connections(named: name) == 0)
            #expect(try setup.query("SELECT count(*) FROM person WHERE surname = 'Jackson'")[0].decode(Int.self, at: 0) == 1)
        }
    }

    @Test func cancellingRunEndsEveryBackgroundTask() async throws {
        try await TestDatabase.withDatabase { base in
            let (database, name, _) = try Self.database(base, grace: .seconds(60))
            let running = Task { try await database.run() }
            #expect(try await eventually { database.background.hasGroup })
            let observer = Reader(try await database.observe(FetchRequest("person")))
            #expect(try await eventually { observer.count.withLock { $0 } >= 1 })
            let slow = Task { try await database.read { try $0.connection.execute("SELECT pg_sleep(600)") } }
            #expect(try await eventually { database.status.primary.inUse == 1 })
            #expect(database.background.count >= 3)

            running.cancel()
            try await running.value
            #expect(database.background.count == 0)
            #expect(database.background.detachedCount == 0)
            await #expect {
                try await slow.value
            } throws: { ($0 as? RelateError)?.kind == .shuttingDown }
            #expect(try await observer.finishes())
            #expect(try ServiceLifecycleTests.connections(named: name) == 0)
        }
    }

    @Test func withoutAGroupTheWorkRunsAndCloseEndsIt() async throws {
        try await TestDatabase.withDatabase { base in
            let setup = try Connection(url: base)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTracking.enable(on: setup)
            let (url, name) = ServiceLifecycleTests.tagged(base)
            var configuration = Configuration(maxConnections: 1)
            configuration.idleTimeout = .seconds(30)
            configuration.checkoutTimeout = .milliseconds(300)
            let database = try Database(url: url, configuration: configuration)

            // Live queries work: a commit reaches the observer.
            let observer = Reader(try await database.observe(FetchRequest("person")))
            #expect(try await eventually { observer.count.withLock { $0 } >= 1 })
            try setup.execute("INSERT INTO person (firstname, surname) VALUES ('Dorothy', 'Vaughan')")
            #expect(try await eventually { observer.count.withLock { $0 } >= 2 })

            // The checkout timer works: a read behind the only connection gives up.
            let slow = Task { try await database.read { try $0.connection.execute("SELECT pg_sleep(600)") } }
            #expect(try await eventually { database.status.primary.inUse == 1 })
            await #expect {
                try await database.read { _ in 1 }
            } throws: { ($0 as? RelateError)?.kind == .checkoutTimeout }
            slow.cancel()
            _ = try? await slow.value

            // All of it on tasks of their own, until close().
            #expect(!database.background.hasGroup)
            #expect(database.background.detachedCount >= 3)
            database.close()
            #expect(try await eventually { database.background.count == 0 && database.background.detachedCount == 0 })
            #expect(try await observer.finishes())
            #expect(try await eventually { try ServiceLifecycleTests.connections(named: name) == 0 })
            // Closed: nothing starts again.
            await #expect(throws: RelateError.self) { try await database.changes() }
            #expect(database.background.count == 0)
        }
    }
}
