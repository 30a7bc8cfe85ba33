import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// The value types of issue 41 (`PostgresInterval`, `PostgresRange`, `JSONValue`,
/// `PostgresInet`, `PostgresMacAddress`, `PostgresTime`, money as `Decimal`) against the
/// server: read in both forms, sent back as parameters, and compared with what the server
/// makes of the same literal (its text output, which is exact for every one of them).
@Suite struct ValueTypeTests {
    static let formats: [PostgresFormat] = [.text, .binary]

    /// `literal::sqlType` reads as `expected`; `expected` bound as a parameter is, to the
    /// server, the same value as the literal; NULL reads as nil.
    func check<T: PostgresCodable & Equatable>(
        _ literal: String, as sqlType: String, is expected: T, format: PostgresFormat,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let connection = try TestDatabase.connect()
        let read = try connection.query("SELECT $1::\(sqlType), NULL::\(sqlType)", [literal], format: format)[0]
        #expect(try read.decode(T.self, at: 0) == expected, "\(literal)::\(sqlType) in \(format)", sourceLocation: sourceLocation)
        #expect(try read.decode(T?.self, at: 1) == nil, sourceLocation: sourceLocation)
        let sent = try connection.query("SELECT ($1::\(sqlType))::text, ($2::\(sqlType))::text", [expected, literal])[0]
        #expect(
            try sent.decode(String.self, at: 0) == sent.decode(String.self, at: 1), "\(literal)::\(sqlType) sent back",
            sourceLocation: sourceLocation)
        // And back again: the value the server made of the parameter reads as the value.
        let again = try connection.query("SELECT $1::\(sqlType)", [expected], format: format)[0]
        #expect(try again.decode(T.self, at: 0) == expected, "\(sqlType) through a parameter", sourceLocation: sourceLocation)
    }

    @Test(arguments: formats)
    func intervals(format: PostgresFormat) throws {
        try check("1 year 2 mons 3 days 04:05:06.789", as: "interval", is: PostgresInterval(months: 14, days: 3, microseconds: 14_706_789_000), format: format)
        try check("-1 mons +3 days -00:00:00.000001", as: "interval", is: PostgresInterval(months: -1, days: 3, microseconds: -1), format: format)
        // A month is not 30 days: the parts stay apart.
        try check("1 mon", as: "interval", is: PostgresInterval(months: 1), format: format)
        try check("30 days", as: "interval", is: PostgresInterval(days: 30), format: format)
        try check("0", as: "interval", is: PostgresInterval(), format: format)
        try check("-178000000 years", as: "interval", is: PostgresInterval(months: -2_136_000_000), format: format)
        try check("{\"1 day\",NULL}", as: "interval[]", is: [PostgresInterval(days: 1), nil], format: format)
        let connection = try TestDatabase.connect()
        #expect(try connection.query("SELECT '2 hours'::interval", format: format)[0].value(at: 0) as? PostgresInterval
            == PostgresInterval(microseconds: 7_200_000_000))
    }

    @Test(arguments: formats)
    func ranges(format: PostgresFormat) throws {
        try check("[1,5]", as: "int4range", is: PostgresRange<Int>(lower: .inclusive(1), upper: .exclusive(6), rangeType: .int4range), format: format)
        try check("(,5)", as: "int8range", is: PostgresRange<Int>(lower: .infinite, upper: .exclusive(5)), format: format)
        try check("[9000000000,)", as: "int8range", is: PostgresRange<Int>(lower: .inclusive(9_000_000_000), upper: .infinite), format: format)
        try check("empty", as: "int4range", is: PostgresRange<Int>.empty.sent(as: .int4range), format: format)
        try check("(,)", as: "int8range", is: PostgresRange<Int>(lower: .infinite, upper: .infinite), format: format)
        try check("(0.1,2.5]", as: "numrange", is: PostgresRange<Decimal>(lower: .exclusive(Decimal(string: "0.1")!), upper: .inclusive(2.5)), format: format)
        let day = Date(timeIntervalSince1970: Double(1_700_000_000 - 1_700_000_000 % 86_400))
        try check(
            "[2023-11-14,2023-11-16)", as: "daterange",
            is: PostgresRange<Date>(lower: .inclusive(day), upper: .exclusive(day + 2 * 86_400), rangeType: .daterange), format: format)
        let instant = Date(timeIntervalSince1970: 1_700_000_000.25)
        try check(
            "[\"2023-11-14 22:13:20.25+00\",infinity]", as: "tstzrange",
            is: PostgresRange<Date>(lower: .inclusive(instant), upper: .inclusive(Date(timeIntervalSince1970: .infinity))), format: format)
        try check("(\"2023-11-14 22:13:20.25\",)", as: "tsrange", is: PostgresRange<Date>(lower: .exclusive(instant), upper: .infinite, rangeType: .tsrange), format: format)
        try check("{\"[1,3)\",empty}", as: "int8range[]", is: [PostgresRange(1..<3), .empty], format: format)
        // A range read from an int4range goes back as one; a new one goes as int8range.
        let connection = try TestDatabase.connect()
        let read = try connection.query("SELECT '[1,2)'::int4range", format: format)[0].decode(PostgresRange<Int>.self, at: 0)
        #expect(read.rangeType == .int4range)
        #expect(try connection.query("SELECT pg_typeof($1)::text", [read])[0].decode(String.self, at: 0) == "int4range")
        #expect(try connection.query("SELECT pg_typeof($1)::text", [PostgresRange(1...2)])[0].decode(String.self, at: 0) == "int8range")
        // Bounds that do not fit the range type are refused before anything is sent.
        #expect(throws: PostgresError.self) { try connection.query("SELECT $1", [PostgresRange(1..<Int.max).sent(as: .int4range)]) }
        #expect(throws: PostgresError.self) {
            try connection.query("SELECT $1", [PostgresRange<Date>(lower: .inclusive(instant), upper: .infinite).sent(as: .daterange)])
        }
    }

    @Test(arguments: formats)
    func json(format: PostgresFormat) throws {
        let document: JSONValue = ["name": "Ada", "born": 1815, "tags": ["math", nil, true], "ratio": .number(Decimal(string: "0.1")!)]
        try check(#"{"name": "Ada", "born": 1815, "tags": ["math", null, true], "ratio": 0.1}"#, as: "jsonb", is: document, format: format)
        try check("12345678901234567890123", as: "jsonb", is: JSONValue.number(Decimal(string: "12345678901234567890123")!), format: format)
        try check(#""a \"quoted\" \u00e9""#, as: "jsonb", is: JSONValue.string("a \"quoted\" é"), format: format)
        try check("null", as: "jsonb", is: JSONValue.null, format: format)
        try check("[]", as: "jsonb", is: JSONValue.array([]), format: format)
        try check(#"{"a": {"b": [1.5e3]}}"#, as: "jsonb", is: ["a": ["b": [1500]]] as JSONValue, format: format)
        try check(#"{"{\"x\": 1}","[1]"}"#, as: "jsonb[]", is: [["x": 1], [1]] as [JSONValue], format: format)
        let connection = try TestDatabase.connect()
        // json (not jsonb) reads as JSONValue too, untyped; as a String on request, as before.
        let row = try connection.query(#"SELECT '{"k": [1, 2]}'::json"#, format: format)[0]
        #expect(try row.value(at: 0) as? JSONValue == ["k": [1, 2]])
        #expect(try row.decode(String.self, at: 0) == #"{"k": [1, 2]}"#)
    }

    @Test(arguments: formats)
    func networkAndHardwareAddresses(format: PostgresFormat) throws {
        try check("192.168.1.5/24", as: "inet", is: try PostgresInet(address: [192, 168, 1, 5], prefixLength: 24), format: format)
        try check("10.0.0.7", as: "inet", is: try PostgresInet("10.0.0.7"), format: format)
        try check("2001:db8::1/64", as: "inet", is: try PostgresInet("2001:db8::1/64"), format: format)
        try check("10.1.0.0/16", as: "cidr", is: try PostgresInet("10.1.0.0/16", isNetwork: true), format: format)
        try check("::ffff:1.2.3.4", as: "inet", is: try PostgresInet("::ffff:1.2.3.4"), format: format)
        try check("{10.0.0.1,NULL}", as: "inet[]", is: [try PostgresInet("10.0.0.1"), nil], format: format)
        try check("08:00:2b:01:02:03", as: "macaddr", is: try PostgresMacAddress(bytes: [8, 0, 0x2b, 1, 2, 3]), format: format)
        try check("08:00:2b:01:02:03:04:05", as: "macaddr8", is: try PostgresMacAddress("08-00-2b-01-02-03-04-05"), format: format)
        #expect(try PostgresInet("2001:db8::1/64").description == "2001:db8::1/64")
        #expect(try PostgresInet("10.0.0.7").description == "10.0.0.7")
    }

    @Test(arguments: formats)
    func timesOfDay(format: PostgresFormat) throws {
        try check("04:05:06.789", as: "time", is: PostgresTime(hour: 4, minute: 5, second: 6, microsecond: 789_000), format: format)
        try check("00:00", as: "time", is: PostgresTime(microseconds: 0), format: format)
        try check("24:00:00", as: "time", is: PostgresTime(hour: 24, minute: 0), format: format)
        try check("09:30:00+02", as: "timetz", is: PostgresTime(hour: 9, minute: 30, utcOffset: 7200), format: format)
        try check("23:59:59.999999-03:30", as: "timetz", is: PostgresTime(hour: 23, minute: 59, second: 59, microsecond: 999_999, utcOffset: -12_600), format: format)
        try check("{12:00,NULL}", as: "time[]", is: [PostgresTime(hour: 12, minute: 0), nil], format: format)
        #expect(PostgresTime(hour: 9, minute: 30, utcOffset: -12_600).description == "09:30:00-03:30")
    }

    @Test func moneyReadsAsNumeric() throws {
        let connection = try TestDatabase.connect()
        // The server's own reading of money as numeric, exact whatever lc_monetary is.
        let row = try connection.query("SELECT '-1234.56'::money::numeric, '12.5'::money", format: .text)[0]
        #expect(try row.decode(Decimal.self, at: 0) == Decimal(string: "-1234.56"))
        // Its text form in the C locale's style reads too; its binary form says to cast.
        if try connection.query("SHOW lc_monetary")[0].decode(String.self, at: 0) == "C" {
            #expect(try row.decode(Decimal.self, at: 1) == Decimal(string: "12.5"))
        }
        let binary = try connection.query("SELECT '12.5'::money", format: .binary)[0]
        let error = #expect(throws: PostgresError.self) { try binary.decode(Decimal.self, at: 0) }
        #expect(error?.message.contains("numeric") == true)
    }

    // MARK: - The object layer

    static let schema = """
        CREATE TABLE sample (
            id int4 PRIMARY KEY, span interval, seats int4range, ids int8range, prices numrange, stay daterange,
            window_ts tsrange, window_tz tstzrange, doc jsonb, raw json, host inet, net cidr, nic macaddr, nic8 macaddr8,
            price money, opens time, call timetz, spans interval[], hosts inet[], stays daterange[], docs jsonb[]);
        INSERT INTO sample VALUES (1, '1 mon 2 days 03:00:00', '[1,10)', '(,0]', '[1.5,2.5]', '[2024-01-01,2024-02-01)',
            '[2024-01-01 10:00,2024-01-01 12:00)', '[2024-01-01 10:00+00,)', '{"a": [1, 2.5, null]}', '{"b": true}',
            '10.0.0.1/8', '192.168.0.0/16', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05', '1234.56', '09:30', '09:30+02',
            '{"1 day","2 mons"}', '{10.0.0.1,::1}', '{"[2024-01-01,2024-01-02)"}', '{"{}","[1]"}'),
            (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        """

    static let day = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01 UTC

    /// Each column's value in row 1, as `value(forKey:)` answers it.
    static let expected: [(key: String, value: any Sendable & Hashable)] = [
        ("span", PostgresInterval(months: 1, days: 2, microseconds: 10_800_000_000)),
        ("seats", PostgresRange(1..<10)),
        ("ids", PostgresRange<Int>(lower: .infinite, upper: .exclusive(1))),
        ("prices", PostgresRange<Decimal>(lower: .inclusive(1.5), upper: .inclusive(2.5))),
        ("stay", PostgresRange(day..<(day + 31 * 86_400))),
        ("window_ts", PostgresRange((day + 36_000)..<(day + 43_200))),
        ("window_tz", PostgresRange<Date>(lower: .inclusive(day + 36_000), upper: .infinite)),
        ("doc", ["a": [1, .number(2.5), nil]] as JSONValue),
        ("raw", ["b": true] as JSONValue),
        ("host", try! PostgresInet("10.0.0.1/8")),
        ("net", try! PostgresInet("192.168.0.0/16", isNetwork: true)),
        ("nic", try! PostgresMacAddress("08:00:2b:01:02:03")),
        ("nic8", try! PostgresMacAddress("08:00:2b:01:02:03:04:05")),
        ("price", Decimal(string: "1234.56")!),
        ("opens", PostgresTime(hour: 9, minute: 30)),
        ("call", PostgresTime(hour: 9, minute: 30, utcOffset: 7200)),
        ("spans", [PostgresInterval(days: 1), PostgresInterval(months: 2)]),
        ("hosts", [try! PostgresInet("10.0.0.1"), try! PostgresInet("::1")]),
        ("stays", [PostgresRange(day..<(day + 86_400))]),
        ("docs", [JSONValue.object([:]), [1]]),
    ]

    /// A value as `AnyHashable`, to compare values of any of the types.
    static func hashable(_ value: Any?) -> AnyHashable? {
        value.flatMap { $0 as? AnyHashable }
    }

    static func withSamples(_ body: (DatabaseContext, Connection) throws -> Void) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            try body(try DatabaseContext(connection: connection, schemas: [schema]), connection)
        }
    }

    @Test func valueForKeyAnswersEachType() throws {
        try Self.withSamples { context, _ in
            let row = try #require(try context.object("sample", primaryKey: 1))
            for (key, value) in Self.expected {
                let read = try row.value(forKey: key)
                #expect(Self.hashable(read) == Self.hashable(value), "\(key): \(String(describing: read))")
            }
            #expect(try row.value(forKey: "seats", as: PostgresRange<Int>.self)?.rangeType == .int4range)
            #expect(try row.value(forKey: "doc", as: JSONValue.self)?["a"]?[1] == .number(2.5))
            let empty = try #require(try context.object("sample", primaryKey: 2))
            for (key, _) in Self.expected { #expect(try empty.value(forKey: key) == nil, "\(key)") }
            // A wrong Swift type is an error naming the key and the column's type.
            let error = #expect(throws: RelateError.self) { try row.value(forKey: "span", as: String.self) }
            #expect(error?.kind == .typeMismatch)
            #expect(error?.message.contains("interval") == true)
        }
    }

    /// Every value written back through `setValue` (row 2, all NULL before) is, to the
    /// server, the value of row 1; then the values read back in a fresh context equal them.
    @Test func setValueWritesEachTypeAsTheServerHasIt() throws {
        try Self.withSamples { context, connection in
            let target = try #require(try context.object("sample", primaryKey: 2))
            for (key, value) in Self.expected {
                try target.setValue(value, forKey: key)
            }
            for (key, _) in Self.expected {
                // A json document's text keeps its spacing, which a JSONValue does not.
                let text = key == "raw" ? "raw::jsonb::text" : "\(key)::text"
                let same = try connection.query(
                    "SELECT (SELECT \(text) FROM sample WHERE id = 1) IS NOT DISTINCT FROM (SELECT \(text) FROM sample WHERE id = 2)")
                #expect(try same[0].decode(Bool.self, at: 0), "\(key)")
            }
            let fresh = try DatabaseContext(connection: TestDatabase.connect(), model: context.model)
            let written = try #require(try fresh.object("sample", primaryKey: 2))
            for (key, value) in Self.expected {
                #expect(Self.hashable(try written.value(forKey: key)) == Self.hashable(value), "\(key)")
            }
            // Text forms are still taken, as before these types had a mapping.
            try target.setValue("2 days", forKey: "span")
            try target.setValue(#"{"c": 1}"#, forKey: "doc")
            try target.setValue("[3,4)", forKey: "seats")
            #expect(try target.value(forKey: "span") as? PostgresInterval == PostgresInterval(days: 2))
            #expect(try target.value(forKey: "doc") as? JSONValue == ["c": 1])
            #expect(try target.value(forKey: "seats") as? PostgresRange<Int> == PostgresRange(3..<4))
        }
    }

    @Test func wrongValuesAreErrorsNamingTheColumn() throws {
        try Self.withSamples { context, _ in
            let row = try #require(try context.object("sample", primaryKey: 1))
            for (key, value) in [("seats", PostgresRange<Decimal>(lower: .inclusive(1), upper: .infinite)) as (String, any Sendable),
                                 ("span", 5), ("host", PostgresInterval()), ("opens", Date())] {
                let error = #expect(throws: RelateError.self) { try row.setValue(value, forKey: key) }
                #expect(error?.kind == .typeMismatch, "\(key)")
                #expect(error?.message.contains("\"\(key)\"") == true, "\(key)")
            }
            // A bound too wide for int4range is refused, naming the parameter, not sent as int8.
            #expect(throws: RelateError.self) { try row.setValue(PostgresRange(1..<Int.max), forKey: "seats") }
            #expect(try row.value(forKey: "seats") as? PostgresRange<Int> == PostgresRange(1..<10))
        }
    }

    @Test func conditionsTakeTheValues() throws {
        try Self.withSamples { context, _ in
            for (key, value) in Self.expected where !["raw", "docs", "spans", "hosts", "stays"].contains(key) {
                // json has no equality operator; arrays are compared whole below.
                let count = try context.count(FetchRequest("sample", where: Key(key) == value))
                #expect(count == 1, "\(key)")
            }
            let stays = try context.count(FetchRequest("sample", where: Key("stays") == [PostgresRange(Self.day..<(Self.day + 86_400))]))
            #expect(stays == 1)
            let other = try PostgresInet("10.0.0.2/8")
            let hosts = try context.count(FetchRequest("sample", where: Key("host") == other))
            #expect(hosts == 0)
        }
    }

    /// `@>` and `#>>` on json and jsonb columns, values bound, through keys and typed columns.
    @Test func jsonConditions() throws {
        try Self.withSamples { context, _ in
            func expect(_ condition: Condition, _ expected: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
                let count = try context.count(FetchRequest("sample", where: condition))
                #expect(count == expected, sourceLocation: sourceLocation)
            }
            // Row 1: doc {"a": [1, 2.5, null]}, raw {"b": true}.
            try expect(Key("doc").jsonContains(["a": [.number(2.5)]]), 1)
            try expect(Key("doc").jsonContains(["a": [3]]), 0)
            try expect(Key("raw").jsonContains(["b": true]), 1)
            try expect(Key("doc").jsonText(at: "a", "1", equals: "2.5"), 1)
            try expect(Key("raw").jsonText(at: "b", equals: "true"), 1)
            try expect(Key("raw").jsonText(at: "b", equals: "false"), 0)
            // Nothing at the path (or NULL): row 1 has no "zz", row 2 has no document.
            try expect(Key("doc").jsonText(at: "zz", equals: nil), 2)
            // A text with quotes and a path with a comma stay values, never SQL.
            try expect(Key("doc").jsonText(at: "a,b", "'); DROP TABLE sample; --", equals: "x'y"), 0)
            let doc = AttributeColumn<JSONValue?>("doc")
            try expect(doc.jsonContains(["a": [1]]) && doc.jsonText(at: "a", "0", equals: "1"), 1)
            let error = #expect(throws: RelateError.self) { try context.count(FetchRequest("sample", where: Key("span").jsonContains([:]))) }
            #expect(error?.kind == .typeMismatch)
            #expect(error?.message.contains("json or jsonb") == true)
        }
    }

    /// What generated getters, `update {}` and drafts call for these types.
    @Test func generatedCodePathsReadAndWriteTheTypes() throws {
        try Self.withSamples { context, _ in
            let row = try #require(try context.object("sample", primaryKey: 2))
            let index = { (name: String) in row.entity.attributes.firstIndex { $0.name == name }! }
            try row.writeTypedChanges([
                TypedChange(index: index("span"), value: PostgresInterval?.some(PostgresInterval(days: 3))),
                TypedChange(index: index("seats"), value: PostgresRange<Int>?.some(PostgresRange(5...6))),
                TypedChange(index: index("doc"), value: JSONValue?.some(["k": "v"])),
                TypedChange(index: index("opens"), value: PostgresTime?.some(PostgresTime(hour: 8, minute: 0))),
                TypedChange(index: index("price"), value: Decimal?.some(Decimal(string: "0.05")!)),
            ])
            #expect(try row.generatedOptionalValue(at: index("span"), as: PostgresInterval.self) == PostgresInterval(days: 3))
            #expect(try row.generatedOptionalValue(at: index("seats"), as: PostgresRange<Int>.self) == PostgresRange(5..<7))
            #expect(try row.generatedOptionalValue(at: index("doc"), as: JSONValue.self) == ["k": "v"])
            #expect(try row.generatedOptionalValue(at: index("opens"), as: PostgresTime.self) == PostgresTime(hour: 8, minute: 0))
            #expect(try row.generatedOptionalValue(at: index("price"), as: Decimal.self) == Decimal(string: "0.05"))
            #expect(try row.generatedOptionalValue(at: index("host"), as: PostgresInet.self) == nil)
            var assignments = TypedAssignments()
            assignments.set(3, forKey: "id", nullable: false)
            assignments.set(PostgresRange<Date>?.some(PostgresRange(Self.day..<(Self.day + 86_400))), forKey: "stay", nullable: true)
            assignments.set(PostgresInet?.some(try PostgresInet("::1")), forKey: "host", nullable: true)
            let inserted = try context.insert("sample", values: assignments.values)
            #expect(try inserted.generatedOptionalValue(at: index("stay"), as: PostgresRange<Date>.self) == PostgresRange(Self.day..<(Self.day + 86_400)))
            #expect(try inserted.generatedOptionalValue(at: index("host"), as: PostgresInet.self) == PostgresInet("::1"))
            let seats = AttributeColumn<PostgresRange<Int>?>("seats")
            #expect(try context.count(FetchRequest("sample", where: seats == PostgresRange(5...6))) == 1)
            let doc = AttributeColumn<JSONValue?>("doc")
            #expect(try context.count(FetchRequest("sample", where: doc == ["k": "v"])) == 1)
        }
    }
}
