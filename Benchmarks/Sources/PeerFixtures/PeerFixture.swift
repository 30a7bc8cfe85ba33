import BenchmarkFixtures
import NIOPosix
import Relate
import RelatePostgres

/// What a peer benchmark's setup opens: one event loop for Fluent and postgres-nio, a
/// context kept across runs over the task's schema for Relate, a kept connection for raw
/// libpq, Fluent's database and postgres-nio's connection; plus what the task needs. Each
/// benchmark runs in a process of its own and shuts all of it down at the end.
package final class PeerFixture {
    package let raw: RawConnection
    package let fluent: FluentPeer
    package let nio: PostgresNIOPeer
    /// Relate's context: `reset()` at the start of each run, as a user keeps one.
    package let context: Relate.DatabaseContext
    /// The many-to-many's objects (its own context over `bench_m2m`), for that task.
    package let manyToMany: ManyToManyObjects?
    /// A second context over the task's schema, for a Relate side that holds objects.
    package let loaded: Relate.DatabaseContext?
    /// The objects `loaded` holds, fetched before each side (`loadAccounts`).
    package internal(set) var loadedObjects: [DatabaseObject] = []
    /// The many-to-many's targets' keys, in memory for the raw and postgres-nio sides.
    package let targetIDs: [Int]
    /// For the update: a new value every run, so that every update changes the row.
    package private(set) var stamp = 0
    private let eventLoops: MultiThreadedEventLoopGroup

    init(context: Relate.DatabaseContext, manyToMany: ManyToManyObjects? = nil, loaded: Relate.DatabaseContext? = nil) async throws {
        let url = try Fixture.url()
        self.context = context
        self.manyToMany = manyToMany
        self.loaded = loaded
        targetIDs = try manyToMany?.targets.map { target in
            guard let id = try target.value(forKey: "id", as: Int.self) else { throw PeerFailure(description: "a target without id") }
            return id
        } ?? []
        raw = try RawConnection(url: url)
        // One event loop: the work is one task at a time, and this machine has two cores.
        eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        fluent = try FluentPeer(url: url, eventLoops: eventLoops)
        nio = try await PostgresNIOPeer.connect(url: url, on: eventLoops.next())
    }

    /// 100,000 rows: `bench_fetch.rows`.
    package static func fetch() async throws -> PeerFixture {
        try await PeerFixture(context: Relate.DatabaseContext(connection: try Fixture.prepare(), schemas: [Fixture.schema]))
    }

    /// 1,000 parents × 10 children: `bench_prefetch`.
    package static func prefetch() async throws -> PeerFixture {
        try await PeerFixture(context: Relate.DatabaseContext(
            connection: try ObjectFixture.preparePrefetch(), schemas: [ObjectFixture.prefetchSchema]))
    }

    /// One object by key: `bench_fetch.rows` again.
    package static func byKey() async throws -> PeerFixture {
        try await fetch()
    }

    /// One attribute updated by key: `bench_update.item`.
    package static func update() async throws -> PeerFixture {
        try await PeerFixture(context: Relate.DatabaseContext(
            connection: try KeyedFixture.prepareUpdate(), schemas: [KeyedFixture.updateSchema]))
    }

    /// 10,000 pairs into a many-to-many: `bench_m2m`, and Fluent's own pivot table beside it.
    package static func manyToMany() async throws -> PeerFixture {
        let connection = try ObjectFixture.prepareManyToMany()
        try connection.executeScript("""
            CREATE SCHEMA IF NOT EXISTS bench_m2m_fluent;
            CREATE TABLE IF NOT EXISTS bench_m2m_fluent.owner_target (
                id uuid PRIMARY KEY,
                owner_id int4 NOT NULL REFERENCES bench_m2m.owner,
                target_id int4 NOT NULL REFERENCES bench_m2m.target,
                UNIQUE (owner_id, target_id));
            TRUNCATE bench_m2m_fluent.owner_target
            """)
        let objects = try ManyToManyObjects(connection: connection)
        let fixture = try await PeerFixture(context: objects.context, manyToMany: objects)
        try await fixture.fluent.loadManyToMany()
        return fixture
    }

    /// Before each side of the many-to-many task: both helper tables empty, Relate's owner
    /// (its `target` set loaded, empty) and targets fetched afresh.
    package func emptyManyToMany() throws {
        try context.connection.execute("TRUNCATE bench_m2m_fluent.owner_target")
        try manyToMany?.reset()
    }

    /// The target keys paired with the owner in `bench_m2m.owner_target`, or in Fluent's
    /// table: what an attach must leave.
    package func attachedTargets(fluent: Bool) throws -> [Int] {
        let table = fluent ? "bench_m2m_fluent.owner_target" : "bench_m2m.owner_target"
        return try context.connection.query(
            "SELECT target_id FROM \(table) WHERE owner_id = $1 ORDER BY target_id", [ObjectFixture.ownerID]
        ).map { try $0.decode(Int.self, at: 0) }
    }

    /// Before each side of the update task: the value to write next.
    package func nextStamp() {
        stamp += KeyedFixture.itemCount
    }

    /// How many keys' items hold what the last update wrote.
    package func updatedItems() throws -> Int {
        try KeyedFixture.updatedRows(context.connection, stamp: stamp)
    }

    /// Fluent's pool and threads, postgres-nio's connection, then the event loop.
    package func shutdown() async throws {
        try await fluent.shutdown()
        try await nio.close()
        try await eventLoops.shutdownGracefully()
    }
}
