import Foundation
import RelateCodeGen
import Testing

@testable import Relate

/// Composite types: the catalog's fields, records read and written in binary (nested
/// composites and arrays of them), generated structs that compile, and what they call run
/// against the server.
@Suite(.serialized) struct CompositeTypeTests {
    static let schema = """
        CREATE TYPE address AS (street text, zip int4, lat numeric, seen date);
        CREATE TYPE contact AS (name varchar(40), home address, others address[], tags text[], score float8);
        CREATE TABLE person (id int4 PRIMARY KEY, main contact, homes address[], plain address NOT NULL);
        INSERT INTO person VALUES (1,
            ROW('Ada', ROW('Main St', 12345, 51.5074, '2024-02-29')::address,
                ARRAY[ROW('Side St', NULL, -0.1278, NULL)::address], ARRAY['a', 'b'], 2.5)::contact,
            ARRAY[ROW('A', 1, 0.5, NULL)::address, NULL], ROW(NULL, NULL, NULL, NULL)::address);
        """

    /// As `relate generate` writes them (checked below against a fresh generation).
    struct Address: TypedComposite {
        var street: String?
        var zip: Int?
        var lat: Decimal?
        var seen: Date?
        init(street: String? = nil, zip: Int? = nil, lat: Decimal? = nil, seen: Date? = nil) {
            self.street = street
            self.zip = zip
            self.lat = lat
            self.seen = seen
        }
        init(record: PostgresRecord) throws {
            street = try record.decode(String.self, at: 0)
            zip = try record.decode(Int.self, at: 1)
            lat = try record.decode(Decimal.self, at: 2)
            seen = try record.decode(Date.self, at: 3)
        }
        var compositeFieldValues: [(any Sendable)?] { [street, zip, lat, seen] }
    }

    struct Contact: TypedComposite {
        var name: String?
        var home: Address?
        var others: [Address]?
        var tags: [String]?
        var score: Double?
        init(name: String? = nil, home: Address? = nil, others: [Address]? = nil, tags: [String]? = nil, score: Double? = nil) {
            self.name = name
            self.home = home
            self.others = others
            self.tags = tags
            self.score = score
        }
        init(record: PostgresRecord) throws {
            name = try record.decode(String.self, at: 0)
            home = try TypedCompositeFields.composite(Address.self, in: record, at: 1)
            others = try TypedCompositeFields.composites(Address.self, in: record, at: 2)
            tags = try record.decode([String].self, at: 3)
            score = try record.decode(Double.self, at: 4)
        }
        var compositeFieldValues: [(any Sendable)?] { [name, home, others, tags, score] }
    }

    static func day(_ text: String) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = text.split(separator: "-").map { Int($0)! }
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))!
    }

    @Test func catalogReadsAndWritesRecords() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let person = try context.model.entity("person")
            let main = try #require(person.attribute(column: "main")?.composite)
            #expect(main.name == "contact" && main.fields.map(\.name) == ["name", "home", "others", "tags", "score"])
            #expect(main.fields[1].composite?.name == "address" && main.fields[2].type == "address[]" && main.fields[2].composite?.name == "address")
            #expect(person.attribute(column: "homes")?.composite?.name == "address")

            // Dynamically: a record, fields by position, nested ones on request.
            let ada = try #require(try context.object("person", primaryKey: 1))
            let record = try #require(try ada.value(forKey: "main") as? PostgresRecord)
            #expect(record.fields.count == 5)
            #expect(try record.decode(String.self, at: 0) == "Ada")
            #expect(try record.record(at: 1)?.decode(Int.self, at: 1) == 12345)
            #expect(!record.description.contains("Ada"))

            // Typed: the generated structs' reads.
            let contact = try #require(try ada.generatedOptionalComposite(at: 1, as: Contact.self))
            #expect(contact.name == "Ada" && contact.score == 2.5 && contact.tags == ["a", "b"])
            #expect(contact.home == Address(street: "Main St", zip: 12345, lat: Decimal(string: "51.5074"), seen: Self.day("2024-02-29")))
            #expect(contact.others == [Address(street: "Side St", lat: Decimal(string: "-0.1278"))])
            #expect(try ada.generatedComposite(at: 3, as: Address.self) == Address())
            // A NULL element where the generated type has none: typeMismatch naming the column.
            let error = #expect(throws: RelateError.self) { try ada.generatedOptionalCompositeArray(at: 2, as: Address.self) }
            #expect(error?.kind == .typeMismatch && error?.description.contains("column \"homes\"") == true, "\(error?.description ?? "")")

            // Writes: in binary, nested composites and arrays of them; the server holds them.
            let written = Contact(
                name: "Grace", home: Address(street: "Navy Yard", zip: 20374, lat: Decimal(string: "-38.9"), seen: Self.day("1906-12-09")),
                others: [Address(zip: 7), Address(street: "Quote \"and\" comma, here")], tags: nil, score: -1.25)
            try ada.writeTypedChanges([
                TypedChange(index: 1, value: written), TypedChange(index: 2, value: [Address(zip: 1), Address(zip: 2)]),
                TypedChange(index: 3, value: Address(street: "Plain")),
            ])
            let text = try connection.query("""
                SELECT (main).name, ((main).home).zip, ((main).home).lat::text, ((main).home).seen::text, ((main).others)[2].street,
                       (main).score::text, (homes[2]).zip, (plain).street FROM person WHERE id = 1
                """)[0]
            #expect(try text.decode(String.self, at: 0) == "Grace")
            #expect(try text.decode(Int.self, at: 1) == 20374)
            #expect(try text.decode(String.self, at: 2) == "-38.9")
            #expect(try text.decode(String.self, at: 3) == "1906-12-09")
            #expect(try text.decode(String.self, at: 4) == "Quote \"and\" comma, here")
            #expect(try text.decode(String.self, at: 5) == "-1.25")
            #expect(try text.decode(Int.self, at: 6) == 2)
            #expect(try text.decode(String.self, at: 7) == "Plain")
            let fresh = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            let reread = try #require(try fresh.object("person", primaryKey: 1))
            #expect(try reread.generatedOptionalComposite(at: 1, as: Contact.self) == written)

            // A record read goes back as it came (setValue), and conditions take the struct.
            try reread.setValue(try reread.value(forKey: "plain"), forKey: "plain")
            #expect(try fresh.count(FetchRequest("person", where: AttributeColumn<Address>("plain") == Address(street: "Plain"))) == 1)
            #expect(try fresh.count(FetchRequest("person", where: AttributeColumn<Contact?>("main") == written)) == 1)
            // A value of another type: typeMismatch naming the column.
            let refused = #expect(throws: RelateError.self) { try reread.setValue(12, forKey: "plain") }
            #expect(refused?.kind == .typeMismatch && refused?.description.contains("column \"plain\"") == true)

            // A context that does not autocommit holds records until save(), readable as the structs.
            let editing = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            editing.autocommits = false
            let pending = try #require(try editing.object("person", primaryKey: 1))
            try pending.writeTypedChanges([TypedChange(index: 2, value: [Address(zip: 9)]), TypedChange(index: 3, value: Address(zip: 8))])
            #expect(try pending.generatedCompositeArray(at: 2, as: Address.self) == [Address(zip: 9)])
            #expect(try pending.generatedComposite(at: 3, as: Address.self) == Address(zip: 8))
            try editing.save()
            #expect(try connection.query("SELECT homes[1].zip, (plain).zip FROM person WHERE id = 1")[0].decode(Int.self, at: 1) == 8)
        }
    }

    @Test func generatedStructsCompile() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let files = try TypedSeeds.files(for: context.model)
            let model = try #require(files.first { $0.name == Generator.modelFileName }?.contents)
            let entity = try #require(files.first { $0.name == "RelateModel+person.swift" }?.contents)
            for line in [
                "public struct Address: TypedComposite {", "public struct Contact: TypedComposite {", "public var others: [Address]?",
                "home = try TypedCompositeFields.composite(Address.self, in: record, at: 1)", "lat = try record.decode(Decimal.self, at: 2)",
                "public var compositeFieldValues: [(any Sendable)?] { [name, home, others, tags, score] }",
            ] {
                #expect(model.contains(line), "\(line)")
            }
            for line in ["public var main: Contact? {", "public var homes: [Address]? {", "public var plain: Address {",
                         "try object.generatedComposite(at: 3, as: Address.self)"] {
                #expect(entity.contains(line), "\(line)")
            }
            let use = Generator.File(name: "Use.swift", contents: """
                import Foundation
                import Relate
                func use(_ context: DatabaseContext) throws {
                    let made = try context.insert(Person.self) {
                        $0.id = 2
                        $0.plain = Address(street: "Main", zip: 1)
                        $0.main = Contact(name: "Ada", home: Address(zip: 2), others: [Address(street: "x")])
                    }
                    let plain: Address = try made.plain
                    try made.update { $0.homes = [plain]; $0.main?.home?.zip = 3 }
                    _ = try context.fetch(Person.self, where: { $0.plain == plain && $0.main != nil })
                    _ = try made.values
                }
                """)
            let errors = try TypedCompileTests.typecheck(files + [use])
            #expect(errors == nil, "\(errors ?? "")")
            #expect(entity.contains(#"compositeFields: ["street text", "zip int4", "lat numeric", "seen date"]"#))
        }
    }

    enum Mood: String, TypedEnum, CaseIterable {
        case happy, sad
        case soSo = "so-so"
    }

    struct Feeling: TypedComposite {
        var mood: Mood?
        var strength: Int?
        init(mood: Mood? = nil, strength: Int? = nil) {
            self.mood = mood
            self.strength = strength
        }
        init(record: PostgresRecord) throws {
            mood = try TypedCompositeFields.enumeration(Mood.self, in: record, at: 0)
            strength = try record.decode(Int.self, at: 1)
        }
        var compositeFieldValues: [(any Sendable)?] { [mood, strength] }
    }

    /// A field of an enum type: the catalog gives its labels, the generator the enum (as for
    /// a column of that type), read and written in binary; a label added after generation
    /// is `typeMismatch` naming it, and a case the database lacks is refused before sending.
    @Test func enumFieldsAreTheGeneratedEnum() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TYPE mood AS ENUM ('happy', 'sad', 'so-so');
                CREATE TYPE feeling AS (mood mood, strength int4);
                CREATE TABLE diary (id int4 PRIMARY KEY, today feeling);
                INSERT INTO diary VALUES (1, ROW('so-so', 3)::feeling);
                """)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            let today = try #require(try context.model.entity("diary").attribute(column: "today")?.composite)
            #expect(today.fields[0].enumLabels == ["happy", "sad", "so-so"] && today.fields[1].enumLabels == nil)

            let files = try TypedSeeds.files(for: context.model)
            let model = try #require(files.first { $0.name == Generator.modelFileName }?.contents)
            for line in ["public enum Mood: String, TypedEnum, CaseIterable {", "public var mood: Mood?",
                         "mood = try TypedCompositeFields.enumeration(Mood.self, in: record, at: 0)"] {
                #expect(model.contains(line), "\(line)")
            }
            let use = Generator.File(name: "Use.swift", contents: """
                import Relate
                func use(_ context: DatabaseContext) throws {
                    let made = try context.insert(Diary.self) { $0.id = 2; $0.today = Feeling(mood: .soSo, strength: 1) }
                    let mood: Mood? = try made.today?.mood
                    try made.update { $0.today?.mood = mood == .happy ? .sad : .happy }
                }
                """)
            let errors = try TypedCompileTests.typecheck(files + [use])
            #expect(errors == nil, "\(errors ?? "")")

            let diary = try #require(try context.object("diary", primaryKey: 1))
            #expect(try diary.generatedOptionalComposite(at: 1, as: Feeling.self) == Feeling(mood: .soSo, strength: 3))
            try diary.writeTypedChanges([TypedChange(index: 1, value: Feeling(mood: .happy, strength: 9))])
            #expect(try connection.query("SELECT ((today).mood)::text FROM diary WHERE id = 1")[0].decode(String.self, at: 0) == "happy")

            try connection.execute("ALTER TYPE mood ADD VALUE 'angry'")
            try connection.execute("INSERT INTO diary VALUES (3, ROW('angry', 0)::feeling)")
            let fresh = try DatabaseContext(connection: TestDatabase.connect(), schemas: [schema])
            let angry = try #require(try fresh.object("diary", primaryKey: 3))
            let unknown = #expect(throws: RelateError.self) { try angry.generatedOptionalComposite(at: 1, as: Feeling.self) }
            #expect(unknown?.kind == .typeMismatch && unknown?.description.contains("\"angry\"") == true, "\(unknown?.description ?? "")")
        }
    }

    /// A field added to a composite type after generation is `.schemaChanged` naming it.
    @Test func driftCheckNamesAChangedField() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let fields = ["street text", "zip int4", "lat numeric", "seen date"]
            let typed = TypedEntity(
                name: "person",
                attributes: [TypedAttribute(name: "id", type: "int4", nullable: false), TypedAttribute(name: "main", type: "contact", nullable: true),
                             TypedAttribute(name: "homes", type: "address[]", nullable: true, compositeFields: fields),
                             TypedAttribute(name: "plain", type: "address", nullable: false, compositeFields: fields)],
                relationships: [], fingerprint: "test")
            try DatabaseContext(connection: connection, schemas: [schema]).check(typed)
            try connection.execute("ALTER TYPE address ADD ATTRIBUTE floor int2")
            let error = #expect(throws: RelateError.self) { try DatabaseContext(connection: connection, schemas: [schema]).check(typed) }
            #expect(error?.kind == .schemaChanged && error?.description.contains("now has field floor int2") == true, "\(error?.description ?? "")")
        }
    }
}
