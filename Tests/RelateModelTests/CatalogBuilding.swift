import Relate

// Terse builders for hand-made catalogs, and a one-line description of a relationship that
// tests compare against. No server: a `Catalog` is a plain value.

/// A table whose columns are given as one space-separated string:
/// `table("email", "id address person_id", foreignKeys: [fk("person", ["person_id"], "person")])`.
/// Columns named `id` or ending in `_id` / `Id` are `int4`, the others `text`.
func table(
    _ name: String, schema: String = "public", kind: Catalog.Table.Kind = .table, _ columns: String,
    primaryKey: [String] = ["id"], unique: [[String]] = [], foreignKeys: [Catalog.ForeignKey] = []
) -> Catalog.Table {
    let names = columns.split(separator: " ").map(String.init)
    return Catalog.Table(
        schema: schema, name: name, kind: kind,
        columns: names.map { column in
            let isKey = column == "id" || column.hasSuffix("_id") || column.hasSuffix("Id")
            return Catalog.Column(name: column, type: isKey ? "int4" : "text", isNullable: !primaryKey.contains(column))
        },
        primaryKey: primaryKey,
        uniqueKeys: unique.map { Catalog.UniqueKey(name: "\(name)_\($0.joined(separator: "_"))_key", columns: $0) },
        foreignKeys: foreignKeys)
}

/// A view: columns, no keys.
func view(_ name: String, schema: String = "public", _ columns: String) -> Catalog.Table {
    table(name, schema: schema, kind: .view, columns, primaryKey: [])
}

/// A foreign key named `name`: `columns` refer to `referenced` of `target`.
func fk(
    _ name: String, _ columns: [String], _ target: String, _ referenced: [String] = ["id"], schema: String = "public",
    onDelete: Catalog.ForeignKey.Action = .noAction
) -> Catalog.ForeignKey {
    Catalog.ForeignKey(
        name: name, columns: columns, referencedSchema: schema, referencedTable: target, referencedColumns: referenced,
        onDelete: onDelete)
}

/// The foreign key PostgreSQL would create for `REFERENCES` on `table (columns)`:
/// its generated name `<table>_<columns>_fkey`.
func fk(
    on table: String, _ columns: [String], _ target: String, _ referenced: [String] = ["id"], schema: String = "public",
    onDelete: Catalog.ForeignKey.Action = .noAction
) -> Catalog.ForeignKey {
    fk("\(table)_\(columns.joined(separator: "_"))_fkey", columns, target, referenced, schema: schema, onDelete: onDelete)
}

func makeModel(
    _ tables: [Catalog.Table], schemas: [String] = ["public"], rule: ManyToManyRule = .keyed, overrides: [Override] = []
) throws(RelateError) -> Model {
    try Model(catalog: Catalog(schemas: schemas, tables: tables), options: ModelOptions(manyToMany: rule, overrides: overrides))
}

extension Relationship {
    /// One line with everything a test checks about a relationship:
    /// `key kind from(cols) → to(cols) [via helper(fromCols; toCols)] fk:side constraint rule inverse:key`.
    /// Tables outside `public` are written `schema.table`.
    var summary: String {
        func end(_ schema: String, _ table: String, _ columns: [String]) -> String {
            (schema == "public" ? table : "\(schema).\(table)") + "(" + columns.joined(separator: ",") + ")"
        }
        var line = "\(key) \(kind.rawValue) \(end(from.schema, from.table, from.columns)) → \(end(to.schema, to.table, to.columns))"
        if let via {
            let helper = via.schema == "public" ? via.table : "\(via.schema).\(via.table)"
            line += " via \(helper)(\(via.fromColumns.joined(separator: ",")); \(via.toColumns.joined(separator: ",")))"
        }
        line += " fk:\(foreignKeyIn.rawValue) \(constraint) \(rule.rawValue) inverse:\(inverseKey)"
        return line
    }
}

extension Model {
    /// `entity.key` → the relationship's summary; throws like `relationship(forKey:)`.
    func summary(_ entity: String, _ key: String) throws(RelateError) -> String {
        try self.entity(entity).relationship(forKey: key).summary
    }

    /// Every relationship of every entity, as `entity: summary`, sorted.
    var summaries: [String] {
        entities.flatMap { entity in entity.relationships.map { "\(entity.name): \($0.summary)" } }.sorted()
    }
}

/// Catalogs of the seeds and of `sql/examples/`, as introspection would read them.
enum Examples {
    static let person = table("person", "id firstname surname")

    /// `seed_person_email.sql`: `CONSTRAINT person REFERENCES person (id)`.
    static func personEmail(oneToOne: Bool = false) -> [Catalog.Table] {
        [
            person,
            table("email", "id address person_id", unique: oneToOne ? [["person_id"]] : [],
                  foreignKeys: [fk("person", ["person_id"], "person")]),
        ]
    }

    /// `seed_person_title.sql`.
    static let personTitle: [Catalog.Table] = [
        person,
        table("title", "id name"),
        table("person_title_rel", "person_id title_id", primaryKey: ["person_id", "title_id"],
              foreignKeys: [fk(on: "person_title_rel", ["person_id"], "person"), fk(on: "person_title_rel", ["title_id"], "title")]),
    ]

    /// Both seeds in one schema: person, email, title, person_title_rel.
    static let seed: [Catalog.Table] = personEmail() + personTitle.dropFirst()

    /// GRDB's example (seed 002): two FKs from book to person.
    static let book: [Catalog.Table] = [
        table("person", "id name"),
        table("book", "id title authorId translatorId", foreignKeys: [
            fk(on: "book", ["authorId"], "person", onDelete: .restrict),
            fk(on: "book", ["translatorId"], "person", onDelete: .setNull),
        ]),
    ]

    static let otherSchema = "hard_cases_other"

    /// `hard_cases.sql`, as introspection reads it (partitions folded into their roots,
    /// the FK to `measurement_2024` pointing at `measurement`, the leaves' FK on `reading`).
    static let hardCases: [Catalog.Table] = keyedWithoutPrimaryKey + views + [
        table("warehouse", "region code name", primaryKey: ["region", "code"]),
        table("shelf", "id region warehouse_code label", foreignKeys: [
            fk(on: "shelf", ["region", "warehouse_code"], "warehouse", ["region", "code"], onDelete: .cascade),
        ]),
        table("employee", "id name manager_id", foreignKeys: [fk(on: "employee", ["manager_id"], "employee", onDelete: .setNull)]),
        table("project", "id name"),
        table("role", "id name"),
        table("assignment", "employee_id project_id role_id", primaryKey: ["employee_id", "project_id", "role_id"], foreignKeys: [
            fk(on: "assignment", ["employee_id"], "employee", onDelete: .cascade),
            fk(on: "assignment", ["project_id"], "project", onDelete: .cascade),
            fk(on: "assignment", ["role_id"], "role"),
        ]),
        table("person", "id name"),
        table("book", "id title authorId translatorId", foreignKeys: [
            fk(on: "book", ["authorId"], "person", onDelete: .restrict),
            fk(on: "book", ["translatorId"], "person", onDelete: .setNull),
        ]),
        view("book_with_author", "id title author_name"),
        table("country", "id code name", unique: [["code"]]),
        table("city", "id name country_code", foreignKeys: [fk(on: "city", ["country_code"], "country", ["code"])]),
        table("passport", "id number holder_id issuer_country_id", unique: [["holder_id"]], foreignKeys: [
            fk(on: "passport", ["holder_id"], "person", onDelete: .cascade),
            fk(on: "passport", ["issuer_country_id"], "country"),
        ]),
        table("app_user", "id login", unique: [["login"]]),
        table("profile", "user_id bio", primaryKey: ["user_id"], foreignKeys: [
            fk(on: "profile", ["user_id"], "app_user", onDelete: .cascade),
        ]),
        table("currency", schema: otherSchema, "id code name", unique: [["code"]]),
        table("price", "id amount currency_id", foreignKeys: [fk(on: "price", ["currency_id"], "currency", schema: otherSchema)]),
        table("sensor", "id name"),
        table("measurement", kind: .partitionedTable, "id sensor_id taken_on value", primaryKey: ["id", "taken_on"], foreignKeys: [
            fk(on: "measurement", ["sensor_id"], "sensor", onDelete: .cascade),
        ]),
        table("reading", kind: .partitionedTable, "id sensor_id taken_at value", primaryKey: ["id", "taken_at"], foreignKeys: [
            fk("reading_sensor", ["sensor_id"], "sensor"),
        ]),
        table("annotation", "id measurement_id measurement_taken_on note", foreignKeys: [
            fk(on: "annotation", ["measurement_id", "measurement_taken_on"], "measurement", ["id", "taken_on"], onDelete: .cascade),
        ]),
        table("measurement_flag", "id measurement_id taken_on flag", foreignKeys: [
            fk(on: "measurement_flag", ["measurement_id", "taken_on"], "measurement", ["id", "taken_on"]),
        ]),
        table("member", "id name"),
        table("club", "id name"),
        table("membership", "member_id club_id joined_at", primaryKey: ["member_id", "club_id"], foreignKeys: [
            fk(on: "membership", ["member_id"], "member", onDelete: .cascade),
            fk(on: "membership", ["club_id"], "club", onDelete: .cascade),
        ]),
        table("item", "id name"),
        table("tag", "id label"),
        table("tag_link", "item_id tag_id", primaryKey: [], foreignKeys: [
            fk(on: "tag_link", ["item_id"], "item", onDelete: .cascade),
            fk(on: "tag_link", ["tag_id"], "tag", onDelete: .cascade),
        ]),
        table("player", "id name"),
        table("friendship", "a_id b_id", primaryKey: ["a_id", "b_id"], foreignKeys: [
            fk(on: "friendship", ["a_id"], "player", onDelete: .cascade),
            fk(on: "friendship", ["b_id"], "player", onDelete: .cascade),
        ]),
        table("Order", "id select placedAt"),
        table("LineItem", "id orderId quantity", foreignKeys: [fk(on: "LineItem", ["orderId"], "Order", onDelete: .cascade)]),
        table("place", "id name country_id", foreignKeys: [fk(on: "place", ["country_id"], "country")]),
        Catalog.Table(
            name: "capital", columns: columns("id! name! country_id since"), primaryKey: ["id"], parent: .init(name: "place")),
        table("customer", "id name"),
        table("invoice", "id customer_id total", foreignKeys: [
            fk("invoice_customer", ["customer_id"], "customer"),
            fk("invoice_customer_again", ["customer_id"], "customer"),
        ]),
    ]

    static let hardCasesSchemas = ["public", otherSchema]

    /// A column that is `NOT NULL` (`name!`) or not: `columns("id! code! capital")`.
    static func columns(_ text: String) -> [Catalog.Column] {
        text.split(separator: " ").map { word in
            let name = word.hasSuffix("!") ? String(word.dropLast()) : String(word)
            return Catalog.Column(name: name, type: name == "id" || name.count == 1 ? "int4" : "text", isNullable: !word.hasSuffix("!"))
        }
    }

    /// The tables of `hard_cases.sql` without a primary key, as introspection reads them
    /// (the partial unique index and the expression index are not unique keys to it).
    static let keyedWithoutPrimaryKey: [Catalog.Table] = [
        Catalog.Table(
            name: "regions", columns: columns("id! code! capital! name!"),
            uniqueKeys: [.init(name: "regions_code_key", columns: ["code"]), .init(name: "regions_id_key", columns: ["id"]),
                         .init(name: "regions_name_key", columns: ["name"])]),
        Catalog.Table(
            name: "departments", columns: columns("id! code! capital! region! name!"),
            uniqueKeys: [.init(name: "departments_code_key", columns: ["code"]), .init(name: "departments_id_key", columns: ["id"])],
            foreignKeys: [fk(on: "departments", ["region"], "regions", ["code"])]),
        Catalog.Table(
            name: "towns", columns: columns("id! code! article name! department!"),
            uniqueKeys: [.init(name: "towns_code_department_key", columns: ["code", "department"]),
                         .init(name: "towns_id_key", columns: ["id"])],
            foreignKeys: [fk(on: "towns", ["department"], "departments", ["code"])]),
        Catalog.Table(name: "nullable_code", columns: columns("code label!"), uniqueKeys: [.init(name: "nullable_code_code_key", columns: ["code"])]),
        Catalog.Table(name: "partial_code", columns: columns("code! label")),
        Catalog.Table(
            name: "index_keyed", columns: columns("code! label!"),
            uniqueKeys: [.init(name: "index_keyed_code", columns: ["code"], isConstraint: false)]),
        Catalog.Table(
            name: "constraint_first", columns: columns("a! b! c!"),
            uniqueKeys: [.init(name: "constraint_first_a_b_key", columns: ["a", "b"]),
                         .init(name: "constraint_first_c", columns: ["c"], isConstraint: false)]),
    ]

    /// The views of `hard_cases.sql` over those tables, with what PostgreSQL lets each take.
    static let views: [Catalog.Table] = [
        Catalog.Table(name: "big_departments", kind: .view, columns: columns("code name region"), allowedWrites: .all),
        Catalog.Table(name: "department_counts", kind: .view, columns: columns("region departments"), allowedWrites: []),
        Catalog.Table(name: "town_names", kind: .view, columns: columns("id name department_name"), allowedWrites: .update),
        Catalog.Table(name: "region_sizes", kind: .materializedView, columns: columns("region departments"), allowedWrites: []),
    ]
}
