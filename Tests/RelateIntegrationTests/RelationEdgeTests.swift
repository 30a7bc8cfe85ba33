import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Relations whose rows are not all their entity's own — tables under them the model does
/// not have — and keys that cannot find a row: each found by a review, each failing before
/// its fix.
@Suite struct RelationEdgeTests {
    static func with(
        _ sql: String, overrides: [Override] = [], extraSchemas: [String] = [], _ body: (ObjectFixture, Connection) throws -> Void
    ) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(sql.replacingOccurrences(of: "$SCHEMA", with: schema))
            let context = try DatabaseContext(
                connection: connection, overrides: overrides, schemas: [schema] + extraSchemas.map { "\(schema)\($0)" })
            try body(ObjectFixture(context: context, schema: schema), connection)
        }
    }

    static func names(_ connection: Connection, _ sql: String) throws -> [String] {
        try connection.query(sql).map { try $0.decode(String?.self, at: 0) ?? "NULL" }
    }

    /// A child table in a schema not searched: a fetch of the parent keeps to the parent's
    /// rows (the child's row under the same key was a second object), and a write by key
    /// changes the parent's row alone (it renamed the child's too).
    @Test func aChildOutsideTheModelIsNeitherReadNorWrittenThroughItsParent() throws {
        try Self.with(
            """
            CREATE SCHEMA $SCHEMA_archive;
            CREATE TABLE place (id int PRIMARY KEY, name text);
            CREATE TABLE $SCHEMA_archive.old_place (PRIMARY KEY (id)) INHERITS (place);
            INSERT INTO place VALUES (1, 'Lyon');
            INSERT INTO $SCHEMA_archive.old_place VALUES (1, 'Lugdunum');
            """
        ) { fixture, connection in
            defer { _ = try? connection.execute("DROP SCHEMA \"\(fixture.schema)_archive\" CASCADE") }
            let places = try fixture.context.fetch("place", orderBy: "id")
            #expect(places.count == 1)
            #expect(try fixture.context.count(FetchRequest("place")) == 1)
            let lyon = try #require(try fixture.context.object("place", primaryKey: 1))
            try lyon.setValue("Lyon (69)", forKey: "name")
            #expect(try Self.names(connection, "SELECT name FROM \"\(fixture.schema)_archive\".old_place") == ["Lugdunum"])
            #expect(try fixture.context.update("place", where: Key("id") == 1, values: ["name": "Lyon"]) == 1)
            #expect(try Self.names(connection, "SELECT name FROM \"\(fixture.schema)_archive\".old_place") == ["Lugdunum"])
        }
    }

    /// The same, the child in the schema searched but left out by an override.
    @Test func anIgnoredChildIsNotWrittenThroughItsParent() throws {
        try Self.with(
            """
            CREATE TABLE place (id int PRIMARY KEY, name text);
            CREATE TABLE old_place (PRIMARY KEY (id)) INHERITS (place);
            INSERT INTO place VALUES (1, 'Lyon');
            INSERT INTO old_place VALUES (1, 'Lugdunum');
            """, overrides: [.ignore("old_place")]
        ) { fixture, connection in
            let lyon = try #require(try fixture.context.object("place", primaryKey: 1))
            try lyon.setValue("Lyon (69)", forKey: "name")
            #expect(try Self.names(connection, "SELECT name FROM old_place") == ["Lugdunum"])
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A table that inherits from two: to the second, whose descendant it is not in the
    /// model, it is a table under it that a fetch and a write keep out.
    @Test func aSecondParentKeepsToItsOwnRows() throws {
        try Self.with(
            """
            CREATE TABLE a (id int PRIMARY KEY, name text);
            CREATE TABLE b (id int PRIMARY KEY, label text);
            CREATE TABLE c (extra text, PRIMARY KEY (id)) INHERITS (a, b);
            INSERT INTO b VALUES (1, 'b-own');
            INSERT INTO c (id, name, label, extra) VALUES (1, 'c-name', 'c-label', 'x');
            """
        ) { fixture, connection in
            let context = fixture.context
            #expect(try context.model.entity("c").parent == "a")
            let child = try #require(try context.object("c", primaryKey: 1))
            let own = try context.fetch("b", orderBy: "id")
            #expect(own.count == 1)
            try #require(own.first).setValue("b-new", forKey: "label")
            #expect(try Self.names(connection, "SELECT label FROM ONLY c") == ["c-label"])
            #expect(try child.value(forKey: "label") as? String == "c-label")
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A parent's `ON DELETE CASCADE` the model copies to a child table, which PostgreSQL
    /// does not enforce there: the child's row stays, and so does its object (it was marked
    /// deleted), written through or saved.
    @Test(arguments: [true, false]) func aParentsCascadeIsNotAppliedToAChildsRows(autocommits: Bool) throws {
        try Self.with(
            """
            CREATE TABLE country (id int PRIMARY KEY, name text);
            CREATE TABLE place (id int PRIMARY KEY, name text, country_id int REFERENCES country ON DELETE CASCADE);
            CREATE TABLE capital (since int, PRIMARY KEY (id)) INHERITS (place);
            INSERT INTO country VALUES (1, 'France');
            INSERT INTO place VALUES (1, 'Lyon', 1);
            INSERT INTO capital VALUES (2, 'Paris', 1, 508);
            """
        ) { fixture, connection in
            let context = fixture.context
            context.autocommits = autocommits
            let france = try #require(try context.object("country", primaryKey: 1))
            let paris = try #require(try france.objects(forKey: "capital").allObjects.first)
            try context.delete(france)
            if !autocommits { try context.save() }
            #expect(try Self.names(connection, "SELECT name FROM capital") == ["Paris"])
            #expect(!paris.isDeleted)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A key declared on a view by an override, on a column that allows NULL: a row whose key
    /// is NULL cannot be written by key, and says so (it was a conflict, "another client
    /// deleted it", and the object was marked deleted).
    @Test func aWriteOfARowWhoseKeyIsNullIsRefusedClearly() throws {
        try Self.with(
            """
            CREATE TABLE t (code text, name text);
            INSERT INTO t VALUES ('a', 'A'), (NULL, 'nameless');
            CREATE VIEW v AS SELECT code, name FROM t;
            """, overrides: [.primaryKey(of: "v", columns: ["code"])]
        ) { fixture, connection in
            let rows = try fixture.context.fetch("v", orderBy: "name")
            let nameless = try #require(rows.first { (try? $0.value(forKey: "name", as: String.self)) == "nameless" })
            let error = try #require(throws: RelateError.self) { try nameless.setValue("x", forKey: "name") }
            #expect(error.kind == .invalidWrite)
            #expect(error.message.contains("code"))
            #expect(!nameless.isDeleted)
            #expect(throws: RelateError.self) { try fixture.context.delete(nameless) }
            #expect(try Self.names(connection, "SELECT count(*)::text FROM t") == ["2"])
        }
    }

    /// An update through a view that takes the row out of the view's `WHERE`: the object
    /// leaves the view in memory too (it stayed, the database no longer showing it).
    @Test func aRowWrittenOutOfAViewLeavesIt() throws {
        try Self.with(
            """
            CREATE TABLE task (id int PRIMARY KEY, title text, done boolean NOT NULL DEFAULT false);
            CREATE VIEW open_task AS SELECT id, title, done FROM task WHERE NOT done;
            INSERT INTO task VALUES (1, 'write', false), (2, 'read', false);
            """
        ) { fixture, _ in
            let open = try fixture.context.fetch("open_task", orderBy: "id")
            let before = fixture.context.connection.roundTrips
            try open[0].setValue(true, forKey: "done")
            #expect(open[0].isDeleted)
            // The update and the read through the view again: one round trip.
            #expect(fixture.context.connection.roundTrips - before == 1)
            try open[1].setValue("read again", forKey: "title")
            #expect(!open[1].isDeleted)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A view over a table others inherit from, read without `ONLY`, shows their rows too,
    /// one key twice: it takes no key from the table (a write through it renamed a child's
    /// row as well). Read with `ONLY`, it does.
    @Test func aViewOverAParentWithItsChildrenTakesNoKeyFromIt() throws {
        try Self.with(
            """
            CREATE TABLE place (id int PRIMARY KEY, name text);
            CREATE TABLE capital (since int, PRIMARY KEY (id)) INHERITS (place);
            CREATE VIEW place_names AS SELECT id, name FROM place;
            CREATE VIEW own_place_names AS SELECT id, name FROM ONLY place;
            INSERT INTO place VALUES (1, 'Lyon');
            INSERT INTO capital VALUES (1, 'Paris', 508);
            """
        ) { fixture, connection in
            let context = fixture.context
            #expect(try context.model.entity("place_names").primaryKey.isEmpty)
            #expect(try context.model.entity("own_place_names").primaryKey == ["id"])
            let lyon = try #require(try context.object("own_place_names", primaryKey: 1))
            try lyon.setValue("Lyon (69)", forKey: "name")
            #expect(try Self.names(connection, "SELECT name FROM capital") == ["Paris"])
        }
    }

    /// A view written through `DO INSTEAD` rules: one without `RETURNING` refuses Relate's
    /// update (which reads its row back) before anything is sent, saying what to add (the
    /// server's `cannot perform UPDATE RETURNING` came out); one with `RETURNING` is written.
    @Test func aRuleWithoutReturningIsNamedBeforeAnythingIsSent() throws {
        try Self.with(
            """
            CREATE TABLE task (id int PRIMARY KEY, title text);
            CREATE VIEW plain_titles AS SELECT id, title FROM task;
            CREATE RULE plain_update AS ON UPDATE TO plain_titles DO INSTEAD UPDATE task SET title = NEW.title WHERE id = OLD.id;
            CREATE VIEW returned_titles AS SELECT id, title FROM task;
            CREATE RULE returned_update AS ON UPDATE TO returned_titles DO INSTEAD
                UPDATE task SET title = NEW.title WHERE id = OLD.id RETURNING task.id, task.title;
            INSERT INTO task VALUES (1, 'write');
            """
        ) { fixture, connection in
            let plain = try #require(try fixture.context.object("plain_titles", primaryKey: 1))
            let error = try #require(throws: RelateError.self) { try plain.setValue("read", forKey: "title") }
            #expect(error.kind == .invalidWrite)
            #expect(error.message.contains("RETURNING"))
            let returned = try #require(try fixture.context.object("returned_titles", primaryKey: 1))
            try returned.setValue("read", forKey: "title")
            #expect(try Self.names(connection, "SELECT title FROM task") == ["read"])
        }
    }

    /// Re-read mends: a child table that declares the parent's key again keeps its own
    /// actions (the model's unenforced copy had taken its place), and a write by condition
    /// through a join keeps to the parent's row where a table the model leaves out holds one
    /// under the same key.
    @Test func aChildsOwnKeyAndAJoinedWriteByConditionKeepToTheirRows() throws {
        try Self.with(
            """
            CREATE SCHEMA $SCHEMA_archive;
            CREATE TABLE people (id int PRIMARY KEY, name text);
            CREATE TABLE items (id int PRIMARY KEY, label text, owner_id int CONSTRAINT items_owner_fkey REFERENCES people ON UPDATE CASCADE);
            CREATE TABLE special_items (PRIMARY KEY (id),
                CONSTRAINT special_items_owner_fkey FOREIGN KEY (owner_id) REFERENCES people ON UPDATE CASCADE) INHERITS (items);
            CREATE TABLE $SCHEMA_archive.old_items (PRIMARY KEY (id)) INHERITS (items);
            INSERT INTO people VALUES (1, 'x');
            INSERT INTO items VALUES (5, 'mine', 1);
            INSERT INTO special_items VALUES (6, 'special', 1);
            INSERT INTO $SCHEMA_archive.old_items VALUES (5, 'archived', 1);
            """
        ) { fixture, connection in
            defer { _ = try? connection.execute("DROP SCHEMA \"\(fixture.schema)_archive\" CASCADE") }
            let context = fixture.context
            let owner = try context.model.entity("special_items").relationship(forKey: "owner")
            #expect(owner.onUpdate == .cascade)
            #expect(try context.update("items", where: Key("owner.name") == "x" && Key("id") == 5, values: ["label": "renamed"]) == 1)
            #expect(try Self.names(connection, "SELECT label FROM \"\(fixture.schema)_archive\".old_items") == ["archived"])
        }
    }

    /// An insert through a view whose `INSTEAD OF` trigger returns the row without its key
    /// (`RETURN NEW` before the table gave one) is refused, naming the view and what to
    /// change, and nothing is written: the object could never be found again by its key.
    @Test func anInsertThroughATriggerThatReturnsNoKeyIsRefused() throws {
        try Self.with(
            """
            CREATE TABLE note (id serial PRIMARY KEY, body text);
            CREATE VIEW note_v AS SELECT id, body FROM note;
            CREATE FUNCTION note_v_insert() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN INSERT INTO note (body) VALUES (NEW.body); RETURN NEW; END $$;
            CREATE TRIGGER note_v_insert INSTEAD OF INSERT ON note_v FOR EACH ROW EXECUTE FUNCTION note_v_insert();
            """,
            overrides: [.primaryKey(of: "note_v", columns: ["id"])]
        ) { fixture, connection in
            let context = fixture.context
            let refused = try #require(throws: RelateError.self) { try context.insert("note_v", values: ["body": "lost"]) }
            #expect(refused.kind == .invalidWrite && refused.entity == "note_v", "\(refused)")
            #expect(refused.message.contains("without its key"), "\(refused.message)")
            #expect(try Self.names(connection, "SELECT body FROM \"\(fixture.schema)\".note") == [])
            #expect(try context.fetch("note_v").isEmpty)
            let many = try #require(throws: RelateError.self) { try context.insert("note_v", rows: [["body": "a"], ["body": "b"]]) }
            #expect(many.kind == .invalidWrite && many.message.contains("without its key"), "\(many)")
            #expect(try Self.names(connection, "SELECT body FROM \"\(fixture.schema)\".note") == [])

            context.autocommits = false
            _ = try context.insert("note_v", values: ["body": "pending"])
            let pending = try #require(throws: RelateError.self) { try context.save() }
            #expect(pending.kind == .invalidWrite && pending.entity == "note_v", "\(pending)")
            #expect(context.hasChanges)
            #expect(try Self.names(connection, "SELECT body FROM \"\(fixture.schema)\".note") == [])
        }
    }

    /// The database's own refusal of an insert through a view comes out as a RelateError
    /// (kind .database) holding it, as an insert into the table does: a unique violation,
    /// and a deferred foreign key checked at the insert's COMMIT.
    @Test func aViewInsertsDatabaseErrorIsARelateError() throws {
        try Self.with(
            """
            CREATE TABLE owner (id int PRIMARY KEY);
            CREATE TABLE thing (id int PRIMARY KEY, owner_id int REFERENCES owner DEFERRABLE INITIALLY DEFERRED);
            CREATE VIEW thing_v AS SELECT id, owner_id FROM thing;
            INSERT INTO owner VALUES (1); INSERT INTO thing VALUES (1, 1);
            """,
            overrides: [.primaryKey(of: "thing_v", columns: ["id"])]
        ) { fixture, connection in
            let context = fixture.context
            // The table: a RelateError both ways.
            let tableUnique = try #require(throws: (any Error).self) { try context.insert("thing", values: ["id": 1, "owner_id": 1]) }
            #expect(tableUnique is RelateError, "\(type(of: tableUnique))")
            let tableDeferred = try #require(throws: (any Error).self) { try context.insert("thing", values: ["id": 2, "owner_id": 99]) }
            #expect(tableDeferred is RelateError, "\(type(of: tableDeferred))")
            // The view: the same.
            let viewUnique = try #require(throws: (any Error).self) { try context.insert("thing_v", values: ["id": 1, "owner_id": 1]) }
            #expect(viewUnique is RelateError, "\(type(of: viewUnique)): \(viewUnique)")
            let viewDeferred = try #require(throws: (any Error).self) { try context.insert("thing_v", values: ["id": 3, "owner_id": 99]) }
            #expect((viewDeferred as? RelateError)?.kind == .database, "\(type(of: viewDeferred)): \(viewDeferred)")
            let manyDeferred = try #require(throws: (any Error).self) { try context.insert("thing_v", rows: [["id": 4, "owner_id": 99], ["id": 5, "owner_id": 1]]) }
            #expect((manyDeferred as? RelateError)?.kind == .database, "\(type(of: manyDeferred)): \(manyDeferred)")
            #expect(!connection.isInTransaction)
            #expect(try Self.names(connection, "SELECT count(*)::text FROM \"\(fixture.schema)\".thing") == ["1"])
            #expect(try context.fetch("thing_v").count == 1)
        }
    }
}
