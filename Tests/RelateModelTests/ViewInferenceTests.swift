import Relate
import Testing

/// A view's key and relationships from where its columns come from (``Catalog/ViewSource``),
/// on hand-built catalogs: the rule of `ModelBuilder+Views.swift`, no server.
@Suite struct ViewInferenceTests {
    typealias Source = Catalog.ViewSource
    typealias Ref = Catalog.ViewSource.ColumnReference

    static let person = table("person", "id name country_id", foreignKeys: [fk("person_country_id_fkey", ["country_id"], "country")])
    static let email = table("email", "id address person_id", foreignKeys: [fk("email_person_id_fkey", ["person_id"], "person")])
    static let country = table("country", "id name")

    static func name(_ table: String) -> Catalog.TableName { Catalog.TableName(name: table) }

    /// A view over `relations` whose columns are `columns` (name: relation.column, or no origin).
    static func view(
        _ name: String, _ columns: [(String, Ref?)], relations: [(String, Bool)], equalities: [Source.Equality] = [],
        features: Source.Features = []
    ) -> Catalog.Table {
        Catalog.Table(
            name: name, kind: .view, columns: columns.map { Catalog.Column(name: $0.0, type: "int4") },
            viewSource: Source(
                relations: relations.map { Source.Relation(table: Self.name($0.0), isNullable: $0.1) }, columns: columns.map(\.1),
                equalities: equalities, features: features))
    }

    func model(_ views: Catalog.Table...) throws -> Model {
        try makeModel([Self.person, Self.email, Self.country] + views)
    }

    @Test func aViewOverOneTableCarriesItsKeyRenamed() throws {
        let view = Self.view(
            "mail", [("mail_id", Ref(relation: 0, column: "id")), ("address", Ref(relation: 0, column: "address"))],
            relations: [("email", false)])
        let entity = try model(view).entity("mail")
        #expect(entity.primaryKey == ["mail_id"] && entity.keySource == .view && entity.keyName == "email.id")
        #expect(entity.reads == ["email"])
    }

    @Test func aViewJoiningToOneIsKeyedByTheManySide() throws {
        // email JOIN person ON person.id = email.person_id: person is pinned on its key.
        let view = Self.view(
            "email_owner",
            [("id", Ref(relation: 0, column: "id")), ("owner_id", Ref(relation: 0, column: "person_id")),
             ("owner", Ref(relation: 1, column: "name"))],
            relations: [("email", false), ("person", false)],
            equalities: [.init(Ref(relation: 1, column: "id"), equals: Ref(relation: 0, column: "person_id")),
                         .init(Ref(relation: 0, column: "person_id"), equals: Ref(relation: 1, column: "id"))])
        let model = try model(view)
        let entity = try model.entity("email_owner")
        #expect(entity.primaryKey == ["id"] && entity.keyName == "email.id")
        // Its foreign key columns carried (renamed): a to-one named from the column
        // (`owner`), the inverse to-many on person named after the view. The column `owner`
        // claims that name too: as for a table, each keeps a qualified name and the bare
        // name lists both.
        #expect(try model.summary("email_owner", "email_person_id_fkey")
            == "email_person_id_fkey many-to-one email_owner(owner_id) → person(id) fk:from email_person_id_fkey foreign-key inverse:email_owner")
        #expect(try model.summary("person", "email_owner")
            == "email_owner one-to-many person(id) → email_owner(owner_id) fk:to email_person_id_fkey foreign-key inverse:email_person_id_fkey")
        let clash = #expect(throws: RelateError.self) { try model.entity("email_owner").property(forKey: "owner") }
        #expect(clash?.kind == .ambiguousKey && clash?.candidates == ["email_person_id_fkey", "owner_column"])
    }

    @Test func aToManyJoinAnAggregateDistinctOrAnOuterSideHasNoKey() throws {
        // person JOIN email: email is not pinned on a unique key, so person rows repeat.
        let toMany = Self.view(
            "person_mail", [("id", Ref(relation: 0, column: "id")), ("address", Ref(relation: 1, column: "address"))],
            relations: [("person", false), ("email", false)],
            equalities: [.init(Ref(relation: 1, column: "person_id"), equals: Ref(relation: 0, column: "id")),
                         .init(Ref(relation: 0, column: "id"), equals: Ref(relation: 1, column: "person_id"))])
        let aggregate = Self.view("counts", [("person_id", Ref(relation: 0, column: "person_id")), ("n", nil)],
                                  relations: [("email", false)], features: .aggregates)
        let distinct = Self.view("ids", [("id", Ref(relation: 0, column: "id"))], relations: [("email", false)], features: .distinct)
        // email RIGHT JOIN … leaves email nullable: its key may be NULL.
        let nullable = Self.view("maybe", [("id", Ref(relation: 0, column: "id"))], relations: [("email", true)])
        // A cross join: nothing pins country.
        let cross = Self.view(
            "crossed", [("id", Ref(relation: 0, column: "id")), ("country", Ref(relation: 1, column: "name"))],
            relations: [("email", false), ("country", false)])
        let model = try model(toMany, aggregate, distinct, nullable, cross)
        for name in ["person_mail", "counts", "ids", "maybe", "crossed"] {
            let entity = try model.entity(name)
            #expect(entity.primaryKey.isEmpty && entity.keySource == nil, "\(name)")
        }
        // The aggregate still carries email.person_id: its rows refer to people.
        #expect(try model.summary("counts", "person")
            == "person many-to-one counts(person_id) → person(id) fk:from email_person_id_fkey foreign-key inverse:counts")
        // A window function neither merges nor repeats rows.
        let windowed = Self.view("ranked", [("id", Ref(relation: 0, column: "id")), ("rank", nil)],
                                 relations: [("email", false)], features: .windowFunctions)
        #expect(try makeModel([Self.email, Self.person, windowed]).entity("ranked").primaryKey == ["id"])
    }

    @Test func aChainOfToOneJoinsAndAConstantPin() throws {
        // email JOIN person ON person.id = email.person_id JOIN country ON country.id = person.country_id
        let chain = Self.view(
            "mail_country", [("id", Ref(relation: 0, column: "id")), ("country", Ref(relation: 2, column: "name"))],
            relations: [("email", false), ("person", false), ("country", true)],
            equalities: [.init(Ref(relation: 1, column: "id"), equals: Ref(relation: 0, column: "person_id")),
                         .init(Ref(relation: 2, column: "id"), equals: Ref(relation: 1, column: "country_id"))])
        // email CROSS JOIN country WHERE country.id = 1: one country row at most.
        let constant = Self.view(
            "mail_in_one", [("id", Ref(relation: 0, column: "id"))], relations: [("email", false), ("country", false)],
            equalities: [.init(Ref(relation: 1, column: "id"), equals: nil)])
        let model = try model(chain, constant)
        #expect(try model.entity("mail_country").primaryKey == ["id"])
        #expect(try model.entity("mail_in_one").primaryKey == ["id"])
        #expect(try model.entity("mail_country").reads == ["email", "person", "country"])
    }

    @Test func aTableKeyedByAUniqueConstraintAndAViewOverAView() throws {
        let towns = Catalog.Table(
            name: "towns", columns: Examples.columns("id! code! department! name!"),
            uniqueKeys: [.init(name: "towns_id_key", columns: ["id"]), .init(name: "towns_code_department_key", columns: ["code", "department"])])
        // Carries (code, department) but not id: the other NOT NULL unique key.
        let byCode = Self.view(
            "town_codes", [("code", Ref(relation: 0, column: "code")), ("dep", Ref(relation: 0, column: "department")),
                           ("name", Ref(relation: 0, column: "name"))],
            relations: [("towns", false)])
        let onTop = Self.view("town_codes_again", [("c", Ref(relation: 0, column: "code")), ("d", Ref(relation: 0, column: "dep"))],
                              relations: [("town_codes", false)])
        let model = try makeModel([towns, byCode, onTop])
        let entity = try model.entity("town_codes")
        #expect(entity.primaryKey == ["code", "dep"] && entity.keyName == "towns.code, towns.department")
        #expect(try model.entity("town_codes_again").primaryKey == ["c", "d"])
        #expect(try model.entity("town_codes_again").keyName == "town_codes.code, town_codes.dep")
    }

    @Test func anOverrideWinsAndAViewOverAnUnknownTableHasNothing() throws {
        let view = Self.view("mail", [("id", Ref(relation: 0, column: "id")), ("address", Ref(relation: 0, column: "address"))],
                             relations: [("email", false)])
        let declared = try makeModel([Self.person, Self.email, view], overrides: [.primaryKey(of: "mail", columns: ["address"])])
        #expect(try declared.entity("mail").primaryKey == ["address"] && declared.entity("mail").keySource == .override)
        // The base table ignored: no key, no relationship, nothing it reads.
        let ignored = try makeModel([Self.person, Self.email, view], overrides: [.ignore("email")])
        #expect(try ignored.entity("mail").primaryKey.isEmpty && ignored.entity("mail").reads.isEmpty)
    }

    @Test func aKeyedViewCarryingItsForeignKeyAsItsKeyIsOneToOne() throws {
        let profile = table("profile", "person_id bio", primaryKey: ["person_id"],
                            foreignKeys: [fk("profile_person_id_fkey", ["person_id"], "person")])
        let view = Self.view("bios", [("person_id", Ref(relation: 0, column: "person_id")), ("bio", Ref(relation: 0, column: "bio"))],
                             relations: [("profile", false)])
        let model = try makeModel([Self.person, Self.country, profile, view])
        #expect(try model.entity("bios").relationship(forKey: "person").kind == .oneToOne)
        #expect(try model.entity("person").relationship(forKey: "bios").kind == .oneToOne)
    }

    /// Two foreign keys to one table carried by a view: the to-ones are named from their
    /// columns, the two inverses on the table share the view's name, so the bare name lists
    /// both and each keeps a qualified one, as for a table.
    @Test func twoInversesNamedAfterOneViewAreQualified() throws {
        let book = table("book", "id authorId translatorId", foreignKeys: [
            fk("book_authorId_fkey", ["authorId"], "person"), fk("book_translatorId_fkey", ["translatorId"], "person"),
        ])
        let view = Self.view(
            "books", [("id", Ref(relation: 0, column: "id")), ("authorId", Ref(relation: 0, column: "authorId")),
                      ("translatorId", Ref(relation: 0, column: "translatorId"))],
            relations: [("book", false)])
        let model = try makeModel([Self.person, Self.country, book, view])
        #expect(try model.entity("books").relationship(forKey: "author").to.table == "person")
        #expect(try model.entity("books").relationship(forKey: "translator").to.table == "person")
        let bare = #expect(throws: RelateError.self) { try model.entity("person").relationship(forKey: "books") }
        #expect(bare?.kind == .ambiguousKey && bare?.candidates == ["books_by_authorId", "books_by_translatorId"])
        #expect(try model.entity("person").relationship(forKey: "books_by_authorId").inverseKey == "author")
    }
}
