import Foundation
import Relate
import RelatePostgres
import Testing

/// The four steps of Relate's "Getting started" article
/// (`Sources/Relate/Relate.docc/GettingStarted.md`), as the article prints them, on a
/// database of their own holding the seed schema (person, email, title and the
/// person_title_rel helper): an example that stops compiling or working fails here.
/// Change the two together.
@Suite struct GettingStartedArticleTests {
    @Test func theFourStepsRun() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
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
            let check = try Connection(url: url)
            #expect(try check.query("SELECT surname FROM person WHERE id = 1")[0].decode(String.self, at: 0) == "Lovelace")
            #expect(try check.query("SELECT count(*) FROM email WHERE person_id = 1")[0].decode(Int.self, at: 0) == 2)
            #expect(try check.query("SELECT count(*) FROM person_title_rel WHERE person_id = 1")[0].decode(Int.self, at: 0) == 1)
        }
    }
}
