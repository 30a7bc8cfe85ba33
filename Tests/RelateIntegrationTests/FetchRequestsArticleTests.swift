import Foundation
import Relate
import RelatePostgres
import Testing

/// The example of Relate's "Fetch requests" article
/// (`Sources/Relate/Relate.docc/FetchRequests.md`), as the article prints it, on the seed
/// schema (person, email, title and the person_title_rel helper), with the SQL the article
/// quotes checked against what is sent. Change the two together.
@Suite struct FetchRequestsArticleTests {
    @Test func theArticlesExampleRuns() throws {
        try TestDatabase.withSchema { setup, schema in
            let url = try GettingStartedArticleTests.url(searchPath: schema)
            // The article's SQL names the schema `public`; here it is the test's own.
            func quoted(_ sql: String) -> String { sql.replacingOccurrences(of: #""public"."#, with: "\"\(schema)\".") }
            let seeds = TestDatabase.repository.appendingPathComponent("sql/examples")
            try setup.executeScript(String(contentsOf: seeds.appendingPathComponent("seed_person_title.sql"), encoding: .utf8))
            try setup.executeScript("""
                CREATE TABLE email (
                    id SERIAL PRIMARY KEY,
                    address VARCHAR (255),
                    person_id INTEGER CONSTRAINT person REFERENCES person (id)
                );
                INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper'), ('Alan', 'Turing');
                INSERT INTO title (name) VALUES ('Countess'), ('Rear Admiral'), ('Doctor');
                INSERT INTO person_title_rel VALUES (1, 1), (2, 2);
                INSERT INTO email (address, person_id) VALUES
                    ('ada@example.com', 1), ('grace@navy.mil', 2), ('grace@example.com', 2),
                    ('hopper@example.com', 2), ('alan@example.com', 3);
                """)
            let context = try DatabaseContext(url: url)
            var sent: [String] = []
            context.connection.trace = { sent.append($0) }

            // People with an email on navy.mil: EXISTS through the foreign key
            let sailors = try context.fetch("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil")))
            // SELECT t0."id", t0."firstname", t0."surname" FROM "public"."person" t0
            //   WHERE EXISTS (SELECT 1 FROM "public"."email" t1 WHERE t1."person_id" = t0."id" AND t1."address" LIKE $1)   -- $1 = '%@navy.mil'
            #expect(try sailors.map { try $0.value(forKey: "firstname", as: String.self) } == ["Grace"])
            #expect(sent.last?.contains(quoted(#"WHERE EXISTS (SELECT 1 FROM "public"."email" t1 WHERE t1."person_id" = t0."id" AND t1."address" LIKE $1)"#)) == true)

            // Titles held by nobody: NOT EXISTS through the helper table
            let vacant = try context.fetch("title", where: Key("person").isEmpty)
            // … WHERE NOT EXISTS (SELECT 1 FROM "public"."person_title_rel" t1 WHERE t1."title_id" = t0."id")
            #expect(try vacant.map { try $0.value(forKey: "name", as: String.self) } == ["Doctor"])
            #expect(sent.last?.contains(quoted(#"WHERE NOT EXISTS (SELECT 1 FROM "public"."person_title_rel" t1 WHERE t1."title_id" = t0."id")"#)) == true)

            // Through to-ones (one LEFT JOIN per path), sorted, a page of them
            let request = FetchRequest("email", where: Key("person.surname") == "Hopper" || Key("person.firstname").hasPrefix("A"),
                                       orderBy: [.descending("person.surname"), .ascending("address")], limit: 3, offset: 1)
            // SELECT t0."id", t0."address", t0."person_id" FROM "public"."email" t0
            //   LEFT JOIN "public"."person" t1 ON t1."id" = t0."person_id"
            //   WHERE (t1."surname" = $1 OR t1."firstname" LIKE $2) ORDER BY t1."surname" DESC, t0."address" ASC LIMIT $3 OFFSET $4
            let page = try context.fetch(request)
            let total = try context.count(request)       // SELECT count(*) FROM (SELECT 1 FROM … LIMIT $3 OFFSET $4) page
            // Turing, Lovelace, Hopper ×3 by surname descending: the page skips Alan's email.
            #expect(try page.map { try $0.value(forKey: "address", as: String.self) }
                == ["ada@example.com", "grace@example.com", "grace@navy.mil"])
            #expect(total == 3)
            #expect(sent.contains { $0.contains(#"ORDER BY t1."surname" DESC, t0."address" ASC LIMIT $3 OFFSET $4"#) })
        }
    }
}
