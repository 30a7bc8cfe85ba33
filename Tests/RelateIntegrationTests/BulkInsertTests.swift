import Foundation
import Testing

@testable import Relate

/// `insert(contentsOf:)`: many members added by one statement, memory following the
/// database's answer as it does for one member.
@Suite struct BulkInsertTests {
    @Test func aKeyedManyToManyTakesItsNewPairsInOneStatement() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let ada = try #require(try context.object("person", primaryKey: 1))
            let countess = try #require(try context.object("title", primaryKey: 1))
            let admiral = try #require(try context.object("title", primaryKey: 2))
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let titles = try ada.objects(forKey: "title")
            let doctors = try doctor.objects(forKey: "person")
            let rows = try ada.objects(forKey: "person_title_rel")
            #expect(titles.contains(countess) && titles.count == 1)

            // Countess is linked already, Doctor is given twice: each pair once.
            let sql = try fixture.sql { try titles.insert(contentsOf: [countess, doctor, admiral, doctor]) }
            #expect(sql == [
                #"INSERT INTO \#(s)."person_title_rel" ("person_id", "title_id") SELECT $1, v."title_id" FROM (SELECT unnest($2) AS "title_id") AS v "#
                    + #"WHERE NOT EXISTS (SELECT 1 FROM \#(s)."person_title_rel" h WHERE h."person_id" = $3 AND h."title_id" = v."title_id") "#
                    + #"RETURNING "person_id", "title_id""#
            ])
            #expect(titles.count == 3 && [countess, admiral, doctor].allSatisfy { titles.count(for: $0) == 1 })
            #expect(doctors.contains(ada))
            #expect(rows.count == 3)
            #expect(try fixture.sql { try titles.insert(contentsOf: []) }.isEmpty)
            #expect(try fixture.disagreements() == [])

            // Rolled back, the pairs leave the database and memory alike.
            let grace = try #require(try context.object("person", primaryKey: 2))
            let gracesTitles = try grace.objects(forKey: "title")
            let countesses = try countess.objects(forKey: "person")
            let before = Set(gracesTitles.allObjects.map(ObjectIdentifier.init))
            #expect(before.count == 2 && !gracesTitles.contains(countess))
            struct Undo: Error {}
            #expect(throws: Undo.self) {
                try context.transaction {
                    try gracesTitles.insert(contentsOf: [countess, admiral, doctor])
                    #expect(gracesTitles.count == 3 && countesses.contains(grace))
                    throw Undo()
                }
            }
            #expect(Set(gracesTitles.allObjects.map(ObjectIdentifier.init)) == before && !countesses.contains(grace))
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func anUnkeyedHelperTakesARowForEachObjectGiven() throws {
        let data = """
            INSERT INTO item (name) VALUES ('lamp');
            INSERT INTO tag (label) VALUES ('red'), ('blue');
            """
        try ObjectFixture.with("hard_cases", manyToMany: .anyTwoForeignKeys, extraSQL: data) { fixture in
            let context = fixture.context
            let lamp = try #require(try context.object("item", primaryKey: 1))
            let red = try #require(try context.object("tag", primaryKey: 1))
            let blue = try #require(try context.object("tag", primaryKey: 2))
            let tags = try lamp.objects(forKey: "tag")
            let items = try red.objects(forKey: "item")
            try tags.insert(red)
            let sql = try fixture.sql { try tags.insert(contentsOf: [red, blue, red]) }
            #expect(sql.count == 1 && sql[0].contains("FROM (SELECT unnest($2) AS") && !sql[0].contains("NOT EXISTS"))
            #expect(tags.count(for: red) == 3 && tags.count(for: blue) == 1)
            #expect(items.count(for: lamp) == 3)
            #expect(try context.connection.query("SELECT count(*) FROM tag_link")[0].decode(Int.self, at: 0) == 4)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Grace, Ada's and Grace's loaded `email` sets, and Ada's two emails (home, work).
    static func emails(_ context: DatabaseContext) throws -> (
        grace: DatabaseObject, adas: RelationshipSet, graces: RelationshipSet, home: DatabaseObject, work: DatabaseObject
    ) {
        let ada = try #require(try context.object("person", primaryKey: 1))
        let grace = try #require(try context.object("person", primaryKey: 2))
        return (
            grace, try ada.objects(forKey: "email"), try grace.objects(forKey: "email"),
            try #require(try context.object("email", primaryKey: 1)), try #require(try context.object("email", primaryKey: 2))
        )
    }

    @Test func oneToManyChildrenMoveByOneUpdate() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let (grace, adasEmails, gracesEmails, home, work) = try Self.emails(context)
            let gracesOwn = try #require(try context.object("email", primaryKey: 3))

            let claim = #"UPDATE \#(s)."email" SET "person_id" = $1 WHERE "id" = ANY($2) AND ("person_id") IS DISTINCT FROM ($1) "#
                + #"RETURNING "id", "address", "person_id""#
            #expect(try fixture.sql { try gracesEmails.insert(contentsOf: [home, work]) } == [claim])
            #expect(adasEmails.isEmpty && gracesEmails.count == 3)
            // A child the database links already is read again: it may be gone.
            let again = try fixture.sql { try gracesEmails.insert(contentsOf: [home, gracesOwn]) }
            #expect(again == [claim, #"SELECT "id", "address", "person_id" FROM \#(s)."email" WHERE "id" = ANY($1)"#])
            #expect(adasEmails.isEmpty && gracesEmails.count == 3)
            #expect(try home.object(forKey: "person") === grace)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Memory may be stale: a child another client moved here already is read again and
    /// follows; one another client deleted is marked deleted and named by a conflict, after
    /// the others were added.
    @Test func staleChildrenFollowTheDatabase() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let (grace, adasEmails, gracesEmails, home, work) = try Self.emails(context)
            let other = try fixture.freshContext()
            try other.update("email", primaryKey: 1, values: ["person_id": 2])

            try gracesEmails.insert(contentsOf: [home])
            #expect(!adasEmails.contains(home) && gracesEmails.contains(home))
            #expect(try home.object(forKey: "person") === grace)

            // Deleted by another client while memory shows it in this very set: found out too.
            #expect(adasEmails.contains(work))
            try other.delete("email", primaryKey: 2)
            let already = #expect(throws: RelateError.self) { try adasEmails.insert(contentsOf: [work]) }
            #expect(already?.kind == .conflict && work.isDeleted && !adasEmails.contains(work))

            let gracesOwn = try #require(try context.object("email", primaryKey: 3))
            try other.delete("email", primaryKey: 3)
            let error = #expect(throws: RelateError.self) { try adasEmails.insert(contentsOf: [gracesOwn, home]) }
            #expect(error?.kind == .conflict && error?.entity == "email")
            #expect(gracesOwn.isDeleted && !gracesEmails.contains(gracesOwn))
            #expect(adasEmails.contains(home) && !gracesEmails.contains(home))
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func keysWithoutAnArrayTypeGoAsOneInsertEachInOnePipeline() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(ObjectFixture.shelves + "INSERT INTO shelf_paint VALUES ('A1', 'red');")
            let fixture = ObjectFixture(context: try DatabaseContext(connection: connection, schemas: [schema]), schema: schema)
            let shelf = try #require(try fixture.context.object("shelf", primaryKey: "A1"))
            let paints = try shelf.objects(forKey: "paint")
            let all = try fixture.context.fetch("paint")
            let round = connection.roundTrips
            let sql = try fixture.sql { try paints.insert(contentsOf: all) }
            #expect(sql.count == 3 && sql.allSatisfy { $0.hasPrefix("INSERT") })
            #expect(connection.roundTrips == round + 1)
            #expect(paints.count == 3 && all.allSatisfy { paints.count(for: $0) == 1 })
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Children refer to a unique column the owner holds NULL in: nothing to refer to, so
    /// nothing is sent (the children would belong to nobody).
    @Test func anOwnerWithoutTheReferredValueIsRefused() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE team (id int PRIMARY KEY, code text UNIQUE);
                CREATE TABLE player (id int PRIMARY KEY, team_code text REFERENCES team (code));
                INSERT INTO team VALUES (1, NULL), (2, 'b');
                INSERT INTO player VALUES (1, 'b');
                """)
            let fixture = ObjectFixture(context: try DatabaseContext(connection: connection, schemas: [schema]), schema: schema)
            let unnamed = try #require(try fixture.context.object("team", primaryKey: 1))
            let player = try #require(try fixture.context.object("player", primaryKey: 1))
            let players = try unnamed.objects(forKey: "player")
            var error: RelateError?
            let sql = fixture.sql { error = #expect(throws: RelateError.self) { try players.insert(contentsOf: [player]) } }
            #expect(sql.isEmpty)
            #expect(error?.kind == .invalidWrite && error?.description.contains("\"code\"") == true)
            #expect(try player.value(forKey: "team_code") as? String == "b")
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Children without a primary key cannot be told apart for the claiming `UPDATE`.
    @Test func childrenWithoutAPrimaryKeyAreRefused() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE team (id int PRIMARY KEY);
                CREATE TABLE note (team_id int REFERENCES team, body text);
                INSERT INTO team VALUES (1), (2);
                INSERT INTO note VALUES (2, 'a'), (2, 'b');
                """)
            let fixture = ObjectFixture(context: try DatabaseContext(connection: connection, schemas: [schema]), schema: schema)
            let team = try #require(try fixture.context.object("team", primaryKey: 1))
            let notes = try fixture.context.fetch("note")
            var error: RelateError?
            let sql = fixture.sql { error = #expect(throws: RelateError.self) { try team.objects(forKey: "note").insert(contentsOf: notes) } }
            #expect(sql.allSatisfy { !$0.hasPrefix("UPDATE") })
            #expect(error?.kind == .invalidWrite && error?.entity == "note")
        }
    }

    @Test func aWrongObjectIsRefusedBeforeAnythingIsSent() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let titles = try ada.objects(forKey: "title")
            var error: RelateError?
            let sql = fixture.sql { error = #expect(throws: RelateError.self) { try titles.insert(contentsOf: [doctor, grace]) } }
            #expect(sql.isEmpty)
            #expect(error?.kind == .typeMismatch && error?.key == "title")
            #expect(!titles.contains(doctor))
            #expect(try fixture.disagreements() == [])
        }
    }
}
