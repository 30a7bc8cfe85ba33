import Foundation
import Testing

@testable import Relate

/// BaseTen's examples (seed 000), word for word, against a live server — and the exact SQL
/// and round trips each step costs.
@Suite struct SeedObjectTests {
    @Test func personEmailIsACollectionAndEmailPersonAnObject() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let aPerson = try #require(try context.object("person", primaryKey: 1))
            let anEmail = try #require(try context.object("email", primaryKey: 3))
            // [aPerson valueForKey: @"email"] returns a collection of email objects.
            let emails = try #require(try aPerson.value(forKey: "email") as? RelationshipSet)
            #expect(emails.count == 2)
            #expect(Set(emails.compactMap { try? $0.value(forKey: "address") as? String }) == ["ada@example.com", "ada@work.example"])
            // [anEmail valueForKey: @"person"] returns a single person object.
            let owner = try #require(try anEmail.value(forKey: "person") as? DatabaseObject)
            #expect(try owner.value(forKey: "firstname") as? String == "Grace")
            // The constraint's name is the key: `CONSTRAINT person`.
            #expect(try anEmail.object(forKey: "person") === owner)
            #expect(try aPerson.value(forKeyPath: "email.address") as? [String?] != nil)
            #expect(try anEmail.value(forKeyPath: "person.surname") as? String == "Hopper")
        }
    }

    @Test func afterAddingUniqueBothSidesAreObjects() throws {
        let data = """
            INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace');
            INSERT INTO email (address, person_id) VALUES ('ada@example.com', 1);
            """
        try ObjectFixture.with("seed_person_email_one_to_one", extraSQL: data) { fixture in
            let aPerson = try #require(try fixture.context.object("person", primaryKey: 1))
            let anEmail = try #require(try fixture.context.object("email", primaryKey: 1))
            #expect(try aPerson.value(forKey: "email") as? DatabaseObject === anEmail)
            #expect(try anEmail.value(forKey: "person") as? DatabaseObject === aPerson)
            #expect(throws: RelateError.self) { try aPerson.objects(forKey: "email") }
        }
    }

    @Test func manyToManyThroughTheHelperTable() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let grace = try #require(try context.object("person", primaryKey: 2))
            let titles = try #require(try grace.value(forKey: "title") as? RelationshipSet)
            #expect(Set(titles.compactMap { try? $0.value(forKey: "name") as? String }) == ["Rear Admiral", "Doctor"])
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let people = try doctor.objects(forKey: "person")
            #expect(people.count == 1 && people.allObjects[0] === grace)
            // The helper's own rows: [aPerson valueForKey: @"person_title_rel"].
            let rows = try grace.objects(forKey: "person_title_rel")
            #expect(rows.count == 2)
            #expect(Set(rows.compactMap { try? $0.value(forKey: "title_id") as? Int }) == [2, 3])
        }
    }

    @Test func faultsCostOneQueryAndTheExactSQL() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            var grace: DatabaseObject?
            let fetch = try fixture.sql { grace = try context.object("person", primaryKey: 2) }
            #expect(fetch == [#"SELECT "id", "firstname", "surname" FROM \#(s)."person" WHERE "id" = $1"#])
            // Fetched again: from the identity map, no query.
            var again: DatabaseObject?
            #expect(try fixture.sql { again = try context.object("person", primaryKey: 2) }.isEmpty)
            #expect(again === grace)
            let titles = try fixture.sql { _ = try grace!.objects(forKey: "title") }
            #expect(titles == [
                #"SELECT t."id", t."name", h."person_id" FROM \#(s)."person_title_rel" h JOIN \#(s)."title" t ON t."id" = h."title_id" WHERE h."person_id" = $1"#
            ])
            // Touched again: loaded, no query.
            #expect(try fixture.sql { _ = try grace!.objects(forKey: "title").count }.isEmpty)
            let helperRows = try fixture.sql { _ = try grace!.objects(forKey: "person_title_rel") }
            #expect(helperRows == [#"SELECT "person_id", "title_id" FROM \#(s)."person_title_rel" WHERE "person_id" = $1"#])
            // A to-one whose target is in memory costs nothing.
            let row = try #require(try grace!.objects(forKey: "person_title_rel").allObjects.first)
            var owner: DatabaseObject?
            #expect(try fixture.sql { owner = try row.object(forKey: "person") }.isEmpty)
            #expect(owner === grace)
        }
    }

    @Test func prefetchOfTwoLevelsForAHundredObjectsIsTwoQueries() throws {
        var data = ""
        for person in 1...100 {
            data += "INSERT INTO person (firstname, surname) VALUES ('P\(person)', 'S');\n"
            data += "INSERT INTO email (address, person_id) VALUES ('a\(person)@x', \(person)), ('b\(person)@x', \(person));\n"
        }
        try ObjectFixture.with("seed_person_email", extraSQL: data) { fixture in
            let context = fixture.context
            let people = try context.fetch("person", orderBy: "id")
            #expect(people.count == 100)
            context.reset()  // forget the people so the second level has to load them
            let again = try context.fetch("person", orderBy: "id")
            let before = context.connection.roundTrips
            let statements = try fixture.sql { try context.prefetch(["email", "email.person"], for: again) }
            #expect(context.connection.roundTrips - before == 1)
            // The people are in memory already: `email.person` needs no second query here.
            #expect(statements.count == 1)
            #expect(statements[0].hasSuffix(#"FROM "\#(fixture.schema)"."email" WHERE "person_id" = ANY($1)"#))
            for person in again {
                var count = 0
                #expect(try fixture.sql { count = try person.objects(forKey: "email").count }.isEmpty)
                #expect(count == 2)
            }
            // From the emails' side, two levels cost exactly two queries.
            context.reset()
            let emails = try context.fetch("email", where: "id <= $1", [100])
            let twoLevels = try fixture.sql { try context.prefetch(["person", "person.email"], for: emails) }
            #expect(twoLevels.count == 2)
            #expect(twoLevels[0].hasSuffix(#"FROM "\#(fixture.schema)"."person" WHERE "id" = ANY($1)"#))
            #expect(twoLevels[1].hasSuffix(#"FROM "\#(fixture.schema)"."email" WHERE "person_id" = ANY($1)"#))
            for email in emails {
                let person = try fixture.sql { _ = try email.object(forKey: "person") }
                #expect(person.isEmpty)
            }
        }
    }

    @Test func identityMapGivesTheSameInstance() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let first = try context.fetch("person", orderBy: "id")
            let second = try context.fetch("person", where: "surname = $1", ["Lovelace"])
            #expect(first[0] === second[0])
            #expect(try context.object("person", primaryKey: 1) === first[0])
            let email = try #require(try context.object("email", primaryKey: 1))
            #expect(try email.object(forKey: "person") === first[0])
            let limited = try fixture.sql { _ = try context.fetch("person", where: "surname <> $1", ["x"], orderBy: "firstname DESC", limit: 1) }
            #expect(limited == [#"SELECT "id", "firstname", "surname" FROM "\#(fixture.schema)"."person" WHERE surname <> $1 ORDER BY firstname DESC LIMIT $2"#])
        }
    }
}
