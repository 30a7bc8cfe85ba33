import Foundation
import Testing

@testable import Relate

/// A primary key written through an object (BaseTen's `test1PkeyModification`): one
/// `UPDATE`, the object keeps its identity under its new key, and the foreign keys that
/// refer to it follow their `ON UPDATE` actions in memory as in the database.
@Suite struct KeyChangeTests {
    /// `email.person` (constraint `person`) made `ON UPDATE <action>`.
    static func emailsFollow(_ action: String) -> String {
        ObjectFixture.peopleWithEmails + """
            ALTER TABLE email DROP CONSTRAINT person,
                ADD CONSTRAINT person FOREIGN KEY (person_id) REFERENCES person (id) ON UPDATE \(action);
            """
    }

    @Test func aKeyWriteIsOneUpdateAndCascadesToTheDependantsInMemory() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.emailsFollow("CASCADE")) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            let first = try #require(try context.object("email", primaryKey: 1))
            #expect(try first.object(forKey: "person") === ada)

            let sql = try fixture.sql { try ada.setValue(10, forKey: "id") }
            #expect(sql == [#"UPDATE \#(s)."person" SET "id" = $1 WHERE "id" = $2 RETURNING "id", "firstname", "surname""#])
            #expect(try ada.value(forKey: "id") as? Int == 10)
            // One object per row still: the identity map finds Ada by her new key only.
            #expect(try context.object("person", primaryKey: 10) === ada)
            #expect(try context.object("person", primaryKey: 1) == nil)
            // Her emails' keys moved with her; her set and their to-ones are unchanged.
            #expect(try first.value(forKey: "person_id") as? Int == 10)
            #expect(try first.object(forKey: "person") === ada)
            #expect(emails.count == 2 && emails.contains(first))
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func setNullEmptiesTheDependantsKeysAndTheirSets() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.emailsFollow("SET NULL")) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            let first = try #require(try context.object("email", primaryKey: 1))
            try ada.setValue(10, forKey: "id")
            #expect(emails.isEmpty)
            #expect(try first.value(forKey: "person_id") == nil)
            #expect(try first.object(forKey: "person") == nil)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aRefusedKeyChangeNamesTheConstraintAndLeavesMemoryAlone() throws {
        // `person` is NO ACTION: Ada's emails refuse; Grace, once without emails, may move.
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            let error = #expect(throws: RelateError.self) { try ada.setValue(10, forKey: "id") }
            #expect(error?.kind == .updateDenied)
            #expect(error?.message == #"the key of this person object cannot change: rows of table "email" still refer to it through constraint "person" (ON UPDATE RESTRICT or NO ACTION)"#)
            #expect(error?.description.contains("10") == false)
            #expect(try ada.value(forKey: "id") as? Int == 1 && emails.count == 2)
            #expect(try context.object("person", primaryKey: 1) === ada)

            let grace = try #require(try context.object("person", primaryKey: 2))
            try grace.objects(forKey: "email").removeAll()
            try grace.setValue(20, forKey: "id")
            #expect(try context.object("person", primaryKey: 20) === grace)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aKeyAnotherClientChangedMeanwhileIsAConflict() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.emailsFollow("CASCADE")) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let other = try fixture.freshContext()
            try other.object("person", primaryKey: 1)!.setValue(30, forKey: "id")

            let error = #expect(throws: RelateError.self) { try ada.setValue(10, forKey: "id") }
            #expect(error?.kind == .conflict)
            // Memory has no row under her old key any more; her new one is read afresh.
            #expect(ada.isDeleted)
            #expect(try context.object("person", primaryKey: 30)?.value(forKey: "firstname") as? String == "Ada")
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aCompositeKeyPartMovesItsDependants() throws {
        let cascade = """
            ALTER TABLE shelf DROP CONSTRAINT shelf_region_warehouse_code_fkey,
                ADD FOREIGN KEY (region, warehouse_code) REFERENCES warehouse (region, code) ON UPDATE CASCADE;
            INSERT INTO warehouse VALUES ('eu', 'a', 'Antwerp'), ('us', 'a', 'Austin');
            INSERT INTO shelf (region, warehouse_code, label) VALUES ('eu', 'a', 'top'), ('eu', 'a', 'bottom'), ('us', 'a', 'left');
            """
        try ObjectFixture.with("hard_cases", extraSQL: cascade) { fixture in
            let context = fixture.context
            let antwerp = try #require(try context.object("warehouse", primaryKey: ["eu", "a"]))
            let shelves = try antwerp.objects(forKey: "shelf")
            #expect(shelves.count == 2)
            try antwerp.setValue("b", forKey: "code")
            #expect(try context.object("warehouse", primaryKey: ["eu", "b"]) === antwerp)
            #expect(shelves.count == 2)
            for shelf in shelves {
                #expect(try shelf.value(forKey: "warehouse_code") as? String == "b")
                #expect(try shelf.object(forKey: "warehouse") === antwerp)
            }
            // Austin, same code in another region, is untouched.
            let austin = try #require(try context.object("warehouse", primaryKey: ["us", "a"]))
            #expect(try austin.objects(forKey: "shelf").count == 1)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func helperRowsFollowAndManyToManySetsStayRight() throws {
        let cascade = ObjectFixture.peopleWithTitles + """
            ALTER TABLE person_title_rel DROP CONSTRAINT person_title_rel_person_id_fkey,
                ADD CONSTRAINT person_title_rel_person_id_fkey FOREIGN KEY (person_id) REFERENCES person (id) ON UPDATE CASCADE;
            """
        try ObjectFixture.with("seed_person_title", extraSQL: cascade) { fixture in
            let context = fixture.context
            let grace = try #require(try context.object("person", primaryKey: 2))
            let titles = try grace.objects(forKey: "title")
            let rows = try grace.objects(forKey: "person_title_rel")
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let doctors = try doctor.objects(forKey: "person")
            let row = try #require(try context.object("person_title_rel", primaryKey: [2, 3]))

            try grace.setValue(20, forKey: "id")
            // The helper row is the same object under its new composite key.
            #expect(try context.object("person_title_rel", primaryKey: [20, 3]) === row)
            #expect(try row.object(forKey: "person") === grace)
            #expect(titles.count == 2 && titles.contains(doctor))
            #expect(doctors.contains(grace))
            #expect(rows.count == 2 && rows.contains(row))
            #expect(try fixture.disagreements() == [])

            // Where the helper's key is NO ACTION the database refuses, naming it.
            let ada = try #require(try context.object("person", primaryKey: 1))
            try context.connection.execute(
                "ALTER TABLE person_title_rel DROP CONSTRAINT person_title_rel_person_id_fkey, "
                    + "ADD CONSTRAINT person_title_rel_person_id_fkey FOREIGN KEY (person_id) REFERENCES person (id)")
            let error = #expect(throws: RelateError.self) { try ada.setValue(10, forKey: "id") }
            #expect(error?.kind == .updateDenied)
            #expect(error?.postgresError?.constraint == "person_title_rel_person_id_fkey")
        }
    }

    @Test func aRolledBackKeyChangeRollsBackInMemory() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: Self.emailsFollow("CASCADE")) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            let first = try #require(try context.object("email", primaryKey: 1))
            struct Abandon: Error {}
            #expect(throws: Abandon.self) {
                try context.transaction {
                    try ada.setValue(10, forKey: "id")
                    #expect(try first.value(forKey: "person_id") as? Int == 10)
                    throw Abandon()
                }
            }
            #expect(try ada.value(forKey: "id") as? Int == 1)
            #expect(try context.object("person", primaryKey: 1) === ada)
            #expect(try first.value(forKey: "person_id") as? Int == 1)
            #expect(emails.count == 2)
            #expect(try fixture.disagreements() == [])
        }
    }
}
