import Foundation
import Relate
import RelateCodeGen
import Testing

/// The typed-model generator, without a server: names, escaping, clashes, determinism and
/// stability, from hand-built models through their JSON (as `relate generate` feeds it).
@Suite struct GeneratorTests {
    func snapshot(_ model: Model) throws -> ModelSnapshot {
        try ModelSnapshot(json: Data(model.jsonDescription().utf8))
    }

    func files(_ tables: [Catalog.Table], schemas: [String] = ["public"]) throws -> [String: String] {
        let generator = try Generator(snapshot(makeModel(tables, schemas: schemas)))
        return Dictionary(uniqueKeysWithValues: generator.files().map { ($0.name, $0.contents) })
    }

    @Test func camelCaseNames() {
        #expect(SwiftNames.upperCamel("person") == "Person")
        #expect(SwiftNames.upperCamel("person_title_rel") == "PersonTitleRel")
        #expect(SwiftNames.upperCamel("schema.table") == "SchemaTable")
        #expect(SwiftNames.lowerCamel("person_id") == "personId")
        #expect(SwiftNames.lowerCamel("book_by_authorId") == "bookByAuthorId")
        #expect(SwiftNames.lowerCamel("authorId") == "authorId")
        #expect(SwiftNames.lowerCamel("ID_card") == "idCard")
        #expect(SwiftNames.lowerCamel("first name") == "firstName")
        #expect(SwiftNames.lowerCamel("e-mail") == "eMail")
        #expect(SwiftNames.lowerCamel("2fa_code") == "_2faCode")
        #expect(SwiftNames.upperCamel("2024_sales") == "_2024Sales")
        #expect(SwiftNames.lowerCamel("größe") == "größe")
        #expect(SwiftNames.lowerCamel("prix €") == "prix")
        #expect(SwiftNames.lowerCamel("?") == "_3F")
        #expect(SwiftNames.lowerCamel("Order") == "order")
    }

    @Test func keywordsAreEscaped() {
        for keyword in ["default", "class", "in", "where", "protocol", "func", "repeat"] {
            #expect(SwiftNames.escaped(SwiftNames.lowerCamel(keyword)) == "`\(keyword)`")
        }
        // Contextual keywords are plain identifiers.
        #expect(SwiftNames.escaped("type") == "type")
        #expect(SwiftNames.escaped("firstname") == "firstname")
    }

    @Test func clashingNamesAreQualifiedDeterministically() {
        let names = SwiftNames.uniqueNames(for: ["personId", "person_id", "PERSON_ID"], reserved: [], suffix: "", camel: SwiftNames.lowerCamel)
        #expect(names["personId"] == "personId")
        #expect(names["person_id"] == "person_id")
        #expect(names["PERSON_ID"] == "personID")
        // The same answer in any order.
        #expect(SwiftNames.uniqueNames(for: ["PERSON_ID", "person_id", "personId"], reserved: [], suffix: "", camel: SwiftNames.lowerCamel) == names)
        let types = SwiftNames.uniqueNames(for: ["person_title", "personTitle", "Values"], reserved: Generator.reservedTypeNames, suffix: "Entity", camel: SwiftNames.upperCamel)
        #expect(types["Values"] == "ValuesEntity")
        #expect(types["person_title"] != types["personTitle"])
        #expect(Set(types.values).count == 3)
        // A name spelled as an identifier keeps its spelling; another whose spelling reads
        // the same takes a number.
        let numbered = SwiftNames.uniqueNames(for: ["a_b", "aB", "a b"], reserved: [], suffix: "", camel: SwiftNames.lowerCamel)
        #expect(numbered == ["aB": "aB", "a_b": "a_b", "a b": "a_b_2"])
    }

    @Test func awkwardIdentifiersMakeValidDistinctMembers() throws {
        let awkward = Catalog.Table(
            name: "Order Line", columns: [
                Catalog.Column(name: "id", type: "int4", isNullable: false),
                Catalog.Column(name: "default", type: "text", isNullable: true),
                Catalog.Column(name: "class", type: "text", isNullable: true),
                Catalog.Column(name: "type", type: "text", isNullable: true),
                Catalog.Column(name: "first name", type: "text", isNullable: true),
                Catalog.Column(name: "first-name", type: "text", isNullable: true),
                Catalog.Column(name: "firstName", type: "text", isNullable: true),
                Catalog.Column(name: "2fa", type: "bool", isNullable: false),
                Catalog.Column(name: "größe", type: "numeric", isNullable: true),
                Catalog.Column(name: "object", type: "uuid", isNullable: true),
                Catalog.Column(name: "values", type: "int4[]", isNullable: true),
            ], primaryKey: ["id"])
        let generated = try files([awkward])
        let source = try #require(generated["RelateModel+Order_20Line.swift"])
        #expect(source.contains("public struct OrderLine: TypedObject"))
        for member in [
            "public var `default`: String?", "public var `class`: String?", "public var type: String?",
            "public var firstName: String?", "public var first_name: String?", "public var first_name_2: String?",
            "public var _2fa: Bool {", "public var größe: Decimal?", "public var objectColumn: UUID?", "public var valuesColumn: [Int]?",
        ] {
            #expect(source.contains(member), "\(member)")
        }
        // `first name` and `first-name` both read `first_name` verbatim: ordered by their bytes.
        #expect(source.contains("TypedAttribute(name: \"first name\""))
    }

    @Test func seedTypesAndMembers() throws {
        let generated = try files(Examples.seed)
        #expect(Set(generated.keys) == [
            "RelateModel.swift", "RelateModel+email.swift", "RelateModel+person.swift", "RelateModel+person_title_rel.swift",
            "RelateModel+title.swift",
        ])
        let person = try #require(generated["RelateModel+person.swift"])
        #expect(person.contains("public struct Person: TypedObject"))
        #expect(person.contains("public var email: RelatedObjects<Email>"))
        #expect(person.contains("public var title: RelatedObjects<Title>"))
        #expect(person.contains("public var personTitleRel: RelatedObjects<PersonTitleRel>"))
        let email = try #require(generated["RelateModel+email.swift"])
        #expect(email.contains("public var person: Person?"))
        #expect(email.contains("public func setPerson(_ person: Person?) throws"))
        #expect(email.contains("public var personId: Int?"))
        let helper = try #require(generated["RelateModel+person_title_rel.swift"])
        #expect(helper.contains("public typealias PrimaryKey = [any Sendable]"))
        #expect(!person.contains("Date()"))
    }

    @Test func qualifiedRelationshipNamesCamelCase() throws {
        let generated = try files(Examples.book)
        let person = try #require(generated["RelateModel+person.swift"])
        #expect(person.contains("public var bookByAuthorId: RelatedObjects<Book>"))
        #expect(person.contains("public var bookByTranslatorId: RelatedObjects<Book>"))
        let book = try #require(generated["RelateModel+book.swift"])
        #expect(book.contains("public var author: Person?"))
        #expect(book.contains("public var translator: Person?"))
    }

    @Test func outputIsDeterministic() throws {
        let first = try files(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        let second = try files(Examples.hardCases.reversed(), schemas: Examples.hardCasesSchemas)
        #expect(first == second)
        // Snapshot order does not matter either.
        var shuffled = try snapshot(makeModel(Examples.seed))
        shuffled.entities.reverse()
        shuffled.relationships.reverse()
        #expect(try Generator(shuffled).files() == (try Generator(snapshot(makeModel(Examples.seed))).files()))
        for (_, contents) in first {
            #expect(!contents.contains("/work/") && !contents.contains("2026"))
        }
    }

    @Test func namesStayWhenAnUnrelatedTableIsAddedOrRemoved() throws {
        let before = try files(Examples.seed)
        let after = try files(Examples.seed + [table("audit_log", "id message"), table("personTitle", "id label")])
        for (name, contents) in before where name != Generator.modelFileName {
            #expect(after[name] == contents, "\(name)")
        }
        #expect(after["RelateModel+audit_log.swift"]?.contains("public struct AuditLog: TypedObject") == true)
        #expect(after[Generator.modelFileName] != before[Generator.modelFileName])
    }

    @Test func crossSchemaEntitiesAndFileNames() throws {
        let generated = try files(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        let currency = try #require(generated["RelateModel+\(Examples.otherSchema).currency.swift"])
        #expect(currency.contains("public struct HardCasesOtherCurrency: TypedObject"))
        #expect(Generator.fileName(ofEntity: "größe") == "RelateModel+gr_C3_B6_C3_9Fe.swift")
        #expect(Generator.fileName(ofEntity: "a.b-c") == "RelateModel+a.b-c.swift")
    }

    @Test func typeMapping() {
        let cases: [(String, String)] = [
            ("int2", "Int"), ("int8", "Int"), ("float4", "Float"), ("float8", "Double"), ("numeric", "Decimal"),
            ("varchar", "String"), ("jsonb", "JSONValue"), ("json", "JSONValue"), ("bool", "Bool"), ("timestamptz", "Date"),
            ("uuid", "UUID"), ("bytea", "Data"), ("int4[]", "[Int]"), ("text[]", "[String]"), ("interval", "PostgresInterval"),
            ("inet[]", "[PostgresInet]"), ("cidr", "PostgresInet"), ("macaddr", "PostgresMacAddress"), ("macaddr8", "PostgresMacAddress"),
            ("money", "Decimal"), ("time", "PostgresTime"), ("timetz", "PostgresTime"), ("int4range", "PostgresRange<Int>"),
            ("int8range", "PostgresRange<Int>"), ("numrange", "PostgresRange<Decimal>"), ("daterange", "PostgresRange<Date>"),
            ("tsrange", "PostgresRange<Date>"), ("tstzrange[]", "[PostgresRange<Date>]"), ("tsvector", "String"), ("mood", "String"),
        ]
        for (type, swift) in cases {
            #expect(TypeMapping.swiftType(typeName: type) == swift, "\(type)")
        }
        #expect(TypeMapping.swiftType(of: .init(name: "email", type: "email_address", nullable: true, baseType: "varchar")) == "String")
        #expect(TypeMapping.swiftType(of: .init(name: "n", type: "positive", nullable: true, baseType: "int4")) == "Int")
    }

    @Test func fingerprintChangesWithWhatTheCodeDependsOn() throws {
        func fingerprint(_ tables: [Catalog.Table]) throws -> String {
            try Generator(snapshot(makeModel(tables))).modelFingerprint()
        }
        let base = try fingerprint(Examples.seed)
        #expect(try fingerprint(Examples.seed) == base)
        var nullable = Examples.seed
        nullable[0].columns[0] = Catalog.Column(name: "id", type: "int4", isNullable: true)
        #expect(try fingerprint(nullable) != base)
        var retyped = Examples.seed
        retyped[0].columns[1] = Catalog.Column(name: "firstname", type: "varchar", isNullable: true)
        #expect(try fingerprint(retyped) != base)
    }

    @Test func enumsBecomeStringEnumsNamedBesideTheEntities() throws {
        let mood = Catalog.Table(
            name: "mood", columns: [
                Catalog.Column(name: "id", type: "int4", isNullable: false),
                Catalog.Column(name: "feeling", type: "mood", isNullable: false, enumLabels: ["happy", "so-so", "default", "allCases"]),
                Catalog.Column(name: "usual", type: "mood", isNullable: true, enumLabels: ["happy", "so-so", "default", "allCases"]),
                Catalog.Column(name: "empty", type: "nothing", isNullable: true, enumLabels: []),
            ], primaryKey: ["id"])
        let generated = try files([mood])
        let model = try #require(generated[Generator.modelFileName])
        let entity = try #require(generated["RelateModel+mood.swift"])
        // The table keeps `Mood` (exact spelling first by bytes); the enum takes its name verbatim.
        #expect(entity.contains("public struct Mood: TypedObject"))
        #expect(model.contains("public enum _mood: String, TypedEnum, CaseIterable {"))
        #expect(model.contains("    case happy\n    case soSo = \"so-so\"\n    case `default`\n    case allCasesCase = \"allCases\"\n"))
        #expect(entity.contains("public var feeling: _mood {"))
        #expect(entity.contains("try object.generatedEnum(at: 1, as: _mood.self)"))
        #expect(entity.contains("public var usual: _mood? {"))
        #expect(entity.contains("public var empty: String?"))
        #expect(entity.contains("assignments.set(newValue?.rawValue, forKey: \"feeling\", nullable: false)"))
        // The drift check knows the labels the enum was generated with.
        #expect(entity.contains(#"TypedAttribute(name: "feeling", type: "mood", nullable: false, enumLabels: ["happy", "so-so", "default", "allCases"])"#))
        #expect(entity.contains(#"TypedAttribute(name: "empty", type: "nothing", nullable: true)"#))
    }

    /// A `mood[]` column takes the enum of `mood`, one enum for both.
    @Test func arraysOfAnEnumAreArraysOfItsGeneratedEnum() throws {
        let labels = ["happy", "so-so"]
        let diary = Catalog.Table(
            name: "diary", columns: [
                Catalog.Column(name: "id", type: "int4", isNullable: false),
                Catalog.Column(name: "feeling", type: "mood", isNullable: true, enumLabels: labels),
                Catalog.Column(name: "week", type: "mood[]", isNullable: true, enumLabels: labels),
                Catalog.Column(name: "always", type: "mood[]", isNullable: false, enumLabels: labels),
            ], primaryKey: ["id"])
        let generated = try files([diary])
        let model = try #require(generated[Generator.modelFileName])
        let entity = try #require(generated["RelateModel+diary.swift"])
        #expect(model.components(separatedBy: "public enum Mood: String, TypedEnum, CaseIterable {").count == 2)
        #expect(!model.contains("[]"))
        #expect(entity.contains("public var week: [Mood]? {"))
        #expect(entity.contains("try object.generatedOptionalEnumArray(at: 2, as: Mood.self)"))
        #expect(entity.contains("try object.generatedEnumArray(at: 3, as: Mood.self)"))
        #expect(entity.contains("public var always: [Mood]\n"))
        #expect(entity.contains("assignments.set(newValue?.map(\\.rawValue), forKey: \"week\", nullable: true)"))
        #expect(entity.contains("public var week: AttributeColumn<[Mood]?>"))
    }
}
