import Relate
import Testing

/// `sql/examples/hard_cases.sql` as introspection reads it, against the relationship table
/// of `sql/examples/README.md`.
@Suite struct HardCasesTests {
    static func model(_ rule: ManyToManyRule = .keyed) throws -> Model {
        try makeModel(Examples.hardCases, schemas: Examples.hardCasesSchemas, rule: rule)
    }

    /// Every relationship of the README's table (the default rule, `.keyed`), as
    /// `entity: key kind from → to [via] fk:side constraint rule inverse:key`.
    static let keyed = [
        "LineItem: order many-to-one LineItem(orderId) → Order(id) fk:from LineItem_orderId_fkey foreign-key inverse:LineItem",
        "Order: LineItem one-to-many Order(id) → LineItem(orderId) fk:to LineItem_orderId_fkey foreign-key inverse:order",
        "annotation: measurement many-to-one annotation(measurement_id,measurement_taken_on) → measurement(id,taken_on) fk:from annotation_measurement_id_measurement_taken_on_fkey foreign-key inverse:annotation",
        "app_user: profile one-to-one app_user(id) → profile(user_id) fk:to profile_user_id_fkey unique-foreign-key inverse:user",
        "assignment: employee many-to-one assignment(employee_id) → employee(id) fk:from assignment_employee_id_fkey foreign-key inverse:assignment",
        "assignment: project many-to-one assignment(project_id) → project(id) fk:from assignment_project_id_fkey foreign-key inverse:assignment",
        "assignment: role many-to-one assignment(role_id) → role(id) fk:from assignment_role_id_fkey foreign-key inverse:assignment",
        "book: author many-to-one book(authorId) → person(id) fk:from book_authorId_fkey foreign-key inverse:book_by_authorId",
        "book: translator many-to-one book(translatorId) → person(id) fk:from book_translatorId_fkey foreign-key inverse:book_by_translatorId",
        "capital: country many-to-one capital(country_id) → country(id) fk:from place_country_id_fkey foreign-key inverse:capital",
        "city: country many-to-one city(country_code) → country(code) fk:from city_country_code_fkey foreign-key inverse:city",
        "club: member many-to-many club(id) → member(id) via membership(club_id; member_id) fk:via membership_member_id_fkey keyed inverse:club",
        "club: membership one-to-many club(id) → membership(club_id) fk:to membership_club_id_fkey foreign-key inverse:club",
        "country: capital one-to-many country(id) → capital(country_id) fk:to place_country_id_fkey foreign-key inverse:country",
        "country: city one-to-many country(code) → city(country_code) fk:to city_country_code_fkey foreign-key inverse:country",
        "country: passport one-to-many country(id) → passport(issuer_country_id) fk:to passport_issuer_country_id_fkey foreign-key inverse:issuer_country",
        "country: place one-to-many country(id) → place(country_id) fk:to place_country_id_fkey foreign-key inverse:country",
        "customer: invoice one-to-many customer(id) → invoice(customer_id) fk:to invoice_customer foreign-key inverse:customer",
        "departments: regions many-to-one departments(region) → regions(code) fk:from departments_region_fkey foreign-key inverse:departments",
        "departments: towns one-to-many departments(code) → towns(department) fk:to towns_department_fkey foreign-key inverse:departments",
        "employee: assignment one-to-many employee(id) → assignment(employee_id) fk:to assignment_employee_id_fkey foreign-key inverse:employee",
        "employee: employee one-to-many employee(id) → employee(manager_id) fk:to employee_manager_id_fkey foreign-key inverse:manager",
        "employee: manager many-to-one employee(manager_id) → employee(id) fk:from employee_manager_id_fkey foreign-key inverse:employee",
        "friendship: a many-to-one friendship(a_id) → player(id) fk:from friendship_a_id_fkey foreign-key inverse:friendship_by_a_id",
        "friendship: b many-to-one friendship(b_id) → player(id) fk:from friendship_b_id_fkey foreign-key inverse:friendship_by_b_id",
        "hard_cases_other.currency: price one-to-many hard_cases_other.currency(id) → price(currency_id) fk:to price_currency_id_fkey foreign-key inverse:currency",
        "invoice: customer many-to-one invoice(customer_id) → customer(id) fk:from invoice_customer foreign-key inverse:invoice",
        "item: tag_link one-to-many item(id) → tag_link(item_id) fk:to tag_link_item_id_fkey foreign-key inverse:item",
        "measurement: annotation one-to-many measurement(id,taken_on) → annotation(measurement_id,measurement_taken_on) fk:to annotation_measurement_id_measurement_taken_on_fkey foreign-key inverse:measurement",
        "measurement: measurement_flag one-to-many measurement(id,taken_on) → measurement_flag(measurement_id,taken_on) fk:to measurement_flag_measurement_id_taken_on_fkey foreign-key inverse:measurement",
        "measurement: sensor many-to-one measurement(sensor_id) → sensor(id) fk:from measurement_sensor_id_fkey foreign-key inverse:measurement",
        "measurement_flag: measurement many-to-one measurement_flag(measurement_id,taken_on) → measurement(id,taken_on) fk:from measurement_flag_measurement_id_taken_on_fkey foreign-key inverse:measurement_flag",
        "member: club many-to-many member(id) → club(id) via membership(member_id; club_id) fk:via membership_club_id_fkey keyed inverse:member",
        "member: membership one-to-many member(id) → membership(member_id) fk:to membership_member_id_fkey foreign-key inverse:member",
        "membership: club many-to-one membership(club_id) → club(id) fk:from membership_club_id_fkey foreign-key inverse:membership",
        "membership: member many-to-one membership(member_id) → member(id) fk:from membership_member_id_fkey foreign-key inverse:membership",
        "passport: holder one-to-one passport(holder_id) → person(id) fk:from passport_holder_id_fkey unique-foreign-key inverse:passport",
        "passport: issuer_country many-to-one passport(issuer_country_id) → country(id) fk:from passport_issuer_country_id_fkey foreign-key inverse:passport",
        "person: book_by_authorId one-to-many person(id) → book(authorId) fk:to book_authorId_fkey foreign-key inverse:author",
        "person: book_by_translatorId one-to-many person(id) → book(translatorId) fk:to book_translatorId_fkey foreign-key inverse:translator",
        "person: passport one-to-one person(id) → passport(holder_id) fk:to passport_holder_id_fkey unique-foreign-key inverse:holder",
        "place: country many-to-one place(country_id) → country(id) fk:from place_country_id_fkey foreign-key inverse:place",
        "player: friendship_by_a_id one-to-many player(id) → friendship(a_id) fk:to friendship_a_id_fkey foreign-key inverse:a",
        "player: friendship_by_b_id one-to-many player(id) → friendship(b_id) fk:to friendship_b_id_fkey foreign-key inverse:b",
        "player: player_via_friendship_by_a_id many-to-many player(id) → player(id) via friendship(a_id; b_id) fk:via friendship_b_id_fkey keyed inverse:player_via_friendship_by_b_id",
        "player: player_via_friendship_by_b_id many-to-many player(id) → player(id) via friendship(b_id; a_id) fk:via friendship_a_id_fkey keyed inverse:player_via_friendship_by_a_id",
        "price: currency many-to-one price(currency_id) → hard_cases_other.currency(id) fk:from price_currency_id_fkey foreign-key inverse:price",
        "profile: user one-to-one profile(user_id) → app_user(id) fk:from profile_user_id_fkey unique-foreign-key inverse:profile",
        "project: assignment one-to-many project(id) → assignment(project_id) fk:to assignment_project_id_fkey foreign-key inverse:project",
        "reading: sensor many-to-one reading(sensor_id) → sensor(id) fk:from reading_sensor foreign-key inverse:reading",
        "regions: departments one-to-many regions(code) → departments(region) fk:to departments_region_fkey foreign-key inverse:regions",
        "role: assignment one-to-many role(id) → assignment(role_id) fk:to assignment_role_id_fkey foreign-key inverse:role",
        "sensor: measurement one-to-many sensor(id) → measurement(sensor_id) fk:to measurement_sensor_id_fkey foreign-key inverse:sensor",
        "sensor: reading one-to-many sensor(id) → reading(sensor_id) fk:to reading_sensor foreign-key inverse:sensor",
        "shelf: warehouse many-to-one shelf(region,warehouse_code) → warehouse(region,code) fk:from shelf_region_warehouse_code_fkey foreign-key inverse:shelf",
        "tag: tag_link one-to-many tag(id) → tag_link(tag_id) fk:to tag_link_tag_id_fkey foreign-key inverse:tag",
        "tag_link: item many-to-one tag_link(item_id) → item(id) fk:from tag_link_item_id_fkey foreign-key inverse:tag_link",
        "tag_link: tag many-to-one tag_link(tag_id) → tag(id) fk:from tag_link_tag_id_fkey foreign-key inverse:tag_link",
        "towns: departments many-to-one towns(department) → departments(code) fk:from towns_department_fkey foreign-key inverse:towns",
        "warehouse: shelf one-to-many warehouse(region,code) → shelf(region,warehouse_code) fk:to shelf_region_warehouse_code_fkey foreign-key inverse:warehouse",
    ]

    @Test func keyedGivesTheReadmeTable() throws {
        #expect(try Self.model().summaries == Self.keyed)
    }

    @Test func strictDropsTheHelperWithAnExtraColumn() throws {
        let expected = Self.keyed
            .filter { !$0.contains(" via membership(") }
            .map { $0.replacingOccurrences(of: " keyed inverse:", with: " strict inverse:") }
        #expect(try Self.model(.strict).summaries == expected)
    }

    @Test func anyTwoForeignKeysAddsTagLinkAndBook() throws {
        let added = [
            "item: tag many-to-many item(id) → tag(id) via tag_link(item_id; tag_id) fk:via tag_link_tag_id_fkey any-two-foreign-keys inverse:item",
            "tag: item many-to-many tag(id) → item(id) via tag_link(tag_id; item_id) fk:via tag_link_item_id_fkey any-two-foreign-keys inverse:tag",
            "person: person_via_book_by_authorId many-to-many person(id) → person(id) via book(authorId; translatorId) fk:via book_translatorId_fkey any-two-foreign-keys inverse:person_via_book_by_translatorId",
            "person: person_via_book_by_translatorId many-to-many person(id) → person(id) via book(translatorId; authorId) fk:via book_authorId_fkey any-two-foreign-keys inverse:person_via_book_by_authorId",
        ]
        let expected = Self.keyed.map { $0.replacingOccurrences(of: " keyed inverse:", with: " any-two-foreign-keys inverse:") } + added
        #expect(try Self.model(.anyTwoForeignKeys).summaries == expected.sorted())
        let error = #expect(throws: RelateError.self) { try Self.model(.anyTwoForeignKeys).entity("person").relationship(forKey: "person") }
        #expect(error?.candidates == ["person_via_book_by_authorId", "person_via_book_by_translatorId"])
    }

    @Test func ambiguousBareNamesListTheirQualifiedNames() throws {
        let model = try Self.model()
        let cases: [(entity: String, key: String, candidates: [String])] = [
            ("person", "book", ["book_by_authorId", "book_by_translatorId"]),
            ("player", "friendship", ["friendship_by_a_id", "friendship_by_b_id"]),
            ("player", "player", ["player_via_friendship_by_a_id", "player_via_friendship_by_b_id"]),
        ]
        for (entity, key, candidates) in cases {
            let error = #expect(throws: RelateError.self) { try model.entity(entity).relationship(forKey: key) }
            #expect(error?.kind == .ambiguousKey, "\(entity).\(key)")
            #expect(error?.candidates == candidates, "\(entity).\(key)")
        }
        // Nothing else in the file is ambiguous, and no key clashes with an attribute.
        for entity in model.entities {
            #expect(entity.attributes.allSatisfy { $0.key == $0.name }, "\(entity.name)")
        }
        #expect(try model.entity("Order").attribute(forKey: "select").name == "select")
    }

    @Test func onDeleteActions() throws {
        let model = try Self.model()
        let expected: [(entity: String, key: String, action: Catalog.ForeignKey.Action)] = [
            ("shelf", "warehouse", .cascade), ("employee", "manager", .setNull), ("assignment", "employee", .cascade),
            ("assignment", "project", .cascade), ("assignment", "role", .noAction), ("book", "author", .restrict),
            ("book", "translator", .setNull), ("city", "country", .noAction), ("passport", "holder", .cascade),
            ("passport", "issuer_country", .noAction), ("profile", "user", .cascade), ("price", "currency", .noAction),
            ("measurement", "sensor", .cascade), ("reading", "sensor", .noAction), ("annotation", "measurement", .cascade),
            ("measurement_flag", "measurement", .noAction), ("membership", "member", .cascade), ("membership", "club", .cascade),
            ("tag_link", "item", .cascade), ("tag_link", "tag", .cascade), ("friendship", "a", .cascade),
            ("friendship", "b", .cascade), ("LineItem", "order", .cascade), ("invoice", "customer", .noAction),
            ("departments", "regions", .noAction), ("towns", "departments", .noAction), ("place", "country", .noAction),
            ("capital", "country", .noAction),
        ]
        for (entity, key, action) in expected {
            let relationship = try model.entity(entity).relationship(forKey: key)
            #expect(relationship.onDelete == action, "\(entity).\(key)")
            // The inverse carries the same action.
            let inverse = try #require(model.entity(schema: relationship.to.schema, table: relationship.to.table))
                .relationship(forKey: relationship.inverseKey)
            #expect(inverse.onDelete == action, "\(entity).\(key) inverse")
        }
    }

    @Test func entities() throws {
        let model = try Self.model()
        #expect(model.entities.map(\.name).sorted() == [
            "LineItem", "Order", "annotation", "app_user", "assignment", "big_departments", "book", "book_with_author", "capital",
            "city", "club", "constraint_first", "country", "customer", "department_counts", "departments", "employee", "friendship", "hard_cases_other.currency",
            "index_keyed", "invoice", "item", "measurement", "measurement_flag", "member", "membership", "nullable_code",
            "partial_code", "passport", "person", "place", "player", "price", "profile", "project", "reading", "region_sizes", "regions", "role",
            "sensor", "shelf", "tag", "tag_link", "town_names", "towns", "warehouse",
        ])
    }
}
