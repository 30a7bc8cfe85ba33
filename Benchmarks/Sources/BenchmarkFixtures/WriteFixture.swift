import Foundation
import RelatePostgres

/// One row of the bulk insert: the five typed columns of `bench_insert.reading`.
package struct Reading: Sendable {
    package var id: Int
    package var name: String
    package var amount: Double
    package var active: Bool
    package var created: Date
}

/// What a write left in its table, read outside the measurement: every side of a task must
/// leave the same.
package struct TableDigest: Equatable, Sendable {
    package var count: Int
    /// `md5` of every row's text in key order (the insert), or the counts that matter.
    package var digest: String

    package init(count: Int, digest: String) {
        (self.count, self.digest) = (count, digest)
    }

    /// What a side answers itself (the rows it reports): the check reads the table instead.
    package init(written: Int) {
        self.init(count: written, digest: "")
    }
}

/// The writes by the thousand of issue 38, each in a schema of its own: 100,000 rows
/// inserted, 10,000 of 100,000 updated by a condition, 10,000 parents deleted by a
/// condition with their 30,000 children by `ON DELETE CASCADE`. Not measured.
package enum WriteFixture {
    // MARK: - Insert 100,000 rows

    package static let insertSchema = "bench_insert"
    package static let insertedRows = 100_000
    package static let readingColumns = ["id", "name", "amount", "active", "created"]
    /// The raw side's `COPY`; Relate's names the same columns, quoted.
    package static let copyReadings = "COPY bench_insert.reading (id, name, amount, active, created) FROM STDIN (FORMAT binary)"
    /// postgres-nio's statement without COPY: every column one bound array.
    package static let insertReadingsUnnest = """
        INSERT INTO bench_insert.reading (id, name, amount, active, created)
        SELECT * FROM unnest($1::int8[], $2::text[], $3::float8[], $4::bool[], $5::timestamptz[])
        """

    /// The rows every side inserts, made once: text of 9 to 14 bytes, a float, every third
    /// row active, times a quarter second apart (exact in a `Double`, so that every
    /// library's rounding to microseconds agrees).
    package static let readings: [Reading] = (1...insertedRows).map { id in
        Reading(
            id: id, name: "reading \(id)", amount: Double(id) / 7, active: id % 3 == 0,
            created: Date(timeIntervalSince1970: 1_767_225_600 + Double(id) / 4))
    }

    /// `reading (id int8 PRIMARY KEY, name text, amount float8, active bool, created
    /// timestamptz)`, emptied.
    package static func prepareInsert() throws -> Connection {
        let connection = try Connection(url: try Fixture.url())
        try connection.executeScript("""
            CREATE SCHEMA IF NOT EXISTS bench_insert;
            CREATE TABLE IF NOT EXISTS bench_insert.reading (
                id int8 PRIMARY KEY, name text NOT NULL, amount float8 NOT NULL, active bool NOT NULL,
                created timestamptz NOT NULL);
            TRUNCATE bench_insert.reading
            """)
        return connection
    }

    /// The table's row count and the `md5` of all its rows' text in key order.
    package static func insertedDigest(_ connection: Connection) throws -> TableDigest {
        let row = try connection.query("""
            SELECT count(*), coalesce(md5(string_agg(r::text, ',' ORDER BY id)), '')
            FROM bench_insert.reading AS r
            """)[0]
        return TableDigest(count: try row.decode(Int.self, at: 0), digest: try row.decode(String.self, at: 1))
    }

    // MARK: - Update 10,000 of 100,000 rows by a condition

    package static let updateSchema = "bench_setupdate"
    package static let accountCount = 100_000
    /// The condition's bound: `id <= 10000` picks the updated rows.
    package static let updatedRows = 10_000
    package static let updateStamp = "UPDATE bench_setupdate.account SET stamp = $1 WHERE id <= $2"

    /// `account (id int4 PRIMARY KEY, name text, balance int8, stamp int8)`, 100,000 rows.
    package static func prepareUpdate() throws -> Connection {
        try Fixture.prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS bench_setupdate;
                CREATE TABLE IF NOT EXISTS bench_setupdate.account (
                    id int4 PRIMARY KEY, name text NOT NULL, balance int8 NOT NULL, stamp int8 NOT NULL)
                """,
            counts: [("bench_setupdate.account", accountCount)],
            fill: """
                TRUNCATE bench_setupdate.account;
                INSERT INTO bench_setupdate.account SELECT g, 'account ' || g, g * 100, 0 FROM generate_series(1, \(accountCount)) AS g
                """)
    }

    /// How many rows hold `stamp`, and how many of them the condition picks: an update
    /// must leave both at 10,000.
    package static func stampedRows(_ connection: Connection, stamp: Int) throws -> TableDigest {
        let row = try connection.query(
            "SELECT count(*), count(*) FILTER (WHERE id <= $2) FROM bench_setupdate.account WHERE stamp = $1",
            [stamp, updatedRows])[0]
        return TableDigest(count: try row.decode(Int.self, at: 0), digest: "\(try row.decode(Int.self, at: 1)) picked")
    }

    // MARK: - Delete 10,000 parents, cascading to 30,000 children

    package static let deleteSchema = "bench_setdelete"
    package static let parentCount = 100_000
    package static let childrenPerParent = 3
    /// The condition's bound: `id <= 10000` picks the deleted parents.
    package static let deletedParents = 10_000
    package static let deleteParents = "DELETE FROM bench_setdelete.parent WHERE id <= $1"

    /// `parent (id int4 PRIMARY KEY, name text)`, 100,000 rows, and `child (id, parent_id →
    /// parent ON DELETE CASCADE, name)`, 3 a parent spread over the heap (parent p's are p,
    /// p + 100,000 and p + 200,000), an index on the foreign key.
    package static func prepareDelete() throws -> Connection {
        try Fixture.prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS bench_setdelete;
                CREATE TABLE IF NOT EXISTS bench_setdelete.parent (id int4 PRIMARY KEY, name text NOT NULL);
                CREATE TABLE IF NOT EXISTS bench_setdelete.child (
                    id int4 PRIMARY KEY,
                    parent_id int4 NOT NULL REFERENCES bench_setdelete.parent ON DELETE CASCADE,
                    name text NOT NULL);
                CREATE INDEX IF NOT EXISTS child_parent_id ON bench_setdelete.child (parent_id)
                """,
            counts: [("bench_setdelete.parent", parentCount), ("bench_setdelete.child", parentCount * childrenPerParent)],
            fill: """
                TRUNCATE bench_setdelete.child, bench_setdelete.parent;
                \(restoreDeleted(upTo: parentCount))
                """)
    }

    /// The parents up to `bound` and their children, inserted where missing.
    static func restoreDeleted(upTo bound: Int) -> String {
        """
        INSERT INTO bench_setdelete.parent SELECT p, 'parent ' || p FROM generate_series(1, \(bound)) AS p
        ON CONFLICT DO NOTHING;
        INSERT INTO bench_setdelete.child
        SELECT p + k * \(parentCount), p, 'child ' || (p + k * \(parentCount))
        FROM generate_series(1, \(bound)) AS p, generate_series(0, \(childrenPerParent - 1)) AS k
        ON CONFLICT DO NOTHING
        """
    }

    /// Before each side of the delete (not measured): the deleted rows back, the dead ones
    /// vacuumed away so that every side meets the same tables.
    package static func restoreDeleted(_ connection: Connection) throws {
        try connection.executeScript(restoreDeleted(upTo: deletedParents))
        try connection.execute("VACUUM bench_setdelete.parent, bench_setdelete.child")
    }

    /// The parents and children left: a delete must leave 90,000 and 270,000.
    package static func remainingRows(_ connection: Connection) throws -> TableDigest {
        let row = try connection.query(
            "SELECT (SELECT count(*) FROM bench_setdelete.parent), (SELECT count(*) FROM bench_setdelete.child)")[0]
        return TableDigest(count: try row.decode(Int.self, at: 0), digest: "\(try row.decode(Int.self, at: 1)) children")
    }
}
