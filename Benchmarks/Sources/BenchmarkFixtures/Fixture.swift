import Foundation
import RelatePostgres

/// One fetched row: the five columns of `bench_fetch.rows` as Swift values.
package struct FetchedRow: Equatable, Sendable {
    package var i: Int
    package var t: String
    package var f: Double
    package var b: Bool
    package var l: Int

    package init(i: Int, t: String, f: Double, b: Bool, l: Int) {
        (self.i, self.t, self.f, self.b, self.l) = (i, t, f, b, l)
    }
}

package enum Fixture {
    package static let rowCount = 100_000
    package static let schema = "bench_fetch"
    package static let table = "bench_fetch.rows"
    /// The statement both sides run, unchanged.
    package static let select = "SELECT i, t, f, b, l FROM bench_fetch.rows"

    package struct SetupError: Error, CustomStringConvertible {
        package var description: String
    }

    /// The server to use: `RELATE_TEST_URL`, as the integration tests use it.
    package static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["RELATE_TEST_URL"], !url.isEmpty else {
            throw SetupError(description: """
                RELATE_TEST_URL is not set: it must name a PostgreSQL server the benchmarks may \
                create the schema \(schema) in (postgresql://user:password@host:port/db). \
                Benchmarks/run starts a throwaway server and sets it when it is missing.
                """)
        }
        return url
    }

    /// A database of a benchmark's own (for what is installed once per database, such as
    /// change tracking), made now: a connection to it, its URL, and `drop()` to remove it.
    package struct OwnDatabase {
        package let connection: Connection
        package let url: String
        let admin: Connection
        let name: String

        package func drop() {
            _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }

    /// A new database named `prefix` and this process's id, on the server of `url()`.
    package static func ownDatabase(_ prefix: String) throws -> OwnDatabase {
        let admin = try Connection(url: try url())
        let name = "\(prefix)_\(ProcessInfo.processInfo.processIdentifier)"
        try admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        try admin.execute("CREATE DATABASE \(name)")
        var databaseURL = try url()
        if var components = URLComponents(string: databaseURL), components.scheme?.hasPrefix("postgres") == true {
            components.path = "/" + name
            databaseURL = components.string ?? databaseURL
        } else {
            databaseURL += " dbname=\(name)"
        }
        return OwnDatabase(connection: try Connection(sameAs: admin, adding: ["dbname": name]), url: databaseURL, admin: admin, name: name)
    }

    /// A connection once a fixture's tables are there and filled: `create` (idempotent)
    /// runs every time; `fill`, then `VACUUM ANALYZE` of `analyzed` (default: the counted
    /// tables), only when a table of `counts` does not hold its number of rows. So a later
    /// process (each benchmark runs in its own) finds the data and leaves it alone. Not
    /// measured.
    package static func prepared(
        create: String, counts: [(table: String, rows: Int)], fill: String, analyzed: [String]? = nil
    ) throws -> Connection {
        let connection = try Connection(url: try url())
        try connection.executeScript(create)
        let isFilled = try counts.allSatisfy { table, rows in
            try connection.query("SELECT count(*) FROM \(table)")[0].decode(Int.self, at: 0) == rows
        }
        if !isFilled {
            try connection.executeScript(fill)
            for table in analyzed ?? counts.map(\.table) { try connection.execute("VACUUM ANALYZE \(table)") }
        }
        return connection
    }

    /// The rows of `table` (`rows` of them) as both the fetch and the walk read them.
    /// Text of 4 to 32 bytes: some fit in a small String, the others allocate.
    package static func fillRows(_ table: String, rows: Int) -> String {
        """
        TRUNCATE \(table);
        INSERT INTO \(table) (i, t, f, b, l)
        SELECT g, substr(md5(g::text), 1, 4 + g % 29), g::float8 / 7, g % 3 = 0, g::int8 * 3000000019
        FROM generate_series(1, \(rows)) AS g
        """
    }

    /// `bench_fetch.rows`, created and filled once.
    package static func prepare() throws -> Connection {
        // `i` is the primary key, so that the rows have an identity as objects (the object
        // benchmarks fetch this table too); the SELECT above still reads it in heap order.
        let connection = try prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS \(schema);
                CREATE TABLE IF NOT EXISTS \(table) (
                    i int4 PRIMARY KEY, t text NOT NULL, f float8 NOT NULL, b bool NOT NULL, l int8 NOT NULL)
                """,
            counts: [(table, rowCount)], fill: fillRows(table, rows: rowCount))
        // A table left by an earlier version of these benchmarks (on a server of your own)
        // has no primary key yet.
        try connection.executeScript("""
            DO $$ BEGIN
                IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = '\(table)'::regclass AND contype = 'p') THEN
                    ALTER TABLE \(table) ADD PRIMARY KEY (i);
                END IF;
            END $$
            """)
        return connection
    }

    /// Both sides must read the same rows into the same values; checked once per process,
    /// outside the measurement.
    package static func check(connection: Connection, raw: RawConnection) throws {
        let viaConnection = try fetchWithConnection(connection)
        let viaRaw = try raw.fetch()
        guard viaConnection.count == rowCount, viaConnection == viaRaw else {
            throw SetupError(description: "Connection and raw libpq disagree: \(viaConnection.count) vs \(viaRaw.count) rows")
        }
        guard let row = viaConnection.first(where: { $0.i == 12_345 }),
              row == FetchedRow(i: 12_345, t: "827ccb0eea8a706c4c34a16891f84e7b".prefix(4 + 12_345 % 29).description,
                                f: 12_345 / 7.0, b: true, l: 12_345 * 3_000_000_019)
        else {
            throw SetupError(description: "row 12345 does not hold the expected values: \(viaConnection.first { $0.i == 12_345 }.map { "\($0)" } ?? "missing")")
        }
    }
}

/// Benchmark 1: through `Connection`, in binary form, as an application would write it.
@inline(never)
package func fetchWithConnection(_ connection: Connection) throws -> [FetchedRow] {
    let result = try connection.query(Fixture.select, format: .binary)
    return try decodeWithConnection(result)
}

@inline(never)
package func decodeWithConnection(_ result: PostgresResult) throws -> [FetchedRow] {
    var rows: [FetchedRow] = []
    rows.reserveCapacity(result.count)
    for row in result {
        rows.append(FetchedRow(
            i: try row.decode(Int.self, at: 0),
            t: try row.decode(String.self, at: 1),
            f: try row.decode(Double.self, at: 2),
            b: try row.decode(Bool.self, at: 3),
            l: try row.decode(Int.self, at: 4)))
    }
    return rows
}
