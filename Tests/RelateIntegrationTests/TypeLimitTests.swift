import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Values at the edges of their types (an adversarial review's findings, each failing
/// before its fix): values Swift cannot negate, a database's own output style, arrays of a
/// shape a Swift array cannot hold, enum arrays held pending.
@Suite struct TypeLimitTests {
    static func count(_ connection: Connection, _ sql: String) throws -> Int {
        try connection.query(sql)[0].decode(Int.self, at: 0)
    }

    /// The least day count the server sends prints; an offset with no negation is refused,
    /// never a trap.
    @Test func extremesPrintAndEncodeWithoutATrap() throws {
        let connection = try TestDatabase.connect()
        let interval = try connection.query("SELECT interval '-2147483648 days'", format: .binary)[0].decode(PostgresInterval.self, at: 0)
        #expect(interval.days == Int32.min)
        #expect(interval.description == "-2147483648 days")
        var buffer: [UInt8] = []
        #expect(throws: PostgresEncodingError.self) { try PostgresTime(microseconds: 0, utcOffset: Int32.min).encode(into: &buffer) }
        #expect(throws: PostgresEncodingError.self) { try PostgresTime(microseconds: 0, utcOffset: 16 * 3600).encode(into: &buffer) }
        let east = try connection.query("SELECT $1::timetz::text", [PostgresTime(hour: 9, minute: 0, utcOffset: 15 * 3600 + 59 * 60)])[0]
        #expect(try east.decode(String.self, at: 0) == "09:00:00+15:59")
    }

    /// A database whose intervals print in another style: a connection reads them in text
    /// all the same (the session takes `postgres`, as it takes ISO dates).
    @Test func intervalsReadUnderADatabasesIntervalStyle() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.execute("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET IntervalStyle = %L', current_database(), 'iso_8601'); END $$")
            let connection = try Connection(url: url)
            let row = try connection.query("SELECT interval '1 mon 2 days 03:04:05'")[0]
            #expect(try row.decode(PostgresInterval.self, at: 0) == PostgresInterval(months: 1, days: 2, microseconds: 11_045_000_000))
        }
    }
}

extension TypeLimitTests {
    /// Values the library sends as their text (an enum array's literal, a JSON document for a
    /// `json` column, an array of ranges) are held pending as a read gives them, and saved.
    @Test func valuesSentAsTextAreHeldPendingAsTheyRead() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TYPE mood AS ENUM ('happy', 'sad');
                CREATE TABLE e (id int PRIMARY KEY, moods mood[], raw json, ranges int4range[]);
                INSERT INTO e VALUES (1, '{happy}', NULL, NULL);
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let row = try #require(try context.object("e", primaryKey: 1))
            let read = try row.value(forKey: "moods")
            context.autocommits = false
            try row.setValue(["sad", "happy"], forKey: "moods")
            try row.setValue(JSONValue.object(["a": 1]), forKey: "raw")
            try row.setValue([PostgresRange(1..<3)], forKey: "ranges")
            #expect(try row.value(forKey: "moods").map { "\(Swift.type(of: $0))" } == read.map { "\(Swift.type(of: $0))" })
            #expect(try row.value(forKey: "moods") as? [String] == ["sad", "happy"])
            #expect(try row.value(forKey: "raw") as? JSONValue == ["a": 1])
            #expect(try row.value(forKey: "ranges") as? [PostgresRange<Int>] == [PostgresRange(1..<3)])
            try row.setValue(["sad", "angry"], forKey: "moods")
            let refused = #expect(throws: RelateError.self) { try context.save() }
            #expect(refused?.kind == .validationFailed)
            try row.setValue(["sad", "happy"], forKey: "moods")
            let added = try context.insert("e", values: ["id": 2, "moods": ["happy"], "raw": JSONValue.array([1, "x"])])
            #expect(try added.value(forKey: "moods") as? [String] == ["happy"])
            try context.save()
            #expect(try Self.count(connection, "SELECT count(*)::int FROM e WHERE moods = '{happy}' AND raw::text = '[1,\"x\"]'") == 1)
            let fresh = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            let saved = try #require(try fresh.object("e", primaryKey: 1))
            #expect(try saved.value(forKey: "moods") as? [String] == ["sad", "happy"])
            #expect(try saved.value(forKey: "raw") as? JSONValue == ["a": 1])
            #expect(try saved.value(forKey: "ranges") as? [PostgresRange<Int>] == [PostgresRange(1..<3)])
            #expect(try row.value(forKey: "moods") as? [String] == ["sad", "happy"])
        }
    }
}
