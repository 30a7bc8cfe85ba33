import Foundation
import Testing

@testable import Relate

/// A set handed out stays the owner's live set, and key paths are checked before anything is sent.
@Suite struct LiveSetAndKeyPathTests {
    @Test func aSetHandedOutStaysLiveAfterAPrefetch() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let set = try ada.objects(forKey: "email")
            try context.prefetch(["email"], for: [ada])
            #expect(try ada.objects(forKey: "email") === set)
            let graces = try #require(try context.object("email", primaryKey: 3))
            try set.insert(graces)
            #expect(set.contains(graces) && set.count == 3)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func everyBadKeyPathIsAnErrorNamingItBeforeAnythingIsSent() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let people = try context.fetch("person")
            for (path, words) in [
                ("", [#"key path """#, "email"]), ("email..person", [#"key path "email..person""#, "has an empty key"]),
                ("emial", [#"key path "emial""#, #"did you mean "email"?"#]), ("firstname", ["is the attribute", "email"]),
                ("email.address", [#"key path "email.address""#, "is the attribute"]), ("email.", ["has an empty key"]),
            ] {
                let sql = fixture.sql {
                    let error = #expect(throws: RelateError.self) { try context.prefetch(["email", path], for: people) }
                    #expect(error?.kind == .unknownKey)
                    #expect(error?.key == path)
                    for word in words { #expect(error?.message.contains(word) == true, "\(path): \(error?.message ?? "")") }
                }
                #expect(sql.isEmpty)
            }
            let email = try #require(try context.object("email", primaryKey: 1))
            // value(forKeyPath:) checks the whole path, also past a missing value.
            try email.setValue(nil, forKey: "person")
            #expect(try email.value(forKeyPath: "person.surname") == nil)
            let typo = #expect(throws: RelateError.self) { try email.value(forKeyPath: "person.surnme") }
            #expect(typo?.key == "person.surnme" && typo?.message.contains(#"did you mean "surname"?"#) == true)
            #expect(try people[0].value(forKeyPath: "email.address") as? [String?] != nil)
            let mixed = #expect(throws: RelateError.self) { try context.prefetch(["email"], for: people + [email]) }
            #expect(mixed?.kind == .invalidObject)
            #expect(mixed?.message.contains("of one entity") == true)
        }
    }
}

/// Writes that depend on what memory believes say so in SQL; when another client changed
/// the row, the write is a conflict and memory takes the database's state. Each write is
/// tried alone and inside a transaction that then rolls back: the roll-back must not undo
/// what memory learnt (see `RollbackAfterConflictTests`).
@Suite struct StaleWriteTests {
    /// The error `write` throws, run alone or, when `rolledBack`, inside a transaction of
    /// `context` that then rolls back.
    static func attempt(_ context: DatabaseContext, rolledBack: Bool, _ write: () throws -> Void) -> RelateError? {
        var thrown: RelateError?
        withoutActuallyEscaping(write) { write in
            let run = {
                do { try write() } catch let error as RelateError {
                    thrown = error
                    throw error
                }
            }
            if rolledBack { RollbackAfterConflictTests.rolledBack(context, run) } else { try? run() }
        }
        return thrown
    }

    @Test(arguments: [false, true]) func removingAnEmailAnotherClientMovedIsAConflict(rolledBack: Bool) throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let adas = try ada.objects(forKey: "email")
            let work = try #require(try context.object("email", primaryKey: 2))
            let other = try TestDatabase.connect()
            try other.execute("UPDATE \(fixture.schema).email SET person_id = 2 WHERE id = 2")
            let error = Self.attempt(context, rolledBack: rolledBack) { try adas.remove(work) }
            #expect(error?.kind == .conflict)
            #expect(error?.entity == "email")
            // Nothing detached Grace's email; memory now says where it is.
            #expect(try other.query("SELECT person_id FROM \(fixture.schema).email WHERE id = 2")[0].decode(Int.self, at: 0) == 2)
            #expect(try work.value(forKey: "person_id", as: Int.self) == 2)
            #expect(!adas.contains(work))
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test(arguments: [false, true]) func removingAPairAnotherClientDeletedIsAConflict(rolledBack: Bool) throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let grace = try #require(try context.object("person", primaryKey: 2))
            let titles = try grace.objects(forKey: "title")
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let doctors = try doctor.objects(forKey: "person")
            try TestDatabase.connect().execute("DELETE FROM \(fixture.schema).person_title_rel WHERE person_id = 2 AND title_id = 3")
            let error = Self.attempt(context, rolledBack: rolledBack) { try titles.remove(doctor) }
            #expect(error?.kind == .conflict)
            #expect(!titles.contains(doctor) && !doctors.contains(grace))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Inserting a pair memory holds but another client removed stores it again; one
    /// another client added (memory does not know it) is no unique violation.
    @Test func insertingAPairAsksTheDatabaseNotMemory() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let grace = try #require(try context.object("person", primaryKey: 2))
            let titles = try grace.objects(forKey: "title")
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let countess = try #require(try context.object("title", primaryKey: 1))
            let other = try TestDatabase.connect()
            try other.execute("DELETE FROM \(fixture.schema).person_title_rel WHERE person_id = 2 AND title_id = 3")
            try other.execute("INSERT INTO \(fixture.schema).person_title_rel (person_id, title_id) VALUES (2, 1)")
            try titles.insert(doctor)
            try titles.insert(countess)
            #expect(titles.count(for: doctor) == 1 && titles.count(for: countess) == 1)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Inserting a child memory already shows in the set is written all the same: another
    /// client may have moved it.
    @Test func insertingAChildAnotherClientMovedWritesItBack() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let adas = try ada.objects(forKey: "email")
            let work = try #require(try context.object("email", primaryKey: 2))
            try TestDatabase.connect().execute("UPDATE \(fixture.schema).email SET person_id = 2 WHERE id = 2")
            try adas.insert(work)
            #expect(adas.contains(work))
            #expect(try work.value(forKey: "person_id", as: Int.self) == 1)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test(arguments: [false, true]) func writingARowAnotherClientDeletedIsAConflict(rolledBack: Bool) throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let adas = try ada.objects(forKey: "email")
            let home = try #require(try context.object("email", primaryKey: 1))
            let work = try #require(try context.object("email", primaryKey: 2))
            try TestDatabase.connect().execute("DELETE FROM \(fixture.schema).email WHERE id IN (1, 2)")
            let update = Self.attempt(context, rolledBack: rolledBack) { try home.setValue("a@b.c", forKey: "address") }
            #expect(update?.kind == .conflict)
            #expect(home.isDeleted && !adas.contains(home))
            let delete = Self.attempt(context, rolledBack: rolledBack) { try context.delete(work) }
            #expect(delete?.kind == .conflict)
            #expect(work.isDeleted && adas.isEmpty)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// The same when memory sees nothing to remove: the set it holds is the one given,
    /// and an empty one, emptied, still empties the database's.
    @Test func replacingWithWhatMemoryHoldsStillRemovesWhatAnotherClientAdded() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            let grace = try #require(try context.object("person", primaryKey: 2))
            let graces = try grace.objects(forKey: "email")
            let other = try TestDatabase.connect()
            try other.execute("INSERT INTO \(fixture.schema).email (address, person_id) VALUES ('g2@example.com', 2)")
            try grace.setValue(graces.allObjects, forKey: "email")
            #expect(try other.query("SELECT count(*) FROM \(fixture.schema).email WHERE person_id = 2")[0].decode(Int.self, at: 0) == 1)
            let ada = try #require(try context.object("person", primaryKey: 1))
            try ada.setValue(nil, forKey: "email")
            try other.execute("INSERT INTO \(fixture.schema).email (address, person_id) VALUES ('a3@example.com', 1)")
            try ada.objects(forKey: "email").removeAll()
            #expect(try other.query("SELECT count(*) FROM \(fixture.schema).email WHERE person_id = 1")[0].decode(Int.self, at: 0) == 0)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Replacing a collection makes it exactly the members given, whatever another client
    /// added meanwhile: what leaves is what the database holds beyond them.
    @Test func replacingACollectionRemovesWhatAnotherClientAdded() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let titles = try ada.objects(forKey: "title")
            let countess = try #require(try context.object("title", primaryKey: 1))
            let admiral = try #require(try context.object("title", primaryKey: 2))
            try TestDatabase.connect().execute("INSERT INTO \(fixture.schema).person_title_rel VALUES (1, 3)")
            try ada.setValue([admiral], forKey: "title")
            #expect(titles.allObjects.map(ObjectIdentifier.init) == [ObjectIdentifier(admiral)])
            #expect(!titles.contains(countess))
            let held = try TestDatabase.connect().query("SELECT title_id FROM \(fixture.schema).person_title_rel WHERE person_id = 1")
            #expect(try held.map { try $0.decode(Int.self, at: 0) } == [2])
            #expect(try fixture.disagreements() == [])
        }
    }
}
