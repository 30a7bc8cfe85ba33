import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// libpq's multi-host conninfo across a primary switch, with a real streaming replica.
@Suite(.serialized) struct FailoverTests {
    @Test func unitsOfWorkFollowThePrimaryAcrossASwitch() async throws {
        let pair = try TestServers("replica-pair")
        let setup = try Connection(url: pair.url(port: pair.ports[0]))
        try setup.executeScript("CREATE TABLE item (id int PRIMARY KEY, note text); INSERT INTO item VALUES (1, 'before');")
        try pair.waitForReplica("SELECT count(*) FROM item", toCount: 1)

        let database = try Database(url: pair.failoverURL, schemas: ["public"], maxConnections: 2)
        defer { database.close() }
        let serverPort: @Sendable (DatabaseContext) throws -> Int = { try $0.connection.query("SELECT inet_server_port()")[0].decode(Int.self, at: 0) }
        let before = try await database.read(serverPort)
        #expect(before == pair.ports[0])

        // A unit in flight when the primary dies fails with a connection error…
        let inFlight = Task {
            try await database.write { context in
                _ = try context.insert("item", values: ["id": 2, "note": "in flight"])
                try context.connection.execute("SELECT pg_sleep(30)")
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        try pair.run("stop-primary")
        let error = await #expect(throws: RelateError.self) { try await inFlight.value }
        #expect(error?.postgresError?.kind == .connectionClosed)

        // …and once the replica is promoted, new units run there, the pool having dropped
        // the connections to the old primary; the unit in flight left nothing behind.
        try pair.run("promote")
        try await database.write { _ = try $0.insert("item", values: ["id": 3, "note": "after"]) }
        let after = try await database.read(serverPort)
        #expect(after == pair.ports[1])
        let ids = try await database.read { context in
            try context.fetch("item", orderBy: "id").map { try $0.value(forKey: "id", as: Int.self) ?? 0 }
        }
        #expect(ids == [1, 3])
    }

    /// A `database.observe` stream across a primary switch: the feed's connection dies with
    /// the primary, is opened again on the promoted replica once it takes writes, reads the
    /// answer again (whatever was committed meanwhile) and listens there; the stream never
    /// ends.
    @Test func observeStreamsCarryOnAcrossASwitch() async throws {
        let pair = try TestServers("replica-pair")
        let setup = try Connection(url: pair.url(port: pair.ports[0]))
        try setup.executeScript("CREATE TABLE item (id int PRIMARY KEY, note text); INSERT INTO item VALUES (1, 'before');")
        try ChangeTracking.enable(on: setup)
        let database = try Database(url: pair.failoverURL, schemas: ["public"], maxConnections: 2)
        defer { database.close() }
        let collector = DatabaseObserveTests.Collector(try await database.observe(FetchRequest("item", orderBy: [.ascending("id")])))
        func notes() -> [String] {
            collector.snapshots.withLock { $0.last?.rows.compactMap { $0.values["note"] as? String } ?? [] }
        }
        func wait(for wanted: [String]) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while notes() != wanted, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        }
        try await wait(for: ["before"])
        try setup.execute("INSERT INTO item VALUES (2, 'primary')")
        try await wait(for: ["before", "primary"])
        #expect(notes() == ["before", "primary"])
        try pair.waitForReplica("SELECT count(*) FROM item", toCount: 2)

        try pair.run("stop-primary")
        try await Task.sleep(for: .seconds(1))
        try pair.run("promote")
        let promoted = try Connection(url: pair.url(port: pair.ports[1]))
        // Committed while the feed may still be away: read again once it is back.
        try promoted.execute("INSERT INTO item VALUES (3, 'after')")
        try await wait(for: ["before", "primary", "after"])
        #expect(notes() == ["before", "primary", "after"])
        // And it listens on the new primary.
        try await Task.sleep(for: .milliseconds(500))
        try promoted.execute("UPDATE item SET note = 'later' WHERE id = 1")
        try await wait(for: ["later", "primary", "after"])
        #expect(notes() == ["later", "primary", "after"])
        #expect(!collector.task.isCancelled)
    }

    /// A live context across a primary switch: `processChanges()` throws while no server
    /// takes writes, then opens its connection again on the promoted replica, reads
    /// everything again (what was committed meanwhile included), listens there, and writes.
    @Test func aLiveContextCarriesOnAcrossASwitch() async throws {
        let pair = try TestServers("replica-pair")
        let setup = try Connection(url: pair.url(port: pair.ports[0]))
        try setup.executeScript("CREATE TABLE item (id int PRIMARY KEY, note text); INSERT INTO item VALUES (1, 'before');")
        try ChangeTracking.enable(on: setup)
        let context = try DatabaseContext(url: pair.failoverURL, schemas: ["public"])
        try context.startTrackingChanges(using: .triggers)
        let live = try context.liveFetch(FetchRequest("item", orderBy: [.ascending("id")]))
        let first = try #require(try context.object("item", primaryKey: 1))
        func notes() throws -> [String] { try live.objects.map { try $0.value(forKey: "note", as: String.self) ?? "" } }
        #expect(try notes() == ["before"])
        try pair.waitForReplica("SELECT count(*) FROM pg_trigger WHERE tgname = 'relate_insert'", toCount: 1)

        try pair.run("stop-primary")
        try await Task.sleep(for: .seconds(1))
        try pair.run("promote")
        let promoted = try Connection(url: pair.url(port: pair.ports[1]))
        try promoted.execute("INSERT INTO item VALUES (2, 'after')")
        try promoted.execute("UPDATE item SET note = 'changed' WHERE id = 1")
        var failures = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            do {
                _ = try context.waitForChanges(timeout: .milliseconds(200))
                if try notes() == ["changed", "after"] { break }
            } catch {
                failures += 1
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        #expect(try notes() == ["changed", "after"])
        #expect(try first.value(forKey: "note", as: String.self) == "changed")
        // It listens on the new primary, and writes there.
        try promoted.execute("UPDATE item SET note = 'later' WHERE id = 2")
        var later: [String] = []
        for _ in 0..<50 where later != ["changed", "later"] {
            _ = try context.waitForChanges(timeout: .milliseconds(100))
            later = try notes()
        }
        #expect(later == ["changed", "later"])
        try first.setValue("written", forKey: "note")
        #expect(try promoted.query("SELECT note FROM item WHERE id = 1")[0].decode(String.self, at: 0) == "written")
        #expect(failures < 100)
    }
}
