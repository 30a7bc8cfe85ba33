import Foundation
import RelatePostgres

/// The by-key tasks of the peer benchmarks: one object by primary key (read from
/// `bench_fetch.rows`) and one attribute updated by primary key (`bench_update.item`),
/// each done for `keys` one after another, so that a run is long enough to time.
package enum KeyedFixture {
    /// 100 keys spread over the 100,000 rows of `bench_fetch.rows` (and within the 1,000 items).
    package static let keys = (0..<100).map { 1 + $0 * 997 % itemCount }
    package static let fetchKeys = (0..<100).map { 1 + $0 * 997 * 101 % Fixture.rowCount }

    package static let itemCount = 1_000
    package static let updateSchema = "bench_update"
    /// The raw side's statements (Relate reads and writes the same columns, names quoted).
    package static let selectRow = "SELECT i, t, f, b, l FROM bench_fetch.rows WHERE i = $1"
    package static let updateHits = "UPDATE bench_update.item SET hits = $2 WHERE id = $1"

    /// `item (id int4 PRIMARY KEY, name text, hits int8)`, 1,000 rows. Each run writes
    /// `hits = stamp + id` for the keys, with a stamp new for every run, so that every
    /// update changes the value (a library that skips unchanged values still writes).
    package static func prepareUpdate() throws -> Connection {
        try Fixture.prepared(
            create: """
                CREATE SCHEMA IF NOT EXISTS bench_update;
                CREATE TABLE IF NOT EXISTS bench_update.item (id int4 PRIMARY KEY, name text NOT NULL, hits int8 NOT NULL)
                """,
            counts: [("bench_update.item", itemCount)],
            fill: """
                TRUNCATE bench_update.item;
                INSERT INTO bench_update.item (id, name, hits) SELECT g, 'item ' || g, 0 FROM generate_series(1, \(itemCount)) AS g
                """)
    }

    /// How many of the keys' rows hold `stamp + id`: what every update side must leave.
    package static func updatedRows(_ connection: Connection, stamp: Int) throws -> Int {
        let result = try connection.query(
            "SELECT count(*) FROM bench_update.item WHERE id = ANY($1) AND hits = $2 + id", [keys, stamp])
        return try result[0].decode(Int.self, at: 0)
    }
}
