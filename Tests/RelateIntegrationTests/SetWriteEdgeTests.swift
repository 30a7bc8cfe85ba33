import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Writes by the thousand at their edges (an adversarial review's findings, each failing
/// before its fix): defaults and triggers that decide rows, cascades further than one level,
/// views whose triggers store other than they return, and what an error may show.
@Suite struct SetWriteEdgeTests {
    static func with(_ sql: String, _ body: (ObjectFixture) throws -> Void) throws {
        try ObjectFixture.inSchema(made: sql, body)
    }

    static func count(_ fixture: ObjectFixture, _ sql: String) throws -> Int {
        try fixture.context.connection.query(sql)[0].decode(Int.self, at: 0)
    }

    /// Memory holds what a fresh read answers.
    static func agree(_ fixture: ObjectFixture, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let differences = try fixture.disagreements()
        #expect(differences.isEmpty, "\(differences)", sourceLocation: sourceLocation)
    }

    static let teams = """
        CREATE TABLE team (id int PRIMARY KEY, name text NOT NULL UNIQUE);
        CREATE TABLE player (id serial PRIMARY KEY, name text NOT NULL,
            team_id int DEFAULT 1 CONSTRAINT team REFERENCES team ON DELETE CASCADE);
        INSERT INTO team VALUES (1, 'red'), (2, 'blue');
        INSERT INTO player (name, team_id) VALUES ('Ann', 1), ('Bob', 2);
        """

    /// Rows copied without their foreign key take its default, which refers to a team whose
    /// set of players is loaded: the set takes them, by rows and by position.
    @Test func copiedRowsWhoseDefaultJoinsALoadedSet() throws {
        try Self.with(Self.teams) { fixture in
            let red = try #require(try fixture.context.object("team", primaryKey: 1))
            let players = try red.objects(forKey: "player")
            #expect(players.count == 1)
            #expect(try fixture.context.copy(into: "player", rows: [["name": "Cy"], ["name": "Di"]]) == 2)
            #expect(players.count == 3)
            #expect(try fixture.context.copy(into: "player", columns: ["name"]) { rows in try rows.append("Ed") } == 1)
            #expect(players.count == 4)
            try Self.agree(fixture)
        }
    }

    /// A `BEFORE INSERT` trigger that drops a row: the bulk insert throws, and nothing of it
    /// stays, in the database or in memory.
    @Test func aBulkInsertWhoseTriggerDropsARowIsRolledBack() throws {
        try Self.with(Self.teams + """
            CREATE FUNCTION skip() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.name = 'skip' THEN RETURN NULL; END IF; RETURN NEW; END $$;
            CREATE TRIGGER skip BEFORE INSERT ON player FOR EACH ROW EXECUTE FUNCTION skip();
            """) { fixture in
            let red = try #require(try fixture.context.object("team", primaryKey: 1))
            let players = try red.objects(forKey: "player")
            let error = #expect(throws: RelateError.self) {
                try fixture.context.insert("player", rows: [["name": "skip", "team_id": 1], ["name": "Cy", "team_id": 1], ["name": "Di"]])
            }
            #expect(error?.kind == .invalidWrite && error?.message.contains("returned no row") == true, "\(error.map { "\($0)" } ?? "")")
            #expect(try Self.count(fixture, "SELECT count(*)::int FROM player") == 2)
            #expect(players.count == 1)
            try Self.agree(fixture)
            // Rows the trigger keeps go in.
            #expect(try fixture.context.insert("player", rows: [["name": "Cy", "team_id": 1], ["name": "Di"]]).count == 2)
            #expect(players.count == 3)
            try Self.agree(fixture)
        }
    }

    /// Rows of a tree listed parents first, but giving different columns: each row goes
    /// after the rows before it, by insert and by copy.
    @Test func aTreeListedParentsFirstGoesInByInsertAndCopy() throws {
        try Self.with("CREATE TABLE node (id int PRIMARY KEY, parent_id int REFERENCES node, name text);") { fixture in
            let made = try fixture.context.insert("node", rows: [
                ["id": 1], ["id": 2, "parent_id": 1, "name": "b"], ["id": 3, "parent_id": 2], ["id": 4, "parent_id": 3, "name": "d"],
            ])
            #expect(try made.map { try $0.value(forKey: "id", as: Int.self) } == [1, 2, 3, 4])
            #expect(try fixture.context.copy(into: "node", rows: [
                ["id": 5], ["id": 6, "parent_id": 5, "name": "f"], ["id": 7, "parent_id": 6], ["id": 8, "parent_id": 7, "name": "h"],
            ]) == 4)
            #expect(try Self.count(fixture, "SELECT count(*)::int FROM node") == 8)
            try Self.agree(fixture)
        }
    }

    /// A copy out whose query fails: its error shows the statement with placeholders, never
    /// the condition's values (`COPY` takes them as literals).
    @Test func aFailedCopyOutShowsNoValue() throws {
        try Self.with("""
            CREATE TABLE s (id int PRIMARY KEY, secret text, d int);
            INSERT INTO s VALUES (1, 'hunter2', 0);
            CREATE VIEW v AS SELECT id, secret, 1 / d AS q FROM s;
            """) { fixture in
            let error = try #require(throws: RelateError.self) {
                try fixture.context.copy(FetchRequest("v", where: Key("secret") == "hunter2"), format: .csv(header: false)) { _ in }
            }
            #expect(error.postgresError?.sqlState?.rawValue == "22012")
            #expect(!error.description.contains("hunter2"), "\(error.description)")
            #expect(error.description.contains("$1"), "\(error.description)")
        }
    }

    /// An update by condition with nothing to set changes no row, pending or not.
    @Test func anUpdateWithNothingToSetCountsNoRow() throws {
        try Self.with(Self.teams) { fixture in
            let context = fixture.context
            let nothing: [String: Any?] = [:]
            let updated = try context.update("player", where: .always, values: nothing)
            #expect(updated == 0)
            context.autocommits = false
            let pending = try context.update("player", where: .always, values: nothing)
            #expect(pending == 0)
            #expect(!context.hasChanges)
        }
    }

    static let chain = """
        CREATE TABLE a (id int PRIMARY KEY, code text NOT NULL UNIQUE);
        CREATE TABLE b (id int PRIMARY KEY, a_code text REFERENCES a(code) ON UPDATE CASCADE, UNIQUE (a_code, id));
        CREATE TABLE c (id int PRIMARY KEY, b_code text, b_id int,
            CONSTRAINT b FOREIGN KEY (b_code, b_id) REFERENCES b(a_code, id) ON UPDATE CASCADE);
        INSERT INTO a VALUES (1, 'x');
        INSERT INTO b VALUES (1, 'x');
        INSERT INTO c VALUES (1, 'x', 1);
        """

    /// An update by condition of a referenced column, `ON UPDATE CASCADE` two levels down:
    /// memory follows to the grandchild, whether it holds the grandchild alone or the
    /// middle row too (with its set loaded).
    @Test func anUpdateByConditionCascadesAsFarAsTheRulesGo() throws {
        try Self.with(Self.chain) { fixture in
            let c = try #require(try fixture.context.object("c", primaryKey: 1))
            #expect(try fixture.context.update("a", where: Key("id") == 1, values: ["code": "y"]) == 1)
            #expect(try c.value(forKey: "b_code") as? String == "y")
            try Self.agree(fixture)
        }
        try Self.with(Self.chain) { fixture in
            let b = try #require(try fixture.context.object("b", primaryKey: 1))
            let c = try #require(try fixture.context.object("c", primaryKey: 1))
            let below = try b.objects(forKey: "c")
            #expect(try fixture.context.update("a", where: Key("id") == 1, values: ["code": "y"]) == 1)
            #expect(try b.value(forKey: "a_code") as? String == "y")
            #expect(try c.value(forKey: "b_code") as? String == "y")
            #expect(below.count == 1)
            try Self.agree(fixture)
        }
    }

    static let medals = teams + """
        CREATE TABLE medal (id int PRIMARY KEY, player_id int REFERENCES player ON DELETE CASCADE);
        INSERT INTO medal VALUES (1, 1), (2, 2);
        """

    /// A delete whose cascade reaches a row memory holds through a row it does not (team →
    /// player → medal): the medal is deleted in memory too, by one object or by condition,
    /// autocommitted or saved.
    @Test(arguments: [false, true], [false, true])
    func aCascadeThroughARowNotHeldReachesAHeldRow(byCondition: Bool, pending: Bool) throws {
        try Self.with(Self.medals) { fixture in
            let context = fixture.context
            let medal = try #require(try context.object("medal", primaryKey: 1))
            let red = try #require(try context.object("team", primaryKey: 1))
            context.autocommits = !pending
            if byCondition {
                #expect(try context.delete("team", where: Key("name") == "red") == 1)
            } else {
                try context.delete(red)
            }
            if pending { try context.save() }
            #expect(medal.isDeleted)
            #expect(try Self.count(fixture, "SELECT count(*)::int FROM medal") == 1)
            try Self.agree(fixture)
        }
    }

    /// Where memory holds the whole cascade (the team's players loaded), the delete reads
    /// nothing back: memory follows it down to the medal.
    @Test func aCascadeMemoryHoldsWholeReadsNothingBack() throws {
        try Self.with(Self.medals) { fixture in
            let context = fixture.context
            let medal = try #require(try context.object("medal", primaryKey: 1))
            let red = try #require(try context.object("team", primaryKey: 1))
            let players = try red.objects(forKey: "player")
            for player in players { _ = try player.objects(forKey: "medal") }
            let sql = try fixture.sql { try context.delete(red) }
            #expect(sql.count == 1 && sql.allSatisfy { $0.hasPrefix("DELETE") }, "\(sql)")
            #expect(medal.isDeleted)
            try Self.agree(fixture)
        }
    }

    /// A view whose `INSTEAD OF UPDATE` trigger stores other than it is given (the view
    /// shows names upper-cased, and only rows not hidden).
    static let shouting = """
        CREATE TABLE base (id int PRIMARY KEY, name text, hidden bool NOT NULL DEFAULT false);
        INSERT INTO base VALUES (1, 'a'), (2, 'b'), (3, 'c');
        CREATE VIEW v AS SELECT id, upper(name) AS name, hidden FROM base WHERE NOT hidden;
        CREATE FUNCTION v_upd() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN UPDATE base SET name = lower(NEW.name), hidden = NEW.hidden WHERE id = OLD.id; RETURN NEW; END $$;
        CREATE TRIGGER v_upd INSTEAD OF UPDATE ON v FOR EACH ROW EXECUTE FUNCTION v_upd();
        """

    /// An update by condition and a save through such a view: memory holds what the view
    /// shows, not what the trigger returned, and a row the view no longer shows leaves it.
    @Test func writesThroughAViewWhoseTriggerStoresOtherwiseReadItAgain() throws {
        try Self.with(Self.shouting) { fixture in
            let context = fixture.context
            let rows = try context.fetch(FetchRequest("v", orderBy: [.ascending("id")]))
            #expect(rows.count == 3)
            #expect(try context.update("v", where: Key("id") == 1, values: ["name": "zed"]) == 1)
            #expect(try rows[0].value(forKey: "name") as? String == "ZED")
            #expect(try context.update("v", where: Key("id") == 3, values: ["hidden": true]) == 1)
            #expect(rows[2].isDeleted)
            try Self.agree(fixture)
            context.autocommits = false
            try rows[1].setValue("yak", forKey: "name")
            try context.save()
            #expect(try rows[1].value(forKey: "name") as? String == "YAK")
            try Self.agree(fixture)
            // A save that hides the row leaves memory too.
            try rows[1].setValue(true, forKey: "hidden")
            try context.save()
            #expect(rows[1].isDeleted)
            try Self.agree(fixture)
        }
    }

    static let nullChain = """
        CREATE TABLE a (id int PRIMARY KEY);
        CREATE TABLE b (id int PRIMARY KEY, a_id int REFERENCES a ON DELETE SET NULL, UNIQUE (a_id, id));
        CREATE TABLE c (id int PRIMARY KEY, b_a int, b_id int,
            CONSTRAINT b FOREIGN KEY (b_a, b_id) REFERENCES b(a_id, id) ON UPDATE CASCADE);
        INSERT INTO a VALUES (1);
        INSERT INTO b VALUES (1, 1);
        INSERT INTO c VALUES (1, 1, 1);
        """

    /// A delete's `SET NULL` clears a column a third table refers to, whose `ON UPDATE
    /// CASCADE` carries it on: memory holding every row follows, by one object and by
    /// condition.
    @Test(arguments: [false, true])
    func aSetNullOfAReferencedColumnFollowsOnUpdateRules(byCondition: Bool) throws {
        try Self.with(Self.nullChain) { fixture in
            let a = try #require(try fixture.context.object("a", primaryKey: 1))
            let b = try #require(try fixture.context.object("b", primaryKey: 1))
            let c = try #require(try fixture.context.object("c", primaryKey: 1))
            if byCondition {
                #expect(try fixture.context.delete("a", where: Key("id") == 1) == 1)
            } else {
                try fixture.context.delete(a)
            }
            #expect(try b.value(forKey: "a_id") == nil)
            #expect(try c.value(forKey: "b_a") == nil)
            try Self.agree(fixture)
        }
    }
}

extension SetWriteEdgeTests {
    /// Rows of a table that refers to itself but give no reference group as any table's do:
    /// 2,000 rows whose columns alternate take as many statements as for a table without
    /// the reference, by insert and by copy.
    @Test func rowsThatReferToNoRowGroupAsAnyTablesDo() throws {
        try Self.with("""
            CREATE TABLE employee (id int PRIMARY KEY, manager_id int REFERENCES employee, email text);
            """) { fixture in
            let context = fixture.context
            func rows(_ offset: Int) -> [[String: Any?]] { (1...2000).map { $0 % 2 == 0 ? ["id": $0 + offset, "email": "e\($0)"] : ["id": $0 + offset] } }
            let copied = try fixture.sql { _ = try context.copy(into: "employee", rows: rows(0)) }
            #expect(copied.filter { $0.hasPrefix("COPY") }.count == 2, "\(copied.count) statements")
            let inserted = try fixture.sql { _ = try context.insert("employee", rows: rows(10_000)) }
            #expect(inserted.count == 2, "\(inserted.count) statements")
            #expect(try Self.count(fixture, "SELECT count(*)::int FROM employee") == 4000)
        }
    }
}

extension SetWriteEdgeTests {
    /// Held nodes whose parent memory does not hold, deleted one by one: each delete asks
    /// in its own round trip whether their parent is still there (one row for all the
    /// siblings), and reads none of them again: a sibling's subtree is not the deleted
    /// node's.
    @Test func deletingHeldSiblingsOfARootNotHeldReadsNoSiblingAgain() throws {
        try Self.with("""
            CREATE TABLE node (id int PRIMARY KEY, parent_id int REFERENCES node ON DELETE CASCADE);
            INSERT INTO node VALUES (1, NULL);
            INSERT INTO node SELECT g, 1 FROM generate_series(2, 201) g;
            INSERT INTO node SELECT g + 1000, g FROM generate_series(2, 201) g;
            """) { fixture in
            let context = fixture.context
            let children = try context.fetch(FetchRequest("node", where: Key("parent_id") == 1, orderBy: [.ascending("id")]))
            let trips = context.connection.roundTrips
            let sql = try fixture.sql { for child in children.prefix(100) { try context.delete(child) } }
            #expect(context.connection.roundTrips - trips == 100)
            #expect(sql.filter { $0.hasPrefix("DELETE") }.count == 100)
            #expect(sql.filter { !$0.hasPrefix("DELETE") }.allSatisfy { $0.hasPrefix("SELECT \"id\" FROM") }, "\(Set(sql))")
            #expect(children.prefix(100).allSatisfy(\.isDeleted) && !children.dropFirst(100).contains(where: \.isDeleted))
            try Self.agree(fixture)
        }
    }
}
