import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// `database.ping()` and `database.status` for readiness probes (issue 40, item 5).
@Suite struct HealthTests {
    @Test func pingIsOneRoundTripOnAPooledConnection() async throws {
        let database = try Database(url: TestDatabase.url(), maxConnections: 1)
        defer { database.close() }
        let roundTrips = try await database.read { $0.connection.roundTrips }
        let time = try await database.ping()
        #expect(time > .zero && time < .seconds(5))
        // The same (only) connection of the pool, one round trip more.
        #expect(try await database.read { $0.connection.roundTrips } == roundTrips + 1)
        #expect(database.status.primary.idle == 1)
    }

    @Test func pingFailsOnALostConnectionAndAClosedDatabase() async throws {
        let database = try Database(url: TestDatabase.url(), maxConnections: 1)
        defer { database.close() }
        let backend = try await database.read { $0.connection.backendProcessID }
        let admin = try TestDatabase.connect()
        _ = try admin.query("SELECT pg_terminate_backend($1::int4)", [backend])
        #expect(try await eventually {
            try admin.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1::int4", [backend])[0].decode(Int.self, at: 0) == 0
        })
        // The ping that finds the connection lost fails (the pool's probe can read the
        // server's goodbye as input, so it may not find it before): the next, on a new
        // connection, answers.
        do {
            _ = try await database.ping()
        } catch {
            #expect((error as? RelateError)?.postgresError?.kind == .connectionClosed)
        }
        #expect(try await database.ping() > .zero)
        database.close()
        await #expect(throws: RelateError.self) { try await database.ping() }
    }

    @Test func statusCountsConnectionsInUseIdleAndWaiting() async throws {
        let database = try Database(url: TestDatabase.url(), maxConnections: 1)
        defer { database.close() }
        var status = database.status
        #expect(status.primary.name == "primary")
        #expect(status.primary.maxConnections == 1)
        #expect((status.primary.inUse, status.primary.idle, status.primary.waiting) == (0, 1, 0))
        #expect(status.replicas.isEmpty && status.changeFeeds.isEmpty && !status.isShuttingDown)

        let release = Locked(false)
        let holding = Task {
            try await database.read { _ in
                while !release.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.005) }
            }
        }
        #expect(try await eventually { database.status.primary.inUse == 1 })
        let waiting = Task { try await database.read { _ in 1 } }
        #expect(try await eventually { database.status.primary.waiting == 1 })
        status = database.status
        #expect((status.primary.inUse, status.primary.idle, status.primary.waiting) == (1, 0, 1))
        #expect(status.unitsInFlight == 2)
        release.withLock { $0 = true }
        try await holding.value
        _ = try await waiting.value
        status = database.status
        #expect((status.primary.inUse, status.primary.idle, status.primary.waiting) == (0, 1, 0))
        #expect(status.unitsInFlight == 0)
    }

    @Test func statusTellsAReplicaThatStoppedAnsweringIsSkipped() async throws {
        var configuration = Configuration(maxConnections: 2)
        // Nothing listens on port 1: the replica refuses every connection.
        configuration.replicas = ["postgresql://nobody@127.0.0.1:1/none"]
        configuration.replicaRetry = .seconds(60)
        let database = try Database(url: TestDatabase.url(), configuration: configuration)
        defer { database.close() }
        #expect(database.status.replicas.map(\.isSkipped) == [false])
        #expect(try await database.read { try $0.connection.query("SELECT 1")[0].decode(Int.self, at: 0) } == 1)
        let replica = try #require(database.status.replicas.first)
        #expect(replica.index == 0 && replica.pool.name == "replica0")
        #expect(replica.isSkipped)
        #expect(replica.replayed == nil && replica.lagBytes == nil)
    }

    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func statusShowsEachChangeFeedAndItsPosition(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTrackingTests.enable(mechanism, on: setup)
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            let changes = try await database.changes(using: mechanism)
            var feeds = database.status.changeFeeds
            #expect(feeds.count == 1)
            #expect(feeds.first?.state == .streaming)
            #expect(feeds.first?.mechanism == mechanism)

            try setup.execute("UPDATE person SET surname = 'King' WHERE id = 1")
            var iterator = changes.makeAsyncIterator()
            _ = try await iterator.next()
            feeds = database.status.changeFeeds
            if mechanism == .logicalDecoding {
                let commit = try LSN(setup.query("SELECT pg_current_wal_lsn()::text")[0].decode(String.self, at: 0))
                let position = try #require(feeds.first?.lastPosition)
                #expect(position > .zero && position <= commit!)
            } else {
                #expect(feeds.first?.lastPosition == nil)
            }
        }
    }
}
