import Foundation
import RelateCodeGen
import Testing

@testable import Relate

/// `relate generate` on a schema with every type of issue 41 (and an enum and an array of
/// it) gives properties of those types, and code that compiles in Swift 6 mode with reads,
/// drafts, updates and conditions in them.
@Suite(.serialized) struct ValueTypeGenerationTests {
    static let schema = """
        CREATE TYPE mood AS ENUM ('happy', 'sad', 'so-so');
        CREATE TABLE booking (
            id int4 PRIMARY KEY, span interval NOT NULL, seats int4range, ids int8range, prices numrange, stay daterange,
            window_ts tsrange, window_tz tstzrange, doc jsonb, raw json, host inet, net cidr, nic macaddr, nic8 macaddr8,
            price money, opens time, call timetz, spans interval[], stays daterange[], docs jsonb[], feeling mood,
            moods mood[], search tsvector);
        """

    @Test func everyTypeGeneratesAndCompiles() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let files = try TypedSeeds.files(for: context.model)
            let booking = try #require(files.first { $0.name == "RelateModel+booking.swift" }?.contents)
            for property in [
                "span: PostgresInterval {", "seats: PostgresRange<Int>?", "ids: PostgresRange<Int>?", "prices: PostgresRange<Decimal>?",
                "stay: PostgresRange<Date>?", "windowTs: PostgresRange<Date>?", "windowTz: PostgresRange<Date>?", "doc: JSONValue?",
                "raw: JSONValue?", "host: PostgresInet?", "net: PostgresInet?", "nic: PostgresMacAddress?", "nic8: PostgresMacAddress?",
                "price: Decimal?", "opens: PostgresTime?", "call: PostgresTime?", "spans: [PostgresInterval]?",
                "stays: [PostgresRange<Date>]?", "docs: [JSONValue]?", "feeling: Mood?", "moods: [Mood]?", "search: String?",
            ] {
                #expect(booking.contains("public var \(property)"), "\(property)")
            }
            let use = Generator.File(name: "Use.swift", contents: """
                import Foundation
                import Relate
                func use(_ context: DatabaseContext) throws {
                    let made = try context.insert(Booking.self) {
                        $0.id = 1
                        $0.span = PostgresInterval(months: 1)
                        $0.seats = PostgresRange(1..<10)
                        $0.doc = ["a": [1, 2]]
                        $0.host = try? PostgresInet("10.0.0.1")
                        $0.opens = PostgresTime(hour: 9, minute: 30)
                        $0.moods = [.happy, .soSo]
                    }
                    let span: PostgresInterval = try made.span
                    let doc: JSONValue? = try made.doc
                    try made.update { $0.stay = PostgresRange(Date()..<Date()); $0.price = 12.5; $0.feeling = .sad }
                    _ = try context.fetch(Booking.self, where: { $0.seats == PostgresRange(1..<10) && $0.moods == [.happy] && $0.price > 3 })
                    _ = try context.count(Booking.self, where: { $0.doc.jsonContains(["a": [1]]) || $0.raw.jsonText(at: "k", equals: "v") })
                    _ = (span, doc, try made.values)
                }
                """)
            let errors = try TypedCompileTests.typecheck(files + [use])
            #expect(errors == nil, "\(errors ?? "")")
        }
    }

    /// What the generated code above does, run: a row written through the typed API's
    /// paths reads back equal, and the server holds the values.
    @Test func typedWritesRoundTrip() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            var draft = TypedAssignments()
            draft.set(1, forKey: "id", nullable: false)
            draft.set(PostgresInterval(months: 1, days: 2), forKey: "span", nullable: false)
            draft.set(PostgresRange(1..<10), forKey: "seats", nullable: true)
            draft.set(Decimal(string: "12.34")!, forKey: "price", nullable: true)
            draft.set(["happy", "so-so"], forKey: "moods", nullable: true)
            let row = try context.insert("booking", values: draft.values)
            let text = try connection.query("SELECT span::text, seats::text, price::numeric::text, moods::text FROM booking")[0]
            #expect(try (0..<4).map { try text.decode(String.self, at: $0) } == ["1 mon 2 days", "[1,10)", "12.34", "{happy,so-so}"])
            #expect(try row.value(forKey: "price") as? Decimal == Decimal(string: "12.34"))
            #expect(try context.count(FetchRequest("booking", where: Key("price") > Decimal(12))) == 1)
            #expect(try context.count(FetchRequest("booking", where: Key("price") == Decimal(string: "12.34")!)) == 1)
        }
    }
}
