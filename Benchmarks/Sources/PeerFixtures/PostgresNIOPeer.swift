import BenchmarkFixtures
import FluentPostgresDriver
import PostgresNIO

/// postgres-nio alone: one `PostgresConnection` kept across runs (as raw libpq keeps its
/// PGconn), the same statements as the raw side, rows read with `query` and
/// `decode(…)` into the same Swift values. The URL is parsed by postgres-kit's
/// `SQLPostgresConfiguration`, as fluent-postgres-driver parses it.
package final class PostgresNIOPeer {
    let connection: PostgresConnection
    let logger = Logger(label: "postgres-nio")

    private init(connection: PostgresConnection) {
        self.connection = connection
    }

    package static func connect(url: String, on eventLoop: any EventLoop) async throws -> PostgresNIOPeer {
        let configuration = try SQLPostgresConfiguration(url: url).coreConfiguration
        let logger = Logger(label: "postgres-nio")
        return PostgresNIOPeer(connection: try await PostgresConnection.connect(
            on: eventLoop, configuration: configuration, id: 1, logger: logger))
    }

    package func close() async throws {
        try await connection.close()
    }

    /// 100,000 rows of `bench_fetch.rows`, every column decoded.
    package func rows() async throws -> [FetchedRow] {
        let result = try await connection.query(PostgresQuery(unsafeSQL: Fixture.select), logger: logger)
        var rows: [FetchedRow] = []
        for try await (i, t, f, b, l) in result.decode((Int, String, Double, Bool, Int).self) {
            rows.append(FetchedRow(i: i, t: t, f: f, b: b, l: l))
        }
        return rows
    }

    /// The parents, then all their children by `parent_id = ANY($1)` (an int4[]), grouped
    /// by parent in a dictionary; each parent's children counted. The raw side's shape.
    package func childCounts() async throws -> [Int] {
        var parents: [(id: Int, name: String)] = []
        let parentRows = try await connection.query(PostgresQuery(unsafeSQL: ObjectFixture.selectParents), logger: logger)
        for try await (id, name) in parentRows.decode((Int, String).self) {
            parents.append((id, name))
        }
        var binds = PostgresBindings(capacity: 1)
        binds.append(parents.map { Int32($0.id) })
        let childRows = try await connection.query(
            PostgresQuery(unsafeSQL: ObjectFixture.selectChildren, binds: binds), logger: logger)
        var children: [Int: [(id: Int, parentID: Int, name: String, amount: Double)]] = [:]
        children.reserveCapacity(parents.count)
        for try await (id, parentID, name, amount) in childRows.decode((Int, Int, String, Double).self) {
            children[parentID, default: []].append((id, parentID, name, amount))
        }
        return parents.map { children[$0.id]?.count ?? 0 }
    }

    /// The pairs in one statement, `INSERT … SELECT $1, unnest($2::int4[])`.
    package func insertPairs(owner: Int, targets: [Int]) async throws -> Int {
        var binds = PostgresBindings(capacity: 2)
        binds.append(Int32(owner))
        binds.append(targets.map { Int32($0) })
        // Drained, so that the statement has completed when this returns.
        _ = try await connection.query(PostgresQuery(unsafeSQL: ObjectFixture.insertPairsUnnest, binds: binds), logger: logger).collect()
        return targets.count
    }

    /// Each key's row by one `SELECT … WHERE i = $1`.
    package func rows(keys: [Int]) async throws -> [FetchedRow] {
        var rows: [FetchedRow] = []
        rows.reserveCapacity(keys.count)
        for key in keys {
            var binds = PostgresBindings(capacity: 1)
            binds.append(Int32(key))
            let result = try await connection.query(PostgresQuery(unsafeSQL: KeyedFixture.selectRow, binds: binds), logger: logger)
            for try await (i, t, f, b, l) in result.decode((Int, String, Double, Bool, Int).self) {
                rows.append(FetchedRow(i: i, t: t, f: f, b: b, l: l))
            }
        }
        return rows
    }

    /// Each key's item set to `hits = stamp + id` by one `UPDATE`.
    package func updateHits(keys: [Int], stamp: Int) async throws -> Int {
        for key in keys {
            var binds = PostgresBindings(capacity: 2)
            binds.append(Int32(key))
            binds.append(stamp + key)
            _ = try await connection.query(PostgresQuery(unsafeSQL: KeyedFixture.updateHits, binds: binds), logger: logger).collect()
        }
        return keys.count
    }
}
