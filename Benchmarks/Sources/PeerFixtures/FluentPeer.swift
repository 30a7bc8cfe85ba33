import BenchmarkFixtures
import FluentKit
import FluentPostgresDriver

/// Fluent on PostgreSQL through fluent-postgres-driver, set up as a Vapor app sets it up,
/// without Vapor: `Databases` on the benchmark's event loops, `.postgres(url:)` (its pool
/// of one connection per event loop), one `Database` handle. Each task is written as
/// Fluent's documentation writes it, with the async API.
package final class FluentPeer {
    private let threadPool: NIOThreadPool
    private let databases: Databases
    let database: any FluentKit.Database
    /// The many-to-many's owner and its 10,000 targets, loaded once (`loadManyToMany`).
    private var owner: FluentOwner?
    private var targets: [FluentTarget] = []

    package init(url: String, eventLoops: any EventLoopGroup) throws {
        threadPool = NIOThreadPool(numberOfThreads: 1)
        threadPool.start()
        databases = Databases(threadPool: threadPool, on: eventLoops)
        databases.use(try .postgres(url: url), as: .psql)
        guard let database = databases.database(logger: Logger(label: "fluent"), on: eventLoops.any()) else {
            throw PeerFailure(description: "Fluent has no PostgreSQL database configured")
        }
        self.database = database
    }

    /// Closes the pool and stops the thread pool; the event loops are the caller's.
    package func shutdown() async throws {
        await databases.shutdownAsync()
        try await threadPool.shutdownGracefully()
    }

    /// 100,000 rows of `bench_fetch.rows`, every field read.
    package func rows() async throws -> [FetchedRow] {
        try await FluentRow.query(on: database).all().map(Self.fetchedRow)
    }

    /// 1,000 parents with their children (`.with(\.$children)`: one query for the parents,
    /// one for all their children), each parent's children counted.
    package func childCounts() async throws -> [Int] {
        try await FluentParent.query(on: database).with(\.$children).all().map { $0.children.count }
    }

    /// Loads the owner and the 10,000 targets the attach uses (not measured).
    package func loadManyToMany() async throws {
        guard let owner = try await FluentOwner.find(ObjectFixture.ownerID, on: database) else {
            throw PeerFailure(description: "Fluent finds no owner \(ObjectFixture.ownerID)")
        }
        self.owner = owner
        targets = try await FluentTarget.query(on: database).all()
    }

    /// `owner.$targets.attach(targets)`: a pivot model per target, inserted by Fluent in
    /// one statement. Answers the number of targets attached.
    package func attach() async throws -> Int {
        guard let owner else { throw PeerFailure(description: "loadManyToMany() was not called") }
        try await owner.$targets.attach(targets, on: database)
        return targets.count
    }

    /// Each key's row by `find`, every field read.
    package func rows(keys: [Int]) async throws -> [FetchedRow] {
        var rows: [FetchedRow] = []
        rows.reserveCapacity(keys.count)
        for key in keys {
            guard let row = try await FluentRow.find(key, on: database) else {
                throw PeerFailure(description: "Fluent finds no row \(key)")
            }
            rows.append(try Self.fetchedRow(row))
        }
        return rows
    }

    /// Each key's item set to `hits = stamp + id`: `find`, the field set, `save` (an
    /// `UPDATE` of the changed field). Two round trips a key, as Relate's.
    package func updateHits(keys: [Int], stamp: Int) async throws -> Int {
        for key in keys {
            guard let item = try await FluentItem.find(key, on: database) else {
                throw PeerFailure(description: "Fluent finds no item \(key)")
            }
            item.hits = stamp + key
            try await item.save(on: database)
        }
        return keys.count
    }

    private static func fetchedRow(_ row: FluentRow) throws -> FetchedRow {
        FetchedRow(i: try row.requireID(), t: row.t, f: row.f, b: row.b, l: row.l)
    }
}
