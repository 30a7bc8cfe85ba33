import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Writes whose failure memory must follow, and a value the server stores that validation
/// refused, each found by a review.
@Suite struct WriteEdgeTests {
    static func with(_ sql: String, _ body: (ObjectFixture) throws -> Void) throws {
        try ObjectFixture.inSchema(made: sql, body)
    }

    static let mail = """
        CREATE TABLE person (id serial PRIMARY KEY, name text);
        CREATE TABLE email (id serial PRIMARY KEY, address text NOT NULL CHECK (address LIKE '%@%'),
            person_id int CONSTRAINT person REFERENCES person);
        INSERT INTO person (name) VALUES ('Ada'), ('Grace');
        INSERT INTO email (address, person_id) VALUES ('ada@a', 1);
        """

    /// `copy(into:rows:)`: the rows that join a loaded set go first and join it in memory;
    /// a later group's COPY fails and the transaction rolls back: so does memory.
    @Test func aCopyWhoseLaterGroupFailsLeavesNoRowInMemory() throws {
        try Self.with(Self.mail) { fixture in
            let ada = try #require(try fixture.context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            #expect(throws: RelateError.self) {
                try fixture.context.copy(into: "email", rows: [["address": "ada@b", "person_id": 1], ["address": "no at sign"]])
            }
            #expect(emails.count == 1)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// `copy(into:columns:rows:)` into a loaded set, refused at `COMMIT` by a deferred
    /// constraint trigger: memory rolls back, and the error is a `RelateError`.
    @Test func aCopyRefusedAtCommitLeavesNoRowInMemory() throws {
        try Self.with(
            Self.mail + """
                CREATE FUNCTION refuse_b() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.address = 'ada@b' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NEW; END $$;
                CREATE CONSTRAINT TRIGGER refuse_b AFTER INSERT ON email DEFERRABLE INITIALLY DEFERRED
                    FOR EACH ROW EXECUTE FUNCTION refuse_b();
                """
        ) { fixture in
            let ada = try #require(try fixture.context.object("person", primaryKey: 1))
            let emails = try ada.objects(forKey: "email")
            #expect(throws: RelateError.self) {
                try fixture.context.copy(into: "email", columns: ["address", "person_id"]) { rows in try rows.append("ada@b", 1) }
            }
            #expect(emails.count == 1)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// The server stores a `varchar(n)` value whose characters past `n` are all spaces (cut
    /// to `n`): a pending write of one is saved, as an autocommitting one is.
    @Test func aVarcharValueLongOnlyBySpacesIsSaved() throws {
        try Self.with(
            """
            CREATE TABLE code (id int PRIMARY KEY, tag varchar(3), fixed char(3));
            INSERT INTO code VALUES (1, 'x', 'x'), (2, 'y', 'y');
            """
        ) { fixture in
            let context = fixture.context
            let one = try #require(try context.object("code", primaryKey: 1))
            try one.setValue("abc   ", forKey: "tag")
            #expect(try one.value(forKey: "tag") as? String == "abc")
            context.autocommits = false
            let two = try #require(try context.object("code", primaryKey: 2))
            try two.setValue("abc   ", forKey: "tag")
            try two.setValue("ab    ", forKey: "fixed")
            try context.save()
            #expect(try two.value(forKey: "tag") as? String == "abc")
            #expect(try fixture.disagreements() == [])
            try two.setValue("abcd  ", forKey: "tag")
            #expect(throws: RelateError.self) { try context.save() }
        }
    }

    /// A `save()` refused at `COMMIT` (a deferred constraint trigger) after a helper table's
    /// rows came back as objects: memory keeps no helper row the database never stored, and
    /// the change stays pending.
    @Test func aSaveRefusedAtCommitKeepsNoHelperRowInMemory() throws {
        try Self.with(
            """
            CREATE TABLE person (id serial PRIMARY KEY, firstname text);
            CREATE TABLE title (id serial PRIMARY KEY, name text);
            CREATE TABLE person_title_rel (person_id int REFERENCES person, title_id int REFERENCES title, PRIMARY KEY (person_id, title_id));
            CREATE FUNCTION refuse_doctor() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.title_id = 3 THEN RAISE EXCEPTION 'no more doctors'; END IF; RETURN NEW; END $$;
            CREATE CONSTRAINT TRIGGER refuse_doctor AFTER INSERT ON person_title_rel DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION refuse_doctor();
            INSERT INTO person (firstname) VALUES ('Ada'), ('Grace');
            INSERT INTO title (name) VALUES ('Countess'), ('Rear Admiral'), ('Doctor');
            INSERT INTO person_title_rel VALUES (1, 1), (2, 2);
            """
        ) { fixture in
            let context = fixture.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let doctor = try #require(try context.object("title", primaryKey: 3))
            #expect(try ada.objects(forKey: "person_title_rel").count == 1)
            context.autocommits = false
            try ada.objects(forKey: "title").insert(doctor)
            #expect(throws: RelateError.self) { try context.save() }
            #expect(context.hasChanges)
            context.rollback()
            #expect(try fixture.disagreements() == [])
        }
    }

    static let teams = """
        CREATE TABLE team (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
        CREATE TABLE player (id serial PRIMARY KEY, team_name text CONSTRAINT team REFERENCES team(name) ON UPDATE CASCADE);
        INSERT INTO team (name) VALUES ('red'), ('blue');
        INSERT INTO player (team_name) VALUES ('red'), ('red'), ('blue');
        """

    /// `ON UPDATE CASCADE` through a unique column that is not the primary key: the players
    /// loaded follow in memory, whether the team's name is written through `setValue`, by
    /// condition, or pending and saved.
    @Test func aUniqueKeysCascadeIsFollowedInMemory() throws {
        try Self.with(Self.teams) { fixture in
            let context = fixture.context
            let red = try #require(try context.object("team", primaryKey: 1))
            let reds = try red.objects(forKey: "player")
            try red.setValue("crimson", forKey: "name")
            #expect(try reds.allObjects.map { try $0.value(forKey: "team_name") as? String } == ["crimson", "crimson"])
            #expect(try fixture.disagreements() == [])

            let blue = try #require(try context.object("team", primaryKey: 2))
            let blues = try blue.objects(forKey: "player")
            #expect(try context.update("team", where: Key("name") == "blue", values: ["name": "navy"]) == 1)
            #expect(try blues.allObjects.map { try $0.value(forKey: "team_name") as? String } == ["navy"])
            #expect(try fixture.disagreements() == [])

            context.autocommits = false
            try red.setValue("scarlet", forKey: "name")
            try context.save()
            #expect(try reds.allObjects.map { try $0.value(forKey: "team_name") as? String } == ["scarlet", "scarlet"])
            #expect(try fixture.disagreements() == [])
        }
    }

    static let defaults = """
        CREATE TABLE team (id int PRIMARY KEY, name text);
        CREATE TABLE player (id int PRIMARY KEY,
            team_id int DEFAULT 0 CONSTRAINT team REFERENCES team ON DELETE SET DEFAULT ON UPDATE SET DEFAULT);
        INSERT INTO team VALUES (0, 'none'), (1, 'red'), (2, 'blue');
        INSERT INTO player VALUES (1, 1), (2, 2);
        """

    /// A pending delete, and a pending key change, whose dependants the database gives
    /// their defaults (`SET DEFAULT`): saved (validation had refused the delete), and the
    /// dependants read back after the save (memory had kept the old key).
    @Test func whatASaveSetsToDefaultsIsReadBack() throws {
        try Self.with(Self.defaults) { fixture in
            let context = fixture.context
            context.autocommits = false
            let (one, two) = (try #require(try context.object("player", primaryKey: 1)), try #require(try context.object("player", primaryKey: 2)))
            let red = try #require(try context.object("team", primaryKey: 1))
            _ = try red.objects(forKey: "player")
            try context.delete(red)
            try context.save()
            #expect(try one.value(forKey: "team_id") as? Int == 0)
            let blue = try #require(try context.object("team", primaryKey: 2))
            try blue.setValue(7, forKey: "id")
            try context.save()
            #expect(try two.value(forKey: "team_id") as? Int == 0)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A unique column another table refers to `ON UPDATE SET DEFAULT`, changed by
    /// condition, autocommitting: the dependant is read back (the team in memory too: one
    /// that is not leaves memory no old value to find its dependants by).
    @Test func aReferencedColumnChangedByConditionReadsWhatTheDatabaseSetToDefaults() throws {
        try Self.with(
            """
            CREATE TABLE team (id int PRIMARY KEY, name text NOT NULL UNIQUE);
            CREATE TABLE player (id int PRIMARY KEY,
                team_name text DEFAULT 'none' CONSTRAINT team REFERENCES team (name) ON UPDATE SET DEFAULT);
            INSERT INTO team VALUES (0, 'none'), (1, 'red');
            INSERT INTO player VALUES (1, 'red');
            """
        ) { fixture in
            let player = try #require(try fixture.context.object("player", primaryKey: 1))
            _ = try #require(try fixture.context.object("team", primaryKey: 1))
            #expect(try fixture.context.update("team", where: Key("id") == 1, values: ["name": "crimson"]) == 1)
            #expect(try player.value(forKey: "team_name") as? String == "none")
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A unique column another table refers to `ON UPDATE CASCADE`, changed by condition
    /// while memory holds a dependant but not the row changed: the dependant is read back
    /// (memory has no old value to find it by).
    @Test func aReferencedColumnChangedByConditionMovesDependantsOfRowsNotInMemory() throws {
        try Self.with(Self.teams) { fixture in
            let player = try #require(try fixture.context.object("player", primaryKey: 3))
            #expect(try fixture.context.update("team", where: Key("name") == "blue", values: ["name": "navy"]) == 1)
            #expect(try player.value(forKey: "team_name") as? String == "navy")
            #expect(try fixture.disagreements() == [])
        }
    }

    /// `ON DELETE SET NULL (team_id)` (PostgreSQL 15): the delete sets that column alone;
    /// the dependant loaded keeps its tenant, in memory as in the database.
    @Test func aSetNullWithAColumnListClearsThoseColumnsAlone() throws {
        try Self.with(
            """
            CREATE TABLE team (tenant int, id int, PRIMARY KEY (tenant, id));
            CREATE TABLE player (id int PRIMARY KEY, tenant int NOT NULL, team_id int,
                CONSTRAINT team FOREIGN KEY (tenant, team_id) REFERENCES team ON DELETE SET NULL (team_id));
            INSERT INTO team VALUES (1, 1);
            INSERT INTO player VALUES (1, 1, 1);
            """
        ) { fixture in
            let context = fixture.context
            let relationship = try context.model.entity("player").relationship(forKey: "team")
            #expect(relationship.onDeleteSetColumns == ["team_id"])
            let player = try #require(try context.object("player", primaryKey: 1))
            let team = try #require(try player.value(forKey: "team") as? DatabaseObject)
            try context.delete(team)
            #expect(try player.value(forKey: "tenant") as? Int == 1)
            #expect(try player.value(forKey: "team_id") == nil)
            #expect(try fixture.disagreements() == [])
        }
    }
}
