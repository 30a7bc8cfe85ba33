import Relate
import Testing

/// DESIGN "Relationship inference": one test per rule, from hand-built catalogs.
@Suite struct InferenceTests {
    // MARK: - Rule 1: many-to-one / one-to-many

    @Test func foreignKeyIsManyToOneAndItsInverseOneToMany() throws {
        let model = try makeModel(Examples.personEmail())
        #expect(try model.summary("email", "person")
            == "person many-to-one email(person_id) → person(id) fk:from person foreign-key inverse:email")
        #expect(try model.summary("person", "email")
            == "email one-to-many person(id) → email(person_id) fk:to person foreign-key inverse:person")
        let toOne = try model.entity("email").relationship(forKey: "person")
        #expect(toOne.isToOne && !toOne.isToMany)
        #expect(try model.entity("person").relationship(forKey: "email").isToMany)
    }

    @Test func onDeleteComesFromTheForeignKey() throws {
        let model = try makeModel(Examples.book)
        #expect(try model.entity("book").relationship(forKey: "author").onDelete == .restrict)
        #expect(try model.entity("book").relationship(forKey: "translator").onDelete == .setNull)
        #expect(try model.entity("person").relationship(forKey: "book_by_translatorId").onDelete == .setNull)
    }

    // MARK: - Rule 2: one-to-one

    @Test func uniqueConstraintOnTheForeignKeyColumnMakesOneToOne() throws {
        let model = try makeModel(Examples.personEmail(oneToOne: true))
        #expect(try model.summary("email", "person")
            == "person one-to-one email(person_id) → person(id) fk:from person unique-foreign-key inverse:email")
        #expect(try model.summary("person", "email")
            == "email one-to-one person(id) → email(person_id) fk:to person unique-foreign-key inverse:person")
        #expect(try model.entity("person").relationship(forKey: "email").isToOne)
    }

    @Test func foreignKeyThatIsThePrimaryKeyMakesOneToOne() throws {
        let model = try makeModel([
            table("app_user", "id login"),
            table("profile", "user_id bio", primaryKey: ["user_id"], foreignKeys: [fk(on: "profile", ["user_id"], "app_user")]),
        ])
        #expect(try model.summary("profile", "user")
            == "user one-to-one profile(user_id) → app_user(id) fk:from profile_user_id_fkey unique-foreign-key inverse:profile")
        #expect(try model.summary("app_user", "profile")
            == "profile one-to-one app_user(id) → profile(user_id) fk:to profile_user_id_fkey unique-foreign-key inverse:user")
    }

    @Test func uniqueKeyWithinACompositeForeignKeyMakesOneToOne() throws {
        // (a) alone is unique, so (a, b) is too: each target row has at most one source row.
        let target = table("target", "x y", primaryKey: ["x", "y"])
        let strictSubset = try makeModel([
            target,
            table("source", "id a b", unique: [["a"]], foreignKeys: [fk("source_ab", ["a", "b"], "target", ["x", "y"])]),
        ])
        #expect(try relationship(in: strictSubset, "source", "target").kind == .oneToOne)
        #expect(try relationship(in: strictSubset, "target", "source").kind == .oneToOne)
        #expect(try relationship(in: strictSubset, "source", "target").rule == .uniqueForeignKey)

        // A unique key with a column outside the FK says nothing about it.
        let superset = try makeModel([
            target,
            table("source", "id a b c", unique: [["a", "b", "c"]], foreignKeys: [fk("source_ab", ["a", "b"], "target", ["x", "y"])]),
        ])
        #expect(try relationship(in: superset, "source", "target").kind == .manyToOne)
        #expect(try relationship(in: superset, "target", "source").kind == .oneToMany)
        #expect(try relationship(in: superset, "source", "target").rule == .foreignKey)
    }

    private func relationship(in model: Model, _ entity: String, _ key: String) throws -> Relationship {
        try model.entity(entity).relationship(forKey: key)
    }

    // MARK: - Rule 3: many-to-many

    @Test func helperTableMakesManyToManyBothWays() throws {
        let model = try makeModel(Examples.personTitle)
        #expect(try model.summary("person", "title")
            == "title many-to-many person(id) → title(id) via person_title_rel(person_id; title_id) fk:via person_title_rel_title_id_fkey keyed inverse:person")
        #expect(try model.summary("title", "person")
            == "person many-to-many title(id) → person(id) via person_title_rel(title_id; person_id) fk:via person_title_rel_person_id_fkey keyed inverse:title")
    }

    @Test func helperRowsStayReachableAsOneToMany() throws {
        let model = try makeModel(Examples.personTitle)
        #expect(try model.summary("person", "person_title_rel")
            == "person_title_rel one-to-many person(id) → person_title_rel(person_id) fk:to person_title_rel_person_id_fkey foreign-key inverse:person")
        #expect(try model.summary("title", "person_title_rel")
            == "person_title_rel one-to-many title(id) → person_title_rel(title_id) fk:to person_title_rel_title_id_fkey foreign-key inverse:title")
        #expect(try model.summary("person_title_rel", "person")
            == "person many-to-one person_title_rel(person_id) → person(id) fk:from person_title_rel_person_id_fkey foreign-key inverse:person_title_rel")
        #expect(try model.summary("person_title_rel", "title")
            == "title many-to-one person_title_rel(title_id) → title(id) fk:from person_title_rel_title_id_fkey foreign-key inverse:person_title_rel")
        #expect(try model.entity("person_title_rel").relationships.count == 2)
    }

    /// The helpers of `hard_cases.sql` and a few more, and which rules accept them.
    static let helperCases: [(name: String, helper: Catalog.Table, accepted: Set<ManyToManyRule>)] = [
        ("no key (tag_link)",
         table("h", "a_id b_id", primaryKey: [], foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b")]),
         [.anyTwoForeignKeys]),
        ("keyed by its primary key, extra column (membership)",
         table("h", "a_id b_id joined_at", primaryKey: ["a_id", "b_id"], foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b")]),
         [.anyTwoForeignKeys, .keyed]),
        ("keyed by its primary key, nothing else (person_title_rel)",
         table("h", "a_id b_id", primaryKey: ["a_id", "b_id"], foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b")]),
         [.anyTwoForeignKeys, .keyed, .strict]),
        ("keyed by a unique constraint, own id column",
         table("h", "id a_id b_id", unique: [["b_id", "a_id"]], foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b")]),
         [.anyTwoForeignKeys, .keyed]),
        ("keyed by a unique constraint only, no other column",
         table("h", "a_id b_id", primaryKey: [], unique: [["a_id", "b_id"]], foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b")]),
         [.anyTwoForeignKeys, .keyed, .strict]),
        ("unique key larger than the two FKs",
         table("h", "a_id b_id since", primaryKey: ["a_id", "b_id", "since"], foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b")]),
         [.anyTwoForeignKeys]),
        ("one FK one-to-one on its own (passport)",
         table("h", "id a_id b_id", unique: [["a_id"]], foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b")]),
         []),
        ("one FK is the primary key",
         table("h", "a_id b_id", primaryKey: ["a_id"], foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b")]),
         []),
        ("three FKs keyed by all three (assignment)",
         table("h", "a_id b_id c_id", primaryKey: ["a_id", "b_id", "c_id"],
               foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b"), fk(on: "h", ["c_id"], "c")]),
         []),
        ("three FKs, two of them keyed",
         table("h", "a_id b_id c_id", primaryKey: ["a_id", "b_id"],
               foreignKeys: [fk(on: "h", ["a_id"], "a"), fk(on: "h", ["b_id"], "b"), fk(on: "h", ["c_id"], "c")]),
         []),
        ("one FK",
         table("h", "a_id x", primaryKey: ["a_id", "x"], foreignKeys: [fk(on: "h", ["a_id"], "a")]),
         []),
    ]

    @Test(arguments: ManyToManyRule.allCases)
    func manyToManyRules(rule: ManyToManyRule) throws {
        for (name, helper, accepted) in Self.helperCases {
            let model = try makeModel([table("a", "id"), table("b", "id"), table("c", "id"), helper], rule: rule)
            let a = try model.entity("a")
            let manyToMany = a.relationships.filter { $0.kind == .manyToMany }
            if accepted.contains(rule) {
                let expectedRule: Relationship.Rule = switch rule {
                case .anyTwoForeignKeys: .anyTwoForeignKeys
                case .keyed: .keyed
                case .strict: .strict
                }
                let forward = try #require(manyToMany.first, "\(name) under \(rule)")
                #expect(manyToMany.count == 1, "\(name) under \(rule)")
                #expect(forward.summary
                    == "b many-to-many a(id) → b(id) via h(a_id; b_id) fk:via h_b_id_fkey \(expectedRule.rawValue) inverse:a",
                    "\(name) under \(rule)")
                #expect(try model.summary("b", "a")
                    == "a many-to-many b(id) → a(id) via h(b_id; a_id) fk:via h_a_id_fkey \(expectedRule.rawValue) inverse:b",
                    "\(name) under \(rule)")
            } else {
                #expect(manyToMany.isEmpty, "\(name) under \(rule)")
                #expect(model.relationships.allSatisfy { $0.kind != .manyToMany }, "\(name) under \(rule)")
            }
            // Whatever the rule, the helper's rows stay reachable from both ends.
            let aIsUnique = helper.allUniqueKeys.contains(["a_id"])
            #expect(try a.relationship(forKey: "h").kind == (aIsUnique ? .oneToOne : .oneToMany), "\(name) under \(rule)")
            #expect(try model.entity("h").relationship(forKey: "a").kind == (aIsUnique ? .oneToOne : .manyToOne), "\(name) under \(rule)")
        }
    }

    @Test(arguments: ManyToManyRule.allCases)
    func threeForeignKeyTableIsNeverAHelper(rule: ManyToManyRule) throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas, rule: rule)
        let assignment = try model.entity("assignment")
        #expect(assignment.relationships.map(\.key).sorted() == ["employee", "project", "role"])
        for other in ["employee", "project", "role"] {
            let entity = try model.entity(other)
            #expect(!entity.relationships.contains { $0.via?.table == "assignment" })
            #expect(try entity.relationship(forKey: "assignment").kind == .oneToMany)
        }
    }

    @Test(arguments: ManyToManyRule.allCases)
    func oneToOneForeignKeyKeepsATableFromBeingAHelper(rule: ManyToManyRule) throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas, rule: rule)
        #expect(!model.relationships.contains { $0.via?.table == "passport" })
        #expect(try model.entity("person").relationship(forKey: "passport").kind == .oneToOne)
        #expect(try model.entity("country").relationship(forKey: "passport").kind == .oneToMany)
    }

    @Test(arguments: ManyToManyRule.allCases)
    func selfManyToManyGoesBothWaysOnOneEntity(rule: ManyToManyRule) throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas, rule: rule)
        let player = try model.entity("player")
        let ruleName = rule.rawValue
        #expect(try model.summary("player", "player_via_friendship_by_a_id")
            == "player_via_friendship_by_a_id many-to-many player(id) → player(id) via friendship(a_id; b_id) fk:via friendship_b_id_fkey \(ruleName) inverse:player_via_friendship_by_b_id")
        #expect(try model.summary("player", "player_via_friendship_by_b_id")
            == "player_via_friendship_by_b_id many-to-many player(id) → player(id) via friendship(b_id; a_id) fk:via friendship_a_id_fkey \(ruleName) inverse:player_via_friendship_by_a_id")
        let error = #expect(throws: RelateError.self) { try player.relationship(forKey: "player") }
        #expect(error?.kind == .ambiguousKey)
        #expect(error?.candidates == ["player_via_friendship_by_a_id", "player_via_friendship_by_b_id"])
        #expect(player.relationships.filter { $0.kind == .manyToMany }.count == 2)
    }

    // MARK: - Rule 4: the shapes that all work

    @Test func compositeForeignKeyToACompositePrimaryKey() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        #expect(try model.summary("shelf", "warehouse")
            == "warehouse many-to-one shelf(region,warehouse_code) → warehouse(region,code) fk:from shelf_region_warehouse_code_fkey foreign-key inverse:shelf")
        #expect(try model.summary("warehouse", "shelf")
            == "shelf one-to-many warehouse(region,code) → shelf(region,warehouse_code) fk:to shelf_region_warehouse_code_fkey foreign-key inverse:warehouse")
        #expect(try model.entity("warehouse").primaryKey == ["region", "code"])
    }

    @Test func selfReference() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        #expect(try model.summary("employee", "manager")
            == "manager many-to-one employee(manager_id) → employee(id) fk:from employee_manager_id_fkey foreign-key inverse:employee")
        #expect(try model.summary("employee", "employee")
            == "employee one-to-many employee(id) → employee(manager_id) fk:to employee_manager_id_fkey foreign-key inverse:manager")
    }

    @Test func foreignKeyToAUniqueColumnThatIsNotThePrimaryKey() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        #expect(try model.summary("city", "country")
            == "country many-to-one city(country_code) → country(code) fk:from city_country_code_fkey foreign-key inverse:city")
        #expect(try model.summary("country", "city")
            == "city one-to-many country(code) → city(country_code) fk:to city_country_code_fkey foreign-key inverse:country")
    }

    @Test func crossSchemaTablesAreNamedWithTheirSchema() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        let currency = try model.entity("hard_cases_other.currency")
        #expect(currency.name == "hard_cases_other.currency")
        #expect(currency.schema == "hard_cases_other" && currency.table == "currency")
        #expect(model.entity(schema: "hard_cases_other", table: "currency") == currency)
        #expect(throws: RelateError.self) { try model.entity("currency") }
        #expect(try model.summary("price", "currency")
            == "currency many-to-one price(currency_id) → hard_cases_other.currency(id) fk:from price_currency_id_fkey foreign-key inverse:price")
        #expect(try model.summary("hard_cases_other.currency", "price")
            == "price one-to-many hard_cases_other.currency(id) → price(currency_id) fk:to price_currency_id_fkey foreign-key inverse:currency")
        // Tables of the first schema answer to both names.
        #expect(try model.entity("public.price") == model.entity("price"))
    }

    @Test func theFirstSchemaIsTheUnqualifiedOne() throws {
        let model = try makeModel(Examples.hardCases, schemas: [Examples.otherSchema, "public"])
        #expect(try model.entity("currency").schema == Examples.otherSchema)
        #expect(try model.entity("public.price").name == "public.price")
        #expect(try model.summary("currency", "public.price")
            == "public.price one-to-many hard_cases_other.currency(id) → price(currency_id) fk:to price_currency_id_fkey foreign-key inverse:currency")
        #expect(try model.entity("public.price").relationship(forKey: "currency").inverseKey == "public.price")
        #expect(model.schemas == [Examples.otherSchema, "public"])
    }

    @Test(arguments: ManyToManyRule.allCases)
    func duplicateForeignKeyConstraintsCountAsOne(rule: ManyToManyRule) throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas, rule: rule)
        let invoice = try model.entity("invoice")
        #expect(invoice.relationships.count == 1)
        #expect(try model.summary("invoice", "customer")
            == "customer many-to-one invoice(customer_id) → customer(id) fk:from invoice_customer foreign-key inverse:invoice")
        #expect(try model.entity("customer").relationships.map(\.key) == ["invoice"])
        #expect(try invoice.relationship(forKey: "invoice_customer") == invoice.relationship(forKey: "customer"))
    }

    /// DESIGN: "The constraint name always works", and two identical constraints count as
    /// one FK, so the second's name should still answer (as `hard_cases.sql` promises).
    @Test func theDroppedDuplicateConstraintNameStillAnswers() throws {
        let invoice = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas).entity("invoice")
        #expect(try invoice.relationship(forKey: "invoice_customer_again") == invoice.relationship(forKey: "customer"))
    }

    @Test func foreignKeyToATableOutsideTheCatalogIsDropped() throws {
        let model = try makeModel([
            table("person", "id"),
            table("email", "id person_id audit_id", foreignKeys: [
                fk(on: "email", ["person_id"], "person"),
                fk(on: "email", ["audit_id"], "audit_log"),
                fk(on: "email", ["audit_id"], "audit_log", schema: "elsewhere"),
            ]),
        ])
        #expect(try model.entity("email").relationships.map(\.key) == ["person"])
        #expect(try model.entity("email").attribute(forKey: "audit_id").name == "audit_id")
        #expect(model.entities.map(\.name) == ["email", "person"])
    }

    @Test func viewsHaveNoKeysAndNoRelationships() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        let view = try model.entity("book_with_author")
        #expect(view.kind == .view)
        #expect(view.primaryKey.isEmpty && view.uniqueKeys.isEmpty)
        #expect(view.relationships.isEmpty)
        #expect(view.keyNames == ["author_name", "id", "title"])
        #expect(!model.relationships.contains { $0.to.table == "book_with_author" || $0.from.table == "book_with_author" })
    }

    @Test func partitionedTablesAreEntitiesLikeTables() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        #expect(try model.entity("measurement").kind == .partitionedTable)
        #expect(try model.summary("annotation", "measurement")
            == "measurement many-to-one annotation(measurement_id,measurement_taken_on) → measurement(id,taken_on) fk:from annotation_measurement_id_measurement_taken_on_fkey foreign-key inverse:annotation")
        #expect(try model.summary("reading", "sensor")
            == "sensor many-to-one reading(sensor_id) → sensor(id) fk:from reading_sensor foreign-key inverse:reading")
    }

    @Test func entitiesAreSortedByName() throws {
        let model = try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas)
        let names = model.entities.map { "\($0.schema).\($0.table)" }
        #expect(names == names.sorted())
        #expect(model.entities.count == Examples.hardCases.count)
    }
}
