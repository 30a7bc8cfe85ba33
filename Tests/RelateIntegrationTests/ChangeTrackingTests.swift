import Foundation
import InMemoryTracing
import Testing

@testable import Relate

/// Change tracking with triggers and NOTIFY, and by logical decoding: what another client
/// commits reaches the context's objects and loaded sets, whole transactions only. Each test
/// has a database of its own, since `relate enable` installs once per database.
@Suite struct ChangeTrackingTests {
    /// A database of its own with the schema, tracking by `mechanism` turned on, and an
    /// observing context with everything loaded.
    static func withTrackedDatabase(
        _ mechanism: ChangeTracking.Mechanism, _ body: (_ url: String, _ setup: Connection, _ observer: Observer) throws -> Void
    ) throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(schema)
            try enable(mechanism, on: setup)
            try body(url, setup, try Observer(url: url, mechanism: mechanism))
        }
    }

    static func enable(_ mechanism: ChangeTracking.Mechanism, on connection: Connection) throws {
        switch mechanism {
        case .triggers: try ChangeTracking.enable(on: connection)
        case .logicalDecoding: try ChangeTracking.enable(logicalDecodingOn: connection)
        }
    }

    static let schema = """
        CREATE TABLE person (id serial PRIMARY KEY, firstname varchar(255), surname varchar(255));
        CREATE TABLE email (id serial PRIMARY KEY, address varchar(255), person_id integer CONSTRAINT person REFERENCES person (id) ON DELETE CASCADE);
        CREATE TABLE title (id serial PRIMARY KEY, name varchar(255));
        CREATE TABLE person_title_rel (person_id integer REFERENCES person (id) ON DELETE CASCADE,
            title_id integer REFERENCES title (id) ON DELETE CASCADE, PRIMARY KEY (person_id, title_id));
        INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper'), ('Alan', 'Turing');
        INSERT INTO email (address, person_id) VALUES ('ada@example.com', 1), ('ada@work.example', 1), ('grace@example.com', 2);
        INSERT INTO title (name) VALUES ('Countess'), ('Rear Admiral'), ('Doctor');
        INSERT INTO person_title_rel VALUES (1, 1), (2, 2), (2, 3);
        """

    /// A context over the tracked tables, every person with emails and titles loaded.
    final class Observer {
        let context: DatabaseContext
        let url: String
        init(url: String, mechanism: ChangeTracking.Mechanism) throws {
            self.url = url
            context = try DatabaseContext(url: url)
            try context.startTrackingChanges(using: mechanism)
            let people = try context.fetch("person")
            try context.prefetch(["email", "title"], for: people)
            for title in try context.fetch("title") { _ = try title.objects(forKey: "person") }
        }

        /// Applies changes until none has come for a moment, waiting longer for the first
        /// (logical decoding sends what the server has flushed: up to `wal_writer_delay`
        /// later on a server with `synchronous_commit=off`).
        func settle() throws -> [Change] {
            var all = try context.waitForChanges(timeout: .seconds(5))
            while true {
                let changes = try context.waitForChanges(timeout: .milliseconds(500))
                if changes.isEmpty { return all }
                all += changes
            }
        }

        /// What differs between memory and a fresh read of the database.
        func disagreements() throws -> [String] {
            try ObjectFixture.disagreements(of: context, with: try DatabaseContext(url: url))
        }
    }

    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func anotherClientsCommitsReachLoadedObjectsAndSets(_ mechanism: ChangeTracking.Mechanism) throws {
        try Self.withTrackedDatabase(mechanism) { url, setup, observer in
            let context = observer.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let adas = try ada.objects(forKey: "email")
            var seenByAda: [Change] = []
            context.observe(ada) { seenByAda.append($0) }

            let other = try Connection(url: url)
            try other.transaction {
                try other.execute("UPDATE person SET surname = 'King' WHERE id = 1")
                try other.execute("UPDATE email SET person_id = 2 WHERE id = 2")
                try other.execute("INSERT INTO email (address, person_id) VALUES ('ada@new.example', 1)")
                try other.execute("DELETE FROM email WHERE id = 3")
                try other.execute("INSERT INTO person_title_rel VALUES (3, 3)")
                try other.execute("DELETE FROM person_title_rel WHERE person_id = 2 AND title_id = 2")
            }
            // Rolled back: never seen.
            try? other.transaction {
                try other.execute("UPDATE person SET surname = 'Never' WHERE id = 3")
                throw CancellationError()
            }
            let changes = try observer.settle()
            #expect(changes.contains { $0.entity == "person" && $0.kind == .update && $0.changedKeys == ["surname"] })
            #expect(changes.contains { $0.entity == "email" && $0.kind == .delete })
            #expect(!changes.contains { $0.entity == "person" && ($0.primaryKey.first as? Int) == 3 })
            #expect(try ada.value(forKey: "surname") as? String == "King")
            #expect(try ada.objects(forKey: "email") === adas)
            #expect(adas.allObjects.compactMap { try? $0.value(forKey: "address") as? String }.sorted() == ["ada@example.com", "ada@new.example"])
            #expect(try observer.disagreements() == [])
            #expect(seenByAda.map(\.description) == ["update person (surname)"])

            // The context's own writes are not applied again: once another client's later
            // commit has come, nothing but it was answered.
            let mine = try context.insert("email", values: ["address": "mine@example.com", "person": ada])
            try mine.setValue("mine@work.example", forKey: "address")
            try other.execute("UPDATE title SET name = 'Lady' WHERE id = 1")
            #expect(try observer.settle().map(\.description) == ["update title (name)"])
            #expect(try observer.disagreements() == [])
        }
    }

    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func aRandomWorkloadOfAnotherClientLeavesNoDisagreement(_ mechanism: ChangeTracking.Mechanism) throws {
        try Self.withTrackedDatabase(mechanism) { url, setup, observer in
            try Self.randomWorkload(on: try Connection(url: url), seed: 11, operations: 1_000, surname: { "S\($0)" }, catchUpOneIn: 20) {
                _ = try observer.context.processChanges()
            }
            _ = try observer.settle()
            #expect(try observer.disagreements() == [])
        }
    }

    /// Another client's random workload on the schema: transactions of 1–10 statements
    /// (updates, inserts, deletes, foreign keys moved, helper rows added and removed), a
    /// fifth of them rolled back; `catchUp` runs after one transaction in `catchUpOneIn`.
    /// `surname(n)` names the surname the n-th operation writes.
    static func randomWorkload(
        on other: Connection, seed: UInt64, operations total: Int, surname: (Int) -> String, catchUpOneIn: Int,
        _ catchUp: () throws -> Void
    ) throws {
        var random = ConditionPropertyTests.Generator(state: seed)
        var operations = 0
        while operations < total {
            let statements = Int.random(in: 1...10, using: &random)
            let rollBack = Int.random(in: 0..<5, using: &random) == 0
            try? other.transaction {
                for _ in 0..<statements {
                    let person = Int.random(in: 1...6, using: &random)
                    let sql: String
                    switch Int.random(in: 0..<8, using: &random) {
                    case 0: sql = "INSERT INTO person (firstname, surname) VALUES ('P', '\(surname(operations))')"
                    case 1: sql = "UPDATE person SET surname = '\(surname(operations))' WHERE id = \(person)"
                    case 2: sql = "INSERT INTO email (address, person_id) SELECT 'e\(operations)@x', id FROM person WHERE id = \(person)"
                    case 3: sql = "UPDATE email SET person_id = (SELECT id FROM person WHERE id = \(person)) WHERE id = (SELECT min(id) FROM email WHERE id % 5 = \(operations % 5))"
                    case 4: sql = "DELETE FROM email WHERE id = (SELECT max(id) FROM email WHERE id % 3 = \(operations % 3))"
                    case 5: sql = "INSERT INTO person_title_rel SELECT \(person), \(Int.random(in: 1...3, using: &random)) FROM person WHERE id = \(person) ON CONFLICT DO NOTHING"
                    case 6: sql = "DELETE FROM person_title_rel WHERE person_id = \(person)"
                    default: sql = "DELETE FROM person WHERE id = (SELECT max(id) FROM person) AND id > 6"
                    }
                    try other.execute(sql)
                    operations += 1
                }
                if rollBack { throw CancellationError() }
            }
            // Now and then the observer catches up in the middle of the workload.
            if Int.random(in: 0..<catchUpOneIn, using: &random) == 0 { try catchUp() }
        }
    }

    @Test func enablingTwiceThenDisablingLeavesTheCatalogAsItWas() throws {
        try TestDatabase.withDatabase { url in
            let connection = try Connection(url: url)
            try connection.executeScript(Self.schema)
            let catalog = """
                SELECT string_agg(item, E'\\n' ORDER BY item) FROM (
                  SELECT 'schema ' || nspname AS item FROM pg_namespace
                  UNION ALL SELECT 'class ' || c.oid::regclass::text || ' ' || relkind::text FROM pg_class c
                    JOIN pg_namespace n ON n.oid = relnamespace WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
                  UNION ALL SELECT 'trigger ' || tgname || ' on ' || tgrelid::regclass::text FROM pg_trigger
                  UNION ALL SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p
                    JOIN pg_namespace n ON n.oid = pronamespace WHERE nspname NOT IN ('pg_catalog', 'information_schema')
                ) items
                """
            let before = try connection.query(catalog)[0].decode(String.self, at: 0)
            #expect(try !ChangeTracking.isEnabled(on: connection))
            let error = #expect(throws: RelateError.self) { try DatabaseContext(url: url).processChanges() }
            #expect(error?.message.contains("relate enable") == true)

            let tables = try ChangeTracking.enable(on: connection)
            #expect(tables == ["email", "person", "person_title_rel", "title"])
            try ChangeTracking.enable(on: connection)
            #expect(try connection.query("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'relate_%'")[0].decode(Int.self, at: 0) == 16)
            // Relate's own schema is not part of the model.
            #expect(try DatabaseContext(url: url, schemas: ["public"]).model.entities.map(\.name).sorted() == ["email", "person", "person_title_rel", "title"])
            #expect(try ChangeTracking.disable(on: connection).count == 4)
            #expect(try connection.query(catalog)[0].decode(String.self, at: 0) == before)
        }
    }

    /// The feed's connection is killed between two commits of another client: the feed
    /// opens a new one and the context reads everything again, so nothing stays stale.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func aKilledFeedConnectionReconnectsAndRefreshes(_ mechanism: ChangeTracking.Mechanism) throws {
        try Self.withTrackedDatabase(mechanism) { url, setup, observer in
            let other = try Connection(url: url)
            try other.execute("UPDATE person SET surname = 'Before' WHERE id = 1")
            #expect(try observer.settle().map(\.description) == ["update person (surname)"])
            try other.execute("UPDATE person SET surname = U&'Caf\\00E9' WHERE id = 2")
            #expect(try observer.settle().map(\.description) == ["update person (surname)"])

            // Every backend of this database but the context's and the test's: the feed's.
            let killed = try other.query(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> ALL($1)",
                [[observer.context.connection.backendProcessID, other.backendProcessID, setup.backendProcessID]])[0].decode(Int.self, at: 0)
            #expect(killed == 1)
            // Committed while nobody listens: only the refresh after the reconnect sees it.
            // The new surname differs from the old in its bytes alone (a decomposed `é`),
            // which the refresh's comparison of values as they print took for no change.
            try other.execute("UPDATE person SET surname = U&'Cafe\\0301' WHERE id = 2")
            try other.execute("DELETE FROM email WHERE id = 3")
            var changes: [Change] = []
            for _ in 0..<50 where changes.isEmpty {
                changes = try observer.context.waitForChanges(timeout: .milliseconds(100))
            }
            #expect(changes.contains { $0.entity == "person" && $0.changedKeys == ["surname"] })
            #expect(try observer.disagreements() == [])
            // And the new connection carries what comes next.
            try other.execute("UPDATE person SET surname = 'After' WHERE id = 3")
            #expect(try observer.settle().map(\.description) == ["update person (surname)"])
            #expect(try observer.disagreements() == [])
        }
    }

    /// A table's definition changes under a context: the next `processChanges()` says to
    /// reload the model instead of applying rows it would misread.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func anAlteredTableAsksForTheModelToBeReloaded(_ mechanism: ChangeTracking.Mechanism) throws {
        try Self.withTrackedDatabase(mechanism) { url, setup, observer in
            try setup.execute("ALTER TABLE person ADD COLUMN nickname text")
            try setup.execute("UPDATE person SET nickname = 'Ada' WHERE id = 1")
            var caught: RelateError?
            for _ in 0..<50 where caught == nil {
                do { _ = try observer.context.waitForChanges(timeout: .milliseconds(100)) } catch let error as RelateError { caught = error }
            }
            #expect(caught?.kind == .schemaChanged)
            #expect(caught?.entity == "person")
            #expect(caught?.message.contains("reload the model") == true)
        }
    }

    /// Where `relate enable` ran as a superuser, its event triggers tell of every definition
    /// change, so the trigger feed reads the catalog once at the start and then only after
    /// DDL (or a forged `{"ddl":1}`, which costs one read and changes nothing); without them
    /// (dropped here, as when another role ran `enable`) it reads the catalog at every batch
    /// that names a table. Both see an altered table.
    @Test func theCatalogIsReadAfterDefinitionChangesOnly() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(Self.schema)
            try Self.enable(.triggers, on: setup)
            let context = try DatabaseContext(url: url)
            func feed() throws -> NotificationFeed {
                try #require(try makeChangeFeed(on: try Connection(url: url), layout: context.layout, mechanism: .triggers) as? NotificationFeed)
            }
            /// Each batch received until `notices` changes or a schema change came, waiting at most 5 s.
            func receive(_ feed: NotificationFeed, notices: Int) throws -> (batches: Int, notices: Int, altered: [String]) {
                var (batches, seen, altered) = (0, 0, [String]())
                let deadline = ContinuousClock.now + .seconds(5)
                while seen < notices, altered.isEmpty, ContinuousClock.now < deadline {
                    try feed.waitForInput(timeout: .milliseconds(100))
                    let events = try feed.receive()
                    if !events.isEmpty { batches += 1 }
                    for event in events {
                        switch event {
                        case .changes(let list, _): seen += list.count
                        case .schemaChanged(_, let table, _): altered.append(table)
                        case .gap, .editMarks: break
                        }
                    }
                }
                return (batches, seen, altered)
            }
            let told = try feed()
            for id in 1...3 { try setup.execute("UPDATE person SET surname = surname || 'x' WHERE id = $1", [id]) }
            #expect(try receive(told, notices: 3).notices == 3)
            #expect(told.catalogChecks == 1)
            for id in 1...3 { try setup.execute("UPDATE title SET name = name || 'x' WHERE id = $1", [id]) }
            #expect(try receive(told, notices: 3).notices == 3)
            #expect(told.catalogChecks == 1)
            try setup.execute(#"NOTIFY relate_changes, '{"ddl":1}'"#)
            try setup.execute("UPDATE person SET surname = 'Hopper' WHERE id = 2")
            let forged = try receive(told, notices: 1)
            #expect(forged.notices == 1 && forged.altered.isEmpty)
            #expect(told.catalogChecks == 2)
            try setup.execute("ALTER TABLE person ADD COLUMN nickname text")
            try setup.execute("UPDATE person SET nickname = 'Ada' WHERE id = 1")
            #expect(try receive(told, notices: 1).altered == ["person"])
            #expect(told.catalogChecks == 3)

            try setup.execute("DROP EVENT TRIGGER relate_ddl")
            let asking = try feed()
            var batches = 0
            for id in 1...3 {
                try setup.execute("UPDATE title SET name = name || 'y' WHERE id = $1", [id])
                batches += try receive(asking, notices: 1).batches
            }
            #expect(asking.catalogChecks == batches)
            try setup.execute("ALTER TABLE title ADD COLUMN rank int")
            try setup.execute("UPDATE title SET rank = 1 WHERE id = 1")
            #expect(try receive(asking, notices: 1).altered == ["title"])
        }
    }

    /// A schema whose name holds a dot: a change reaches memory, and a changed definition
    /// names the table (the feed keeps schema and table apart, never as `schema.table`).
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func aSchemaWhoseNameHasADotIsTracked(_ mechanism: ChangeTracking.Mechanism) throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(#"""
                CREATE SCHEMA "a.b";
                CREATE TABLE "a.b".person (id serial PRIMARY KEY, surname text);
                INSERT INTO "a.b".person (surname) VALUES ('Lovelace');
                """#)
            switch mechanism {
            case .triggers: _ = try ChangeTracking.enable(on: setup, schemas: ["a.b"])
            case .logicalDecoding: _ = try ChangeTracking.enable(logicalDecodingOn: setup, schemas: ["a.b"])
            }
            let context = try DatabaseContext(url: url, schemas: ["a.b"])
            try context.startTrackingChanges(using: mechanism)
            let ada = try #require(try context.object("person", primaryKey: 1))
            try setup.execute(#"UPDATE "a.b".person SET surname = 'King'"#)
            for _ in 0..<50 where try ada.value(forKey: "surname") as? String != "King" {
                _ = try context.waitForChanges(timeout: .milliseconds(100))
            }
            #expect(try ada.value(forKey: "surname") as? String == "King")

            try setup.execute(#"ALTER TABLE "a.b".person ADD COLUMN nickname text"#)
            try setup.execute(#"UPDATE "a.b".person SET nickname = 'Ada'"#)
            var caught: RelateError?
            for _ in 0..<50 where caught == nil {
                do { _ = try context.waitForChanges(timeout: .milliseconds(100)) } catch let error as RelateError { caught = error }
            }
            #expect(caught?.kind == .schemaChanged)
            #expect(caught?.entity == "person")
        }
    }

    /// A table's trigger names its key columns in SQL of its own: a key column renamed after
    /// `relate enable` must not make writers fail (the notification comes without keys, and
    /// the context learns that the table changed), and columns named like the trigger's
    /// own variables are read as columns.
    @Test func triggersSurviveARenamedKeyAndColumnsNamedLikeTheirVariables() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("""
                CREATE TABLE note (keys int, payload text, stored int, changed int, n int, r int, PRIMARY KEY (keys, payload));
                INSERT INTO note VALUES (1, 'a', 0), (2, 'b', 0);
                """)
            try ChangeTracking.enable(on: setup)
            let context = try DatabaseContext(url: url)
            try context.startTrackingChanges(using: .triggers)
            let note = try #require(try context.fetch("note").first { try $0.value(forKey: "keys", as: Int.self) == 1 })
            try setup.execute("UPDATE note SET stored = 7 WHERE keys = 1")
            let changes = try context.waitForChanges(timeout: .seconds(5))
            #expect(changes.map(\.kind) == [.update])
            #expect(try note.value(forKey: "stored", as: Int.self) == 7)

            try setup.execute("UPDATE note SET changed = 1, n = 2, r = 3 WHERE keys = 1")
            #expect(try context.waitForChanges(timeout: .seconds(5)).map(\.kind) == [.update])
            try setup.execute("ALTER TABLE note RENAME COLUMN payload TO body")
            #expect(try setup.execute("UPDATE note SET stored = 8 WHERE keys = 2") == 1)
            var caught: RelateError?
            for _ in 0..<50 where caught == nil {
                do { _ = try context.waitForChanges(timeout: .milliseconds(100)) } catch let error as RelateError { caught = error }
            }
            #expect(caught?.kind == .schemaChanged)
            #expect(caught?.message.contains("keys, body, stored, changed, n, r") == true)
        }
    }

    /// An update of one row names the columns whose values it changed (generated ones
    /// apart), none when it changed none; one of several rows names none. A trigger made
    /// before a column was added compares fewer columns than the model read afterwards has:
    /// its list is not taken, since the new column may have changed.
    @Test func anUpdateOfOneRowNamesTheColumnsItChanged() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("""
                CREATE TABLE item (id int PRIMARY KEY, value int, label text, j json, g int GENERATED ALWAYS AS (value * 2) STORED);
                INSERT INTO item (id, value, label, j) SELECT i, 0, 'item ' || i, '{"a":1}' FROM generate_series(1, 5) i;
                """)
            try ChangeTracking.enable(on: setup)
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            func changed(after statements: [String]) async throws -> [[String]?] {
                let changes = try await database.changes(using: .triggers)
                for statement in statements { try setup.execute(statement) }
                var received: [[String]?] = []
                for try await committed in changes {
                    received += committed.changes.map(\.changedColumns)
                    if received.count >= statements.count { break }
                }
                return received
            }
            let received = try await changed(after: [
                "UPDATE item SET value = 5 WHERE id = 1",
                "UPDATE item SET label = label, j = '{\"a\": 1}' WHERE id = 2",
                "UPDATE item SET label = 'two' WHERE id IN (3, 4)",
            ])
            // json has no equality: its bytes changed (a space), so it did.
            #expect(received == [["value"], ["j"], nil, nil])
            try setup.execute("ALTER TABLE item ADD COLUMN extra int")
            try await database.reloadModel()
            #expect(try await changed(after: ["UPDATE item SET extra = 1 WHERE id = 5"]) == [nil])
        }
    }

    /// Logical decoding names the columns an update changed when the table's replica
    /// identity is `FULL` (pgoutput then sends the whole row before), by their text forms;
    /// under the default identity (only the key before, when it changed), against the row
    /// the slot's snapshot held (``logicalDecodingNamesChangedColumnsAgainstTheRowItLastSaw()``).
    @Test func logicalDecodingNamesChangedColumnsUnderAFullReplicaIdentity() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("""
                CREATE TABLE item (id int PRIMARY KEY, value int, label text, g int GENERATED ALWAYS AS (value * 2) STORED);
                CREATE TABLE plain (id int PRIMARY KEY, value int);
                INSERT INTO item (id, value, label) SELECT i, 0, 'item ' || i FROM generate_series(1, 5) i;
                INSERT INTO plain VALUES (1, 0);
                ALTER TABLE item REPLICA IDENTITY FULL;
                """)
            try ChangeTracking.enable(logicalDecodingOn: setup)
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            let changes = try await database.changes(using: .logicalDecoding)
            for statement in [
                "UPDATE item SET value = 5 WHERE id = 1", "UPDATE item SET label = label WHERE id = 2",
                "UPDATE item SET label = 'x', id = 10 WHERE id = 3", "UPDATE plain SET value = 1",
                // The same letter composed, then decomposed: equal to Swift's `==`, two values to the server.
                "UPDATE item SET label = U&'\\00E9' WHERE id = 4", "UPDATE item SET label = U&'e\\0301' WHERE id = 4",
            ] {
                try setup.execute(statement)
            }
            var received: [[String]?] = []
            for try await committed in changes {
                received += committed.changes.map(\.changedColumns)
                if received.count >= 6 { break }
            }
            #expect(received == [["value"], [], ["id", "label"], ["value"], ["label"], ["label"]])
        }
    }

    /// Logical decoding may send a commit before the transaction is visible to other
    /// snapshots (its record is flushed first; with synchronous replication, long before).
    /// The feed holds a transaction until a new snapshot sees it: the statement that asks
    /// names a running transaction, and no longer once it committed; a transaction id of
    /// the epoch before the snapshot's, or long finished, reads as seen.
    @Test func theFeedAsksWhetherASnapshotSeesATransaction() async throws {
        try await TestDatabase.withDatabase { url in
            let (writer, asker) = (try Connection(url: url), try Connection(url: url))
            try writer.execute("CREATE TABLE item (id int PRIMARY KEY)")
            func unseen(_ ids: [Int]) throws -> [Int] {
                try asker.queryPrepared(LogicalDecodingFeed.notVisibleSQL, [ids]).map { try $0.decode(Int.self, at: 0) }
            }
            try writer.execute("BEGIN")
            try writer.execute("INSERT INTO item VALUES (1)")
            let running = try writer.query("SELECT pg_current_xact_id()::text::int8 & 4294967295")[0].decode(Int.self, at: 0)
            #expect(try unseen([running, 3]) == [running])
            try writer.execute("COMMIT")
            #expect(try unseen([running, 3]) == [])
        }
    }

    /// A table `item` holding `(1, 'before')` on the server at `url`, logical decoding enabled,
    /// and a database's logical feed of it, listening (the caller closes the database).
    private static func logicalFeedOfOneItem(_ url: String) async throws -> (
        setup: Connection, database: Database, changes: AsyncThrowingStream<CommittedChanges, any Error>
    ) {
        let setup = try Connection(url: url)
        try setup.executeScript("DROP TABLE IF EXISTS item; CREATE TABLE item (id int PRIMARY KEY, title text); INSERT INTO item VALUES (1, 'before');")
        try ChangeTracking.enable(logicalDecodingOn: setup)
        let database = try Database(url: url, maxConnections: 1)
        do {
            return (setup, database, try await database.changes(using: .logicalDecoding))
        } catch {
            database.close()
            throw error
        }
    }

    /// ``logicalFeedOfOneItem(_:)`` on `url`, a server of the test's own, whose commits then
    /// wait for the synchronous standbys `standbys` names.
    private static func logicalFeedOfOneItem(_ url: String, waitingFor standbys: String) async throws -> (
        setup: Connection, database: Database, changes: AsyncThrowingStream<CommittedChanges, any Error>
    ) {
        let (setup, database, changes) = try await logicalFeedOfOneItem(url)
        do {
            try setup.execute("ALTER SYSTEM SET synchronous_standby_names = \(try setup.quoteLiteral(standbys))")
            _ = try setup.query("SELECT pg_reload_conf()")
        } catch {
            database.close()
            throw error
        }
        return (setup, database, changes)
    }

    /// Logical decoding under synchronous replication, on one server of its own for both
    /// cases (each `initdb` costs seconds, more under the parallel run).
    @Test func logicalDecodingUnderSynchronousReplication() async throws {
        let servers = try TestServers("single", options: "-c wal_level=logical -c max_replication_slots=4 -c max_wal_senders=4")
        let url = servers.url(port: servers.ports[0])
        try await handsOverATransactionOnceItIsVisible(url)
        try await acknowledgesAtOnceForCommitsThatWaitOnIt(url)
        try await liveQueriesReadACommitOnceItIsVisible(url)
        withExtendedLifetime(servers) {}
    }

    /// The live queries' feed hands a transaction over as its commit comes, visible or not;
    /// the round that reads because of it asks first, in its round trip, whether a snapshot
    /// sees it, and when none does yet, waits until one does and reads then. Read at once,
    /// the group found the row as it was before, no change, and kept that answer for good
    /// (no later commit tells it otherwise).
    private func liveQueriesReadACommitOnceItIsVisible(_ url: String) async throws {
        let setup = try Connection(url: url)
        try setup.executeScript("DROP TABLE IF EXISTS item; CREATE TABLE item (id int PRIMARY KEY, title text); INSERT INTO item VALUES (1, 'before');")
        try ChangeTracking.enable(logicalDecodingOn: setup)
        let tracer = InMemoryTracer()
        var configuration = Configuration(maxConnections: 2)
        configuration.tracer = tracer
        let database = try Database(url: url, configuration: configuration)
        defer { database.close() }
        let titles = DatabaseObserveTests.Collector(try await database.observe(FetchRequest("item")))
        let first = try await titles.wait(for: 1)
        #expect(first.first?.rows.map { $0.values["title"] as? String } == ["before"])
        try setup.execute("ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
        _ = try setup.query("SELECT pg_reload_conf()")
        // Whatever fails below, the server's commits stop waiting.
        defer {
            _ = try? setup.execute("ALTER SYSTEM RESET synchronous_standby_names")
            _ = try? setup.query("SELECT pg_reload_conf()")
        }
        let committed = Self.commitWaitingForAStandby(url)
        for _ in 0..<100 {
            if try setup.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")[0].decode(Int.self, at: 0) == 1 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Decoded, handed over and asked about while the commit waits: no answer comes.
        try await Task.sleep(for: .seconds(1))
        #expect(titles.snapshots.withLock { $0.count } == 1)
        let asked = tracer.finishedSpans.filter { span in
            guard case .string(let text) = span.attributes.get("db.query.text") else { return false }
            return text.contains("pg_visible_in_snapshot")
        }.count
        #expect(asked > 1, "a round found the commit not visible and asked again")
        try setup.execute("ALTER SYSTEM RESET synchronous_standby_names")
        _ = try setup.query("SELECT pg_reload_conf()")
        await committed.wait()
        let after = try await titles.wait(for: 2, timeout: .seconds(20))
        #expect(after.last?.rows.map { $0.values["title"] as? String } == ["after"])
    }

    /// Sets item 1's title to `after` on a thread of its own, whose commit waits for the
    /// synchronous standby; the signal fires once the commit returned.
    private static func commitWaitingForAStandby(_ url: String) -> BackgroundTasks.Signal {
        let committed = BackgroundTasks.Signal()
        Thread {
            if let writer = try? Connection(url: url) {
                // A reload reaches each backend, and the checkpointer that tells commits a
                // standby is named, in its own time (loaded runs committed without waiting,
                // twice): the writer first commits empty transactions, each given 100 ms,
                // until one waits that long (a wait cancelled keeps the commit, with a warning).
                _ = try? writer.execute("SET synchronous_commit = on")
                _ = try? writer.execute("SET statement_timeout = 100")
                for _ in 0..<100 {
                    let started = ContinuousClock.now
                    _ = try? writer.transaction { _ = try writer.query("SELECT txid_current()") }
                    if ContinuousClock.now - started >= .milliseconds(90) { break }
                    Thread.sleep(forTimeInterval: 0.02)
                }
                _ = try? writer.execute("SET statement_timeout = 0")
                _ = try? writer.execute("UPDATE item SET title = 'after' WHERE id = 1")
            }
            committed.fire()
        }.start()
        return committed
    }

    /// With synchronous replication, a commit waits for a standby after its record is
    /// flushed, and logical decoding sends it meanwhile: a read then still sees the row as it
    /// was. The feed hands the transaction over only once it is visible (the standby named
    /// never comes, and every commit of the server waits for it).
    private func handsOverATransactionOnceItIsVisible(_ url: String) async throws {
        let (setup, database, changes) = try await Self.logicalFeedOfOneItem(url, waitingFor: "nobody")
        defer { database.close() }
        let committed = Self.commitWaitingForAStandby(url)
        let started = ContinuousClock.now
        let delivered = Task { () -> (Duration, String?) in
            for try await transaction in changes where !transaction.changes.isEmpty {
                let title = try await database.read { context in
                    try context.fetch(FetchRequest("item")).first?.value(forKey: "title") as? String
                }
                return (ContinuousClock.now - started, title)
            }
            return (.zero, nil)
        }
        // Decoded and flushed, not visible: nothing is handed over meanwhile.
        for _ in 0..<100 {
            if try setup.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")[0].decode(Int.self, at: 0) == 1 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .seconds(1))
        #expect(try setup.query("SELECT title FROM item")[0].decode(String.self, at: 0) == "before")
        try setup.execute("ALTER SYSTEM RESET synchronous_standby_names")
        _ = try setup.query("SELECT pg_reload_conf()")
        await committed.wait()
        let (after, title) = try await delivered.value
        #expect(after >= .seconds(1))
        #expect(title == "after")
    }

    /// A logical feed's walsender may be chosen as a synchronous standby (`*` names every
    /// walsender, whatever its `application_name`): every commit of the server then waits
    /// for the feed to acknowledge it. So the feed acknowledges what it read at once, not
    /// on a timer (once a second, tried for its fewer wake-ups, made each commit wait up
    /// to a second).
    private func acknowledgesAtOnceForCommitsThatWaitOnIt(_ url: String) async throws {
        let (setup, database, changes) = try await Self.logicalFeedOfOneItem(url, waitingFor: "*")
        defer { database.close() }
        var chosen = false
        for _ in 0..<100 where !chosen {
            chosen = try setup.query("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")[0].decode(Int.self, at: 0) == 1
            if !chosen { try await Task.sleep(for: .milliseconds(20)) }
        }
        // Else the commits below would wait for a standby that never answers.
        try #require(chosen, "the feed's walsender is the synchronous standby")
        let writer = try Connection(url: url)
        let started = ContinuousClock.now
        for round in 1...20 { try writer.execute("UPDATE item SET title = 'after \(round)' WHERE id = 1") }
        let elapsed = ContinuousClock.now - started
        // Acknowledged at once, 20 commits take milliseconds; once a second, 20 seconds.
        #expect(elapsed < .seconds(5), "20 commits waiting on the feed took \(elapsed)")
        try setup.execute("ALTER SYSTEM RESET synchronous_standby_names")
        _ = try setup.query("SELECT pg_reload_conf()")
        var received = 0
        for try await transaction in changes where !transaction.changes.isEmpty {
            received += 1
            if received == 20 { break }
        }
        #expect(received == 20)
    }

    /// The connection the logical feed asks about visibility on dies while its stream lives
    /// on (terminated alone): it is opened again, and what commits is handed over still.
    @Test func logicalDecodingAsksAgainOnANewConnectionWhenItsOtherDies() async throws {
        try await TestDatabase.withDatabase { url in
            let (setup, database, changes) = try await Self.logicalFeedOfOneItem(url)
            defer { database.close() }
            let terminated = try setup.query("""
                SELECT count(pg_terminate_backend(pid))::int FROM pg_stat_activity
                 WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
                """)[0].decode(Int.self, at: 0)
            #expect(terminated >= 1)
            try setup.execute("UPDATE item SET title = 'after' WHERE id = 1")
            var received: [Change] = []
            for try await transaction in changes where !transaction.changes.isEmpty {
                received = transaction.changes
                break
            }
            #expect(received.map(\.kind) == [.update])
        }
    }

    /// Under the default replica identity, logical decoding names the columns an update
    /// changed against the last version of the row the feed saw — for a row not changed
    /// since it started, the one its slot's snapshot held (read when it starts): the row's
    /// columns that differ. A value left TOASTed
    /// and unchanged is not a change, and keeps what was seen; a row whose key changed is
    /// compared with its version under the old key; an insert is a version seen.
    @Test func logicalDecodingNamesChangedColumnsAgainstTheRowItLastSaw() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("""
                CREATE TABLE plain (id int PRIMARY KEY, value int, label text, big text);
                ALTER TABLE plain ALTER big SET STORAGE EXTERNAL;
                INSERT INTO plain VALUES (1, 0, 'a', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 200) i));
                """)
            try ChangeTracking.enable(logicalDecodingOn: setup)
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            let changes = try await database.changes(using: .logicalDecoding)
            let statements = [
                "UPDATE plain SET value = 1 WHERE id = 1",  // as the slot's snapshot held it
                "UPDATE plain SET value = 2 WHERE id = 1",
                "UPDATE plain SET label = 'x' WHERE id = 1",
                "UPDATE plain SET label = 'x' WHERE id = 1",
                // The same letter composed, then decomposed: equal to Swift's `==`, two values to the server.
                "UPDATE plain SET label = U&'\\00E9' WHERE id = 1",
                "UPDATE plain SET label = U&'e\\0301' WHERE id = 1",
                "UPDATE plain SET big = (SELECT string_agg(md5((i + 1)::text), '') FROM generate_series(1, 200) i) WHERE id = 1",
                "UPDATE plain SET value = 3 WHERE id = 1",  // big left TOASTed: unchanged
                // The same big value written again, in full: the one seen was kept.
                "UPDATE plain SET big = (SELECT string_agg(md5((i + 1)::text), '') FROM generate_series(1, 200) i) WHERE id = 1",
                "INSERT INTO plain VALUES (2, 0, 'b', NULL)",
                "UPDATE plain SET value = 7 WHERE id = 2",
                "UPDATE plain SET id = 3, label = 'c' WHERE id = 2",
                "UPDATE plain SET value = 8 WHERE id = 3",
                // A policy invalidates the relation: the walsender sends it again, unchanged.
                "CREATE POLICY everyone ON plain USING (true)",
                "UPDATE plain SET value = 9 WHERE id = 3",
                "DELETE FROM plain WHERE id = 3",
                "INSERT INTO plain VALUES (3, 8, 'c', NULL)",
                "UPDATE plain SET label = 'd' WHERE id = 3",
            ]
            let expected: [[String]?] = [["value"], ["value"], ["label"], [], ["label"], ["label"], ["big"], ["value"], [], nil, ["value"], ["id", "label"], ["value"], ["value"], nil, nil, ["label"]]
            for statement in statements { try setup.execute(statement) }
            var received: [[String]?] = []
            for try await committed in changes {
                received += committed.changes.map(\.changedColumns)
                if received.count >= expected.count { break }
            }
            #expect(received == expected)
        }
    }

    /// A column's type altered after the feed's slot was made, its values with it: the rows
    /// the slot's snapshot held are forgotten at the table's first relation message (of
    /// other types), so an update back to a value the snapshot held names no column instead
    /// of none changed. Compared with the snapshot's `bob`, the update from `BOB` would have
    /// changed nothing.
    @Test func logicalDecodingForgetsTheSnapshotsRowsOfAColumnAlteredSince() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("CREATE TABLE person (id int PRIMARY KEY, name varchar(20)); INSERT INTO person VALUES (1, 'bob');")
            try ChangeTracking.enable(logicalDecodingOn: setup)
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            let changes = try await database.changes(using: .logicalDecoding)
            try setup.execute("ALTER TABLE person ALTER name TYPE text USING upper(name)")
            try setup.execute("UPDATE person SET name = 'bob' WHERE id = 1")
            var named: [String]? = ["the stream ended"]
            for try await committed in changes where !committed.changes.isEmpty {
                named = committed.changes[0].changedColumns
                break
            }
            #expect(named == nil)
        }
    }

    /// A server's view: `Database.changes()` streams each committed transaction, a rolled
    /// back one never.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func aDatabaseStreamsCommittedTransactions(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(Self.schema)
            try Self.enable(mechanism, on: setup)
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            let changes = try await database.changes(using: mechanism)
            try? setup.transaction {
                try setup.execute("UPDATE person SET surname = 'Never' WHERE id = 3")
                throw CancellationError()
            }
            try setup.transaction {
                try setup.execute("UPDATE person SET surname = 'King' WHERE id IN (1, 2)")
                try setup.execute("DELETE FROM email WHERE id = 3")
            }
            try await database.write { context in
                _ = try context.insert("title", values: ["id": 9, "name": "Professor"])
            }
            var received: [CommittedChanges] = []
            for try await committed in changes {
                received.append(committed)
                if received.count == 2 { break }
            }
            let described = received.map { $0.changes.map { "\($0.kind) \($0.entity) \($0.primaryKey.map { "\($0 ?? "nil")" })" } }
            #expect(described == [["update person [\"1\"]", "update person [\"2\"]", "delete email [\"3\"]"], ["insert title [\"9\"]"]])
            #expect(received.allSatisfy { !$0.mayHaveMissedChanges })
        }
    }

    @Test func logicalDecodingOnAServerWithoutItSaysWhatToSet() throws {
        let servers = try TestServers("single")
        let connection = try Connection(url: servers.url(port: servers.ports[0]))
        let error = #expect(throws: RelateError.self) { try ChangeTracking.enable(logicalDecodingOn: connection) }
        #expect(error?.message.contains("wal_level=logical") == true)
        #expect(error?.message.contains("wal_level=replica") == true)
    }

    @Test func enablingLogicalDecodingTwiceThenDisablingLeavesTheCatalogAsItWas() throws {
        try TestDatabase.withDatabase { url in
            let connection = try Connection(url: url)
            try connection.executeScript(Self.schema + "CREATE TABLE tag_log (person_id integer, tag text);")
            let catalog = """
                SELECT string_agg(item, E'\\n' ORDER BY item) FROM (
                  SELECT 'class ' || c.oid::regclass::text || ' ' || relkind::text || ' ' || relreplident::text AS item FROM pg_class c
                    JOIN pg_namespace n ON n.oid = relnamespace WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
                  UNION ALL SELECT 'publication ' || pubname FROM pg_publication
                ) items
                """
            let before = try connection.query(catalog)[0].decode(String.self, at: 0)
            #expect(try ChangeTracking.enable(logicalDecodingOn: connection) == ["email", "person", "person_title_rel", "tag_log", "title"])
            try ChangeTracking.enable(logicalDecodingOn: connection)
            // The table without a primary key can still be updated and deleted from.
            try connection.execute("INSERT INTO tag_log VALUES (1, 'x')")
            #expect(try connection.execute("DELETE FROM tag_log") == 1)
            #expect(try connection.query(catalog)[0].decode(String.self, at: 0) != before)
            try ChangeTracking.disable(logicalDecodingOn: connection)
            #expect(try connection.query(catalog)[0].decode(String.self, at: 0) == before)
        }
    }

    @Test func theSQLFileIsTheInstalledSQL() throws {
        let file = TestDatabase.repository.appendingPathComponent("sql/change_tracking.sql")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text == ChangeTracking.installSQL + "\n", "run: swift run relate enable --print-sql > sql/change_tracking.sql")
    }
}
