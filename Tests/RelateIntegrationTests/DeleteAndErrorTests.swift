import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Delete rules from `ON DELETE`, and every failed write: a clear error, and memory equal
/// to the database afterwards.
@Suite struct DeleteAndErrorTests {
    static let hardData = """
        INSERT INTO person (name) VALUES ('Ada'), ('Grace'), ('Edsger');
        INSERT INTO book (title, "authorId", "translatorId") VALUES ('Notes', 1, 2);
        INSERT INTO passport (number, holder_id) VALUES ('P-1', 1), ('P-2', 2), ('P-3', 3);
        INSERT INTO employee (name) VALUES ('boss');
        INSERT INTO employee (name, manager_id) VALUES ('a', 1), ('b', 1);
        INSERT INTO sensor (name) VALUES ('s1');
        INSERT INTO measurement (sensor_id, taken_on, value) VALUES (1, '2024-03-01', 1.5), (1, '2025-03-01', 2.5);
        """

    @Test func restrictDeniesAndNothingChanges() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.hardData) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let books = try ada.objects(forKey: "book_by_authorId")
            let error = #expect(throws: RelateError.self) { try context.delete(ada) }
            #expect(error?.kind == .deleteDenied)
            #expect(error?.message.contains("\"book\"") == true)
            #expect(error?.message.contains("book_authorId_fkey") == true)
            #expect(error?.postgresError?.sqlState == .foreignKeyViolation || error?.postgresError?.sqlState == .restrictViolation)
            #expect(!ada.isDeleted && books.count == 1)
            #expect(try context.object("person", primaryKey: 1) === ada)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func cascadeAndSetNullFollowInMemory() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.hardData) { fixture in
            let context = fixture.context
            // SET NULL: Grace translated the book; deleting her (and, by CASCADE, her passport).
            let grace = try #require(try context.object("person", primaryKey: 2))
            let passport = try #require(try grace.object(forKey: "passport"))
            let book = try #require(try context.object("book", primaryKey: 1))
            #expect(try book.object(forKey: "translator") === grace)
            let sql = try fixture.sql { try context.delete(grace) }
            #expect(sql == [#"DELETE FROM "\#(fixture.schema)"."person" WHERE "id" = $1"#])
            #expect(grace.isDeleted && passport.isDeleted)
            #expect(try book.value(forKey: "translatorId") == nil)
            #expect(try book.object(forKey: "translator") == nil)
            #expect(try context.object("passport", primaryKey: 2) == nil)

            // SET NULL on a self-reference.
            let boss = try #require(try context.object("employee", primaryKey: 1))
            let staff = try boss.objects(forKey: "employee").allObjects
            #expect(staff.count == 2)
            try context.delete(boss)
            #expect(try staff.allSatisfy { try $0.value(forKey: "manager_id") == nil })

            // CASCADE into a partitioned table.
            let sensor = try #require(try context.object("sensor", primaryKey: 1))
            let measurements = try sensor.objects(forKey: "measurement").allObjects
            #expect(measurements.count == 2)
            try context.delete(sensor)
            #expect(measurements.allSatisfy { $0.isDeleted })
            #expect(try fixture.disagreements() == [])
            // A deleted object refuses further use.
            let error = #expect(throws: RelateError.self) { try grace.setValue("x", forKey: "name") }
            #expect(error?.kind == .invalidObject)
            #expect(throws: RelateError.self) { try context.delete(grace) }
        }
    }

    @Test func setDefaultRereadsTheDependants() throws {
        let schema = """
            CREATE TABLE team (id int PRIMARY KEY, name text);
            CREATE TABLE player (id serial PRIMARY KEY, name text,
                                 team_id int NOT NULL DEFAULT 0 REFERENCES team ON DELETE SET DEFAULT);
            INSERT INTO team VALUES (0, 'free agents'), (1, 'red');
            INSERT INTO player (name, team_id) VALUES ('a', 1), ('b', 1);
            """
        try ObjectFixture.with("seed_person_email", extraSQL: schema) { fixture in
            let context = fixture.context
            let red = try #require(try context.object("team", primaryKey: 1))
            let free = try #require(try context.object("team", primaryKey: 0))
            let freeAgents = try free.objects(forKey: "player")
            let players = try red.objects(forKey: "player").allObjects
            let sql = try fixture.sql { try context.delete(red) }
            // The delete, then one query reading the two players back.
            #expect(sql.count == 2)
            #expect(sql[1].hasSuffix(#"FROM "\#(fixture.schema)"."player" WHERE "id" = ANY($1)"#))
            #expect(try players.allSatisfy { try $0.value(forKey: "team_id") as? Int == 0 })
            #expect(players.allSatisfy { freeAgents.contains($0) })
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A delete finds the dependants in memory by their foreign key's values, through an
    /// index that must follow rows moved to another parent (and moved back by a rollback),
    /// rows registered after it was built, and the identity map's compaction.
    @Test func dependantsAreFoundAfterTheyMove() throws {
        let schema = """
            CREATE TABLE club (id int PRIMARY KEY, name text);
            CREATE TABLE member (id int PRIMARY KEY, name text, club_id int REFERENCES club ON DELETE CASCADE);
            INSERT INTO club VALUES (1, 'odd'), (2, 'even'), (3, 'empty');
            INSERT INTO member SELECT g, 'm' || g, 2 - g % 2 FROM generate_series(1, 200) AS g;
            """
        try ObjectFixture.with("seed_person_email", extraSQL: schema) { fixture in
            let context = fixture.context
            let members = try context.fetch("member", orderBy: "id")
            let odd = try #require(try context.object("club", primaryKey: 1))
            let even = try #require(try context.object("club", primaryKey: 2))
            // Builds the index: no member of club 3.
            try context.delete(try #require(try context.object("club", primaryKey: 3)))
            #expect(!members.contains { $0.isDeleted })

            let moved = members[0]  // member 1, odd, moves to the even club
            try even.objects(forKey: "member").insert(moved)
            let movedBack = members[2]  // member 3, odd, moves and is moved back by the rollback
            #expect(throws: RelateError.self) {
                try context.transaction {
                    try even.objects(forKey: "member").insert(movedBack)
                    throw RelateError(kind: .invalidObject, message: "roll back")
                }
            }
            #expect(try movedBack.value(forKey: "club_id") as? Int == 1)
            let late = try context.insert("member", values: ["id": 201, "name": "late", "club_id": 1])

            try context.delete(even)
            let evenOnes = members.filter { $0.isDeleted }
            #expect(evenOnes.count == 101 && moved.isDeleted && !movedBack.isDeleted && !late.isDeleted)
            #expect(evenOnes.allSatisfy { ($0.primaryKey.first as? Int).map { $0 % 2 == 0 || $0 == 1 } == true })
            #expect(try fixture.disagreements() == [])

            // More than half the members are gone from the identity map now, so it was
            // compacted; the index is built anew.
            try context.delete(odd)
            #expect(members.allSatisfy { $0.isDeleted } && late.isDeleted)
            #expect(try fixture.disagreements() == [])
            #expect(try context.fetch("member").isEmpty)
        }
    }

    @Test func wrongTypesAreRefusedBeforeAnythingIsSent() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let email = try #require(try context.object("email", primaryKey: 1))
            let sent = context.connection.roundTrips
            let error = #expect(throws: RelateError.self) { try ada.setValue(42, forKey: "firstname") }
            #expect(context.connection.roundTrips == sent)
            #expect(error?.kind == .typeMismatch)
            #expect(error?.message == #"key "firstname" of "person" is column "firstname" of type varchar; a value of type Int cannot be stored there"#)
            let range = #expect(throws: RelateError.self) { try email.setValue(Int.max, forKey: "person_id") }
            #expect(range?.message.contains("does not fit in int4") == true)
            // Any integer or floating-point value that fits works.
            try email.setValue(UInt8(2), forKey: "person_id")
            try email.setValue(1.0, forKey: "person_id")
            #expect(throws: RelateError.self) { try email.setValue(1.5, forKey: "person_id") }
            #expect(throws: RelateError.self) { try email.setValue("Ada", forKey: "person") }
            #expect(throws: RelateError.self) { try email.setValue(email, forKey: "person") }
            let unknown = #expect(throws: RelateError.self) { try ada.value(forKey: "emial") }
            #expect(unknown?.kind == .unknownKey && unknown?.candidates.contains("email") == true)
            // A key may be written, but Ada's emails refer to it (NO ACTION).
            let denied = #expect(throws: RelateError.self) { try ada.setValue(7, forKey: "id") }
            #expect(denied?.kind == .updateDenied)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func constraintViolationsLeaveMemoryAlone() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let email = try #require(try context.object("email", primaryKey: 1))
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            let error = #expect(throws: RelateError.self) { try email.setValue(999, forKey: "person_id") }
            #expect(error?.kind == .database)
            #expect(error?.postgresError?.sqlState == .foreignKeyViolation)
            #expect(error?.postgresError?.constraint == "person")
            #expect(try email.value(forKey: "person_id") as? Int == 1)
            #expect(emails.contains(email))
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func notNullForeignKeysCannotBeEmptied() throws {
        try ObjectFixture.with("hard_cases", extraSQL: Self.hardData) { fixture in
            let ada = try #require(try fixture.context.object("person", primaryKey: 1))
            let books = try ada.objects(forKey: "book_by_authorId")
            let book = try #require(books.allObjects.first)
            let error = #expect(throws: RelateError.self) { try books.remove(book) }
            #expect(error?.kind == .invalidWrite)
            #expect(error?.message.contains("\"authorId\"") == true)
            #expect(books.contains(book))
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func objectsOfAnotherContextAreRefused() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let other = try fixture.freshContext()
            let ada = try #require(try fixture.context.object("person", primaryKey: 1))
            let foreignTitle = try #require(try other.object("title", primaryKey: 3))
            let error = #expect(throws: RelateError.self) { try ada.objects(forKey: "title").insert(foreignTitle) }
            #expect(error?.kind == .invalidObject)
            #expect(error?.message.contains("another DatabaseContext") == true)
            #expect(throws: RelateError.self) { try fixture.context.delete(foreignTitle) }
            #expect(try ada.objects(forKey: "title").count == 1)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aDroppedConnectionFailsCleanly() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            let pid = try context.connection.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0)
            let admin = try TestDatabase.connect()
            try admin.execute("SELECT pg_terminate_backend($1::int)", [pid])
            let error = #expect(throws: RelateError.self) { try ada.setValue("X", forKey: "surname") }
            #expect(error?.postgresError?.kind == .connectionClosed)
            #expect(try ada.value(forKey: "surname") as? String == "Lovelace")
            #expect(throws: RelateError.self) { try emails.removeAll() }
            #expect(emails.count == 2)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A one-to-one loaded inside a rolled-back transaction (the inverse side, whose key is
    /// in the other table) is forgotten with it.
    @Test func aToOneLoadedInARolledBackTransactionIsForgotten() throws {
        let data = "INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace');"
        try ObjectFixture.with("seed_person_email_one_to_one", extraSQL: data) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try context.transaction {
                    let email = try context.insert("email", values: ["address": "ada@example.com", "person": ada])
                    #expect(try ada.object(forKey: "email") === email)
                    throw Stop()
                }
            }
            #expect(try ada.object(forKey: "email") == nil)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aRolledBackTransactionRollsMemoryBack() throws {
        struct Stop: Error {}
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let titles = try ada.objects(forKey: "title")
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let doctors = try doctor.objects(forKey: "person")
            #expect(throws: Stop.self) {
                try context.transaction {
                    try ada.setValue("Byron", forKey: "surname")
                    try titles.insert(doctor)
                    let new = try context.insert("title", values: ["name": "Analyst"])
                    try titles.insert(new)
                    try titles.remove(new)
                    try context.delete(new)
                    throw Stop()
                }
            }
            #expect(try ada.value(forKey: "surname") as? String == "Lovelace")
            #expect(!titles.contains(doctor) && !doctors.contains(ada) && titles.count == 1)
            #expect(try fixture.disagreements() == [])
            // A failure inside a nested transaction undoes only the inner part.
            try context.transaction {
                try ada.setValue("King", forKey: "surname")
                #expect(throws: RelateError.self) {
                    try context.transaction {
                        try titles.insert(doctor)
                        try ada.setValue(Int.max, forKey: "id")
                    }
                }
            }
            #expect(try ada.value(forKey: "surname") as? String == "King")
            #expect(!titles.contains(doctor))
            #expect(try fixture.disagreements() == [])
        }
    }
}
