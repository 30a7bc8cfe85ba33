import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Pending writes that memory must keep, or give back, through a refresh, a rolled-back
/// transaction, an undo and a save: each found by a review, each failing before its fix.
@Suite struct EditingEdgeTests {
    static func with(_ sql: String, _ body: (ObjectFixture) throws -> Void) throws { try WriteEdgeTests.with(sql, body) }

    /// `refresh()` of an object whose key is changed pending: its row is under the old key,
    /// and it was marked deleted, the key change never saved.
    @Test func aRefreshKeepsAPendingKeyChange() throws {
        try Self.with(WriteEdgeTests.mail) { fixture in
            let context = fixture.context
            context.autocommits = false
            let grace = try #require(try context.object("person", primaryKey: 2))
            try grace.setValue(20, forKey: "id")
            try context.refresh(grace)
            #expect(!grace.isDeleted)
            try context.save()
            let rows = try context.connection.query("SELECT id FROM \"\(fixture.schema)\".person ORDER BY id")
            #expect(try rows.map { try $0.decode(Int.self, at: 0) } == [1, 20])
            #expect(try fixture.disagreements() == [])
        }
    }

    /// `refresh()` of a pending insert: it has no row yet, and was marked deleted.
    @Test func aRefreshKeepsAPendingInsert() throws {
        try Self.with(WriteEdgeTests.mail) { fixture in
            let context = fixture.context
            context.autocommits = false
            let new = try context.insert("person", values: ["name": "Mary"])
            try context.refreshAll()
            #expect(!new.isDeleted)
            #expect(context.insertedObjects.count == 1)
            try context.save()
            #expect(try context.connection.query("SELECT count(*)::int8 FROM \"\(fixture.schema)\".person")[0].decode(Int.self, at: 0) == 3)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// `save()` inside a `transaction {}` that then rolls back: the changes are pending
    /// again, memory as before the save (they were gone, memory holding the unsaved value).
    @Test func aSaveInATransactionThatRollsBackLeavesTheChangesPending() throws {
        try Self.with(WriteEdgeTests.mail) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            try ada.setValue("King", forKey: "name")
            let new = try context.insert("person", values: ["name": "Mary"])
            struct Boom: Error {}
            #expect(throws: Boom.self) { try context.transaction { try context.save(); throw Boom() } }
            #expect(context.hasChanges)
            #expect(try ada.value(forKey: "name") as? String == "King")
            #expect(context.insertedObjects.map(ObjectIdentifier.init) == [ObjectIdentifier(new)])
            try context.save()
            #expect(try fixture.disagreements() == [])
            #expect(try context.connection.query("SELECT count(*)::int8 FROM \"\(fixture.schema)\".person")[0].decode(Int.self, at: 0) == 3)
        }
    }

    /// Sessions other than the caller's holding an advisory lock in its database: the edit marks taken.
    static func marks(_ url: String) throws -> Int {
        try Connection(url: url).query(
            "SELECT count(*)::int8 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid() "
                + "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")[0].decode(Int.self, at: 0)
    }

    /// Edit marks follow the pending changes: an undo lets go of the row no write changes
    /// any longer (a rival could not begin editing it), a redo marks it again, and a save
    /// with nothing left lets go of the rest (they were held until the connection ended).
    @Test func editMarksFollowUndoRedoAndAnEmptySave() throws {
        try TestDatabase.withDatabase { url in
            try Connection(url: url).executeScript(ChangeTrackingTests.schema)
            let editor = try DatabaseContext(url: url)
            editor.autocommits = false
            editor.marksEdits = true
            let ada = try #require(try editor.object("person", primaryKey: 1))
            let grace = try #require(try editor.object("person", primaryKey: 2))
            try ada.setValue("King", forKey: "surname")
            try grace.setValue("Murray", forKey: "surname")
            #expect(try Self.marks(url) == 2)
            try editor.undo()
            #expect(try Self.marks(url) == 1)
            let rival = try DatabaseContext(url: url)
            rival.autocommits = false
            rival.marksEdits = true
            try #require(try rival.object("person", primaryKey: 2)).beginEditing()
            rival.rollback()
            try editor.redo()
            #expect(try Self.marks(url) == 2)
            try editor.undo()
            try editor.undo()
            try editor.save()
            #expect(try Self.marks(url) == 0)
        }
    }

    /// A `Database.write` unit whose context marks edits and ends without saving: its
    /// marks end with it (the pooled connection kept them).
    @Test func aUnitLeavesNoEditMark() async throws {
        try await TestDatabase.withDatabase { url in
            try Connection(url: url).executeScript(ChangeTrackingTests.schema)
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            try await database.write { context in
                context.autocommits = false
                context.marksEdits = true
                try #require(try context.object("person", primaryKey: 1)).setValue("King", forKey: "surname")
            }
            #expect(try Self.marks(url) == 0)
        }
    }

    /// What a save sends before its new rows: a delete, or an update, that frees the key or
    /// unique value a new row takes, and a key change a new row refers to. Each failed
    /// (23505, 23503): every insert went first.
    @Test func aSaveFreesWhatItsNewRowsTakeFirst() throws {
        try Self.with(
            """
            CREATE TABLE shelf (code text PRIMARY KEY, label text);
            CREATE TABLE team (id serial PRIMARY KEY, name text UNIQUE);
            CREATE TABLE person (id int PRIMARY KEY, name text);
            CREATE TABLE badge (id serial PRIMARY KEY, person_id int CONSTRAINT person REFERENCES person ON UPDATE CASCADE);
            INSERT INTO shelf VALUES ('A1', 'old');
            INSERT INTO team (name) VALUES ('red');
            INSERT INTO person VALUES (1, 'Ada');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            try context.delete(try #require(try context.object("shelf", primaryKey: "A1")))
            _ = try context.insert("shelf", values: ["code": "A1", "label": "new"])
            try #require(try context.object("team", primaryKey: 1)).setValue("crimson", forKey: "name")
            _ = try context.insert("team", values: ["name": "red"])
            let ada = try #require(try context.object("person", primaryKey: 1))
            try ada.setValue(10, forKey: "id")
            _ = try context.insert("badge", values: ["person": ada])
            try context.save()
            let d1 = try fixture.disagreements()
            #expect(d1 == [], "\(d1)")
            let labels = try context.connection.query("SELECT label FROM \"\(fixture.schema)\".shelf")
            #expect(try labels.map { try $0.decode(String.self, at: 0) } == ["new"])
        }
    }

    /// A pending insert under a key a live object holds is refused (it took the identity
    /// map's place, and the row had two objects after a roll-back); under the key of one
    /// deleted pending it is taken, and an undo gives the key back to the deleted one.
    @Test func aPendingInsertNeverShadowsTheObjectOfItsKey() throws {
        try Self.with("CREATE TABLE shelf (code text PRIMARY KEY, label text); INSERT INTO shelf VALUES ('A1', 'old'), ('B2', 'b');") { fixture in
            let context = fixture.context
            context.autocommits = false
            let old = try #require(try context.object("shelf", primaryKey: "A1"))
            let error = try #require(throws: RelateError.self) { try context.insert("shelf", values: ["code": "A1", "label": "dup"]) }
            #expect(error.kind == .invalidWrite)
            #expect(try context.object("shelf", primaryKey: "A1") === old)
            try context.delete(old)
            let new = try context.insert("shelf", values: ["code": "A1", "label": "new"])
            try context.undo()
            #expect(new.isDeleted)
            #expect(try context.object("shelf", primaryKey: "A1") == nil)
            try context.undo()
            #expect(try context.object("shelf", primaryKey: "A1") === old)
            try context.delete(old)
            _ = try context.insert("shelf", values: ["code": "A1", "label": "new"])
            try context.undo()
            try context.save()
            let d2 = try fixture.disagreements()
            #expect(d2 == [], "\(d2)")
        }
    }

    /// A save's check that a row still holds what memory read, on types without an `=` of
    /// their own (`xml`, `point`: the save failed with 42883) or whose `=` is not equality
    /// (`box`, by area: another client's change went unseen), single and batched.
    @Test func aSaveChecksTypesWithoutEqualityByTheirText() throws {
        try Self.with(
            """
            CREATE TABLE doc (id int PRIMARY KEY, body xml, at point, area box);
            INSERT INTO doc VALUES (1, '<a/>', '(1,2)', '(1,1),(0,0)'), (2, '<b/>', '(3,4)', '(1,1),(0,0)');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let (one, two) = (try #require(try context.object("doc", primaryKey: 1)), try #require(try context.object("doc", primaryKey: 2)))
            for row in [one, two] {
                try row.setValue("<c/>", forKey: "body")
                try row.setValue("(5,6)", forKey: "at")
            }
            try context.save()
            #expect(try fixture.disagreements() == [])
            try one.setValue("(3,3),(2,2)", forKey: "area")
            try TestDatabase.connect().execute("UPDATE \"\(fixture.schema)\".doc SET area = '(6,6),(5,5)' WHERE id = 1")
            let error = try #require(throws: RelateError.self) { try context.save() }
            #expect(error.kind == .conflict)
        }
    }

    /// A set loaded after a pending write shows it; after an undo it does not, and after a
    /// redo it does again (the undo had left the member in), to-many and many-to-many.
    @Test func aSetLoadedAfterAPendingWriteFollowsItsUndo() throws {
        try Self.with(WriteEdgeTests.mail) { fixture in
            let context = fixture.context
            context.autocommits = false
            let email = try #require(try context.object("email", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            try email.setValue(grace, forKey: "person")
            let graces = try grace.objects(forKey: "email")
            #expect(graces.contains(email))
            try context.undo()
            #expect(!graces.contains(email))
            #expect(try fixture.disagreements() == [])
            try context.redo()
            #expect(graces.contains(email))
        }
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            let doctor = try #require(try context.object("title", primaryKey: 3))
            try ada.objects(forKey: "title").insert(doctor)
            let doctors = try doctor.objects(forKey: "person")
            #expect(doctors.contains(ada))
            try context.undo()
            #expect(!doctors.contains(ada))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A save inside a transaction that rolls back gives back the sets loaded while the
    /// writes were pending, with the writes: an undo after it loads them again.
    @Test func aSetLoadedWhilePendingFollowsAnUndoAfterASaveRolledBack() throws {
        try Self.with(WriteEdgeTests.mail) { fixture in
            let context = fixture.context
            context.autocommits = false
            let email = try #require(try context.object("email", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            try email.setValue(grace, forKey: "person")
            let graces = try grace.objects(forKey: "email")
            #expect(graces.contains(email))
            struct Boom: Error {}
            #expect(throws: Boom.self) { try context.transaction { try context.save(); throw Boom() } }
            try context.undo()
            #expect(!graces.contains(email))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A `timestamptz` of the year 4000 with microseconds: a `Date` cannot hold it exactly,
    /// so the value held before, sent back, is not the row's, and the save is a conflict
    /// (a limit of `Date`). Its message says so, where it named no column ("changed  of").
    @Test func aValueADateCannotHoldNamesWhyTheSaveConflicts() throws {
        try Self.with("CREATE TABLE event (id int PRIMARY KEY, at timestamptz); INSERT INTO event VALUES (1, '4000-01-01 00:00:00.123457+00');") { fixture in
            let context = fixture.context
            context.autocommits = false
            try #require(try context.object("event", primaryKey: 1)).setValue(Date(timeIntervalSince1970: 0), forKey: "at")
            let error = try #require(throws: RelateError.self) { try context.save() }
            #expect(error.kind == .conflict)
            #expect(error.message.contains("cannot hold exactly"), "\(error.message)")
            #expect(context.hasChanges)
        }
    }

    /// Re-read mends: a new object whose key is given after its insert, pending, takes it
    /// (the write by key refused a NULL key before seeing it was pending); a `numrange`
    /// changed and saved is no conflict (its text is not the same as the parameter's).
    @Test func aPendingInsertTakesItsKeyLaterAndARangeSavesWithoutConflict() throws {
        try Self.with(
            """
            CREATE TABLE country (code text PRIMARY KEY, name text);
            CREATE TABLE price (id int PRIMARY KEY, band numrange);
            INSERT INTO price VALUES (1, '[1.50,2.00)');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let france = try context.insert("country", values: ["name": "France"])
            try france.setValue("FR", forKey: "code")
            let gone = try context.insert("country", values: ["name": "Nowhere"])
            try context.delete(gone)
            let price = try #require(try context.object("price", primaryKey: 1))
            try price.setValue(PostgresRange<Decimal>(Decimal(string: "2.5")!..<Decimal(3)), forKey: "band")
            try context.save()
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A delete that frees a key a new row takes goes first, and so does everything the
    /// delete itself needs first: its dependants moved away or deleted, its pairs left.
    @Test func aSaveSendsWhatADeleteNeedsBeforeTheDelete() throws {
        try Self.with(
            """
            CREATE TABLE shelf (code text PRIMARY KEY, label text);
            CREATE TABLE book (id int PRIMARY KEY, shelf_code text CONSTRAINT shelf REFERENCES shelf, title text);
            CREATE TABLE tag (id int PRIMARY KEY, name text);
            CREATE TABLE book_tag (book_id int NOT NULL REFERENCES book, tag_id int NOT NULL REFERENCES tag,
                PRIMARY KEY (book_id, tag_id));
            INSERT INTO shelf VALUES ('A1', 'old'), ('B2', 'other');
            INSERT INTO book VALUES (1, 'A1', 'moved'), (2, 'A1', 'gone'), (3, 'B2', 'tagged');
            INSERT INTO tag VALUES (1, 't');
            INSERT INTO book_tag VALUES (3, 1);
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let a1 = try #require(try context.object("shelf", primaryKey: "A1"))
            let b2 = try #require(try context.object("shelf", primaryKey: "B2"))
            let gone = try #require(try context.object("book", primaryKey: 2))
            try #require(try context.object("book", primaryKey: 1)).setValue(b2, forKey: "shelf")
            try context.delete(a1)
            _ = try context.insert("shelf", values: ["code": "A1", "label": "new"])
            // Deleted after the shelf, and after a new shelf took its key in memory.
            try context.delete(gone)
            let tagged = try #require(try context.object("book", primaryKey: 3))
            try tagged.objects(forKey: "tag").remove(try #require(try context.object("tag", primaryKey: 1)))
            try context.delete(tagged)
            _ = try context.insert("book", values: ["id": 3, "shelf": b2, "title": "again"])
            try context.save()
            let d1 = try fixture.disagreements()
            #expect(d1 == [], "\(d1)")
            let rows = try context.connection.query(
                "SELECT s.label, count(b.id) FROM \"\(fixture.schema)\".shelf s LEFT JOIN \"\(fixture.schema)\".book b ON b.shelf_code = s.code GROUP BY s.label ORDER BY 1")
            #expect(try rows.map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(Int.self, at: 1))" } == ["new 0", "other 2"])
        }
    }

    /// A row a cascade deletes frees its unique value for a new row: the delete that
    /// cascades goes first.
    @Test func aSaveFreesWhatACascadeDeletesFirst() throws {
        try Self.with(
            """
            CREATE TABLE owner (id int PRIMARY KEY, name text);
            CREATE TABLE card (id serial PRIMARY KEY, owner_id int CONSTRAINT owner REFERENCES owner ON DELETE CASCADE, code text UNIQUE);
            INSERT INTO owner VALUES (1, 'Ada'), (2, 'Grace');
            INSERT INTO card (owner_id, code) VALUES (1, 'X-1');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("owner", primaryKey: 1))
            _ = try ada.objects(forKey: "card").count
            try context.delete(ada)
            let grace = try #require(try context.object("owner", primaryKey: 2))
            _ = try context.insert("card", values: ["owner": grace, "code": "X-1"])
            try context.save()
            let d1 = try fixture.disagreements()
            #expect(d1 == [], "\(d1)")
        }
    }

    /// An update that must go before a new row (it frees the name the row takes) but
    /// points at another new row whose key was given goes between the two inserts; a new
    /// row inserted before the row it refers to by a given key goes after it; a delete
    /// that frees a unique value an update takes goes before the update.
    @Test func aSaveOrdersInsertsAndUpdatesByTheKeysTheyGiveAndTake() throws {
        try Self.with(
            """
            CREATE TABLE person (id int PRIMARY KEY, name text UNIQUE, mentor_id int CONSTRAINT mentor REFERENCES person);
            CREATE TABLE team (code text PRIMARY KEY);
            CREATE TABLE player (id int PRIMARY KEY, team_code text CONSTRAINT team REFERENCES team, nick text UNIQUE);
            INSERT INTO person VALUES (1, 'Ada', NULL);
            INSERT INTO team VALUES ('red');
            INSERT INTO player VALUES (1, 'red', 'ace'), (2, 'red', 'deuce');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let bob = try context.insert("person", values: ["id": 5, "name": "Bob"])
            let ada = try #require(try context.object("person", primaryKey: 1))
            try ada.setValue("Ada K", forKey: "name")
            try ada.setValue(bob, forKey: "mentor")
            _ = try context.insert("person", values: ["id": 6, "name": "Ada"])
            _ = try context.insert("player", values: ["id": 3, "team_code": "blue", "nick": "trey"])
            _ = try context.insert("team", values: ["code": "blue"])
            try context.delete(try #require(try context.object("player", primaryKey: 1)))
            try #require(try context.object("player", primaryKey: 2)).setValue("ace", forKey: "nick")
            try context.save()
            let d1 = try fixture.disagreements()
            #expect(d1 == [], "\(d1)")
            let names = try context.connection.query("SELECT name FROM \"\(fixture.schema)\".person ORDER BY id")
            #expect(try names.map { try $0.decode(String.self, at: 0) } == ["Ada K", "Bob", "Ada"])
        }
    }

    /// Writes that need each other in a cycle: two rows swapping a unique value are left to
    /// the database, which refuses them, memory and the pending changes kept; new rows that
    /// refer to each other by pending keys are refused before anything is sent.
    @Test func writesThatNeedEachOtherInACycleAreRefused() throws {
        try Self.with(
            """
            CREATE TABLE player (id int PRIMARY KEY, nick text UNIQUE);
            CREATE TABLE node (id serial PRIMARY KEY, next_id int CONSTRAINT next REFERENCES node);
            INSERT INTO player VALUES (1, 'ace'), (2, 'deuce');
            """
        ) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ace = try #require(try context.object("player", primaryKey: 1))
            let deuce = try #require(try context.object("player", primaryKey: 2))
            try ace.setValue("deuce", forKey: "nick")
            try deuce.setValue("ace", forKey: "nick")
            let swap = try #require(throws: RelateError.self) { try context.save() }
            #expect(swap.postgresError?.sqlState?.rawValue == "23505", "\(swap)")
            #expect(context.hasChanges)
            #expect(try ace.value(forKey: "nick") as? String == "deuce")
            context.rollback()
            #expect(try fixture.disagreements() == [])

            let first = try context.insert("node", values: [:])
            let second = try context.insert("node", values: ["next": first])
            try first.setValue(second, forKey: "next")
            let loop = try #require(throws: RelateError.self) { try context.save() }
            #expect(loop.kind == .invalidWrite, "\(loop)")
            #expect(loop.message.contains("cycle"), "\(loop.message)")
            #expect(context.hasChanges)
            context.rollback()
            #expect(try fixture.disagreements() == [])
        }
    }
}
