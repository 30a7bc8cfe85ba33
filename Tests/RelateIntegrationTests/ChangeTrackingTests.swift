import Foundation
import Testing

@testable import Relate

/// Change tracking with triggers and NOTIFY: what another client commits reaches the
/// context's objects and loaded sets, whole transactions only. Each test has a database of
/// its own, since `relate enable` installs once per database.
@Suite struct ChangeTrackingTests {
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
        init(url: String) throws {
            self.url = url
            context = try DatabaseContext(url: url)
            try context.startTrackingChanges()
            let people = try context.fetch("person")
            try context.prefetch(["email", "title"], for: people)
            for title in try context.fetch("title") { _ = try title.objects(forKey: "person") }
        }

        /// Applies changes until none has come for a moment.
        func settle() throws -> [Change] {
            var all: [Change] = []
            while true {
                let changes = try context.waitForChanges(timeout: .milliseconds(300))
                if changes.isEmpty { return all }
                all += changes
            }
        }

        /// What differs between memory and a fresh read of the database.
        func disagreements() throws -> [String] {
            try ObjectFixture.disagreements(of: context, with: try DatabaseContext(url: url))
        }
    }

    @Test func anotherClientsCommitsReachLoadedObjectsAndSets() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(Self.schema)
            try ChangeTracking.enable(on: setup)
            let observer = try Observer(url: url)
            let context = observer.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let adas = try ada.objects(forKey: "email")

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

            // The context's own writes are not applied again.
            try context.insert("email", values: ["address": "mine@example.com", "person": ada])
            #expect(try observer.settle().isEmpty)
            #expect(try observer.disagreements() == [])
        }
    }

    @Test func aRandomWorkloadOfAnotherClientLeavesNoDisagreement() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(Self.schema)
            try ChangeTracking.enable(on: setup)
            let observer = try Observer(url: url)
            let other = try Connection(url: url)
            var random = ConditionPropertyTests.Generator(state: 11)
            var operations = 0
            while operations < 1_000 {
                let statements = Int.random(in: 1...10, using: &random)
                let rollBack = Int.random(in: 0..<5, using: &random) == 0
                try? other.transaction {
                    for _ in 0..<statements {
                        let person = Int.random(in: 1...6, using: &random)
                        let sql: String
                        switch Int.random(in: 0..<8, using: &random) {
                        case 0: sql = "INSERT INTO person (firstname, surname) VALUES ('P', 'S\(operations)')"
                        case 1: sql = "UPDATE person SET surname = 'S\(operations)' WHERE id = \(person)"
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
                if Int.random(in: 0..<20, using: &random) == 0 { _ = try observer.context.processChanges() }
            }
            _ = try observer.settle()
            #expect(try observer.disagreements() == [])
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
            #expect(try connection.query("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'relate_%'")[0].decode(Int.self, at: 0) == 12)
            // Relate's own schema is not part of the model.
            #expect(try DatabaseContext(url: url, schemas: ["public"]).model.entities.map(\.name).sorted() == ["email", "person", "person_title_rel", "title"])
            #expect(try ChangeTracking.disable(on: connection).count == 4)
            #expect(try connection.query(catalog)[0].decode(String.self, at: 0) == before)
        }
    }

    @Test func theSQLFileIsTheInstalledSQL() throws {
        let file = TestDatabase.repository.appendingPathComponent("sql/change_tracking.sql")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text == ChangeTracking.installSQL + "\n", "run: swift run relate enable --print-sql > sql/change_tracking.sql")
    }
}
