import Foundation
import Testing

@testable import Relate

/// Refresh: objects and loaded sets read again after another client changed the rows.
@Suite struct RefreshTests {
    @Test func refreshAllTakesAnotherClientsChangesWithOneQueryPerEntityAndSet() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let people = try context.fetch("person", where: Key("id") > 0, orderBy: [.ascending("id")])
            try context.prefetch(["email"], for: people)
            let (ada, grace) = (people[0], people[1])
            let adas = try ada.objects(forKey: "email")
            let graces = try grace.objects(forKey: "email")
            let third = try #require(try context.object("email", primaryKey: 3))

            let other = try TestDatabase.connect()
            try other.executeScript(
                """
                UPDATE \(fixture.schema).person SET surname = 'King' WHERE id = 1;
                UPDATE \(fixture.schema).email SET person_id = 2 WHERE id = 2;
                INSERT INTO \(fixture.schema).email (address, person_id) VALUES ('ada@new.example', 1);
                DELETE FROM \(fixture.schema).email WHERE id = 3;
                """)
            #expect(try fixture.disagreements() != [])

            let sql = try fixture.sql { try context.refreshAll() }
            #expect(sql.count == 3)
            #expect(sql.filter { $0.hasPrefix("SELECT") && $0.contains("= ANY($1)") }.count == 3)
            #expect(sql.contains { $0.contains("FROM \(s).\"email\" WHERE \"person_id\" = ANY($1)") })
            #expect(try ada.value(forKey: "surname") as? String == "King")
            #expect(third.isDeleted)
            // The sets handed out are the ones refilled.
            #expect(try ada.objects(forKey: "email") === adas)
            #expect(try grace.objects(forKey: "email") === graces)
            #expect(adas.allObjects.map { $0.primaryKey[0] as? Int }.sorted { ($0 ?? 0) < ($1 ?? 0) } == [1, 4])
            #expect(graces.allObjects.map { $0.primaryKey[0] as? Int } == [2])
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A row read again is compared where it lies with what memory holds: one that differs
    /// in a text of the same length, or in NULL, is taken — for objects of a fetch's shared
    /// cells and of cells of their own alike; one that holds the same is left as it is.
    @Test func aRowReadAgainIsTakenOnlyWhereItDiffers() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let people = try context.fetch("person", where: Key("id") > 0, orderBy: [.ascending("id")])
            let (ada, grace) = (people[0], people[1])
            // Grace's values in cells of her own, Ada's still in the fetch's.
            try grace.setValue("Hopper", forKey: "surname")
            let other = try TestDatabase.connect()
            try other.executeScript(
                """
                UPDATE \(fixture.schema).person SET surname = 'Lovelacf' WHERE id = 1;
                UPDATE \(fixture.schema).person SET firstname = NULL WHERE id = 2;
                """)
            var again = try context.fetch("person", where: Key("id") > 0, orderBy: [.ascending("id")])
            #expect(again[0] === ada && again[1] === grace)
            #expect(try ada.value(forKey: "surname") as? String == "Lovelacf")
            #expect(try grace.value(forKey: "firstname") == nil)
            // The same rows again: the same objects, the same values.
            again = try context.fetch("person", where: Key("id") > 0, orderBy: [.ascending("id")])
            #expect(again[0] === ada && again[1] === grace)
            #expect(try ada.value(forKey: "surname") as? String == "Lovelacf")
            #expect(try grace.value(forKey: "surname") as? String == "Hopper")
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func refreshOfOneObjectReadsItsRowAndItsLoadedManyToMany() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let grace = try #require(try context.object("person", primaryKey: 2))
            let titles = try grace.objects(forKey: "title")
            #expect(titles.count == 2)
            let other = try TestDatabase.connect()
            try other.executeScript(
                """
                DELETE FROM \(fixture.schema).person_title_rel WHERE person_id = 2 AND title_id = 3;
                INSERT INTO \(fixture.schema).person_title_rel VALUES (2, 1);
                UPDATE \(fixture.schema).person SET firstname = 'Amazing Grace' WHERE id = 2;
                """)
            let sql = try fixture.sql { try context.refresh(grace) }
            #expect(sql.count == 2)
            #expect(try grace.value(forKey: "firstname") as? String == "Amazing Grace")
            #expect(titles.allObjects.compactMap { try? $0.value(forKey: "name") as? String }.sorted() == ["Countess", "Rear Admiral"])
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aRowAnotherClientDeletedLeavesEverySet() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let grace = try #require(try context.object("person", primaryKey: 2))
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let titles = try grace.objects(forKey: "title")
            let holders = try doctor.objects(forKey: "person")
            #expect(titles.contains(doctor) && holders.contains(grace))
            let other = try TestDatabase.connect()
            try other.executeScript(
                "DELETE FROM \(fixture.schema).person_title_rel WHERE title_id = 3; DELETE FROM \(fixture.schema).title WHERE id = 3")
            try context.refresh(doctor)
            #expect(doctor.isDeleted)
            #expect(!titles.contains(doctor))
            #expect(try fixture.disagreements() == [])
            // A deleted object, or another context's, is refused.
            #expect(throws: RelateError.self) { try context.refresh(doctor) }
            let stranger = try #require(try fixture.freshContext().object("person", primaryKey: 1))
            let error = #expect(throws: RelateError.self) { try context.refresh(stranger) }
            #expect(error?.kind == .invalidObject)
        }
    }
}
