import Foundation
import Testing

@testable import Relate

/// Units of work whose server connection dies before each of their statements in turn:
/// killed by `pg_terminate_backend` from another connection, or with the whole server
/// stopped by `pg_ctl stop -m immediate` (and started again). Each time the unit must throw
/// an error that says the connection was lost, the database must hold none of the unit
/// (the statement never arrived; what came before it in the unit was one transaction with
/// it), and the objects and loaded sets in memory must not claim what the database does not
/// hold. Prefetch is the one read among them: its sets are loaded whole or not at all.
@Suite struct FaultMatrixTests {
    static let schema = """
        DROP TABLE IF EXISTS person_title, email, title, person;
        CREATE TABLE person (id serial PRIMARY KEY, firstname text, surname text);
        CREATE TABLE email (id serial PRIMARY KEY, address text, person_id int REFERENCES person ON DELETE CASCADE);
        CREATE TABLE title (id serial PRIMARY KEY, name text);
        CREATE TABLE person_title (person_id int REFERENCES person ON DELETE CASCADE,
            title_id int REFERENCES title ON DELETE CASCADE, PRIMARY KEY (person_id, title_id));
        INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper'), ('Alan', 'Turing');
        INSERT INTO email (address, person_id) VALUES ('ada@example.com', 1), ('ada@work.example', 1), ('grace@example.com', 2);
        INSERT INTO title (name) VALUES ('Countess'), ('Rear Admiral'), ('Doctor');
        INSERT INTO person_title VALUES (1, 1), (2, 2), (2, 3);
        """

    /// Every row, as text: what the database holds.
    static let contents = """
        SELECT concat_ws(' | ',
          (SELECT string_agg(concat_ws(':', id, firstname, surname), ',' ORDER BY id) FROM person),
          (SELECT string_agg(concat_ws(':', id, address, person_id), ',' ORDER BY id) FROM email),
          (SELECT string_agg(concat_ws(':', id, name), ',' ORDER BY id) FROM title),
          (SELECT string_agg(concat_ws(':', person_id, title_id), ',' ORDER BY person_id, title_id) FROM person_title))
        """

    struct Unit: CustomTestStringConvertible, Sendable {
        let name: String
        let run: @Sendable (DatabaseContext) throws -> Void
        var testDescription: String { name }
    }

    static let units: [Unit] = [
        Unit(name: "setValue") { context in
            try context.object("person", primaryKey: 1)!.setValue("Byron", forKey: "surname")
        },
        Unit(name: "one-to-many replace (one pipeline)") { context in
            let ada = try context.object("person", primaryKey: 1)!
            try ada.setValue([try context.object("email", primaryKey: 3)!], forKey: "email")
        },
        Unit(name: "many-to-many insert") { context in
            try context.object("person", primaryKey: 1)!.objects(forKey: "title").insert(try context.object("title", primaryKey: 3)!)
        },
        Unit(name: "many-to-many replace (one pipeline)") { context in
            let grace = try context.object("person", primaryKey: 2)!
            try grace.setValue([try context.object("title", primaryKey: 1)!, try context.object("title", primaryKey: 3)!], forKey: "title")
        },
        Unit(name: "cascade delete") { context in
            try context.delete(try context.object("person", primaryKey: 2)!)
        },
        Unit(name: "transaction of several writes") { context in
            try context.transaction {
                let ada = try context.object("person", primaryKey: 1)!
                try ada.setValue("Byron", forKey: "surname")
                _ = try context.insert("email", values: ["address": "countess@example.com", "person": ada])
                try ada.objects(forKey: "title").insert(try context.object("title", primaryKey: 2)!)
            }
        },
        Unit(name: "prefetch") { context in
            let people = try context.fetch("person")
            try context.prefetch(["email", "title"], for: people)
        },
    ]

    /// A context over the schema, everything loaded but the sets `prefetch` loads; then
    /// `unit` run with `kill` called before statement `step` (1-based) of it, or never.
    /// Answers the statements the unit sent, and its error.
    static func run(
        _ unit: Unit, url: String, killBefore step: Int?, kill: @escaping (_ pid: Int) throws -> Void
    ) throws -> (statements: Int, error: (any Error)?) {
        let setup = try Connection(url: url)
        try setup.executeScript(schema)
        let context = try DatabaseContext(url: url)
        if unit.name != "prefetch" {
            let people = try context.fetch("person")
            try context.prefetch(["email", "title"], for: people)
            for title in try context.fetch("title") { _ = try title.objects(forKey: "person") }
            _ = try context.fetch("email")
        }
        let pid = context.connection.backendProcessID
        var sent = 0
        var killFailure: (any Error)?
        context.connection.trace = { _ in
            sent += 1
            guard sent == step else { return }
            do { try kill(pid) } catch { killFailure = error }
        }
        var failure: (any Error)?
        do { try unit.run(context) } catch { failure = error }
        context.connection.trace = nil
        if let killFailure { throw killFailure }
        if step != nil {
            // What memory holds must be what the database holds (nothing of the unit).
            let fresh = try DatabaseContext(url: url)
            let differences = try ObjectFixture.disagreements(of: context, with: fresh)
            #expect(differences == [], "\(unit.name), killed before statement \(step!)")
        }
        return (sent, failure)
    }

    /// The unit once without a fault (how many statements, and that it succeeds), then
    /// killed before each statement.
    static func matrix(_ unit: Unit, url: String, kill: @escaping (_ pid: Int) throws -> Void) throws {
        let clean = try run(unit, url: url, killBefore: nil, kill: kill)
        #expect(clean.error == nil)
        #expect(clean.statements > 0)
        for step in 1...clean.statements {
            let (_, error) = try run(unit, url: url, killBefore: step, kill: kill)
            let relateError = error as? RelateError
            #expect(relateError?.postgresError?.kind == .connectionClosed, "\(unit.name), killed before statement \(step): \(String(describing: error))")
            let after = try Connection(url: url).query(contents)[0].decode(String.self, at: 0)
            try Connection(url: url).executeScript(schema)
            let before = try Connection(url: url).query(contents)[0].decode(String.self, at: 0)
            #expect(after == before, "\(unit.name), killed before statement \(step): the database holds part of the unit")
        }
    }

    @Test(arguments: units)
    func aBackendTerminatedBeforeEachStatement(_ unit: Unit) throws {
        try TestDatabase.withDatabase { url in
            let killer = try Connection(url: url)
            try Self.matrix(unit, url: url) { pid in
                try killer.execute("SELECT pg_terminate_backend($1::int)", [pid])
                // Gone before the statement is sent, so that it meets a closed connection.
                for _ in 0..<200 where try killer.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1::int", [pid]).count > 0 {
                    usleep(10_000)
                }
            }
        }
    }

    /// A row another client holds locked: the write waits until `lock_timeout` (SQLSTATE
    /// 55P03) or `statement_timeout` (57014) ends it, throws that, and memory keeps what
    /// the database keeps.
    @Test(arguments: [("lock_timeout", "55P03"), ("statement_timeout", "57014")])
    func aTimeoutOnALockedRowChangesNothing(_ setting: String, _ sqlState: String) throws {
        try TestDatabase.withDatabase { url in
            try Connection(url: url).executeScript(Self.schema)
            let context = try DatabaseContext(url: url)
            let ada = try #require(try context.object("person", primaryKey: 1))
            let titles = try ada.objects(forKey: "title")
            let other = try Connection(url: url)
            try other.execute("BEGIN")
            try other.execute("SELECT * FROM person WHERE id = 1 FOR UPDATE")
            try context.connection.execute("SET \(setting) = '200ms'")

            var caught: RelateError?
            do { try ada.setValue("Byron", forKey: "surname") } catch let error as RelateError { caught = error }
            #expect(caught?.postgresError?.sqlState?.rawValue == sqlState)
            #expect(try ada.value(forKey: "surname") as? String == "Lovelace")

            // A many-to-many replace whose helper rows reference the locked row (the key
            // share lock its foreign key check takes waits on FOR UPDATE).
            caught = nil
            do { try ada.setValue([try context.object("title", primaryKey: 2)!], forKey: "title") } catch let error as RelateError { caught = error }
            #expect(caught?.postgresError?.sqlState?.rawValue == sqlState)
            #expect(titles.count == 1)

            try other.execute("COMMIT")
            #expect(try ObjectFixture.disagreements(of: context, with: try DatabaseContext(url: url)) == [])
        }
    }

    @Test func aServerStoppedImmediatelyBeforeEachStatement() throws {
        let servers = try TestServers("single")
        let url = servers.url(port: servers.ports[0])
        for unit in Self.units {
            try Self.matrix(unit, url: url) { _ in
                try servers.run("stop-primary")
                try servers.run("restart-primary")
            }
        }
    }
}
