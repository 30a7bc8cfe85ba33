import Relate
import Testing

/// DESIGN "Keys (names)": what each relationship answers to, and how clashes resolve.
@Suite struct NamingTests {
    /// A to-one from `source(column)` to `target`, under the constraint name `c`.
    private func toOneKey(column: String, target: String = "person") throws -> String {
        let model = try makeModel([
            table(target, "id"),
            table("source", "id \(column)", foreignKeys: [fk("c", [column], target)]),
        ])
        let source = try model.entity("source")
        let relationship = try #require(source.relationships.first)
        #expect(source.relationships.count == 1)
        // The constraint's name always works too.
        #expect(try source.relationship(forKey: "c") == relationship)
        return relationship.key
    }

    @Test func toOneNamedAfterItsColumn() throws {
        #expect(try toOneKey(column: "person_id") == "person")
        #expect(try toOneKey(column: "owner_id") == "owner")
        #expect(try toOneKey(column: "authorId") == "author")
        #expect(try toOneKey(column: "issuer_country_id") == "issuer_country")
        #expect(try toOneKey(column: "user2Id") == "user2")
    }

    @Test func toOneNamedAfterTheTargetOtherwise() throws {
        #expect(try toOneKey(column: "country_code", target: "country") == "country")
        #expect(try toOneKey(column: "owner", target: "person") == "person")
        #expect(try toOneKey(column: "personid", target: "person") == "person")
        #expect(try toOneKey(column: "_id", target: "person") == "person")
        #expect(try toOneKey(column: "Id", target: "person") == "person")
        #expect(try toOneKey(column: "ID", target: "person") == "person")
        #expect(try toOneKey(column: "ownerID", target: "person") == "person")
    }

    @Test func compositeToOneNamedAfterTheTarget() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        let shelf = try model.entity("shelf")
        #expect(shelf.relationships.map(\.key) == ["warehouse"])
        #expect(try shelf.relationship(forKey: "shelf_region_warehouse_code_fkey").key == "warehouse")
    }

    @Test func toOneNamedAfterACrossSchemaTarget() throws {
        // The target's name in the model, with its schema.
        let model = try makeModel(
            [table("currency", schema: "money", "id"), table("price", "id currency", foreignKeys: [fk("p", ["currency"], "currency", schema: "money")])],
            schemas: ["public", "money"])
        #expect(try model.entity("price").relationship(forKey: "money.currency").summary
            == "money.currency many-to-one price(currency) → money.currency(id) fk:from p foreign-key inverse:price")
    }

    @Test func constraintNameAlwaysAnswers() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        for entity in model.entities {
            for relationship in entity.relationships where relationship.foreignKeyIn == .from {
                #expect(try entity.relationship(forKey: relationship.constraint) == relationship, "\(entity.name).\(relationship.constraint)")
            }
        }
        // BaseTen's own example: the constraint is called person, and so is the key.
        let seed = try Relate.Model(catalog: Catalog(schemas: ["public"], tables: Examples.personEmail()))
        #expect(try seed.entity("email").relationship(forKey: "person").constraint == "person")
        #expect(try seed.entity("email").relationship(forKey: "person").qualifiedName == "person")
    }

    @Test func toManyNamedAfterTheOtherTable() throws {
        let model = try makeModel(Examples.seed)
        #expect(try model.entity("person").relationships.map(\.key).sorted() == ["email", "person_title_rel", "title"])
        #expect(try model.entity("title").relationships.map(\.key).sorted() == ["person", "person_title_rel"])
    }

    @Test func grdbBookAndPerson() throws {
        let model = try makeModel(Examples.book)
        #expect(try model.summary("book", "author")
            == "author many-to-one book(authorId) → person(id) fk:from book_authorId_fkey foreign-key inverse:book_by_authorId")
        #expect(try model.summary("book", "translator")
            == "translator many-to-one book(translatorId) → person(id) fk:from book_translatorId_fkey foreign-key inverse:book_by_translatorId")

        let person = try model.entity("person")
        let error = try #require(#expect(throws: RelateError.self) { try person.relationship(forKey: "book") })
        #expect(error.kind == .ambiguousKey)
        #expect(error.entity == "person" && error.key == "book")
        #expect(error.candidates == ["book_by_authorId", "book_by_translatorId"])
        #expect(error.message.contains("book_by_authorId") && error.message.contains("book_by_translatorId"))
        #expect(throws: RelateError.self) { try person.property(forKey: "book") }
        #expect(!person.keyNames.contains("book"))

        #expect(try model.summary("person", "book_by_authorId")
            == "book_by_authorId one-to-many person(id) → book(authorId) fk:to book_authorId_fkey foreign-key inverse:author")
        #expect(try model.summary("person", "book_by_translatorId")
            == "book_by_translatorId one-to-many person(id) → book(translatorId) fk:to book_translatorId_fkey foreign-key inverse:translator")
        // The shared bare name stays visible on each.
        #expect(person.relationships.map(\.name) == ["book", "book"])
    }

    @Test func manyToManyQualifiedName() throws {
        let person = try makeModel(Examples.personTitle).entity("person")
        let title = try person.relationship(forKey: "title")
        #expect(title.qualifiedName == "title_via_person_title_rel")
        #expect(try person.relationship(forKey: "title_via_person_title_rel") == title)
    }

    @Test func twoHelpersBetweenTheSameTablesAreToldApartByHelper() throws {
        let link = { (name: String) in
            table(name, "person_id title_id", primaryKey: ["person_id", "title_id"],
                  foreignKeys: [fk(on: name, ["person_id"], "person"), fk(on: name, ["title_id"], "title")])
        }
        let model = try makeModel([Examples.person, table("title", "id"), link("owns"), link("wants")])
        let person = try model.entity("person")
        let error = #expect(throws: RelateError.self) { try person.relationship(forKey: "title") }
        #expect(error?.candidates == ["title_via_owns", "title_via_wants"])
        #expect(try model.summary("person", "title_via_wants")
            == "title_via_wants many-to-many person(id) → title(id) via wants(person_id; title_id) fk:via wants_title_id_fkey keyed inverse:person_via_wants")
    }

    @Test func attributeAndRelationshipNeverShareAKey() throws {
        // Column `person` is an FK to person: its to-one would be called person too.
        let model = try makeModel([
            Examples.person,
            table("note", "id person text", foreignKeys: [fk(on: "note", ["person"], "person")]),
        ])
        let note = try model.entity("note")
        let error = try #require(#expect(throws: RelateError.self) { try note.property(forKey: "person") })
        #expect(error.kind == .ambiguousKey)
        #expect(error.candidates == ["note_person_fkey", "person_column"])
        #expect(throws: RelateError.self) { try note.attribute(forKey: "person") }
        #expect(throws: RelateError.self) { try note.relationship(forKey: "person") }

        let attribute = try note.attribute(forKey: "person_column")
        #expect(attribute.name == "person" && attribute.key == "person_column")
        #expect(note.attribute(column: "person") == attribute)

        #expect(try model.summary("note", "note_person_fkey")
            == "note_person_fkey many-to-one note(person) → person(id) fk:from note_person_fkey foreign-key inverse:note")
        #expect(try model.summary("person", "note")
            == "note one-to-many person(id) → note(person) fk:to note_person_fkey foreign-key inverse:note_person_fkey")
        #expect(note.keyNames == ["id", "note_person_fkey", "person_column", "text"])
    }

    @Test func inverseNameThatClashesWithAnAttribute() throws {
        // person has a column named email, and email refers to person: person.email is both.
        let model = try makeModel([
            table("person", "id email"),
            table("email", "id person_id", foreignKeys: [fk("person", ["person_id"], "person")]),
        ])
        let person = try model.entity("person")
        let error = #expect(throws: RelateError.self) { try person.property(forKey: "email") }
        #expect(error?.candidates == ["email_by_person_id", "email_column"])
        #expect(try person.attribute(forKey: "email_column").name == "email")
        #expect(try model.summary("person", "email_by_person_id")
            == "email_by_person_id one-to-many person(id) → email(person_id) fk:to person foreign-key inverse:person")
        #expect(try model.entity("email").relationship(forKey: "person").inverseKey == "email_by_person_id")
    }

    /// A qualified name taken early must not be claimed again by a bare name that turns out
    /// ambiguous later in the alphabet: here the constraint `y` of the to-one from `x_id`
    /// (whose bare name `x` is shared) is also the bare name of column `y` and the to-one
    /// from `y_id`.
    @Test func qualifiedNameIsNeverAlsoAnAmbiguousBareName() throws {
        let model = try makeModel([
            table("u", "id"),
            table("x", "id"),
            table("t", "id x x_id y y_id", foreignKeys: [
                fk("y", ["x_id"], "u"),
                fk("t_x_fkey", ["x"], "x"),
                fk("t_y_id_fkey", ["y_id"], "u"),
            ]),
        ])
        let t = try model.entity("t")
        for relationship in t.relationships {
            #expect(try t.property(forKey: relationship.key) == .relationship(relationship), "relationship key \(relationship.key)")
        }
        for attribute in t.attributes {
            #expect(try t.property(forKey: attribute.key) == .attribute(attribute), "attribute key \(attribute.key)")
        }
    }

    @Test func constraintNamedLikeItsColumn() throws {
        // `CONSTRAINT owner REFERENCES person` on a column called owner: the to-one is
        // called person (the target), the constraint's name is taken by the attribute.
        let model = try makeModel([
            Examples.person,
            table("car", "id owner", foreignKeys: [fk("owner", ["owner"], "person")]),
        ])
        let car = try model.entity("car")
        #expect(try car.attribute(forKey: "owner").name == "owner")
        let relationship = try car.relationship(forKey: "person")
        #expect(try car.property(forKey: relationship.qualifiedName) == .relationship(relationship))
    }

    @Test func noEntityHasTwoKeysWithOneName() throws {
        let catalogs: [([Catalog.Table], [String])] = [
            (Examples.seed, ["public"]), (Examples.book, ["public"]), (Examples.hardCases, Examples.hardCasesSchemas),
        ]
        for (tables, schemas) in catalogs {
            for rule in ManyToManyRule.allCases {
                let model = try makeModel(tables, schemas: schemas, rule: rule)
                for entity in model.entities {
                    let keys = entity.attributes.map(\.key) + entity.relationships.map(\.key)
                    #expect(Set(keys).count == keys.count, "\(entity.name): \(keys)")
                    for attribute in entity.attributes {
                        #expect(try entity.property(forKey: attribute.key) == .attribute(attribute))
                    }
                    for relationship in entity.relationships {
                        #expect(try entity.property(forKey: relationship.key) == .relationship(relationship))
                        #expect(try entity.property(forKey: relationship.qualifiedName) == .relationship(relationship))
                    }
                    for name in entity.keyNames {
                        #expect(throws: Never.self) { try entity.property(forKey: name) }
                    }
                }
            }
        }
    }

    @Test func anyTwoForeignKeysMakesBookASelfManyToManyWithQualifiedNames() throws {
        let model = try makeModel(Examples.book, rule: .anyTwoForeignKeys)
        let person = try model.entity("person")
        let error = #expect(throws: RelateError.self) { try person.relationship(forKey: "person") }
        #expect(error?.candidates == ["person_via_book_by_authorId", "person_via_book_by_translatorId"])
        #expect(try model.summary("person", "person_via_book_by_authorId")
            == "person_via_book_by_authorId many-to-many person(id) → person(id) via book(authorId; translatorId) fk:via book_translatorId_fkey any-two-foreign-keys inverse:person_via_book_by_translatorId")
    }
}
