import Foundation
import Relate
import Testing

/// Each example schema loaded into a fresh schema, introspected from the live catalog,
/// and its full relationship list asserted.
@Suite struct IntrospectionTests {
    /// `entity.key kind target [via helper] (rule)`, sorted; the test schema's name is
    /// replaced so the lines are stable.
    static func summary(_ model: Model, schema: String) -> [String] {
        model.entities.flatMap { entity in
            entity.relationships.map { relationship in
                let target = model.entity(schema: relationship.to.schema, table: relationship.to.table)!.name
                var line = "\(entity.name).\(relationship.key) \(relationship.kind.rawValue) \(target)"
                if let via = relationship.via { line += " via \(via.table)" }
                return (line + " (\(relationship.rule.rawValue))").replacingOccurrences(of: schema, with: "S")
            }
        }.sorted()
    }

    func introspect(_ example: String, rule: ManyToManyRule = .keyed) throws -> (model: Model, schema: String, roundTrips: Int) {
        try TestDatabase.withSchema { connection, schema in
            try TestDatabase.loadExample(example, into: connection, schema: schema)
            let before = connection.roundTrips
            let catalog = try Catalog.introspect(connection, schemas: [schema])
            let roundTrips = connection.roundTrips - before
            return (try Model(catalog: catalog, options: ModelOptions(manyToMany: rule)), schema, roundTrips)
        }
    }

    @Test func seedPersonEmail() throws {
        let (model, schema, roundTrips) = try introspect("seed_person_email")
        #expect(roundTrips <= 3)
        #expect(Self.summary(model, schema: schema) == [
            "email.person many-to-one person (foreign-key)",
            "person.email one-to-many email (foreign-key)",
        ])
        // BaseTen: the to-one answers to the constraint's name, the to-many to the other table's.
        let email = try model.entity("email").relationship(forKey: "person")
        #expect(email.constraint == "person")
        #expect(email.from.columns == ["person_id"])
        #expect(email.to.columns == ["id"])
        #expect(email.foreignKeyIn == .from)
        #expect(try model.entity("person").relationship(forKey: "email").inverseKey == "person")
        #expect(try model.entity("email").attribute(forKey: "address").type == "varchar")
        #expect(try model.entity("person").primaryKey == ["id"])
    }

    @Test func seedOneToOne() throws {
        let (model, schema, _) = try introspect("seed_person_email_one_to_one")
        #expect(Self.summary(model, schema: schema) == [
            "email.person one-to-one person (unique-foreign-key)",
            "person.email one-to-one email (unique-foreign-key)",
        ])
    }

    @Test func seedManyToMany() throws {
        let (model, schema, _) = try introspect("seed_person_title")
        #expect(Self.summary(model, schema: schema) == [
            "person.person_title_rel one-to-many person_title_rel (foreign-key)",
            "person.title many-to-many title via person_title_rel (keyed)",
            "person_title_rel.person many-to-one person (foreign-key)",
            "person_title_rel.title many-to-one title (foreign-key)",
            "title.person many-to-many person via person_title_rel (keyed)",
            "title.person_title_rel one-to-many person_title_rel (foreign-key)",
        ])
        let title = try model.entity("person").relationship(forKey: "title")
        #expect(title.via?.fromColumns == ["person_id"])
        #expect(title.via?.toColumns == ["title_id"])
        #expect(title.foreignKeyIn == .via)
        #expect(try model.entity("person").relationship(forKey: "title_via_person_title_rel") == title)
        // BaseTen's documented rule finds the same helper.
        let loose = try introspect("seed_person_title", rule: .anyTwoForeignKeys)
        #expect(try loose.model.entity("title").relationship(forKey: "person").rule == .anyTwoForeignKeys)
    }

    static let hardCasesKeyed = [
        "LineItem.order many-to-one Order (foreign-key)",
        "Order.LineItem one-to-many LineItem (foreign-key)",
        "S_other.currency.price one-to-many price (foreign-key)",
        "annotation.measurement many-to-one measurement (foreign-key)",
        "app_user.profile one-to-one profile (unique-foreign-key)",
        "assignment.employee many-to-one employee (foreign-key)",
        "assignment.project many-to-one project (foreign-key)",
        "assignment.role many-to-one role (foreign-key)",
        "big_departments.regions many-to-one regions (foreign-key)",
        "book.author many-to-one person (foreign-key)",
        "book.translator many-to-one person (foreign-key)",
        "capital.country many-to-one country (foreign-key)",
        "city.country many-to-one country (foreign-key)",
        "club.member many-to-many member via membership (keyed)",
        "club.membership one-to-many membership (foreign-key)",
        "country.capital one-to-many capital (foreign-key)",
        "country.city one-to-many city (foreign-key)",
        "country.passport one-to-many passport (foreign-key)",
        "country.place one-to-many place (foreign-key)",
        "customer.invoice one-to-many invoice (foreign-key)",
        "department_counts.regions many-to-one regions (foreign-key)",
        "departments.regions many-to-one regions (foreign-key)",
        "departments.towns one-to-many towns (foreign-key)",
        "employee.assignment one-to-many assignment (foreign-key)",
        "employee.employee one-to-many employee (foreign-key)",
        "employee.manager many-to-one employee (foreign-key)",
        "friendship.a many-to-one player (foreign-key)",
        "friendship.b many-to-one player (foreign-key)",
        "invoice.customer many-to-one customer (foreign-key)",
        "item.tag_link one-to-many tag_link (foreign-key)",
        "measurement.annotation one-to-many annotation (foreign-key)",
        "measurement.measurement_flag one-to-many measurement_flag (foreign-key)",
        "measurement.sensor many-to-one sensor (foreign-key)",
        "measurement_flag.measurement many-to-one measurement (foreign-key)",
        "member.club many-to-many club via membership (keyed)",
        "member.membership one-to-many membership (foreign-key)",
        "membership.club many-to-one club (foreign-key)",
        "membership.member many-to-one member (foreign-key)",
        "passport.holder one-to-one person (unique-foreign-key)",
        "passport.issuer_country many-to-one country (foreign-key)",
        "person.book_by_authorId one-to-many book (foreign-key)",
        "person.book_by_translatorId one-to-many book (foreign-key)",
        "person.passport one-to-one passport (unique-foreign-key)",
        "place.country many-to-one country (foreign-key)",
        "player.friendship_by_a_id one-to-many friendship (foreign-key)",
        "player.friendship_by_b_id one-to-many friendship (foreign-key)",
        "player.player_via_friendship_by_a_id many-to-many player via friendship (keyed)",
        "player.player_via_friendship_by_b_id many-to-many player via friendship (keyed)",
        "price.currency many-to-one S_other.currency (foreign-key)",
        "profile.user one-to-one app_user (unique-foreign-key)",
        "project.assignment one-to-many assignment (foreign-key)",
        "reading.sensor many-to-one sensor (foreign-key)",
        "region_sizes.regions one-to-one regions (unique-foreign-key)",
        "regions.big_departments one-to-many big_departments (foreign-key)",
        "regions.department_counts one-to-many department_counts (foreign-key)",
        "regions.departments one-to-many departments (foreign-key)",
        "regions.region_sizes one-to-one region_sizes (unique-foreign-key)",
        "role.assignment one-to-many assignment (foreign-key)",
        "sensor.measurement one-to-many measurement (foreign-key)",
        "sensor.reading one-to-many reading (foreign-key)",
        "shelf.warehouse many-to-one warehouse (foreign-key)",
        "tag.tag_link one-to-many tag_link (foreign-key)",
        "tag_link.item many-to-one item (foreign-key)",
        "tag_link.tag many-to-one tag (foreign-key)",
        "towns.departments many-to-one departments (foreign-key)",
        "warehouse.shelf one-to-many shelf (foreign-key)",
    ]

    @Test func hardCasesUnderTheKeyedRule() throws {
        let (model, schema, roundTrips) = try introspect("hard_cases")
        #expect(roundTrips <= 3)
        #expect(Self.summary(model, schema: schema) == Self.hardCasesKeyed)
        // Partitions are folded into their roots.
        #expect(!model.entities.contains { $0.name.hasPrefix("measurement_20") || $0.name.hasPrefix("reading_20") })
        #expect(try model.entity("measurement").kind == .partitionedTable)
        // The views carry the keys of the tables they read (the other table joined to one
        // row on its key), or none (an aggregate); the foreign keys they carry are theirs.
        let view = try model.entity("book_with_author")
        #expect(view.kind == .view && view.primaryKey == ["id"] && view.keyName == "book.id" && view.relationships.isEmpty)
        let keys: [(String, [String], String?)] = [
            ("big_departments", ["code"], "departments.code"), ("town_names", ["id"], "towns.id"),
            ("department_counts", [], nil), ("region_sizes", [], nil),
        ]
        for (name, key, source) in keys {
            #expect(try model.entity(name).primaryKey == key && model.entity(name).keyName == source, "\(name)")
        }
        // The FK declared on every leaf of `reading` counts as the root's, by its name.
        #expect(try model.entity("reading").relationship(forKey: "sensor").constraint == "reading_sensor")
        // Composite keys keep their column order.
        let shelf = try model.entity("shelf").relationship(forKey: "warehouse")
        #expect(shelf.from.columns == ["region", "warehouse_code"])
        #expect(shelf.to.columns == ["region", "code"])
        // Ambiguous bare names list their candidates.
        let book = #expect(throws: RelateError.self) { try model.entity("person").relationship(forKey: "book") }
        #expect(book?.kind == .ambiguousKey)
        #expect(book?.candidates == ["book_by_authorId", "book_by_translatorId"])
        // Delete rules come from the catalog.
        #expect(try model.entity("person").relationship(forKey: "book_by_authorId").onDelete == .restrict)
        #expect(try model.entity("employee").relationship(forKey: "employee").onDelete == .setNull)
        #expect(try model.entity("person").relationship(forKey: "passport").onDelete == .cascade)
        // A cross-schema table is named schema.table.
        #expect(try model.entity("\(schema)_other.currency").relationship(forKey: "price").kind == .oneToMany)
        // The catalog knows the column details.
        let order = try model.entity("Order")
        #expect(order.attribute(column: "select")?.isNullable == false)
        #expect(order.attribute(column: "placedAt")?.defaultValue == "now()")
    }

    @Test func hardCasesUnderTheOtherRules() throws {
        let strict = try introspect("hard_cases", rule: .strict)
        let strictLines = Self.summary(strict.model, schema: strict.schema)
        // membership has a joined_at column: not a helper under .strict.
        #expect(strictLines == Self.hardCasesKeyed.filter { !$0.contains("via membership") }
            .map { $0.replacingOccurrences(of: "(keyed)", with: "(strict)") })

        let loose = try introspect("hard_cases", rule: .anyTwoForeignKeys)
        let looseLines = Set(Self.summary(loose.model, schema: loose.schema))
        let added = looseLines.subtracting(Self.hardCasesKeyed.map { $0.replacingOccurrences(of: "(keyed)", with: "(any-two-foreign-keys)") })
        #expect(added == [
            "item.tag many-to-many tag via tag_link (any-two-foreign-keys)",
            "tag.item many-to-many item via tag_link (any-two-foreign-keys)",
            "person.person_via_book_by_authorId many-to-many person via book (any-two-foreign-keys)",
            "person.person_via_book_by_translatorId many-to-many person via book (any-two-foreign-keys)",
        ])
    }

    @Test func fiveHundredTablesInAtMostThreeRoundTrips() throws {
        try TestDatabase.withSchema { connection, schema in
            var script = ""
            for index in 0..<500 {
                script += "CREATE TABLE t\(index) (id int PRIMARY KEY, a int, b int, label text);\n"
            }
            for index in 0..<500 {
                script += "ALTER TABLE t\(index) ADD FOREIGN KEY (a) REFERENCES t\((index * 7 + 1) % 500), "
                    + "ADD FOREIGN KEY (b) REFERENCES t\((index * 13 + 5) % 500);\n"
            }
            try connection.executeScript(script)
            let before = connection.roundTrips
            let catalog = try Catalog.introspect(connection, schemas: [schema])
            #expect(connection.roundTrips - before <= 3)
            #expect(catalog.tables.count == 500)
            #expect(catalog.tables.map(\.foreignKeys.count).reduce(0, +) == 1000)
            let model = try Model(catalog: catalog)
            #expect(model.relationships.count == 2000)
            // Column `a` has no `_id` suffix: the to-one is named after its target.
            #expect(try model.entity("t7").relationship(forKey: "t50").from.columns == ["a"])
        }
    }

    /// A partial unique index is no key (a table without a primary key does not take it, and
    /// no one-to-one comes of it) but is read for the order of a save's writes; a key that
    /// counts NULLs as equal says so.
    @Test func partialUniqueIndexesAndNullsNotDistinctAreRead() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(
                """
                CREATE TABLE account (email text, active bool, seat text, room text, UNIQUE NULLS NOT DISTINCT (room, seat));
                CREATE UNIQUE INDEX account_active_email ON account (email) WHERE active;
                """)
            let catalog = try Catalog.introspect(connection, schemas: [schema])
            let account = try #require(catalog.tables.first { $0.name == "account" })
            #expect(account.partialUniqueKeys?.map(\.columns) == [["email"]])
            #expect(account.uniqueKeys.map(\.columns) == [["room", "seat"]])
            #expect(account.uniqueKeys.first?.nullsNotDistinct == true)
            #expect(account.partialUniqueKeys?.first?.nullsNotDistinct == nil)
            let model = try Model(catalog: catalog)
            #expect(try model.entity("account").primaryKey != ["email"])
        }
    }

    @Test func defaultSchemasAreTheSearchPath() throws {
        try TestDatabase.withSchema { connection, schema in
            try TestDatabase.loadExample("seed_person_email", into: connection, schema: schema)
            let catalog = try Catalog.introspect(connection)
            #expect(catalog.schemas == [schema])
            #expect(catalog.tables.map(\.name) == ["email", "person"])
            // The catalog is a Codable value.
            let decoded = try JSONDecoder().decode(Catalog.self, from: JSONEncoder().encode(catalog))
            #expect(decoded == catalog)
        }
    }
}
