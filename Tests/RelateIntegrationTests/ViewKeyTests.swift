import Foundation
import RelateCodeGen
import Testing

@testable import Relate

/// Views of every shape, read from the server: the key each carries (or why it has none),
/// the relationships of the foreign-key columns it carries, and such a view used as a
/// keyed entity: opened by key, fetched with a to-one prefetched, written through, in sets,
/// and live.
@Suite struct ViewKeyTests {
    static let schema = """
        CREATE TABLE country (id serial PRIMARY KEY, name text NOT NULL);
        CREATE TABLE person (id serial PRIMARY KEY, name text NOT NULL, country_id integer REFERENCES country (id));
        CREATE TABLE email (id serial PRIMARY KEY, address text NOT NULL, person_id integer NOT NULL REFERENCES person (id));
        CREATE TABLE town (code text NOT NULL, department text NOT NULL, name text NOT NULL, UNIQUE (code, department));
        INSERT INTO country (name) VALUES ('France'), ('England');
        INSERT INTO person (name, country_id) VALUES ('Ada', 2), ('Grace', NULL);
        INSERT INTO email (address, person_id) VALUES ('ada@example.com', 1), ('ada@work.example', 1), ('grace@example.com', 2);
        INSERT INTO town VALUES ('123', '69', 'Lyon'), ('123', '75', 'Paris');
        -- One table, its key renamed: auto-updatable.
        CREATE VIEW mail AS SELECT id AS mail_id, address, person_id FROM email;
        -- A to-one join, and a chain of them through an outer join.
        CREATE VIEW mail_owner AS SELECT e.id, e.address, e.person_id, p.name AS owner_name
            FROM email e JOIN person p ON p.id = e.person_id;
        CREATE VIEW mail_country AS SELECT e.id, c.name AS country
            FROM email e JOIN person p ON p.id = e.person_id LEFT JOIN country c ON c.id = p.country_id;
        -- A to-many join, an aggregate, DISTINCT, a set operation, a subquery: no key.
        CREATE VIEW person_mail AS SELECT p.id, p.name, e.address FROM person p JOIN email e ON e.person_id = p.id;
        CREATE VIEW mail_counts AS SELECT person_id, count(*) AS n FROM email GROUP BY person_id;
        CREATE VIEW mail_people AS SELECT DISTINCT id, person_id FROM email;
        CREATE VIEW names AS SELECT id, name FROM person UNION SELECT id, name FROM country;
        CREATE VIEW sub AS SELECT s.id FROM (SELECT id FROM email) s;
        -- A cross join: nothing pins the country to one row.
        CREATE VIEW mail_by_country AS SELECT e.id, c.name FROM email e CROSS JOIN country c;
        -- Outer joins: the preserved side of a RIGHT JOIN keys it; a LEFT JOIN's nullable side never does.
        CREATE VIEW mail_right AS SELECT e.id, p.name FROM person p RIGHT JOIN email e ON e.person_id = p.id;
        CREATE VIEW mail_left AS SELECT e.id, p.name FROM person p LEFT JOIN email e ON e.person_id = p.id;
        -- A WITH query: no key; a window function: the key stays; an equality with a constant joins to one.
        CREATE VIEW mail_cte AS WITH x AS (SELECT id FROM email) SELECT id FROM x;
        CREATE VIEW mail_ranked AS SELECT id, row_number() OVER (ORDER BY address) AS rank FROM email;
        CREATE VIEW mail_france AS SELECT e.id, c.name FROM email e, country c WHERE c.id = 1;
        -- A materialized view.
        CREATE MATERIALIZED VIEW mail_snapshot AS SELECT id, address, person_id FROM email;
        -- A table keyed by a unique constraint, the key renamed.
        CREATE VIEW town_view AS SELECT code AS town_code, department, name FROM town WHERE name <> '';
        -- A view over a view, and columns whose names look like the rule's own syntax.
        CREATE VIEW mail_again AS SELECT mail_id, person_id FROM mail WHERE address LIKE '%@%';
        CREATE VIEW odd AS SELECT id AS ":resorigcol", address AS "a b{c} \\(d)" FROM email;
        """

    static func with(_ body: (ObjectFixture) throws -> Void) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(Self.schema)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            try body(ObjectFixture(context: context, schema: schema))
        }
    }

    @Test func eachViewHasTheKeyItCarriesOrNone() throws {
        try Self.with { fixture throws in
            let model = fixture.context.model
            let keyed: [(String, [String], String)] = [
                ("mail", ["mail_id"], "email.id"), ("mail_owner", ["id"], "email.id"), ("mail_country", ["id"], "email.id"),
                ("mail_snapshot", ["id"], "email.id"), ("town_view", ["town_code", "department"], "town.code, town.department"),
                ("mail_again", ["mail_id"], "mail.mail_id"), ("odd", [":resorigcol"], "email.id"),
                ("mail_right", ["id"], "email.id"), ("mail_ranked", ["id"], "email.id"), ("mail_france", ["id"], "email.id"),
            ]
            for (name, key, source) in keyed {
                let entity = try model.entity(name)
                #expect(entity.primaryKey == key && entity.keySource == .view && entity.keyName == source, "\(name)")
            }
            for name in ["person_mail", "mail_counts", "mail_people", "names", "sub", "mail_by_country", "mail_left", "mail_cte"] {
                let entity = try model.entity(name)
                #expect(entity.primaryKey.isEmpty && entity.keySource == nil, "\(name)")
            }
            #expect(try model.entity("mail_country").reads == ["email", "person", "country"])
            #expect(try model.entity("mail_again").reads == ["mail"])
            // relate inspect says where the key came from.
            let text = model.textDescription()
            #expect(text.contains("mail  (\(fixture.schema).mail, view, key: mail_id (view of email.id))"), "\(text)")
            #expect(text.contains("person_mail  (\(fixture.schema).person_mail, view, no key)"))
            let mail = try #require(ModelDescription(model).entities.first { $0.name == "mail" })
            #expect(mail.keySource == "view" && mail.keyName == "email.id" && mail.primaryKey == ["mail_id"])
            // The generated type says which key it uses.
            let generated = try Generator(try ModelSnapshot(json: Data(model.jsonDescription().utf8))).files()
            let file = try #require(generated.first { $0.name == Generator.fileName(ofEntity: "mail") })
            #expect(file.contents.contains("Keyed by `mail_id`: the view carries the key of the table it reads (`email.id`)."))
        }
    }

    @Test func theForeignKeysAViewCarriesAreItsRelationships() throws {
        try Self.with { fixture throws in
            let model = fixture.context.model
            for view in ["mail", "mail_owner", "mail_counts", "mail_snapshot", "mail_again"] {
                let toOne = try model.entity(view).relationship(forKey: "person")
                #expect(toOne.kind == .manyToOne && toOne.to.table == "person" && toOne.constraint == "email_person_id_fkey", "\(view)")
                let inverse = try model.entity("person").relationship(forKey: view)
                #expect(inverse.kind == .oneToMany && inverse.to.table == view && inverse.inverseKey == "person", "\(view)")
            }
            // Foreign keys the view does not carry give nothing: no country from mail_country.
            #expect(try model.entity("mail_country").relationships.isEmpty)
            #expect(try model.entity("person_mail").relationships.isEmpty)
        }
    }

    @Test func aKeyedViewIsOpenedFetchedWrittenAndInSets() throws {
        try Self.with { fixture throws in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let work = try #require(try context.object("mail", primaryKey: 2))
            #expect(try work.value(forKey: "address", as: String.self) == "ada@work.example")
            // One object per row: a fetch hands out the same one.
            let mails = try context.fetch(FetchRequest("mail", orderBy: [.ascending("mail_id")]))
            #expect(mails.count == 3 && mails[1] === work)
            // The to-one, prefetched in one statement.
            var statements: [String] = []
            statements = try fixture.sql { try context.prefetch(["person"], for: mails) }
            #expect(statements.count == 1)
            #expect(try work.object(forKey: "person") === ada)
            // The inverse to-many, as a set of view objects.
            let adas = try ada.objects(forKey: "mail")
            #expect(adas.count == 2 && adas.contains(work))
            // A write through the auto-updatable view reaches the table.
            try work.setValue("ada@new.example", forKey: "address")
            #expect(try context.fetch("email", where: "id = $1", [2]).first?.value(forKey: "address", as: String.self) == "ada@new.example")
            // An insert through the view: the table's default fills the key, read back.
            let added = try context.insert("mail", values: ["address": "ada@third.example", "person_id": 1])
            #expect(try added.value(forKey: "mail_id", as: Int.self) == 4)
            #expect(try ada.objects(forKey: "mail").count == 3)
            // Moving a row to another person through the set.
            let grace = try #require(try context.object("person", primaryKey: 2))
            try grace.objects(forKey: "mail").insert(added)
            #expect(try context.fetch("email", where: "id = $1", [4]).first?.value(forKey: "person_id", as: Int.self) == 2)
            #expect(try ada.objects(forKey: "mail").count == 2)
            try context.delete(added)
            #expect(try context.fetch("email", where: "id = $1", [4]).isEmpty)
            // A view over a join takes no write: refused before any statement.
            let owned = try #require(try context.object("mail_owner", primaryKey: 1))
            #expect(try owned.value(forKey: "owner_name", as: String.self) == "Ada")
            let refused = fixture.sql {
                let error = #expect(throws: RelateError.self) { try owned.setValue("x", forKey: "owner_name") }
                #expect(error?.kind == .invalidWrite && error?.entity == "mail_owner")
            }
            #expect(refused.isEmpty)
            // A view keyed by a table's unique constraint, opened by its composite key.
            let lyon = try #require(try context.object("town_view", primaryKey: ["123", "69"]))
            #expect(try lyon.value(forKey: "name", as: String.self) == "Lyon")
        }
    }

    /// A live query over a view is read again when a table it reads changes, by another
    /// client (its region holds the tables) or by a write through another view.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func aLiveQueryOverAViewFollowsItsTables(_ mechanism: ChangeTracking.Mechanism) throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(Self.schema)
            try ChangeTrackingTests.enable(mechanism, on: setup)
            let context = try DatabaseContext(url: url)
            try context.startTrackingChanges(using: mechanism)
            let adas = try context.liveFetch(FetchRequest("mail_owner", where: Key("owner_name") == "Ada", orderBy: [.ascending("id")]))
            func ids() throws -> [Int] { try adas.objects.map { try $0.value(forKey: "id", as: Int.self)! } }
            #expect(try ids() == [1, 2])
            // Another client renames Grace Ada: her email joins the answer, though no row of
            // email changed.
            let other = try Connection(url: url)
            try other.execute("UPDATE person SET name = 'Ada' WHERE id = 2")
            var waited = 0
            while try ids() != [1, 2, 3], waited < 120 {
                _ = try context.waitForChanges(timeout: .milliseconds(500))
                waited += 1
            }
            #expect(try ids() == [1, 2, 3])
            // A write of this context through another view of email changes the answer too.
            let live = try context.liveFetch(FetchRequest("email", where: Key("address").hasSuffix("@example.com"), orderBy: [.ascending("id")]))
            #expect(try live.objects.count == 2)
            let mail = try #require(try context.object("mail", primaryKey: 3))
            try mail.setValue("grace@elsewhere.org", forKey: "address")
            #expect(try live.objects.count == 1)
        }
    }

    /// `hard_cases.sql`'s views with no override: keys inferred over tables keyed by unique
    /// constraints, the relationship of the foreign-key column a view carries used both
    /// ways, a write through a simple view and one through an `INSTEAD OF` trigger, and a
    /// refused write to the aggregate view with no statement sent.
    @Test func theHardCasesViewsWithoutOverrides() throws {
        try ObjectFixture.with("hard_cases", extraSQL: UniqueKeyedTableTests.data) { fixture throws in
            let context = fixture.context
            let rhone = try #require(try context.object("big_departments", primaryKey: "69"))
            let auvergne = try #require(try rhone.object(forKey: "regions"))
            #expect(try auvergne.value(forKey: "code", as: String.self) == "84")
            #expect(try auvergne.objects(forKey: "big_departments").contains(rhone))
            #expect(try auvergne.objects(forKey: "department_counts").count == 1)
            try rhone.setValue("Rhône (69)", forKey: "name")
            let lyon = try #require(try context.object("town_names", primaryKey: 1))
            #expect(try lyon.value(forKey: "department_name", as: String.self) == "Rhône (69)")
            try lyon.setValue("Lyon 2e", forKey: "name")
            #expect(try context.fetch("towns", where: "id = $1", [1]).first?.value(forKey: "name", as: String.self) == "Lyon 2e")
            let counts = try #require(try context.fetch("department_counts", where: "region = $1", ["84"]).first)
            let statements = fixture.sql {
                let error = #expect(throws: RelateError.self) { try counts.setValue(9, forKey: "departments") }
                #expect(error?.kind == .invalidWrite && error?.entity == "department_counts")
            }
            #expect(statements.isEmpty)
        }
    }

    /// `database.observe` over a view follows the tables it reads too.
    @Test func anObservedViewFollowsItsTables() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(Self.schema)
            try ChangeTracking.enable(on: setup)
            let database = try Database(url: url, maxConnections: 2)
            defer { database.close() }
            let adas = DatabaseObserveTests.Collector(
                try await database.observe(FetchRequest("mail_owner", where: Key("owner_name") == "Ada", orderBy: [.ascending("id")])))
            // Generous waits: the full suite can hold the cooperative pool's threads for a while.
            #expect(DatabaseObserveTests.ids(try await adas.wait(for: 1, timeout: .seconds(120)).first) == [1, 2])
            // Only person changes: the view's answer does.
            try setup.execute("UPDATE person SET name = 'Ada' WHERE id = 2")
            #expect(DatabaseObserveTests.ids(try await adas.wait(for: 2, timeout: .seconds(120)).last) == [1, 2, 3])
        }
    }

    /// A context that does not autocommit saves a change made through a view.
    @Test func aViewsChangeIsSaved() throws {
        try Self.with { fixture throws in
            let context = fixture.context
            context.autocommits = false
            let work = try #require(try context.object("mail", primaryKey: 2))
            try work.setValue("ada@saved.example", forKey: "address")
            #expect(try context.fetch("email", where: "id = $1", [2]).first?.value(forKey: "address", as: String.self) == "ada@work.example")
            try context.save()
            let fresh = try fixture.freshContext()
            #expect(try fresh.object("email", primaryKey: 2)?.value(forKey: "address", as: String.self) == "ada@saved.example")
        }
    }
}
