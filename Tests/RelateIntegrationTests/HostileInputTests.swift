import Foundation
import RelatePostgres
import Testing

/// Values and identifiers that break naive SQL building go through unchanged, and values
/// that cannot be sent at all are refused with a clear error.
@Suite struct HostileInputTests {
    static let hostileValues = [
        "it's", "\"double\"", "back\\slash", "semi; DROP TABLE victim; --", "$1", "$2::int",
        "'); DELETE FROM victim; --", "ünïcødé ✓ 🐘", "\u{202E}rtl", "E'\\x00'", "%s %d", "\n\t\r", "",
    ]

    @Test func valuesRoundTripExactly() throws {
        try TestDatabase.withSchema { connection, _ in
            try connection.execute("CREATE TABLE victim (id serial PRIMARY KEY, body text NOT NULL)")
            for value in Self.hostileValues {
                let id = try connection.query("INSERT INTO victim (body) VALUES ($1) RETURNING id", [value])[0]
                    .decode(Int.self, at: 0)
                for format in [PostgresFormat.text, .binary] {
                    let read = try connection.query("SELECT body FROM victim WHERE id = $1", [id], format: format)[0]
                    #expect(try read.decode(String.self, at: 0) == value)
                }
                let found = try connection.query("SELECT count(*) FROM victim WHERE body = $1", [value])[0]
                #expect(try found.decode(Int.self, at: 0) == 1)
            }
            #expect(try connection.query("SELECT count(*) FROM victim")[0].decode(Int.self, at: 0) == Self.hostileValues.count)
        }
    }

    @Test func nulBytesAreRefusedClearly() throws {
        let connection = try TestDatabase.connect()
        let inValue = #expect(throws: PostgresError.self) { try connection.query("SELECT $1::text", ["a\u{0}b"]) }
        #expect(inValue?.kind == .invalidInput)
        #expect(inValue?.message.contains("$1") == true)
        #expect(inValue?.message.contains("NUL") == true)
        let inArray = #expect(throws: PostgresError.self) { try connection.query("SELECT $1::text[]", [["ok", "a\u{0}"]]) }
        #expect(inArray?.message.contains("NUL") == true)
        #expect(throws: PostgresError.self) { try connection.query("SELECT 1\u{0}") }
        #expect(throws: PostgresError.self) { try connection.quoteIdentifier("a\u{0}b") }
        // bytea carries NUL bytes: it is binary.
        let bytes = Data([0, 0, 0])
        #expect(try connection.query("SELECT $1::bytea", [bytes])[0].decode(Data.self, at: 0) == bytes)
        // And the connection is still usable.
        #expect(try connection.query("SELECT 1")[0].decode(Int.self, at: 0) == 1)
    }

    static let hostileIdentifiers = [
        "select", "table", "MixedCase", "with space", "quote\"inside", "it's", "semi;colon", "$1",
        "back\\slash", "ünï", "🐘", String(repeating: "x", count: 63), String(repeating: "é", count: 31) + "x",
    ]

    @Test func identifiersRoundTripExactly() throws {
        try TestDatabase.withSchema { connection, schema in
            for name in Self.hostileIdentifiers {
                #expect(name.utf8.count <= 63)
                let table = try connection.quoteIdentifier(name)
                let column = try connection.quoteIdentifier(name + "")
                try connection.execute("CREATE TABLE \(table) (\(column) text)")
                try connection.execute("INSERT INTO \(table) (\(column)) VALUES ($1)", [name])
                let stored = try connection.query(
                    "SELECT c.relname::text, a.attname::text FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
                        + "WHERE c.relnamespace = $1::regnamespace AND a.attnum = 1 AND c.relname = $2",
                    [schema, name])
                #expect(stored.count == 1, "table \(name)")
                #expect(try stored.first?.decode(String.self, at: 0) == name)
                #expect(try stored.first?.decode(String.self, at: 1) == name)
                let value = try connection.query("SELECT \(column) FROM \(try connection.quoteQualifiedName(schema: schema, name))")
                #expect(try value[0].decode(String.self, at: 0) == name)
            }
        }
    }

    @Test func overlongAndEmptyIdentifiersAreRefused() throws {
        let connection = try TestDatabase.connect()
        let long = String(repeating: "y", count: 64)
        let error = #expect(throws: PostgresError.self) { try connection.quoteIdentifier(long) }
        #expect(error?.kind == .invalidInput)
        #expect(error?.message.contains("63") == true)
        // 32 two-byte characters are 64 bytes: the limit is in bytes.
        #expect(throws: PostgresError.self) { try connection.quoteIdentifier(String(repeating: "é", count: 32)) }
        #expect(throws: PostgresError.self) { try connection.quoteIdentifier("") }
    }
}
