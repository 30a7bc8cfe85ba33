import Foundation
import Observation
import RelatePostgres
import Testing

@testable import Relate

/// A context that does not autocommit: writes change memory only, `save()` sends them in
/// one transaction with per-column conflict checks, `rollback()` and undo work on memory.
@Suite struct EditingTests {
    /// Ada's surname changed and Grace's firstname: nothing sent until `save()`, another
    /// connection reads the old values until then, and both rows in one transaction after.
    @Test func writesWaitForSaveAndGoInOneTransaction() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            let sent = try fixture.sql {
                try ada.setValue("King", forKey: "surname")
                try grace.setValue("Amazing Grace", forKey: "firstname")
            }
            #expect(sent.isEmpty)
            #expect(try ada.value(forKey: "surname") as? String == "King")
            #expect(context.hasChanges)
            #expect(Set(context.updatedObjects.map(ObjectIdentifier.init)) == Set([ada, grace].map(ObjectIdentifier.init)))
            #expect(context.insertedObjects.isEmpty && context.deletedObjects.isEmpty)
            let other = try fixture.freshContext()
            #expect(try other.object("person", primaryKey: 1)?.value(forKey: "surname") as? String == "Lovelace")

            let before = context.connection.roundTrips
            try context.save()
            #expect(context.connection.roundTrips - before <= 3)
            #expect(!context.hasChanges && !context.canUndo)
            let rows = try context.connection.query("SELECT xmin::text, surname, firstname FROM \"\(fixture.schema)\".person ORDER BY id")
            #expect(try rows[0].decode(String.self, at: 0) == rows[1].decode(String.self, at: 0))
            #expect(try rows[0].decode(String.self, at: 1) == "King")
            #expect(try rows[1].decode(String.self, at: 2) == "Amazing Grace")
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Another client's change of the same column: `save()` throws a conflict naming the
    /// column, writes nothing (not even the other object's change), and keeps the changes.
    @Test func aChangeOfTheSameColumnIsAConflictAndNothingIsWritten() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            try grace.setValue("Amazing Grace", forKey: "firstname")
            try ada.setValue("King", forKey: "surname")
            let other = try TestDatabase.connect()
            try other.query("UPDATE \"\(fixture.schema)\".person SET surname = 'Byron' WHERE id = 1")
            let error = try #require(throws: RelateError.self) { try context.save() }
            #expect(error.kind == .conflict)
            #expect(error.entity == "person" && error.key == "surname")
            #expect(error.description.contains("\"surname\""))
            #expect(context.hasChanges)
            #expect(try ada.value(forKey: "surname") as? String == "King")
            let rows = try other.query("SELECT firstname, surname FROM \"\(fixture.schema)\".person ORDER BY id")
            #expect(try rows[0].decode(String.self, at: 1) == "Byron")
            #expect(try rows[1].decode(String.self, at: 0) == "Grace")
            // Put right: the other column goes through, both changes stand.
            context.rollback()
            #expect(try ada.value(forKey: "surname") as? String == "Lovelace")
            try ada.setValue("Augusta Ada", forKey: "firstname")
            try context.save()
            let row = try other.query("SELECT firstname, surname FROM \"\(fixture.schema)\".person WHERE id = 1")[0]
            #expect(try row.decode(String.self, at: 0) == "Augusta Ada")
            #expect(try row.decode(String.self, at: 1) == "Byron")
            // The row is not read back (the table stores what save() sends): memory learns
            // the other column as it learns any other client's change, with the next read.
            #expect(try ada.value(forKey: "surname") as? String == "Lovelace")
            try context.refresh(ada)
            #expect(try ada.value(forKey: "surname") as? String == "Byron")
        }
    }

    /// Rows of one entity changed in the same columns go in one statement (arrays, one
    /// plan), which reads nothing back where the table stores what it sends; a row of them
    /// another client changed makes the whole save a conflict naming that row's object.
    @Test func rowsChangedAlikeGoInOneStatement() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails + """
            INSERT INTO person (firstname, surname) SELECT 'P' || n, NULL FROM generate_series(1, 50) n;
            """) { fixture in
            let context = fixture.context
            context.autocommits = false
            let people = try context.fetch(FetchRequest("person", orderBy: [.ascending("id")]))
            let keys = people.map { "\($0.primaryKey)" }
            for (index, person) in people.enumerated().reversed() { try person.setValue("S\(index)", forKey: "surname") }
            // Another client's change of another column: both stand.
            let other = try TestDatabase.connect()
            try other.query("UPDATE \"\(fixture.schema)\".person SET firstname = 'Charles' WHERE id = 20")
            let sent = try fixture.sql { try context.save() }
            let updates = sent.filter { $0.hasPrefix("UPDATE") }
            #expect(updates.count == 1)
            #expect(updates.first?.contains("FROM (SELECT unnest($1) AS k0, unnest($2) AS n0, unnest($3) AS o0) AS v WHERE") == true)
            #expect(updates.first?.contains(#"t."surname" IS NOT DISTINCT FROM v.o0"#) == true)
            #expect(updates.first?.contains("RETURNING") == false)
            #expect(people.map { "\($0.primaryKey)" } == keys)
            try context.refreshAll()
            #expect(try fixture.disagreements() == [])
            #expect(try people[19].value(forKey: "firstname") as? String == "Charles")
            #expect(try people[19].value(forKey: "surname") as? String == "S19")

            for person in people { try person.setValue(nil, forKey: "surname") }
            try other.query("UPDATE \"\(fixture.schema)\".person SET surname = 'Babbage' WHERE id = 30")
            let error = try #require(throws: RelateError.self) { try context.save() }
            #expect(error.kind == .conflict && error.key == "surname")
            #expect(error.detail == "<person id=30>")
            #expect(try other.query("SELECT count(*) FROM \"\(fixture.schema)\".person WHERE surname IS NULL")[0].decode(Int.self, at: 0) == 0)
            #expect(try people[0].value(forKey: "surname") == nil)
            #expect(context.hasChanges)
        }
    }

    /// Where the database may store other than `save()` sends (a `BEFORE UPDATE` trigger, a
    /// generated column, a timestamp rounded to microseconds), each row comes back, with its
    /// position in the arrays when many go in one statement, and memory takes it as stored.
    @Test func whatTheDatabaseRewritesIsReadBack() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails + """
            INSERT INTO person (firstname, surname) SELECT 'P' || n, NULL FROM generate_series(1, 50) n;
            CREATE FUNCTION shout() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.surname := upper(NEW.surname); RETURN NEW; END $$;
            CREATE TRIGGER shout BEFORE UPDATE ON person FOR EACH ROW EXECUTE FUNCTION shout();
            CREATE TABLE reading (id int PRIMARY KEY, taken timestamptz);
            INSERT INTO reading (id, taken) SELECT n, now() FROM generate_series(1, 3) n;
            CREATE TABLE label (id int PRIMARY KEY, name text, size int GENERATED ALWAYS AS (length(name)) STORED);
            INSERT INTO label (id, name) SELECT n, 'l' FROM generate_series(1, 3) n;
            """) { fixture in
            let context = fixture.context
            context.autocommits = false
            let people = try context.fetch(FetchRequest("person", orderBy: [.ascending("id")]))
            // Changed last to first, and a merge join makes the rows come back first to last:
            // each row must find its object by its position in the arrays, not by its order.
            for (index, person) in people.enumerated().reversed() { try person.setValue("s\(index)", forKey: "surname") }
            try context.connection.query("SET enable_hashjoin = off")
            try context.connection.query("SET enable_nestloop = off")
            let sent = try fixture.sql { try context.save() }
            try context.connection.query("RESET ALL")
            let updates = sent.filter { $0.hasPrefix("UPDATE") }
            #expect(updates.count == 1)
            #expect(updates.first?.contains("unnest($3) AS o0, generate_series(1, cardinality($1)) AS i) AS v WHERE") == true)
            #expect(updates.first?.contains("RETURNING") == true)
            #expect(try people[19].value(forKey: "surname") as? String == "S19")
            #expect(try fixture.disagreements() == [])

            // One row alone goes in a statement of its own, read back too.
            try people[0].setValue("solo", forKey: "surname")
            try context.save()
            #expect(try people[0].value(forKey: "surname") as? String == "SOLO")

            let readings = try context.fetch(FetchRequest("reading", orderBy: [.ascending("id")]))
            let taken = Date(timeIntervalSince1970: 1_000_000_000.123_456_7)
            for reading in readings { try reading.setValue(taken, forKey: "taken") }
            let labels = try context.fetch(FetchRequest("label", orderBy: [.ascending("id")]))
            for label in labels { try label.setValue("longer", forKey: "name") }
            try context.save()
            #expect(try readings[0].value(forKey: "taken") as? Date != taken)
            #expect(try labels.map { try $0.value(forKey: "size") as? Int } == [6, 6, 6])
            #expect(try fixture.disagreements() == [])
        }
    }

    /// The catalog says which relations may store other than an `UPDATE` sends: Relate's own
    /// change tracking (`AFTER` triggers) and a disabled trigger do not count.
    @Test func theCatalogKnowsWhatRewritesAnUpdate() throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript("""
                CREATE TABLE plain (id int PRIMARY KEY, name text);
                CREATE TABLE stamped (id int PRIMARY KEY, name text, at timestamptz);
                CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.at := now(); RETURN NEW; END $$;
                CREATE TRIGGER stamp BEFORE UPDATE ON stamped FOR EACH ROW EXECUTE FUNCTION stamp();
                CREATE TABLE on_insert (id int PRIMARY KEY, at timestamptz);
                CREATE TRIGGER stamp BEFORE INSERT ON on_insert FOR EACH ROW EXECUTE FUNCTION stamp();
                CREATE TABLE switched_off (id int PRIMARY KEY, at timestamptz);
                CREATE TRIGGER stamp BEFORE UPDATE ON switched_off FOR EACH ROW EXECUTE FUNCTION stamp();
                ALTER TABLE switched_off DISABLE TRIGGER stamp;
                CREATE TABLE after_only (id int PRIMARY KEY, at timestamptz);
                CREATE FUNCTION nothing() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
                CREATE TRIGGER nothing AFTER UPDATE ON after_only FOR EACH ROW EXECUTE FUNCTION nothing();
                CREATE TABLE parent (id int PRIMARY KEY);
                CREATE TABLE child (extra text) INHERITS (parent);
                CREATE TABLE split (id int, PRIMARY KEY (id)) PARTITION BY RANGE (id);
                CREATE TABLE split_low PARTITION OF split FOR VALUES FROM (0) TO (100);
                CREATE TABLE ruled (id int PRIMARY KEY, name text);
                CREATE RULE keep AS ON UPDATE TO ruled DO ALSO NOTIFY ruled;
                CREATE VIEW plain_view AS SELECT * FROM plain;
                """)
            let catalog = try Catalog.introspect(connection, schemas: [schema])
            let rewrites = Dictionary(uniqueKeysWithValues: catalog.tables.map { ($0.name, $0.rewritesUpdates) })
            #expect(rewrites["plain"] == false && rewrites["on_insert"] == false && rewrites["switched_off"] == false)
            #expect(rewrites["after_only"] == false && rewrites["child"] == false)
            #expect(rewrites["stamped"] == true && rewrites["parent"] == true && rewrites["split"] == true)
            #expect(rewrites["ruled"] == true && rewrites["plain_view"] == true)
        }
    }

    /// A new person with an email and a title: no statement until `save()`, then the person
    /// first (its key comes back), the email and the pair after; each object keeps its instance.
    @Test func aNewObjectWithItsEmailsAndTitlesSavesInOrder() throws {
        try ObjectFixture.with("seed_person_title", extraSQL: ObjectFixture.peopleWithTitles + """
            CREATE TABLE email (id SERIAL PRIMARY KEY, address VARCHAR (255), person_id INTEGER CONSTRAINT person REFERENCES person (id));
            """) { fixture in
            let context = fixture.context
            context.autocommits = false
            let doctor = try #require(try context.object("title", primaryKey: 3))
            let doctors = try doctor.objects(forKey: "person")
            var mary: DatabaseObject!
            var email: DatabaseObject!
            let sent = try fixture.sql {
                mary = try context.insert("person", values: ["firstname": "Mary", "surname": "Somerville"])
                email = try context.insert("email", values: ["address": "mary@example.com", "person": mary])
                try mary.objects(forKey: "title").insert(doctor)
            }
            // Loading Mary's (empty) set is no write; a new object has no rows to load.
            #expect(sent.allSatisfy { $0.hasPrefix("SELECT") })
            #expect(try mary.value(forKey: "id") is PendingKey)
            #expect(try email.object(forKey: "person") === mary)
            #expect(try mary.objects(forKey: "email").contains(email))
            #expect(doctors.contains(mary))
            #expect(context.insertedObjects.count == 2)

            let statements = try fixture.sql { try context.save() }
            let writes = statements.filter { !$0.hasPrefix("SELECT") && $0 != "BEGIN" && $0 != "COMMIT" }
            #expect(writes.count == 3)
            #expect(writes[0].hasPrefix("INSERT INTO \"\(fixture.schema)\".\"person\""))
            #expect(writes[1].hasPrefix("INSERT INTO \"\(fixture.schema)\".\"email\""))
            #expect(writes[2].hasPrefix("INSERT INTO \"\(fixture.schema)\".\"person_title_rel\""))
            let id = try #require(try mary.value(forKey: "id") as? Int)
            #expect(try email.value(forKey: "person_id") as? Int == id)
            #expect(try context.object("person", primaryKey: id) === mary)
            #expect(doctors.contains(mary))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// `rollback()` sends nothing and puts memory back: values, a new object forgotten, a
    /// deleted one back, sets on both sides as they were.
    @Test func rollbackPutsMemoryBackWithoutAStatement() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            let grace = try #require(try context.object("person", primaryKey: 2))
            let adasEmails = try ada.objects(forKey: "email")
            let gracesEmails = try grace.objects(forKey: "email")
            let work = try #require(try context.object("email", primaryKey: 2))
            let sent = try fixture.sql {
                try ada.setValue("King", forKey: "surname")
                try gracesEmails.insert(work)
                let new = try context.insert("email", values: ["address": "new@example.com", "person": ada])
                #expect(adasEmails.contains(new))
                try context.delete(grace)
                #expect(grace.isDeleted)
                #expect(context.deletedObjects.contains { $0 === grace })
                context.rollback()
                #expect(new.isDeleted)
                #expect(!adasEmails.contains(new))
            }
            #expect(sent.isEmpty)
            #expect(!context.hasChanges)
            #expect(!grace.isDeleted)
            #expect(try ada.value(forKey: "surname") as? String == "Lovelace")
            #expect(adasEmails.contains(work) && !gracesEmails.contains(work))
            #expect(try work.object(forKey: "person") === ada)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// Three edits, two undone: `save()` writes only the first; redo after a new write has nothing.
    @Test func threeEditsAndTwoUndosSaveOnlyTheFirst() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            try ada.setValue("King", forKey: "surname")
            try ada.setValue("Byron", forKey: "surname")
            try ada.setValue("Augusta", forKey: "firstname")
            try context.undo()
            try context.undo()
            #expect(try ada.value(forKey: "surname") as? String == "King")
            #expect(try ada.value(forKey: "firstname") as? String == "Ada")
            #expect(context.canRedo)
            try context.redo()
            #expect(try ada.value(forKey: "surname") as? String == "Byron")
            try context.undo()
            try context.undoGroup {
                try ada.setValue("Lady", forKey: "firstname")
                try ada.setValue("Lovelace", forKey: "surname")
            }
            #expect(!context.canRedo)
            try context.undo()
            #expect(try ada.value(forKey: "firstname") as? String == "Ada")
            try context.save()
            let row = try context.connection.query("SELECT firstname, surname FROM \"\(fixture.schema)\".person WHERE id = 1")[0]
            #expect(try row.decode(String.self, at: 0) == "Ada")
            #expect(try row.decode(String.self, at: 1) == "King")
            #expect(!context.canUndo)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// An undo stack of a user interface (what `context.undoManager` makes Foundation's on
    /// Darwin) is told of every step: its undo and redo step through the writes, a group is
    /// one step, a new write empties its redo, and save and roll-back empty it.
    @Test func anUndoRegistrarStepsThroughThePendingWrites() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.autocommits = false
            let stack = UndoManagerLike()
            context.undoRegistrar = stack
            let ada = try #require(try context.object("person", primaryKey: 1))
            func surname() throws -> String? { try ada.value(forKey: "surname") as? String }
            try ada.setValue("King", forKey: "surname")
            try context.undoGroup {
                try ada.setValue("Byron", forKey: "surname")
                try ada.setValue("Augusta", forKey: "firstname")
            }
            #expect(stack.undoable == [.undo, .undo])
            try stack.undo(context)
            #expect(try surname() == "King")
            #expect(try ada.value(forKey: "firstname") as? String == "Ada")
            try stack.undo(context)
            #expect(try surname() == "Lovelace")
            #expect(!context.hasChanges && stack.undoable.isEmpty && stack.redoable == [.redo, .redo])
            try stack.redo(context)
            #expect(try surname() == "King")
            #expect(stack.undoable == [.undo] && stack.redoable == [.redo])
            // A new write: nothing to redo, on either stack.
            try ada.setValue("Countess", forKey: "firstname")
            #expect(!context.canRedo && stack.redoable.isEmpty && stack.undoable == [.undo, .undo])
            try context.save()
            #expect(stack.undoable.isEmpty && stack.redoable.isEmpty)
            try ada.setValue("Byron", forKey: "surname")
            context.rollback()
            #expect(stack.undoable.isEmpty)
            #expect(try surname() == "King")
        }
    }

    /// A roll-back inside an undo group takes everything pending, the group's writes so far
    /// included; the group goes on, and what it writes afterwards is one step.
    @Test func aRollbackInsideAGroupTakesItsWritesToo() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails) { fixture in
            let context = fixture.context
            context.autocommits = false
            let ada = try #require(try context.object("person", primaryKey: 1))
            try ada.setValue("King", forKey: "surname")
            try context.undoGroup {
                try ada.setValue("Lady", forKey: "firstname")
                context.rollback()
                #expect(try ada.value(forKey: "firstname") as? String == "Ada")
                #expect(try ada.value(forKey: "surname") as? String == "Lovelace")
                #expect(throws: RelateError.self) { try context.save() }
                try ada.setValue("Countess", forKey: "firstname")
            }
            #expect(context.canUndo)
            try context.undo()
            #expect(!context.hasChanges)
            #expect(try ada.value(forKey: "firstname") as? String == "Ada")
        }
    }

    /// One `validateChanges()` names a NULL, an over-long varchar and a wrong enum label
    /// together, and sends nothing but the question whether the server has the label.
    @Test func validationNamesEveryProblemWithoutAStatement() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: """
            CREATE TYPE mood AS ENUM ('happy', 'sad');
            CREATE DOMAIN code AS varchar(4) NOT NULL;
            CREATE TABLE diary (id serial PRIMARY KEY, title varchar(5) NOT NULL, mood mood, code code, amount numeric(4, 2));
            INSERT INTO diary (title, mood, code) VALUES ('one', 'happy', 'a');
            """) { fixture in
            let context = fixture.context
            context.autocommits = false
            let entry = try #require(try context.object("diary", primaryKey: 1))
            let sent = try fixture.sql {
                try entry.setValue(nil, forKey: "title")
                try entry.setValue("grumpy", forKey: "mood")
                try entry.setValue(Decimal(string: "123.4")!, forKey: "amount")
                _ = try context.insert("diary", values: ["title": "much too long", "code": nil])
                let error = try #require(throws: RelateError.self) { try context.validateChanges() }
                #expect(error.kind == .validationFailed)
                #expect(Set(error.candidates) == ["diary.title", "diary.mood", "diary.amount", "diary.code"])
                #expect(error.message.hasPrefix("5 problems"))
                #expect(!error.description.contains("grumpy") && !error.description.contains("much too long"))
                #expect(throws: RelateError.self) { try context.save() }
            }
            // validateChanges() and save() asked each once of the label; nothing else.
            #expect(sent.count == 2 && sent.allSatisfy { $0.contains("pg_enum") }, "\(sent)")
        }
    }
}

/// Reads of a context with pending changes answer as if they were saved.
@Suite struct PendingReadTests {
    @Test func aFetchSeesPendingInsertsUpdatesAndDeletes() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: ObjectFixture.peopleWithEmails + """
            INSERT INTO person (firstname, surname) VALUES ('Alan', 'Turing'), ('Edsger', 'Dijkstra');
            """) { fixture in
            let context = fixture.context
            context.autocommits = false
            let hoppers = try context.liveFetch(FetchRequest("person", where: Key("surname").hasPrefix("H"), orderBy: [.ascending("firstname")]))
            #expect(try hoppers.objects.map { try $0.value(forKey: "firstname") as? String } == ["Grace"])
            let ada = try #require(try context.object("person", primaryKey: 1))
            let alan = try #require(try context.object("person", primaryKey: 3))
            try ada.setValue("Hopper", forKey: "surname")                       // now matches
            let betty = try context.insert("person", values: ["firstname": "Betty", "surname": "Holberton"])
            try context.delete(try #require(try context.object("person", primaryKey: 2)))   // Grace leaves
            // Her email after her: save() deletes it first (a row's dependants before the row).
            try context.delete(try #require(try context.object("email", primaryKey: 3)))
            try alan.setValue("Zuse", forKey: "surname")
            var names: [String?] = []
            let sent = try fixture.sql { names = try hoppers.objects.map { try $0.value(forKey: "firstname") as? String } }
            #expect(names == ["Ada", "Betty"])
            #expect(sent.count == 1)
            let everyone = try context.fetch(FetchRequest("person", orderBy: [.descending("surname")], limit: 2))
            #expect(everyone.map(ObjectIdentifier.init) == [alan, ada].map(ObjectIdentifier.init))
            #expect(try context.count(FetchRequest("person")) == 4)
            #expect(try context.count("person", where: Key("surname") == "Hopper") == 1)
            #expect(try context.object("person", primaryKey: 2) == nil)
            // A set loaded now sees the pending moves, and a new object's set its new members.
            let email = try context.insert("email", values: ["address": "betty@example.com", "person": betty])
            #expect(try betty.objects(forKey: "email").allObjects.map(ObjectIdentifier.init) == [ObjectIdentifier(email)])
            #expect(try betty.count(forKey: "email") == 1)
            let withBettysEmail = try context.fetch(FetchRequest("person", where: Key("email").any(Key("address").hasPrefix("betty"))))
            #expect(withBettysEmail.map(ObjectIdentifier.init) == [ObjectIdentifier(betty)])
            try context.save()
            #expect(try hoppers.objects.map { try $0.value(forKey: "firstname") as? String } == ["Ada", "Betty"])
            #expect(try fixture.disagreements() == [])
        }
    }
}

/// Edit marks: rows a context holds pending changes for are marked for other contexts,
/// until save, roll-back, or the editing connection's end.
@Suite struct EditMarkTests {
    @Test func anEditMarkReachesAnotherContextAndGoes() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTracking.enable(on: setup)
            let editor = try DatabaseContext(url: url)
            editor.autocommits = false
            editor.marksEdits = true
            let watcher = try DatabaseContext(url: url)
            watcher.isObservable = true
            try watcher.startTrackingChanges()
            let seen = try #require(try watcher.object("person", primaryKey: 1))
            let other = try #require(try watcher.object("person", primaryKey: 2))
            #expect(!seen.isBeingEdited)

            // The mark shows within the feed's latency, for that row only, and Observation tells.
            final class Flag: @unchecked Sendable { var fired = false }
            let flag = Flag()
            withObservationTracking { _ = seen.isBeingEdited } onChange: { flag.fired = true }
            /// Processes changes until `condition` holds, for at most 5 s.
            func eventually(_ condition: () -> Bool) throws -> Bool {
                for _ in 0..<50 {
                    _ = try watcher.waitForChanges(timeout: .milliseconds(100))
                    if condition() { return true }
                }
                return false
            }
            let ada = try #require(try editor.object("person", primaryKey: 1))
            try ada.setValue("King", forKey: "surname")
            #expect(try eventually { seen.isBeingEdited })
            #expect(!other.isBeingEdited)
            #expect(flag.fired)

            // Another editor that asks first is refused at once.
            let rival = try DatabaseContext(url: url)
            rival.autocommits = false
            rival.marksEdits = true
            let rivalsAda = try #require(try rival.object("person", primaryKey: 1))
            let refused = try #require(throws: RelateError.self) { try rivalsAda.beginEditing() }
            #expect(refused.kind == .conflict)
            try #require(try rival.object("person", primaryKey: 2)).beginEditing()

            // Saved: the mark goes.
            try editor.save()
            #expect(try eventually { !seen.isBeingEdited && other.isBeingEdited })

            // The editing backend terminated: no word comes, the mark goes all the same.
            let pid = rival.connection.backendProcessID
            try setup.query("SELECT pg_terminate_backend($1::int4)", [Int(pid)])
            #expect(try eventually { !other.isBeingEdited })
        }
    }
}

/// The other ways in: generated types' setters, a one-to-one that steals, Observation, and
/// a `Database.write` unit whose transaction the save joins.
@Suite struct EditingEntryPointTests {
    @Test func generatedSettersAndInsertsArePendingAndObserved() throws {
        try TypedSeeds.with { fixture in
            let context = fixture.context
            context.autocommits = false
            context.isObservable = true
            let ada = try #require(try context.object(Person.self, primaryKey: 1))
            final class Flag: @unchecked Sendable { var fired = false }
            let flag = Flag()
            withObservationTracking { _ = try? ada.surname } onChange: { flag.fired = true }
            let sent = try fixture.sql {
                try ada.update { $0.surname = "King" }
                let grace = try context.insert(Person.self) { $0.firstname = "Grace"; $0.surname = "Murray" }
                _ = try context.insert(Email.self) { $0.address = "murray@example.com"; $0.person = grace }
            }
            #expect(sent.isEmpty)
            #expect(flag.fired)
            #expect(try ada.surname == "King")
            #expect(try context.fetch(Person.self, where: { $0.surname == "Murray" }).count == 1)
            try context.save()
            let murray = try #require(try context.fetch(Person.self, where: { $0.surname == "Murray" }).first)
            #expect(try murray.email.count == 1)
            #expect(try fixture.disagreements() == [])
        }
    }

    @Test func aOneToOneStealsInMemoryAndOnSave() throws {
        try ObjectFixture.with("seed_person_email_one_to_one", extraSQL: """
            INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper');
            INSERT INTO email (address, person_id) VALUES ('ada@example.com', 1), ('spare@example.com', NULL);
            """) { fixture in
            let context = fixture.context
            context.autocommits = false
            let grace = try #require(try context.object("person", primaryKey: 2))
            let adas = try #require(try context.object("email", primaryKey: 1))
            let ada = try #require(try adas.object(forKey: "person"))
            // Grace takes Ada's email: Ada lets go, in memory at once.
            try grace.setValue(adas, forKey: "email")
            #expect(try ada.object(forKey: "email") == nil)
            #expect(try adas.object(forKey: "person") === grace)
            try context.save()
            #expect(try fixture.disagreements() == [])
            let fresh = try fixture.freshContext()
            #expect(try fresh.object("email", primaryKey: 1)?.value(forKey: "person_id") as? Int == 2)
        }
    }

    @Test func aSaveInAWriteUnitJoinsItsTransaction() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(ChangeTrackingTests.schema)
            let database = try Database(url: url, maxConnections: 2)
            await #expect(throws: RelateError.self) {
                try await database.write { context in
                    context.autocommits = false
                    try context.object("person", primaryKey: 1)!.setValue("King", forKey: "surname")
                    try context.save()
                    throw RelateError(kind: .invalidRequest, message: "the unit fails after the save")
                }
            }
            #expect(try setup.query("SELECT surname FROM person WHERE id = 1")[0].decode(String.self, at: 0) == "Lovelace")
            try await database.write { context in
                context.autocommits = false
                try context.object("person", primaryKey: 1)!.setValue("King", forKey: "surname")
                try context.save()
            }
            #expect(try setup.query("SELECT surname FROM person WHERE id = 1")[0].decode(String.self, at: 0) == "King")
        }
    }
}

/// An undo stack that keeps actions as Foundation's `UndoManager` does: registered while
/// undoing, an action is the redo; while redoing, the undo; otherwise the undo, and the
/// redos are forgotten.
final class UndoManagerLike: UndoRegistrar {
    private(set) var undoable: [UndoAction] = []
    private(set) var redoable: [UndoAction] = []
    private var undoing = false
    private var redoing = false

    func registerUndo(_ action: UndoAction, in context: DatabaseContext) {
        if undoing {
            redoable.append(action)
        } else {
            undoable.append(action)
            if !redoing { redoable = [] }
        }
    }

    func removeAllActions(of context: DatabaseContext) {
        undoable = []
        redoable = []
    }

    func undo(_ context: DatabaseContext) throws {
        guard let action = undoable.popLast() else { return }
        undoing = true
        defer { undoing = false }
        try action.perform(on: context)
    }

    func redo(_ context: DatabaseContext) throws {
        guard let action = redoable.popLast() else { return }
        redoing = true
        defer { redoing = false }
        try action.perform(on: context)
    }
}
