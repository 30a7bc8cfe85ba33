import Foundation
import RelateCodeGen
import RelatePostgres
import Testing

@testable import Relate

/// The types generated from `sql/examples/awkward_identifiers.sql` (committed in
/// `Generated/`), against the server: the same bytes as a fresh generation, and reads,
/// writes and conditions through keys that are not Swift names.
@Suite struct AwkwardTypedTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A context over a fresh schema loaded from `awkward_identifiers.sql` (RELATE_TEST_URL).
    static func withAwkwardSchema<Result>(_ body: (DatabaseContext) throws -> Result) throws -> Result {
        guard let url = ProcessInfo.processInfo.environment["RELATE_TEST_URL"], !url.isEmpty else {
            throw RelateError(kind: .invalidRequest, message: "RELATE_TEST_URL is not set: run ./scripts/test")
        }
        let connection = try Connection(url: url)
        let schema = "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try connection.execute("CREATE SCHEMA \(schema)")
        try connection.execute("SET search_path TO \(schema)")
        defer { _ = try? Connection(url: url).execute("DROP SCHEMA \(schema) CASCADE") }
        try connection.executeScript(String(contentsOf: repository.appendingPathComponent("sql/examples/awkward_identifiers.sql"), encoding: .utf8))
        return try body(DatabaseContext(connection: connection, schemas: [schema]))
    }

    /// What `Generated/` was made with: `relate generate … --type "mail box.prefs=Preferences"`.
    static let configuration = GeneratorConfiguration(types: ["mail box.prefs": "Preferences"])

    @Test func committedCodeEqualsAFreshGeneration() throws {
        try Self.withAwkwardSchema { context in
            let fresh = try Generator(ModelSnapshot(json: Data(context.model.jsonDescription().utf8)), configuration: Self.configuration).files()
            let directory = Self.repository.appendingPathComponent("Tests/RelateTypedAwkwardTests/Generated")
            let committed = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(Set(committed) == Set(fresh.map(\.name)))
            for file in fresh {
                let text = try String(contentsOf: directory.appendingPathComponent(file.name), encoding: .utf8)
                #expect(text == file.contents, "\(file.name) differs from a fresh generation")
            }
        }
    }

    @Test func readsWritesAndConditionsThroughAwkwardKeys() throws {
        try Self.withAwkwardSchema { context in
            try RelateModel.check(context)
            let line = try context.insert(OrderLine.self) {
                $0.default = "d"
                $0.class = "c"
                $0.first_name = "spaced"
                $0.first_name_2 = "dashed"
                $0.firstName = "camel"
                $0.größe = Decimal(string: "1.5")
                $0.feeling = .soSo
                $0.qty = 3
                $0.valuesColumn = [1, 2]
                $0.let = "l"
            }
            #expect(try line._2fa == false)
            #expect(try line.first_name == "spaced" && line.first_name_2 == "dashed" && line.firstName == "camel")
            #expect(try line.größe == Decimal(string: "1.5"))
            #expect(try line.feeling == .soSo)
            #expect(try line.qty == 3)
            #expect(try line.valuesColumn == [1, 2])
            #expect(try line.default == "d" && line.class == "c" && line.let == "l")
            try line.update { $0._2fa = true; $0.feeling = .happy; $0.first_name_2 = nil }
            #expect(try line._2fa && line.feeling == .happy && line.first_name_2 == nil)
            let values = try line.values
            #expect(try JSONDecoder().decode(OrderLine.Values.self, from: JSONEncoder().encode(values)) == values)

            #expect(try context.count(OrderLine.self, where: { $0.first_name == "spaced" && $0._2fa == true }) == 1)
            #expect(try context.count(OrderLine.self, where: { $0.feeling == .happy && $0.größe > Decimal(1) }) == 1)
            #expect(try context.count(OrderLine.self, where: { $0.default.hasPrefix("d") && $0.let != nil }) == 1)

            // A table named `Values`, its to-one to `Order Line`, and `self` / `Self` columns.
            let tag = try context.insert(ValuesEntity.self) { $0.id = 7; $0.line = line; $0.selfColumn = "upper"; $0.selfColumn_2 = "lower" }
            #expect(try tag.line == line)
            #expect(try line.valuesRelationship.contains(tag))
            #expect(try tag.selfColumn == "upper" && tag.selfColumn_2 == "lower")
            // `2024-sales` and its to-one `Values`; `class` and a many-to-many through class_tag.
            let sale = try context.insert(_2024Sales.self) { $0.id = 1; $0.valuesRelationship = tag }
            #expect(try sale.valuesRelationship == tag)
            #expect(Array(try tag._2024Sales) == [sale])
            let klass = try context.insert(Class.self) { $0.id = 1; $0.prefixColumn = "p" }
            try klass.valuesRelationship.insert(tag)
            #expect(try tag.class.contains(klass))
            #expect(try context.fetch(Class.self, where: { $0.valuesRelationship.any { $0.selfColumn == "upper" } }) == [klass])
            #expect(try context.fetch(_2024Sales.self, where: { $0.valuesRelationship.line.firstName == "camel" }) == [sale])
            // Two tables that camel-case to one name, and a setter renamed beside a column.
            let owner = try context.insert(person_title.self) { $0.id = 1 }
            let titled = try context.insert(PersonTitle.self) { $0.id = 1; $0.setOwner = "column" }
            try titled.setOwnerRelationship(owner)
            #expect(try titled.owner == owner && titled.setOwner == "column")
            #expect(try owner.personTitle.contains(titled))
        }
    }

    /// The generated composite structs and the Codable JSON column, run: nested composites
    /// and arrays of them written and read back in binary, the JSON column as `Preferences`,
    /// conditions on both.
    @Test func compositesAndCodableJSONThroughGeneratedCode() throws {
        try Self.withAwkwardSchema { context in
            try RelateModel.check(context)
            let home = PostalAddress(streetName: "Main St", zipCode: 12345, lat: Decimal(string: "-51.5074"), since: Date(timeIntervalSince1970: 86_400))
            let card = ContactCard(label: "Ada", home: home, oldHomes: [PostalAddress(zipCode: 1), PostalAddress(streetName: "a \"quoted\", street")], score: 2.5)
            let prefs = Preferences(theme: "dark", sizes: [12, 14])
            let box = try context.insert(MailBox.self) { $0.id = 1; $0.card = card; $0.homes = [home]; $0.prefs = prefs }
            #expect(try box.card == card && box.homes == [home] && box.prefs == prefs)
            // From the server, in a fresh context: the same values.
            let fresh = try DatabaseContext(connection: context.connection)
            let reread = try #require(try fresh.object(MailBox.self, primaryKey: 1))
            #expect(try reread.card == card && reread.homes == [home] && reread.prefs == prefs)
            let text = try context.connection.query(#"SELECT ((card).home)."zip code", (card)."old homes"[2]."street name", prefs->>'theme' FROM "mail box""#)[0]
            #expect(try text.decode(Int.self, at: 0) == 12345 && text.decode(String.self, at: 1) == "a \"quoted\", street" && text.decode(String.self, at: 2) == "dark")

            try reread.update { $0.card?.home?.zipCode = 54321; $0.prefs?.sizes.append(16); $0.homes = [] }
            #expect(try reread.card?.home?.zipCode == 54321 && reread.prefs?.sizes == [12, 14, 16] && reread.homes == [])
            #expect(try fresh.count(MailBox.self, where: { $0.prefs == Preferences(theme: "dark", sizes: [12, 14, 16]) }) == 1)
            #expect(try fresh.count(MailBox.self, where: { $0.prefs.jsonContains(["sizes": [16]]) && $0.homes == [] }) == 1)
            var changed = card
            changed.home?.zipCode = 54321
            #expect(try fresh.count(MailBox.self, where: { $0.card == changed }) == 1)
            #expect(try fresh.count(MailBox.self, where: { $0.card == card }) == 0)

            // A document that is not a Preferences: typeMismatch naming the column and the type.
            try context.connection.execute(#"UPDATE "mail box" SET prefs = '{"theme": 1}'"#)
            let other = try DatabaseContext(connection: context.connection)
            let error = #expect(throws: RelateError.self) { try other.object(MailBox.self, primaryKey: 1)?.prefs }
            #expect(error?.kind == .typeMismatch && error?.description.contains("Preferences") == true, "\(error?.description ?? "")")
        }
    }
}

/// The Codable type the configuration gives column `prefs` of `mail box`.
public struct Preferences: Codable, Hashable, Sendable {
    public var theme: String
    public var sizes: [Int]
}
