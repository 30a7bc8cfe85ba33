import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Every base, range and multirange type the server has (walked from `pg_type`, not listed
/// here) as a column of one table: a row of values and a row of NULLs read through the
/// object layer without an error, each value of its mapped Swift type or, for a type
/// without a mapping, its text; written back, the server holds the same value.
@Suite struct EveryBaseTypeTests {
    /// A value of each type whose input takes one; the others (planner statistics,
    /// `pg_node_tree`, `gtsvector`…) are read as NULL only.
    static let samples: [String: String] = [
        "bit": "1", "bool": "true", "box": "(1,2),(3,4)", "bpchar": "abc", "bytea": "\\x0102ff", "char": "a", "cid": "7",
        "cidr": "10.0.0.0/8", "circle": "<(1,2),3>", "date": "2024-02-29", "datemultirange": "{[2024-01-01,2024-02-01)}",
        "daterange": "[2024-01-01,2024-02-01)", "float4": "1.5", "float8": "2.25", "inet": "10.1.2.3/16", "int2": "7",
        "int4": "70000", "int4multirange": "{[1,3),[5,8)}", "int4range": "[1,10)", "int8": "9000000000", "int8multirange": "{[1,3)}",
        "int8range": "[1,10)", "interval": "1 mon 2 days 00:00:03", "json": "{\"a\":[1,2.5]}", "jsonb": "{\"a\": [1, 2.5]}",
        "jsonpath": "$.a[*]", "line": "{1,2,3}", "lseg": "[(1,2),(3,4)]", "macaddr": "08:00:2b:01:02:03",
        "macaddr8": "08:00:2b:01:02:03:04:05", "money": "12.34", "name": "abc", "numeric": "123.456",
        "nummultirange": "{[1.5,2.5)}", "numrange": "[1.5,2.5)", "oid": "42", "path": "[(1,2),(3,4)]", "pg_lsn": "16/B374D848",
        "pg_snapshot": "10:20:10,14,15", "point": "(1,2)", "polygon": "((0,0),(1,1),(1,0))", "refcursor": "a_cursor",
        "regclass": "pg_class", "regcollation": "\"C\"", "regconfig": "english", "regdictionary": "simple",
        "regnamespace": "pg_catalog", "regoperator": "+(integer,integer)", "regproc": "now", "regprocedure": "abs(integer)",
        "regrole": "pg_monitor", "regtype": "integer", "text": "hello", "tid": "(0,1)", "time": "04:05:06.789",
        "timestamp": "2024-02-29 12:34:56.789", "timestamptz": "2024-02-29 12:34:56.789+00", "timetz": "04:05:06+02",
        "tsmultirange": "{[\"2024-01-01 00:00\",\"2024-01-02 00:00\")}", "tsquery": "fat & rat",
        "tsrange": "[\"2024-01-01 00:00\",\"2024-01-02 00:00\")", "tstzmultirange": "{[\"2024-01-01 00:00+00\",\"2024-01-02 00:00+00\")}",
        "tstzrange": "[\"2024-01-01 00:00+00\",\"2024-01-02 00:00+00\")", "tsvector": "a fat cat", "txid_snapshot": "10:20:10,14,15",
        "uuid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "varbit": "10101", "varchar": "hi", "xid": "42", "xid8": "42",
        "xml": "<a>1</a>",
    ]

    /// The Swift type a mapping reads as, by name, for the check.
    static func swiftType(of mapping: PostgresValueMapping) -> String? {
        switch mapping {
        case .integer: "Int"
        case .float: "Float"
        case .double: "Double"
        case .decimal: "Decimal"
        case .bool: "Bool"
        case .string, .textForm: "String"
        case .json: "JSONValue"
        case .date: "Date"
        case .uuid: "UUID"
        case .data: "Data"
        case .time: "PostgresTime"
        case .interval: "PostgresInterval"
        case .inet: "PostgresInet"
        case .macAddress: "PostgresMacAddress"
        case .range(let bound): swiftType(of: bound).map { "PostgresRange<\($0)>" }
        case .multirange(let bound): swiftType(of: bound).map { "PostgresMultirange<\($0)>" }
        case .array: nil
        }
    }

    @Test func everyTypeReadsAndWritesBack() throws {
        try TestDatabase.withSchema { connection, schema in
            let types = try connection.query("""
                SELECT t.typname::text, t.oid::int8 FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                WHERE n.nspname = 'pg_catalog' AND t.typtype IN ('b', 'r', 'm') AND t.typisdefined
                  AND NOT (t.typelem <> 0 AND t.typlen = -1) AND t.typname NOT LIKE '\\_%'
                ORDER BY 1
                """).map { (name: try $0.decode(String.self, at: 0), oid: UInt32(try $0.decode(Int.self, at: 1))) }
            #expect(types.count > 70)
            let quote = { (name: String) in try connection.quoteIdentifier(name) }
            var columns = ["id int4 PRIMARY KEY"]
            var values = ["1"]
            for type in types {
                columns.append("\(try quote("c_" + type.name)) pg_catalog.\(try quote(type.name))")
                values.append(Self.samples[type.name].map { "'\($0.replacingOccurrences(of: "'", with: "''"))'" } ?? "NULL")
            }
            try connection.execute("CREATE TABLE every_type (\(columns.joined(separator: ", ")))")
            try connection.execute("INSERT INTO every_type VALUES (\(values.joined(separator: ", "))), (2\(String(repeating: ", NULL", count: types.count)))")
            let sampled = types.filter { Self.samples[$0.name] != nil }
            #expect(sampled.count > 65)

            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let row = try #require(try context.object("every_type", primaryKey: 1))
            let nulls = try #require(try context.object("every_type", primaryKey: 2))
            let select = try types.map { "\(try quote("c_" + $0.name))::text" }.joined(separator: ", ")
            let before = try connection.query("SELECT \(select) FROM every_type WHERE id = 1")[0]
            for (index, type) in types.enumerated() {
                let key = "c_" + type.name
                #expect(try nulls.value(forKey: key) == nil, "\(type.name) NULL")
                guard Self.samples[type.name] != nil else { continue }
                let value = try #require(try row.value(forKey: key), "\(type.name)")
                let mapping = PostgresType(type.oid).mapping
                #expect("\(Swift.type(of: value))" == Self.swiftType(of: mapping), "\(type.name) read as \(Swift.type(of: value))")
                if mapping == .textForm {
                    #expect(value as? String == (try before.decode(String?.self, at: index)), "\(type.name) reads as its text")
                }
                // Written back as read: the server holds the same value.
                try row.setValue(value, forKey: key)
                let after = try connection.query("SELECT \(try quote(key))::text FROM every_type WHERE id = 1")[0]
                #expect(try after.decode(String?.self, at: 0) == before.decode(String?.self, at: index), "\(type.name) written back")
            }
        }
    }
}
