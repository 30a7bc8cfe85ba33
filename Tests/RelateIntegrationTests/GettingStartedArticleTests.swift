import Foundation
import Relate
import RelatePostgres
import Testing

/// The four steps of Relate's "Getting started" article
/// (`Sources/Relate/Relate.docc/GettingStarted.md`), as the article prints them, on a
/// schema of their own holding the seed tables (person, email, title and the
/// person_title_rel helper): an example that stops compiling or working fails here.
/// Change the two together.
@Suite struct GettingStartedArticleTests {
    @Test func theFourStepsRun() throws {
        try TestDatabase.withSchema { setup, schema in
            let url = try Self.url(searchPath: schema)       // the article's database, in a schema of the test's own
            let seeds = TestDatabase.repository.appendingPathComponent("sql/examples")
            try setup.executeScript(String(contentsOf: seeds.appendingPathComponent("seed_person_title.sql"), encoding: .utf8))
            try setup.executeScript("""
                CREATE TABLE email (
                    id SERIAL PRIMARY KEY,
                    address VARCHAR (255),
                    person_id INTEGER CONSTRAINT person REFERENCES person (id)
                );
                INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper');
                INSERT INTO title (name) VALUES ('Countess'), ('Rear Admiral');
                INSERT INTO email (address, person_id) VALUES ('ada@work.example', 1);
                """)

            // 1. Connect
            let context = try DatabaseContext(url: url)
            print(context.model.textDescription())   // entities, attributes, relationships and the rules that made them
            #expect(context.model.entities.map(\.name).contains("person_title_rel"))

            // 2. Fetch
            let ada = try context.object("person", primaryKey: 1)!
            let hoppers = try context.fetch("person", where: Key("surname") == "Hopper", orderBy: [.ascending("firstname")])
            #expect(hoppers.count == 1)
            #expect(try context.object("person", primaryKey: 1) === ada)

            // 3. Navigate
            let emails = try ada.objects(forKey: "email")          // a counted set, loaded in one query
            let owner = try emails.allObjects[0].object(forKey: "person")   // to-one: the same `ada`
            let name = try ada.value(forKey: "firstname", as: String.self)
            #expect(owner === ada)
            #expect(name == "Ada")

            // 4. Write through
            let countess = try context.fetch("title", where: Key("name") == "Countess")[0]
            try ada.setValue("King", forKey: "surname")            // UPDATE … RETURNING, at once
            try emails.insert(try context.insert("email", values: ["address": "ada@example.com"]))
            try ada.objects(forKey: "title").insert(countess)      // INSERT INTO person_title_rel …
            try context.transaction {                              // one transaction; memory rolls back with it
                try ada.setValue("Lovelace", forKey: "surname")
            }

            // What the database holds now.
            let check = setup
            #expect(try check.query("SELECT surname FROM person WHERE id = 1")[0].decode(String.self, at: 0) == "Lovelace")
            #expect(try check.query("SELECT count(*) FROM email WHERE person_id = 1")[0].decode(Int.self, at: 0) == 2)
            #expect(try check.query("SELECT count(*) FROM person_title_rel WHERE person_id = 1")[0].decode(Int.self, at: 0) == 1)
        }
    }

    /// The test server's URL with `search_path` set to `schema`: a context opened from it
    /// reads that schema, as the article's reads `public`.
    static func url(searchPath schema: String) throws -> String {
        let base = try TestDatabase.url()
        if var components = URLComponents(string: base), components.scheme?.hasPrefix("postgres") == true {
            // libpq takes one `=` per URI parameter: the option's own is percent-encoded.
            let option = URLQueryItem(name: "options", value: "-c%20search_path%3D\(schema)")
            components.percentEncodedQueryItems = (components.percentEncodedQueryItems ?? []) + [option]
            return components.string ?? base
        }
        return base + " options='-c search_path=\(schema)'"
    }
}
