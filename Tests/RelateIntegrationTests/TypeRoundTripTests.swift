import Foundation
import RelatePostgres
import Testing

/// Every type of the mapping goes to the server as a parameter and comes back as a result,
/// in text and in binary form, NULL included.
@Suite struct TypeRoundTripTests {
    static let formats: [PostgresFormat] = [.text, .binary]

    func roundTrip<T: PostgresCodable & Equatable>(
        _ value: T, as sqlType: String, format: PostgresFormat, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let connection = try TestDatabase.connect()
        let result = try connection.query("SELECT $1::\(sqlType), NULL::\(sqlType)", [value], format: format)
        #expect(try result[0].decode(T.self, at: 0) == value, "\(sqlType) in \(format)", sourceLocation: sourceLocation)
        #expect(try result[0].decode(T?.self, at: 1) == nil, sourceLocation: sourceLocation)
        #expect(try result[0].value(at: 1) == nil, sourceLocation: sourceLocation)
    }

    @Test(arguments: formats)
    func integers(format: PostgresFormat) throws {
        for type in ["int2", "int4", "int8"] {
            try roundTrip(0, as: type, format: format)
            try roundTrip(-32768, as: type, format: format)
            try roundTrip(32767, as: type, format: format)
        }
        try roundTrip(Int(Int32.min), as: "int4", format: format)
        try roundTrip(Int.max, as: "int8", format: format)
        try roundTrip(Int.min, as: "int8", format: format)
        let connection = try TestDatabase.connect()
        let row = try connection.query("SELECT 1::int2, 2::int4, 3::int8, 4::oid", format: format)[0]
        for column in 0..<4 {
            #expect(try row.value(at: column) as? Int == column + 1)
        }
    }

    @Test(arguments: formats)
    func floatingPoint(format: PostgresFormat) throws {
        for value in [0.0, -1.5, 0.1, 1e-300, 1.7976931348623157e308, .pi, .infinity, -.infinity] {
            try roundTrip(value, as: "float8", format: format)
        }
        for value: Float in [0, 0.1, -3.25, .greatestFiniteMagnitude, .infinity] {
            try roundTrip(value, as: "float4", format: format)
        }
        let connection = try TestDatabase.connect()
        let row = try connection.query("SELECT $1::float8, 'NaN'::float4", [Double.nan], format: format)[0]
        #expect(try row.decode(Double.self, at: 0).isNaN)
        #expect(try (row.value(at: 1) as? Float)?.isNaN == true)
    }

    @Test(arguments: formats)
    func numeric(format: PostgresFormat) throws {
        for text in ["0", "1", "-1", "123.456", "0.000001", "-98765432109876543210.0123456789", "10000", "0.5", "100000000"] {
            try roundTrip(Decimal(string: text)!, as: "numeric", format: format)
        }
        let connection = try TestDatabase.connect()
        let row = try connection.query("SELECT 12.50::numeric(6,2), 'NaN'::numeric", format: format)[0]
        #expect(try row.value(at: 0) as? Decimal == Decimal(string: "12.5"))
        #expect(try row.decode(Decimal.self, at: 1).isNaN)
    }

    /// `numeric` read from its digits (`Decimal.exact`) is what Foundation's parse of its
    /// text gives, in both forms: the same value and the same description, for every scale,
    /// trailing zeros, and the 64-bit and exponent limits where the full path takes over.
    @Test(arguments: formats)
    func numericReadFromItsDigits(format: PostgresFormat) throws {
        let connection = try TestDatabase.connect()
        let result = try connection.query(
            """
            SELECT v, v::text FROM (
                SELECT (CASE WHEN g % 3 = 0 THEN -1 ELSE 1 END) * ((g::int8 * 2654435761) % (10::int8 ^ (g % 18 + 1))::int8)::numeric
                    * 10::numeric ^ (g % 23 - 12) AS v
                FROM generate_series(1, 3000) g
                UNION ALL
                SELECT unnest('{0, 0.000, -0.5, 1500, 1.500, 18446744073709551615, 18446744073709551616, -9999999999999999999,
                    99999999999999999999, 0.0000000000000000001, 123456789012345678901234567890.5, 1e100, 1e-100, 1e127, 1e-128}'::numeric[])
            ) s
            """, format: format)
        #expect(result.count == 3015)
        for row in result {
            let text = try row.decode(String.self, at: 1)
            let parsed = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
            let value = try row.decode(Decimal.self, at: 0)
            #expect(value == parsed && value.description == parsed.description, "\(text): \(value)")
        }
    }

    @Test(arguments: formats)
    func textTypes(format: PostgresFormat) throws {
        for type in ["text", "varchar", "varchar(40)", "name"] {
            try roundTrip("Grace Hopper", as: type, format: format)
            try roundTrip("", as: type == "name" ? "text" : type, format: format)
        }
        try roundTrip("abc  ", as: "char(5)", format: format)
        let connection = try TestDatabase.connect()
        let row = try connection.query(#"SELECT 'x'::"char", '{"a": [1, 2]}'::json, '{"a": [1, 2]}'::jsonb"#, format: format)[0]
        #expect(try row.value(at: 0) as? String == "x")
        // json and jsonb read as JSONValue untyped, and as their text when asked for a String.
        #expect(try row.value(at: 1) as? JSONValue == ["a": [1, 2]])
        #expect(try row.value(at: 2) as? JSONValue == ["a": [1, 2]])
        #expect(try row.decode(String.self, at: 1) == #"{"a": [1, 2]}"#)
        #expect(try row.decode(String.self, at: 2) == #"{"a": [1, 2]}"#)
        try roundTrip(#"{"b": null}"#, as: "jsonb", format: format)
    }

    @Test(arguments: formats)
    func booleans(format: PostgresFormat) throws {
        try roundTrip(true, as: "bool", format: format)
        try roundTrip(false, as: "bool", format: format)
    }

    @Test(arguments: formats)
    func bytea(format: PostgresFormat) throws {
        try roundTrip(Data(), as: "bytea", format: format)
        try roundTrip(Data([0, 1, 2, 0x5c, 0x27, 0xff, 0]), as: "bytea", format: format)
        try roundTrip(Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }), as: "bytea", format: format)
    }

    @Test(arguments: formats)
    func uuid(format: PostgresFormat) throws {
        try roundTrip(UUID(), as: "uuid", format: format)
        try roundTrip(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!, as: "uuid", format: format)
    }

    @Test(arguments: formats)
    func dates(format: PostgresFormat) throws {
        let instants = [
            Date(timeIntervalSince1970: 0),
            Date(timeIntervalSince1970: 1_700_000_000.123456),
            Date(timeIntervalSince1970: -1_000_000_000.5),  // 1938
            Date(timeIntervalSince1970: 946_684_800),  // PostgreSQL's epoch
            Date(timeIntervalSince1970: -62_135_596_800),  // 0001-01-01
            Date(timeIntervalSince1970: -62_198_755_200),  // 0002-01-01 BC
            Date(timeIntervalSince1970: 253_402_300_799),  // 9999-12-31 23:59:59
            Date(timeIntervalSince1970: .infinity),
            Date(timeIntervalSince1970: -.infinity),
        ]
        for instant in instants {
            try roundTrip(instant, as: "timestamptz", format: format)
            try roundTrip(instant, as: "timestamp", format: format)
        }
        let connection = try TestDatabase.connect()
        let row = try connection.query(
            "SELECT DATE '2024-02-29', TIMESTAMPTZ '2024-02-29 12:34:56.789+05:30', DATE '0044-03-15 BC', "
                + "extract(epoch FROM DATE '0044-03-15 BC')::float8",
            format: format)[0]
        #expect(try row.value(at: 0) as? Date == Date(timeIntervalSince1970: 1_709_164_800))
        #expect(try row.value(at: 1) as? Date == Date(timeIntervalSince1970: 1_709_190_296.789))
        #expect(try row.decode(Date.self, at: 2) == Date(timeIntervalSince1970: row.decode(Double.self, at: 3)))
        #expect(try row.decode(Date.self, at: 2) == Date(timeIntervalSince1970: -63_517_824_000))
        // A date parameter is sent as timestamptz and narrowed by the server to its UTC day.
        let day = try connection.query("SELECT $1::date", [Date(timeIntervalSince1970: 86_400 * 3 + 7)], format: format)[0]
        #expect(try day.decode(Date.self, at: 0) == Date(timeIntervalSince1970: 86_400 * 3))
    }

    @Test(arguments: formats)
    func arrays(format: PostgresFormat) throws {
        try roundTrip([1, 2, 3], as: "int8[]", format: format)
        try roundTrip([Int](), as: "int4[]", format: format)
        try roundTrip([1, nil, 3] as [Int?], as: "int2[]", format: format)
        try roundTrip([Int32.min, 7], as: "int4[]", format: format)
        try roundTrip([Int16.max, nil] as [Int16?], as: "int2[]", format: format)
        try roundTrip(["a", "b c", "quote \" and \\ and , and {}", "NULL", "", "ünï"], as: "text[]", format: format)
        try roundTrip(["x", nil] as [String?], as: "varchar[]", format: format)
        try roundTrip([1.5, -.infinity], as: "float8[]", format: format)
        try roundTrip([true, false], as: "bool[]", format: format)
        try roundTrip([UUID(), UUID()], as: "uuid[]", format: format)
        try roundTrip([Decimal(string: "1.25")!, Decimal(-3)], as: "numeric[]", format: format)
        try roundTrip([Data([0, 0x22, 0x5c]), Data()], as: "bytea[]", format: format)
        try roundTrip([Date(timeIntervalSince1970: 12.5)], as: "timestamptz[]", format: format)
        let connection = try TestDatabase.connect()
        let row = try connection.query("SELECT ARRAY[1,2]::int4[], ARRAY['a',NULL], '[0:1]={7,8}'::int[]", format: format)[0]
        #expect(try row.value(at: 0) as? [Int] == [1, 2])
        #expect(try row.value(at: 1) as? [String?] == ["a", nil])
        #expect(try row.decode([Int].self, at: 2) == [7, 8])
        let nested = #expect(throws: PostgresError.self) {
            try connection.query("SELECT ARRAY[[1,2],[3,4]]", format: format)[0].decode([Int].self, at: 0)
        }
        #expect(nested?.message.contains("dimensional") == true)
        let withNull = #expect(throws: PostgresError.self) {
            try connection.query("SELECT ARRAY[1,NULL]", format: format)[0].decode([Int].self, at: 0)
        }
        #expect(withNull?.message.contains("[Int?]") == true)
    }

    @Test func unknownTypesReadAsText() throws {
        let connection = try TestDatabase.connect()
        try connection.execute("DO $$ BEGIN CREATE TYPE pg_temp.mood AS ENUM ('happy', 'sad'); EXCEPTION WHEN others THEN NULL; END $$")
        let row = try connection.query(
            "SELECT 'a:1 b:2'::tsvector, box '(1,2),(0,0)', point '(1,2)', 'sad'::pg_temp.mood, ARRAY['happy'::pg_temp.mood]"
        )[0]
        #expect(try row.value(at: 0) as? String == "'a':1 'b':2")
        #expect(try row.value(at: 1) as? String == "(1,2),(0,0)")
        #expect(try row.value(at: 2) as? String == "(1,2)")
        #expect(try row.value(at: 3) as? String == "sad")
        #expect(try row.decode(String.self, at: 4) == "{happy}")
        #expect(try row.decode([String].self, at: 4) == ["happy"])
        // The binary form of a type without a decoder is kept as bytes, never a crash.
        let binary = try connection.query("SELECT point '(1,2)'", format: .binary)[0]
        #expect(try binary.value(at: 0) is Data)
        #expect(throws: PostgresError.self) { try binary.decode(String.self, at: 0) }
    }

    @Test func mismatchedTypeNamesColumnAndTypes() throws {
        let connection = try TestDatabase.connect()
        let row = try connection.query("SELECT 'x'::text AS name, NULL::int AS age", format: .binary)[0]
        let error = #expect(throws: PostgresError.self) { try row.decode(Int.self, column: "name") }
        #expect(error?.column == "name")
        #expect(error?.description.contains("Int") == true)
        #expect(error?.description.contains("text") == true)
        let null = #expect(throws: PostgresError.self) { try row.decode(Int.self, column: "age") }
        #expect(null?.message.contains("NULL") == true)
        let missing = #expect(throws: PostgresError.self) { try row.decode(Int.self, column: "nope") }
        #expect(missing?.message.contains("name") == true)
        #expect(throws: PostgresError.self) { try row.decode(Int.self, at: 7) }
    }

    @Test func valuesInTableColumns() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("""
                CREATE TABLE sample (i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric, t text,
                  b bool, d date, ts timestamp, tz timestamptz, u uuid, by bytea, j jsonb, a int4[])
                """)
            let id = UUID()
            let instant = Date(timeIntervalSince1970: 1_600_000_000.25)
            try connection.execute(
                "INSERT INTO sample VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
                [1, 2, 3, Float(4.5), 5.5, Decimal(string: "6.75")!, "seven", true, "2020-01-02", instant, instant,
                 id, Data([9]), #"{"k": 1}"#, [10, 11]])
            for format in Self.formats {
                let row = try connection.query("SELECT * FROM sample", format: format)[0]
                #expect(try row.value(column: "i2") as? Int == 1)
                #expect(try row.value(column: "i4") as? Int == 2)
                #expect(try row.value(column: "i8") as? Int == 3)
                #expect(try row.value(column: "f4") as? Float == 4.5)
                #expect(try row.value(column: "f8") as? Double == 5.5)
                #expect(try row.value(column: "n") as? Decimal == Decimal(string: "6.75"))
                #expect(try row.value(column: "t") as? String == "seven")
                #expect(try row.value(column: "b") as? Bool == true)
                #expect(try row.value(column: "d") as? Date == Date(timeIntervalSince1970: 1_577_923_200))
                #expect(try row.value(column: "ts") as? Date == instant)
                #expect(try row.value(column: "tz") as? Date == instant)
                #expect(try row.value(column: "u") as? UUID == id)
                #expect(try row.value(column: "by") as? Data == Data([9]))
                #expect(try row.value(column: "j") as? JSONValue == ["k": 1])
                #expect(try row.decode(String.self, column: "j") == #"{"k": 1}"#)
                #expect(try row.value(column: "a") as? [Int] == [10, 11])
            }
        }
    }
}
