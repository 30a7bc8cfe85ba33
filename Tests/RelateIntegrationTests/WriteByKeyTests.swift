import Foundation
import Testing

@testable import Relate

/// Writes by primary key without reading the row first: one statement each, whose answer
/// becomes (or refreshes) the object, with memory following as for writes through objects.
@Suite struct WriteByKeyTests {
    @Test func anUpdateByKeyIsOneStatementAndItsRowBecomesTheObject() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            var ada: DatabaseObject?
            let sql = try fixture.sql { ada = try context.update("person", primaryKey: 1, values: ["surname": "King"]) }
            #expect(sql == [#"UPDATE \#(s)."person" SET "surname" = $1 WHERE "id" = $2 RETURNING "id", "firstname", "surname""#])
            #expect(try ada?.value(forKey: "surname") as? String == "King")
            var again: DatabaseObject?
            #expect(try fixture.sql { again = try context.object("person", primaryKey: 1) }.isEmpty)
            #expect(again === ada)

            // An object memory holds is the one refreshed; a moved email changes sets.
            let grace = try #require(try context.object("person", primaryKey: 2))
            let adasEmails = try ada!.objects(forKey: "email")
            let gracesEmails = try grace.objects(forKey: "email")
            let work = try #require(try context.object("email", primaryKey: 2))
            #expect(try context.update("email", primaryKey: 2, values: ["person": grace]) === work)
            #expect(!adasEmails.contains(work) && gracesEmails.contains(work))
            // An email memory never held (another client's) joins the loaded set of its new person.
            let other = try fixture.freshContext()
            let newID = try #require(try other.insert("email", values: ["address": "new@example.com"]).value(forKey: "id") as? Int)
            let new = try #require(try context.update("email", primaryKey: newID, values: ["person": grace]))
            #expect(gracesEmails.contains(new) && gracesEmails.count == 3)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// An update's text is made once for each set of columns, whoever writes them (by key
    /// or through an object), and every later update binds its own values into it.
    @Test func oneSetOfColumnsMakesOneStatementWhoeverWritesIt() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let first = try fixture.sql { try context.update("person", primaryKey: 1, values: ["surname": "King", "firstname": "Augusta"]) }
            let second = try fixture.sql { try context.update("person", primaryKey: 2, values: ["firstname": "Anita", "surname": "Borg"]) }
            #expect(first.count == 1 && first == second)
            let ada = try #require(try context.object("person", primaryKey: 1))
            let anita = try #require(try context.object("person", primaryKey: 2))
            let byObject = try fixture.sql { try ada.setValue("Lovelace", forKey: "surname") }
            let byKey = try fixture.sql { try context.update("person", primaryKey: 2, values: ["surname": "Hopper"]) }
            #expect(byObject.count == 1 && byObject == byKey && byObject != first)
            #expect(try ada.value(forKey: "firstname") as? String == "Augusta" && ada.value(forKey: "surname") as? String == "Lovelace")
            #expect(try anita.value(forKey: "firstname") as? String == "Anita" && anita.value(forKey: "surname") as? String == "Hopper")
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A user who writes ever new sets of columns keeps a bounded number of texts, and
    /// updates stay right when one is made again.
    @Test func manySetsOfColumnsKeepABoundedNumberOfTexts() throws {
        let wide = "CREATE TABLE wide (id int PRIMARY KEY, " + (0..<9).map { "c\($0) int" }.joined(separator: ", ") + ");"
            + "INSERT INTO wide (id) VALUES (1);"
        try ObjectFixture.with("seed_person_email", extraSQL: wide) { fixture in
            let context = fixture.context
            for subset in 1..<300 {
                let values = Dictionary(uniqueKeysWithValues: (0..<9).filter { subset & (1 << $0) != 0 }.map { ("c\($0)", subset as Any?) })
                try context.update("wide", primaryKey: 1, values: values)
                #expect(context.updateTexts.count <= 256)
            }
            // Every column was last written by the last subset that held it.
            let row = try #require(try context.object("wide", primaryKey: 1))
            for column in 0..<9 {
                let last = (1..<300).last { $0 & (1 << column) != 0 }
                #expect(try row.value(forKey: "c\(column)") as? Int == last)
            }
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aMissingRowIsNilAndAStaleObjectOfItAConflict() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            #expect(try context.update("person", primaryKey: 99, values: ["surname": "Nobody"]) == nil)
            let grace = try #require(try context.object("person", primaryKey: 2))
            let other = try fixture.freshContext()
            try other.delete("email", primaryKey: 3)
            try other.delete("person", primaryKey: 2)
            let error = #expect(throws: RelateError.self) { try context.update("person", primaryKey: 2, values: ["surname": "Gone"]) }
            #expect(error?.kind == .conflict)
            #expect(grace.isDeleted)
            let unknown = #expect(throws: RelateError.self) { try context.update("person", primaryKey: 1, values: ["surnam": "X"]) }
            #expect(unknown?.kind == .unknownKey)
            let wrong = #expect(throws: RelateError.self) { try context.update("person", primaryKey: "one", values: ["surname": "X"]) }
            #expect(wrong?.kind == .typeMismatch)
        }
    }

    @Test func aDeleteByKeyAppliesTheRulesToWhatMemoryHolds() throws {
        let cascade = ObjectFixture.peopleWithEmails + """
            ALTER TABLE email DROP CONSTRAINT person,
                ADD CONSTRAINT person FOREIGN KEY (person_id) REFERENCES person (id) ON DELETE CASCADE;
            """
        try ObjectFixture.with("seed_person_email", extraSQL: cascade) { fixture in
            let context = fixture.context
            let s = "\"\(fixture.schema)\""
            let adasEmail = try #require(try context.object("email", primaryKey: 1))
            var deleted = false
            let sql = try fixture.sql { deleted = try context.delete("person", primaryKey: 1) }
            #expect(sql.first == #"DELETE FROM \#(s)."person" WHERE "id" = $1 RETURNING "id", "firstname", "surname""#)
            #expect(deleted)
            // Ada was never in memory; her email was, and went with her.
            #expect(adasEmail.isDeleted)
            #expect(try context.delete("person", primaryKey: 1) == false)
            let grace = try #require(try context.object("person", primaryKey: 2))
            #expect(try context.delete("person", primaryKey: 2))
            #expect(grace.isDeleted)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aRefusedDeleteByKeyNamesTheConstraint() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let error = #expect(throws: RelateError.self) { try fixture.context.delete("person", primaryKey: 1) }
            #expect(error?.kind == .deleteDenied)
            #expect(error?.message.contains(#"constraint "person""#) == true)
            let ada = try fixture.context.object("person", primaryKey: 1)
            #expect(ada != nil)
        }
    }

    @Test func typedWritesByKey() throws {
        try TypedSeeds.with { fixture in
            let context = fixture.context
            let ada = try #require(try context.update(Person.self, primaryKey: 1) { $0.surname = "King" })
            #expect(try ada.surname == "King")
            #expect(try context.update(Person.self, primaryKey: 99) { $0.surname = "Nobody" } == nil)
            try context.object(Email.self, primaryKey: 3)!.object.setValue(nil, forKey: "person")
            try context.delete("person_title_rel", primaryKey: [2, 2])
            try context.delete("person_title_rel", primaryKey: [2, 3])
            #expect(try context.delete(Person.self, primaryKey: 2))
            #expect(try context.object(Person.self, primaryKey: 2) == nil)
            #expect(try fixture.disagreements() == [])
        }
    }
}
