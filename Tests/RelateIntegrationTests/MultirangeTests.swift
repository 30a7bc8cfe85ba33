import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// PostgreSQL 14's multiranges as `PostgresMultirange<Bound>`: read in both forms, sent back
/// in binary (text for `nummultirange`), and through the object layer and generated code.
@Suite struct MultirangeTests {
    func check<Bound>(_ literal: String, as sqlType: String, is expected: PostgresMultirange<Bound>, format: PostgresFormat) throws {
        let connection = try TestDatabase.connect()
        let read = try connection.query("SELECT $1::\(sqlType), NULL::\(sqlType)", [literal], format: format)[0]
        #expect(try read.decode(PostgresMultirange<Bound>.self, at: 0) == expected, "\(literal)::\(sqlType) in \(format)")
        #expect(try read.decode(PostgresMultirange<Bound>?.self, at: 1) == nil)
        #expect(try read.decode(PostgresMultirange<Bound>.self, at: 0).multirangeType.description == sqlType)
        let parameters: [(any PostgresEncodable)?] = [expected.encodable(as: read.result.columns[0].type), literal]
        let sent = try connection.query("SELECT ($1::\(sqlType))::text, ($2::\(sqlType))::text", parameters)[0]
        #expect(try sent.decode(String.self, at: 0) == sent.decode(String.self, at: 1), "\(literal)::\(sqlType) sent back")
    }

    static func day(_ day: Int) -> Date { Date(timeIntervalSince1970: Double(day) * 86_400) }

    @Test(arguments: [PostgresFormat.text, .binary])
    func everyMultirangeType(format: PostgresFormat) throws {
        let ints = PostgresMultirange<Int>([PostgresRange(1..<3), PostgresRange(5..<8)])
        try check("{[1,3), [5,7]}", as: "int4multirange", is: ints, format: format)
        try check("{[1,3), [5,7]}", as: "int8multirange", is: ints, format: format)
        try check("{}", as: "int4multirange", is: PostgresMultirange<Int>([]), format: format)
        // Ranges that touch merge; an unbounded end stays unbounded.
        try check("{[1,3), [3,4), (,-5]}", as: "int4multirange", is: PostgresMultirange<Int>(
            [PostgresRange(lower: .infinite, upper: .exclusive(-4)), PostgresRange(1..<4)]), format: format)
        try check("{[1.5,2.25), [10,)}", as: "nummultirange", is: PostgresMultirange<Decimal>(
            [PostgresRange(lower: .inclusive(Decimal(string: "1.5")!), upper: .exclusive(Decimal(string: "2.25")!)),
             PostgresRange(lower: .inclusive(10), upper: .infinite)]), format: format)
        try check("{[1970-01-02,1970-01-04)}", as: "datemultirange", is: PostgresMultirange<Date>([PostgresRange(Self.day(1)..<Self.day(3))]), format: format)
        try check("{[\"1970-01-02 00:00:00+00\",\"1970-01-04 00:00:00+00\")}", as: "tstzmultirange",
                  is: PostgresMultirange<Date>([PostgresRange(Self.day(1)..<Self.day(3))]), format: format)
        try check("{[\"1970-01-02 00:00:00\",\"1970-01-04 00:00:00\"]}", as: "tsmultirange",
                  is: PostgresMultirange<Date>([PostgresRange(Self.day(1)...Self.day(3))]), format: format)
    }

    @Test func objectLayerReadsWritesAndCompares() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE slot (id int4 PRIMARY KEY, seats int4multirange, spans tstzmultirange, prices nummultirange);
                INSERT INTO slot VALUES (1, '{[1,3),[5,8)}', '{}', '{[1.5,2)}');
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let slot = try #require(try context.object("slot", primaryKey: 1))
            let seats = try #require(try slot.value(forKey: "seats") as? PostgresMultirange<Int>)
            #expect(seats.ranges == [PostgresRange(1..<3), PostgresRange(5..<8)])
            #expect(try slot.value(forKey: "spans") as? PostgresMultirange<Date> == PostgresMultirange<Date>([]))
            // A PostgresMultirange<Int> made in Swift goes into an int4multirange column as one.
            try slot.setValue(PostgresMultirange<Int>([PostgresRange(10..<20)]), forKey: "seats")
            try slot.setValue(PostgresMultirange<Decimal>([PostgresRange(lower: .inclusive(Decimal(string: "0.5")!), upper: .infinite)]), forKey: "prices")
            let text = try connection.query("SELECT seats::text, prices::text FROM slot")[0]
            #expect(try text.decode(String.self, at: 0) == "{[10,20)}")
            #expect(try text.decode(String.self, at: 1) == "{[0.5,)}")
            #expect(try context.count(FetchRequest("slot", where: Key("seats") == PostgresMultirange<Int>([PostgresRange(10..<20)]))) == 1)
            #expect(throws: RelateError.self) { try slot.setValue(PostgresMultirange<Date>([]), forKey: "seats") }
            let files = try TypedSeeds.files(for: context.model)
            let generated = try #require(files.first { $0.name == "RelateModel+slot.swift" }?.contents)
            #expect(generated.contains("public var seats: PostgresMultirange<Int>?"))
            #expect(generated.contains("public var spans: PostgresMultirange<Date>?"))
            #expect(generated.contains("public var prices: PostgresMultirange<Decimal>?"))
        }
    }
}
