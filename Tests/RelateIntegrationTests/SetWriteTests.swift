import Foundation
import Observation
import RelatePostgres
import Testing

@testable import Relate

/// Writes by the thousand: update and delete by condition, bulk inserts. One statement (or
/// one pipeline) each, and memory — objects, loaded sets on both sides, live results,
/// Observation — agreeing with the database afterwards.
@Suite struct SetWriteTests {
    /// Teams, players (a to-one to their team, `ON DELETE CASCADE`), medals (`SET NULL`
    /// toward their player) and coaches (`RESTRICT` toward their team).
    static let league = """
        CREATE TABLE team (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
        CREATE TABLE player (
            id serial PRIMARY KEY, name text NOT NULL, score int NOT NULL DEFAULT 0, nickname varchar(40),
            team_id int CONSTRAINT team REFERENCES team ON DELETE CASCADE, joined date DEFAULT '2026-01-01', updated timestamptz);
        CREATE TABLE medal (id serial PRIMARY KEY, kind text NOT NULL, player_id int CONSTRAINT player REFERENCES player ON DELETE SET NULL);
        CREATE TABLE coach (id serial PRIMARY KEY, name text NOT NULL, team_id int CONSTRAINT team REFERENCES team ON DELETE RESTRICT);
        INSERT INTO team (name) VALUES ('red'), ('blue'), ('green'), ('grey');
        INSERT INTO player (name, score, team_id) VALUES
            ('Ann', 1, 1), ('Bob', 20, 1), ('Cat', 3, 2), ('Dan', 4, 3), ('Eve', 50, 3), ('Fay', 6, NULL);
        INSERT INTO medal (kind, player_id) VALUES ('gold', 1), ('silver', 4), ('bronze', 2);
        INSERT INTO coach (name, team_id) VALUES ('Zed', 2);
        """

    static func withLeague(adding extra: String = "", _ body: (ObjectFixture) throws -> Void) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(league + extra)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            try body(ObjectFixture(context: context, schema: schema))
        }
    }

    static func names(_ objects: some Sequence<DatabaseObject>) throws -> [String] {
        try objects.map { try #require($0.value(forKey: "name") as? String) }.sorted()
    }

    /// One `UPDATE … WHERE` through a to-one, values computed from the row: the objects
    /// memory holds take them, the rest are not read back; a live result and an observer
    /// follow; a to-one moved by condition leaves one loaded set for another, and a row
    /// memory did not hold joins the loaded set it moves into.
    @Test func anUpdateByConditionIsOneStatementAndMemoryFollows() throws {
        try Self.withLeague { fixture in
            let context = fixture.context
            context.isObservable = true
            let s = "\"\(fixture.schema)\""
            let ann = try #require(try context.object("player", primaryKey: 1))
            let cat = try #require(try context.object("player", primaryKey: 3))
            let red = try #require(try context.object("team", primaryKey: 1))
            let blue = try #require(try context.object("team", primaryKey: 2))
            let redPlayers = try red.objects(forKey: "player")
            let bluePlayers = try blue.objects(forKey: "player")
            let high = try context.liveFetch(FetchRequest("player", where: Key("score") >= 10, orderBy: [.ascending("id")]))
            #expect(try Self.names(high.objects) == ["Bob", "Eve"])
            let annFired = Locked(0)
            let catFired = Locked(0)
            withObservationTracking { _ = try? ann.value(forKey: "score") } onChange: { annFired.withLock { $0 += 1 } }
            withObservationTracking { _ = try? cat.value(forKey: "score") } onChange: { catFired.withLock { $0 += 1 } }

            var changed = 0
            let sql = try fixture.sql {
                changed = try context.update(
                    "player", where: Key("team.name") == "red",
                    values: ["score": Key("score") + 10, "nickname": Key("name") + "!", "updated": RowExpression.now])
            }
            #expect(changed == 2)
            #expect(sql.count == 1)
            #expect(sql[0].hasPrefix("UPDATE \(s).\"player\" t2 SET \"nickname\" = (t2.\"name\" || $2), \"score\" = (t2.\"score\" + $3), \"updated\" = now() FROM (SELECT t0.\"id\" FROM \(s).\"player\" t0 LEFT JOIN \(s).\"team\" t1"))
            #expect(try ann.value(forKey: "score") as? Int == 11)
            #expect(try ann.value(forKey: "nickname") as? String == "Ann!")
            #expect(try ann.value(forKey: "updated") is Date)
            #expect(try cat.value(forKey: "score") as? Int == 3)
            #expect(annFired.withLock { $0 } == 1)
            #expect(catFired.withLock { $0 } == 0)
            #expect(try Self.names(high.objects) == ["Ann", "Bob", "Eve"])

            // Moved by condition: Ann from red to blue (both sets loaded), Dan (not in memory,
            // green not loaded) to blue, where he joins the loaded set.
            let moved = try context.update("player", where: Key("name").in(["Ann", "Dan"]), values: ["team": blue])
            #expect(moved == 2)
            #expect(try Self.names(redPlayers) == ["Bob"])
            #expect(try Self.names(bluePlayers) == ["Ann", "Cat", "Dan"])
            #expect(try (ann.value(forKey: "team") as? DatabaseObject) === blue)
            #expect(try fixture.disagreements() == [])

            // No row matches: nothing changes, nothing is told.
            #expect(try context.update("player", where: Key("score") > 1_000, values: ["score": 0]) == 0)
        }
    }

    /// Memory that holds nothing of the entity: the statement returns no rows at all.
    @Test func anUpdateMemoryDoesNotNeedReturnsNothing() throws {
        try Self.withLeague { fixture in
            var changed = 0
            let sql = try fixture.sql {
                changed = try fixture.context.update("player", where: Key("score") < 10, values: ["score": Key("score") * 2])
            }
            #expect(changed == 4)
            #expect(sql.count == 1 && !sql[0].contains("RETURNING"))
            let rows = try fixture.context.connection.query("SELECT sum(score)::int FROM \"\(fixture.schema)\".player")
            #expect(try rows[0].decode(Int.self, at: 0) == 1 * 2 + 20 + 3 * 2 + 4 * 2 + 50 + 6 * 2)
        }
    }

    /// What a write by condition refuses before anything is sent: a primary-key column, an
    /// expression reading through a relationship, an unknown key, a value of the wrong type.
    @Test func aWriteByConditionRefusesWhatItCannotDo() throws {
        try Self.withLeague { fixture in
            let context = fixture.context
            let sql = try fixture.sql {
                let key = try #require(throws: RelateError.self) { try context.update("player", where: .always, values: ["id": 7]) }
                #expect(key.kind == .invalidWrite && key.key == "id")
                let through = try #require(throws: RelateError.self) {
                    try context.update("player", where: .always, values: ["score": Key("team.id") + 1])
                }
                #expect(through.key == "team.id")
                let unknown = try #require(throws: RelateError.self) { try context.update("player", where: Key("colour") == "x", values: ["score": 1]) }
                #expect(unknown.kind == .unknownKey)
                let mismatch = try #require(throws: RelateError.self) { try context.update("player", where: .always, values: ["score": "many"]) }
                #expect(mismatch.kind == .typeMismatch && mismatch.key == "score")
            }
            #expect(sql.isEmpty)
        }
    }

    /// One `DELETE … WHERE`: deleted objects are marked deleted, `SET NULL` and `CASCADE`
    /// mirrored on what memory holds (a medal of a player memory did not hold included),
    /// the loaded sets let go, and a live result follows.
    @Test func aDeleteByConditionMirrorsTheDeleteRules() throws {
        try Self.withLeague { fixture in
            let context = fixture.context
            let ann = try #require(try context.object("player", primaryKey: 1))
            let red = try #require(try context.object("team", primaryKey: 1))
            let redPlayers = try red.objects(forKey: "player")
            let silver = try #require(try context.object("medal", primaryKey: 2))   // Dan's, Dan not in memory
            let gold = try #require(try context.object("medal", primaryKey: 1))     // Ann's
            let unheld = try context.liveFetch(FetchRequest("medal", where: Key("player") == nil))
            #expect(try unheld.objects.isEmpty)
            let fired = Locked(0)
            withObservationTracking { _ = try? unheld.objects } onChange: { fired.withLock { $0 += 1 } }

            var deleted = 0
            let sql = try fixture.sql { deleted = try context.delete("player", where: Key("score") < 5) }
            #expect(deleted == 3)   // Ann, Cat, Dan
            #expect(sql.count == 1)
            #expect(ann.isDeleted)
            #expect(try Self.names(redPlayers) == ["Bob"])
            #expect(try gold.value(forKey: "player") == nil)
            #expect(try silver.value(forKey: "player") == nil)
            #expect(fired.withLock { $0 } >= 1)
            #expect(Set(try unheld.objects.map(ObjectIdentifier.init)) == Set([gold, silver].map(ObjectIdentifier.init)))
            #expect(try fixture.disagreements() == [])

            // A cascade: green's players go with it, memory's objects of them too.
            let eve = try #require(try context.object("player", primaryKey: 5))
            #expect(try context.delete("team", where: Key("name") == "green") == 1)
            #expect(eve.isDeleted)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A cascade two levels down through rows memory holds nothing of: a team memory does
    /// not hold is deleted, its players (not held either) go by cascade, and below them a
    /// training (cascade) and a medal (`SET NULL`) that memory holds follow the rules. They
    /// are read again in the delete's round trip; a training of another team's player stays.
    /// A tree whose rows cascade to their children reaches a grandchild the same way.
    @Test func aDeleteByConditionFollowsTheRulesBelowRowsMemoryDoesNotHold() throws {
        let extra = """
            CREATE TABLE training (id serial PRIMARY KEY, note text NOT NULL, player_id int NOT NULL REFERENCES player ON DELETE CASCADE);
            INSERT INTO training (note, player_id) VALUES ('Eve runs', 5), ('Ann swims', 1), ('Dan rows', 4);
            CREATE TABLE folder (id int PRIMARY KEY, name text NOT NULL, parent_id int REFERENCES folder ON DELETE CASCADE);
            INSERT INTO folder VALUES (1, 'root', NULL), (2, 'child', 1), (3, 'grandchild', 2), (4, 'other', NULL);
            """
        try Self.withLeague(adding: extra) { fixture in
            let context = fixture.context
            let silver = try #require(try context.object("medal", primaryKey: 2))     // Dan's
            let evesTraining = try #require(try context.object("training", primaryKey: 1))
            let annsTraining = try #require(try context.object("training", primaryKey: 2))
            #expect(context.graph.registries[try context.entityIndex(named: "player")].isEmpty)
            #expect(context.graph.registries[try context.entityIndex(named: "team")].isEmpty)

            let trips = context.connection.roundTrips
            #expect(try context.delete("team", where: Key("name") == "green") == 1)
            #expect(context.connection.roundTrips == trips + 1)
            #expect(evesTraining.isDeleted)
            #expect(!annsTraining.isDeleted)
            #expect(try silver.value(forKey: "player") == nil)
            #expect(try fixture.disagreements() == [])

            let grandchild = try #require(try context.object("folder", primaryKey: 3))
            let other = try #require(try context.object("folder", primaryKey: 4))
            #expect(try context.delete("folder", where: Key("name") == "root") == 1)
            #expect(grandchild.isDeleted)
            #expect(!other.isDeleted)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// PostgreSQL's inheritance: a write by condition on a parent without `only` writes the
    /// rows of the tables that inherit from it too. The objects memory holds of the child's
    /// rows (objects of the child's entity) take the new values and move between the
    /// child's loaded sets; deleted, they are marked deleted.
    @Test func aWriteByConditionOnAParentReachesTheChildsObjects() throws {
        try ObjectFixture.with("hard_cases", extraSQL: InheritanceTests.data) { fixture in
            let context = fixture.context
            let france = try #require(try context.object("country", primaryKey: 1))
            let italy = try #require(try context.object("country", primaryKey: 2))
            let italianCapitals = try italy.objects(forKey: "capital")
            let paris = try #require(try france.objects(forKey: "capital").allObjects.first)
            let lyon = try #require(try context.object("place", primaryKey: 1))
            #expect(try paris.value(forKey: "name", as: String.self) == "Paris")

            // The parent's rows and the child's: Paris moves to Italy's capitals.
            let inFrance = Key("country.code") == "FR"
            let renamed = try context.update("place", where: inFrance, values: ["name": Key("name") + "!"])
            #expect(renamed == 2)
            #expect(try paris.value(forKey: "name", as: String.self) == "Paris!")
            #expect(try lyon.value(forKey: "name", as: String.self) == "Lyon!")
            let moved = try context.update("place", where: inFrance, values: ["country": italy])
            #expect(moved == 2)
            #expect(try paris.object(forKey: "country").map(ObjectIdentifier.init) == ObjectIdentifier(italy))
            #expect(Set(italianCapitals.allObjects.map(ObjectIdentifier.init)).contains(ObjectIdentifier(paris)))
            #expect(try lyon.object(forKey: "country").map(ObjectIdentifier.init) == ObjectIdentifier(italy))
            #expect(try fixture.disagreements() == [])

            let roma = try #require(italianCapitals.allObjects.first { try $0.value(forKey: "name", as: String.self) == "Roma" })
            #expect(try context.delete("place", where: Key("name") == "Roma") == 1)
            #expect(roma.isDeleted)
            #expect(!paris.isDeleted)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// `RESTRICT` refuses: `deleteDenied` naming the constraint, nothing deleted, memory
    /// unchanged.
    @Test func aRefusedDeleteByConditionLeavesEverything() throws {
        try Self.withLeague { fixture in
            let context = fixture.context
            let blue = try #require(try context.object("team", primaryKey: 2))
            let grey = try #require(try context.object("team", primaryKey: 4))
            let error = try #require(throws: RelateError.self) { try context.delete("team", where: Key("name").in(["blue", "grey"])) }
            #expect(error.kind == .deleteDenied)
            #expect(error.description.contains("\"team\"") && error.description.contains("coach"))
            #expect(!blue.isDeleted && !grey.isDeleted)
            let rows = try context.connection.query("SELECT count(*)::int FROM \"\(fixture.schema)\".team")
            #expect(try rows[0].decode(Int.self, at: 0) == 4)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// 10,000 rows in one round trip: one object each, in order, keys and defaults read
    /// back, rows that leave a key out taking its default, to-ones given as objects joining
    /// the loaded set; a column without an array mapping (a date) goes as multi-row VALUES.
    @Test func tenThousandRowsGoInOneRoundTrip() throws {
        try Self.withLeague { fixture in
            let context = fixture.context
            let red = try #require(try context.object("team", primaryKey: 1))
            let redPlayers = try red.objects(forKey: "player")
            let rows: [[String: Any?]] = (0..<10_000).map { n in
                n % 2 == 0 ? ["name": "P\(n)", "score": n, "team": red] : ["name": "P\(n)", "nickname": nil]
            }
            let before = context.connection.roundTrips
            var made: [DatabaseObject] = []
            let sql = try fixture.sql { made = try context.insert("player", rows: rows) }
            #expect(context.connection.roundTrips - before <= 2)
            #expect(sql.count == 2 && sql.allSatisfy { $0.contains("FROM (SELECT unnest($1) AS c0, ") })
            #expect(made.count == 10_000)
            #expect(try made[0].value(forKey: "name") as? String == "P0")
            #expect(try made[9_999].value(forKey: "name") as? String == "P9999")
            #expect(try made[1].value(forKey: "score") as? Int == 0)   // the default
            #expect(try made[2].value(forKey: "score") as? Int == 2)
            #expect(try made[1].value(forKey: "joined") is Date)
            let ids = try made.map { try #require($0.value(forKey: "id") as? Int) }
            #expect(Set(ids).count == 10_000)
            #expect(redPlayers.count == 2 + 5_000)
            #expect(try context.object("player", primaryKey: ids[42]) === made[42])

            // A date column: multi-row VALUES.
            let dated = try fixture.sql {
                _ = try context.insert("player", rows: [["name": "Old", "joined": Date(timeIntervalSince1970: 0)], ["name": "New", "joined": nil]])
            }
            #expect(dated.count == 1 && dated[0].contains("VALUES ($1, $2), ($3, $4)"))
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A row the database refuses (a NOT NULL column given nil): nothing of any row is
    /// written, and memory holds no new object.
    @Test func aRefusedRowLeavesNothingWritten() throws {
        try Self.withLeague { fixture in
            let context = fixture.context
            let red = try #require(try context.object("team", primaryKey: 1))
            let redPlayers = try red.objects(forKey: "player")
            let error = try #require(throws: RelateError.self) {
                try context.insert("player", rows: [["name": "Ok", "team": red], ["score": 3], ["name": nil, "team": red]])
            }
            #expect(error.postgresError?.sqlState == .notNullViolation)
            let rows = try context.connection.query("SELECT count(*)::int FROM \"\(fixture.schema)\".player")
            #expect(try rows[0].decode(Int.self, at: 0) == 6)
            #expect(redPlayers.count == 2)
            #expect(try context.fetch(FetchRequest("player")).count == 6)
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A context that does not autocommit: the writes by condition and the bulk insert are
    /// pending, one undo step each, and `save()` sends them; an expression is refused.
    @Test func pendingWritesByConditionWaitForSave() throws {
        try Self.withLeague { fixture in
            let context = fixture.context
            context.autocommits = false
            var counts: [Int] = []
            let sent = try fixture.sql {
                counts.append(try context.update("player", where: Key("team.name") == "red", values: ["score": 0]))
                counts.append(try context.delete("player", where: Key("name") == "Fay"))
                counts.append(try context.insert("player", rows: [["name": "Gil"], ["name": "Hal"]]).count)
            }
            #expect(counts == [2, 1, 2])
            #expect(sent.allSatisfy { $0.hasPrefix("SELECT") })
            #expect(context.updatedObjects.count == 2 && context.deletedObjects.count == 1 && context.insertedObjects.count == 2)
            let expression = try #require(throws: RelateError.self) {
                try context.update("player", where: .always, values: ["score": Key("score") + 1])
            }
            #expect(expression.kind == .invalidWrite && expression.key == "score")
            try context.undo()
            #expect(context.insertedObjects.isEmpty)
            try context.save()
            let rows = try context.connection.query("SELECT count(*)::int, sum(score)::int FROM \"\(fixture.schema)\".player")
            #expect(try rows[0].decode(Int.self, at: 0) == 5)
            #expect(try rows[0].decode(Int.self, at: 1) == 3 + 4 + 50)
        }
    }
}
