import Relate
import Testing

/// `ModelOptions.overrides`: relationships the schema does not declare, renamed keys,
/// tables left out, and the errors a wrong override gives.
@Suite struct OverrideTests {
    /// GRDB's book/person without any FK.
    let unlinked: [Catalog.Table] = [
        table("person", "id name"),
        table("book", "id title authorId translatorId"),
        table("country", "id code name", unique: [["code"]]),
        table("city", "id name country_code"),
        view("recent_book", "book_id title"),
    ]

    // MARK: - .foreignKey

    @Test func foreignKeyOverrideToThePrimaryKey() throws {
        let model = try makeModel(unlinked, overrides: [.foreignKey("book", ["authorId"], references: "person")])
        #expect(try model.summary("book", "author")
            == "author many-to-one book(authorId) → person(id) fk:from book_authorId_override override inverse:book")
        #expect(try model.summary("person", "book")
            == "book one-to-many person(id) → book(authorId) fk:to book_authorId_override override inverse:author")
        #expect(try model.entity("book").relationship(forKey: "book_authorId_override").key == "author")
    }

    @Test func foreignKeyOverrideWithColumnsAndName() throws {
        let model = try makeModel(unlinked, overrides: [
            .foreignKey("city", ["country_code"], references: "country", ["code"], name: "city_country"),
        ])
        #expect(try model.summary("city", "country")
            == "country many-to-one city(country_code) → country(code) fk:from city_country override inverse:city")
        #expect(try model.entity("city").relationship(forKey: "city_country").key == "country")
    }

    @Test func foreignKeyOverridesMakeAmbiguityLikeRealOnes() throws {
        let model = try makeModel(unlinked, overrides: [
            .foreignKey("book", ["authorId"], references: "person"),
            .foreignKey("book", ["translatorId"], references: "person"),
        ])
        let error = #expect(throws: RelateError.self) { try model.entity("person").relationship(forKey: "book") }
        #expect(error?.candidates == ["book_by_authorId", "book_by_translatorId"])
        #expect(try model.entity("person").relationship(forKey: "book_by_translatorId").rule == .override)
    }

    @Test func uniqueForeignKeyOverrideIsOneToOne() throws {
        let model = try makeModel(
            [table("app_user", "id"), table("profile", "user_id bio", primaryKey: ["user_id"])],
            overrides: [.foreignKey("profile", ["user_id"], references: "app_user")])
        #expect(try model.summary("app_user", "profile")
            == "profile one-to-one app_user(id) → profile(user_id) fk:to profile_user_id_override override inverse:user")
    }

    @Test func foreignKeyOverridesCanMakeAHelper() throws {
        let model = try makeModel(
            [Examples.person, table("title", "id"), table("person_title_rel", "person_id title_id", primaryKey: ["person_id", "title_id"])],
            overrides: [
                .foreignKey("person_title_rel", ["person_id"], references: "person"),
                .foreignKey("person_title_rel", ["title_id"], references: "title"),
            ])
        // The many-to-many records the rule that recognised the helper.
        #expect(try model.summary("person", "title")
            == "title many-to-many person(id) → title(id) via person_title_rel(person_id; title_id) fk:via person_title_rel_title_id_override keyed inverse:person")
        #expect(try model.entity("person").relationship(forKey: "person_title_rel").rule == .override)
    }

    @Test func foreignKeyOverrideAcrossSchemas() throws {
        let model = try makeModel(
            [table("currency", schema: "money", "id"), table("price", "id currency_id")], schemas: ["public", "money"],
            overrides: [.foreignKey("price", ["currency_id"], references: "money.currency")])
        #expect(try model.summary("money.currency", "price")
            == "price one-to-many money.currency(id) → price(currency_id) fk:to price_currency_id_override override inverse:currency")
    }

    @Test func foreignKeyOverrideThatRepeatsARealForeignKeyCountsOnce() throws {
        let model = try makeModel(Examples.book, overrides: [.foreignKey("book", ["authorId"], references: "person")])
        let book = try model.entity("book")
        #expect(book.relationships.count == 2)
        #expect(try book.relationship(forKey: "author").constraint == "book_authorId_fkey")
    }

    // MARK: - .rename

    @Test func renameARelationshipKey() throws {
        let model = try makeModel(Examples.book, overrides: [.rename("person", key: "book_by_authorId", to: "writtenBooks")])
        let person = try model.entity("person")
        let written = try person.relationship(forKey: "writtenBooks")
        #expect(written.key == "writtenBooks" && written.name == "writtenBooks")
        #expect(written.summary
            == "writtenBooks one-to-many person(id) → book(authorId) fk:to book_authorId_fkey foreign-key inverse:author")
        // The old qualified name still works, and the inverse knows the new key.
        #expect(try person.relationship(forKey: "book_by_authorId") == written)
        #expect(try model.entity("book").relationship(forKey: "author").inverseKey == "writtenBooks")
        // Only one relationship is still called book: the bare name is no longer ambiguous.
        #expect(try person.relationship(forKey: "book").constraint == "book_translatorId_fkey")
    }

    @Test func renameByBareNameOrConstraintName() throws {
        let model = try makeModel(Examples.seed, overrides: [
            .rename("email", key: "person", to: "owner"),
            .rename("person", key: "title", to: "titles"),
        ])
        let email = try model.entity("email")
        #expect(try email.relationship(forKey: "owner").constraint == "person")
        #expect(try model.entity("person").relationship(forKey: "email").inverseKey == "owner")
        #expect(try model.entity("person").relationship(forKey: "titles").qualifiedName == "title_via_person_title_rel")
        #expect(try model.entity("title").relationship(forKey: "person").inverseKey == "titles")

        let byConstraint = try makeModel(Examples.book, overrides: [.rename("book", key: "book_translatorId_fkey", to: "translatedBy")])
        #expect(try byConstraint.entity("book").relationship(forKey: "translatedBy").constraint == "book_translatorId_fkey")
        #expect(try byConstraint.entity("book").relationship(forKey: "translator").constraint == "book_translatorId_fkey")
    }

    @Test func renameAnAttribute() throws {
        let model = try makeModel(Examples.seed, overrides: [.rename("person", key: "firstname", to: "givenName")])
        let attribute = try model.entity("person").attribute(forKey: "givenName")
        #expect(attribute.name == "firstname" && attribute.key == "givenName")
    }

    /// The self many-to-many's keys are `player_via_friendship_by_a_id` / `…_by_b_id`, so
    /// those are the names a rename must accept.
    @Test func renameASelfManyToManyByItsQualifiedName() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas, overrides: [
            .rename("player", key: "player_via_friendship_by_a_id", to: "friends"),
        ])
        let friends = try model.entity("player").relationship(forKey: "friends")
        #expect(friends.via?.fromColumns == ["a_id"])
    }

    /// A rename that names an ambiguous key must not silently pick one of them.
    @Test func renameOfAnAmbiguousKeyThrows() throws {
        #expect(throws: RelateError.self) {
            try makeModel(Examples.book, overrides: [.rename("person", key: "book", to: "books")])
        }
    }

    // MARK: - .ignore

    @Test func ignoreRemovesATableAndEveryRelationshipToIt() throws {
        let model = try makeModel(Examples.seed, overrides: [.ignore("title")])
        #expect(model.entities.map(\.name) == ["email", "person", "person_title_rel"])
        #expect(throws: RelateError.self) { try model.entity("title") }
        #expect(!model.relationships.contains { $0.to.table == "title" || $0.from.table == "title" })
        #expect(try model.entity("person_title_rel").relationships.map(\.key) == ["person"])
        #expect(try model.entity("person").relationships.map(\.key).sorted() == ["email", "person_title_rel"])
    }

    @Test func ignoreTurnsAThreeForeignKeyTableIntoAHelper() throws {
        let tables = [
            table("student", "id"), table("course", "id"), table("clerk", "id"),
            table("enrollment", "student_id course_id clerk_id", primaryKey: ["student_id", "course_id"], foreignKeys: [
                fk(on: "enrollment", ["student_id"], "student"), fk(on: "enrollment", ["course_id"], "course"),
                fk(on: "enrollment", ["clerk_id"], "clerk"),
            ]),
        ]
        #expect(try makeModel(tables).relationships.allSatisfy { $0.kind != .manyToMany })
        let model = try makeModel(tables, overrides: [.ignore("clerk")])
        #expect(try model.summary("student", "course")
            == "course many-to-many student(id) → course(id) via enrollment(student_id; course_id) fk:via enrollment_course_id_fkey keyed inverse:student")
        #expect(try model.entity("enrollment").attribute(forKey: "clerk_id").name == "clerk_id")
    }

    @Test func ignoreATableInAnotherSchema() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas, overrides: [.ignore("hard_cases_other.currency")])
        #expect(model.entity(schema: Examples.otherSchema, table: "currency") == nil)
        #expect(try model.entity("price").relationships.isEmpty)
    }

    // MARK: - Errors

    @Test func unknownTableInAnOverride() throws {
        let overrides: [Override] = [
            .foreignKey("boook", ["authorId"], references: "person"),
            .foreignKey("book", ["authorId"], references: "persn"),
            .ignore("persn"),
        ]
        for override in overrides {
            let error = try #require(#expect(throws: RelateError.self) { try makeModel(unlinked, overrides: [override]) })
            #expect(error.kind == .invalidOverride, "\(override)")
            let name = error.key ?? ""
            #expect(error.message.contains("\"\(name)\""), "\(override)")
            #expect(error.candidates == (name == "boook" ? ["book"] : ["person"]), "\(override)")
        }
    }

    @Test func unknownTableInARename() throws {
        let error = try #require(#expect(throws: RelateError.self) {
            try makeModel(Examples.book, overrides: [.rename("persn", key: "book_by_authorId", to: "written")])
        })
        #expect(error.candidates == ["person"])
        #expect(error.message.contains("persn"))
    }

    @Test func unknownColumnInAnOverride() throws {
        let error = try #require(#expect(throws: RelateError.self) {
            try makeModel(unlinked, overrides: [.foreignKey("book", ["author_id"], references: "person")])
        })
        #expect(error.kind == .invalidOverride)
        #expect(error.key == "author_id")
        #expect(error.message.contains("id, title, authorId, translatorId"))
        #expect(error.candidates.contains("authorId"))

        let target = try #require(#expect(throws: RelateError.self) {
            try makeModel(unlinked, overrides: [.foreignKey("city", ["country_code"], references: "country", ["cod"])])
        })
        #expect(target.kind == .invalidOverride)
        #expect(target.message.contains("id, code, name"))

        let none = #expect(throws: RelateError.self) {
            try makeModel(unlinked, overrides: [.foreignKey("city", [], references: "country")])
        }
        #expect(none?.kind == .invalidOverride)
    }

    @Test func overrideToATargetWithoutPrimaryKey() throws {
        let error = try #require(#expect(throws: RelateError.self) {
            try makeModel(unlinked, overrides: [.foreignKey("book", ["id"], references: "recent_book")])
        })
        #expect(error.kind == .invalidOverride)
        #expect(error.message.contains("recent_book") && error.message.contains("has no key"))
        // Naming the columns makes it work.
        let model = try makeModel(unlinked, overrides: [.foreignKey("recent_book", ["book_id"], references: "book")])
        #expect(try model.entity("book").relationship(forKey: "recent_book").kind == .oneToMany)
    }

    @Test func overrideWithMismatchedColumnCounts() throws {
        let error = try #require(#expect(throws: RelateError.self) {
            try makeModel(unlinked, overrides: [.foreignKey("city", ["country_code", "name"], references: "country", ["code"])])
        })
        #expect(error.kind == .invalidOverride)
        #expect(error.message.contains("2") && error.message.contains("1"))
    }

    @Test func renameOfAnUnknownKey() throws {
        let error = try #require(#expect(throws: RelateError.self) {
            try makeModel(Examples.book, overrides: [.rename("person", key: "book_by_author", to: "written")])
        })
        #expect(error.kind == .invalidOverride)
        #expect(error.entity == "person" && error.key == "book_by_author")
        #expect(error.candidates.contains("book_by_authorId"))
        #expect(error.message.contains("book_by_author"))
    }
}
