import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Values and schemas at the edges, each found by a review: cells that trapped the process
/// (an overflow in a time's or an interval's arithmetic), a unique index that enforces
/// nothing taken for a key, and domains over domains read as text.
@Suite struct TypeEdgeTests {
    /// The server's own least interval, in its text form (`Connection.query`'s default):
    /// Int64.min microseconds, whose magnitude does not fit.
    @Test func theLeastIntervalReadsAsIsInTextForm() throws {
        let connection = try TestDatabase.connect()
        let result = try connection.query("SELECT interval '-2562047788:00:54.775807' - interval '1 microsecond'")
        #expect(try result[0].decode(PostgresInterval.self, at: 0).microseconds == Int64.min)
        let binary = try connection.query("SELECT interval '-2562047788:00:54.775807' - interval '1 microsecond'", format: .binary)
        #expect(try binary[0].decode(PostgresInterval.self, at: 0).microseconds == Int64.min)
    }

    /// Cells a hostile server could send: refused, never a trap.
    @Test func cellsBeyondTheirRangeAreRefused() throws {
        let cases: [(PostgresType, PostgresFormat, [UInt8])] = [
            (.timetz, .binary, [0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0]),
            (.timetz, .text, Array("00:00:00+999999".utf8)),
            (.timetz, .text, Array("00:00:00-99:99".utf8)),
            (.interval, .text, Array("999999999999999999:00:00".utf8)),
            (.interval, .text, Array("-9223372036854:00:00".utf8)),
        ]
        for (type, format, cell) in cases {
            let result = try #require(PostgresResult.crafted(columns: [(name: "v", type: type, format: format)], rows: [[cell]]))
            if type == .timetz {
                #expect(throws: (any Error).self, "\(type) \(format) \(cell)") { try result[0].decode(PostgresTime.self, at: 0) }
            } else {
                #expect(throws: (any Error).self, "\(type) \(format) \(cell)") { try result[0].decode(PostgresInterval.self, at: 0) }
            }
        }
    }

    /// A unique index left invalid by a failed `CREATE UNIQUE INDEX CONCURRENTLY` enforces
    /// nothing: no key (one `setValue` had written two rows), no one-to-one.
    @Test func anInvalidUniqueIndexIsNoKey() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE item (code text NOT NULL, name text);
                INSERT INTO item VALUES ('a', 'x'), ('a', 'y');
                CREATE TABLE parent (id int PRIMARY KEY);
                CREATE TABLE child (id int PRIMARY KEY, parent_id int REFERENCES parent);
                INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1, 1), (2, 1);
                """)
            #expect(throws: (any Error).self) { try connection.execute("CREATE UNIQUE INDEX CONCURRENTLY item_code ON item (code)") }
            #expect(throws: (any Error).self) { try connection.execute("CREATE UNIQUE INDEX CONCURRENTLY child_parent ON child (parent_id)") }
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            #expect(try context.model.entity("item").primaryKey.isEmpty)
            #expect(try context.model.entity("parent").relationship(forKey: "child").isToMany)
        }
    }

    /// A domain over a domain reads and writes as the type at the bottom of the chain, and
    /// an enum behind two domains keeps its labels (the catalog's base type is only the
    /// next one down).
    @Test func aDomainOverADomainIsItsBottomType() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE DOMAIN d1 AS int4; CREATE DOMAIN d2 AS d1;
                CREATE DOMAIN v1 AS varchar(3); CREATE DOMAIN v2 AS v1 NOT NULL;
                CREATE TYPE mood AS ENUM ('happy', 'sad'); CREATE DOMAIN m1 AS mood; CREATE DOMAIN m2 AS m1;
                CREATE TABLE dd (id int PRIMARY KEY, one d1, two d2, short v2 DEFAULT 'x', feeling m2);
                INSERT INTO dd VALUES (1, 7, 7, 'abc', 'sad');
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let entity = try context.model.entity("dd")
            #expect(try entity.attribute(forKey: "feeling").enumLabels == ["happy", "sad"])
            #expect(try entity.attribute(forKey: "short").isNullable == false)
            let row = try #require(try context.object("dd", primaryKey: 1))
            #expect(try row.value(forKey: "one") as? Int == 7)
            #expect(try row.value(forKey: "two") as? Int == 7)
            try row.setValue(8, forKey: "two")
            #expect(try connection.query("SELECT two FROM \"\(schema)\".dd")[0].decode(Int.self, at: 0) == 8)
        }
    }

    /// An array of a domain reads and writes as an array of the domain's base type (it read
    /// as its text form, a `String`); an array of a domain over an enum keeps the labels. An
    /// array column compares with an array of Swift values of the wider type (`integer[] =
    /// bigint[]` has no operator: the value is cast to the column's type).
    @Test func anArrayOfADomainIsAnArrayOfItsBaseType() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE DOMAIN posint AS int4 CHECK (VALUE > 0); CREATE DOMAIN pos2 AS posint;
                CREATE TYPE mood AS ENUM ('happy', 'sad'); CREATE DOMAIN m1 AS mood;
                CREATE TABLE da (id int PRIMARY KEY, counts posint[], deep pos2[], feelings m1[], plain int4[] DEFAULT '{4,5}', names varchar(5)[] DEFAULT '{a}');
                INSERT INTO da VALUES (1, '{1,2}', '{3}', '{sad,happy}');
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let entity = try context.model.entity("da")
            #expect(try entity.attribute(forKey: "feelings").enumLabels == ["happy", "sad"])
            let row = try #require(try context.object("da", primaryKey: 1))
            #expect(try row.value(forKey: "counts") as? [Int] == [1, 2])
            #expect(try row.value(forKey: "deep") as? [Int] == [3])
            #expect(try row.value(forKey: "feelings") as? [String] == ["sad", "happy"])
            try row.setValue([4, 5], forKey: "counts")
            try row.setValue(["happy"], forKey: "feelings")
            #expect(try connection.query("SELECT counts::text, feelings::text FROM \"\(schema)\".da")[0].decode(String.self, at: 0) == "{4,5}")
            #expect(throws: RelateError.self) { try row.setValue([0], forKey: "deep") }
            #expect(try row.value(forKey: "deep") as? [Int] == [3])
            let fetched = try context.fetch(FetchRequest("da", where: Key("plain") == [4, 5] && Key("counts") == [4, 5] && Key("names") == ["a"]))
            #expect(fetched.count == 1)
        }
    }

    /// JSON that `Decimal` or a `String`-keyed dictionary cannot hold as it is is refused,
    /// never rounded or merged (Foundation's decoder did both without a word, and a value
    /// written back changed the document).
    @Test func jsonThatCannotBeHeldExactlyIsRefused() throws {
        let refused = [
            #"{"n": 123456789012345678901234567890123456789012}"#, #"{"n": 0.1000000000000000000000000000000000000000001}"#,
            #"[1e-200]"#, #"{"\u00e9": 1, "e\u0301": 2}"#, "{\"a\": {\"\u{e9}\": 1, \"e\u{301}\": 2}}",
            // Not strict JSON: a leading zero, a lone surrogate, a control character, a
            // trailing comma, something after the value, nesting past 512.
            "[01]", #"["\ud800"]"#, "[\"a\u{1}\"]", "[1,]", "{} x", String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
        ]
        for text in refused {
            #expect(throws: (any Error).self, "\(text)") { try JSONValue(json: Array(text.utf8)) }
        }
        let held: [(String, JSONValue)] = [
            (#"{"n": 12345678901234567890123456789012345678}"#, ["n": .number(Decimal(string: "12345678901234567890123456789012345678")!)]),
            (#"[1000000000000000000000000000000000000000000, -0.5e-3, 0]"#, [.number(Decimal(string: "1e42")!), .number(Decimal(string: "-0.0005")!), 0]),
            (#"{"a": 1, "k\u00e9y": "\"x\""}"#, ["a": 1, "k\u{e9}y": "\"x\""]),
            // A name given twice keeps its last value, as jsonb does; any value at the top.
            (#" {"a": 1, "a": [true, null, "\ud83d\ude00"]} "#, ["a": [true, nil, "\u{1F600}"]]),
            ("-12.5e1", .number(Decimal(string: "-125")!)),
        ]
        for (text, value) in held {
            let read = try JSONValue(json: Array(text.utf8))
            #expect(read == value, "\(text): \(read)")
        }
        // As a column's value: a decoding error, not a rounded number.
        let connection = try TestDatabase.connect()
        let result = try connection.query(#"SELECT '{"id": 123456789012345678901234567890123456789012}'::jsonb"#)
        #expect(throws: (any Error).self) { try result[0].decode(JSONValue.self, at: 0) }
    }

    /// `box[]` separates its elements by `;` (a box's own text holds commas): read in the
    /// text form, each element is one box.
    @Test func boxesInTheTextFormAreSplitByTheirDelimiter() throws {
        let connection = try TestDatabase.connect()
        let result = try connection.query("SELECT ARRAY[box '((1,1),(0,0))', box '((2,2),(1,1))'], ARRAY['a,b', 'c']")
        #expect(try result[0].decode([String].self, at: 0) == ["(1,1),(0,0)", "(2,2),(1,1)"])
        #expect(try result[0].decode([String].self, at: 1) == ["a,b", "c"])
    }
}
