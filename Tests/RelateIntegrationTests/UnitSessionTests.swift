import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// What a unit's body leaves in its session — a cursor, a temporary table, an advisory
/// lock, a `DISCARD` — never reaches the next unit on the pooled connection: the pool
/// replaces the connection. Each found by a review, each failing before its fix.
@Suite struct UnitSessionTests {
    /// Two tenants of one role on a pool of one connection: tenant 1's write keeps a
    /// holdable cursor over its rows and a temporary table of them; tenant 2 read all 20.
    @Test func aCursorOrTemporaryTableStaysInItsUnit() async throws {
        try await PrincipalTests.withTenants(connections: 1) { database, roles, _, _ in
            let one = Principal(role: roles.name("a"), settings: ["app.tenant": "1"])
            let two = Principal(role: roles.name("a"), settings: ["app.tenant": "2"])
            try await database.write(as: one) { context in
                try context.connection.execute("DECLARE held CURSOR WITH HOLD FOR SELECT tenant, title FROM doc")
                try context.connection.execute("/* scratch */ CREATE TEMP TABLE scratch AS SELECT tenant, title FROM doc")
            }
            let leaked = try await database.read(as: two) { context -> [Int] in
                var tenants: [Int] = []
                if let rows = try? context.connection.query("FETCH ALL FROM held") { tenants += try rows.map { try $0.decode(Int.self, at: 0) } }
                if let rows = try? context.connection.query("SELECT tenant FROM pg_temp.scratch") {
                    tenants += try rows.map { try $0.decode(Int.self, at: 0) }
                }
                return tenants
            }
            #expect(!leaked.contains(1), "tenant 2 read \(leaked.filter { $0 == 1 }.count) rows of tenant 1")
        }
    }

    /// A session's advisory lock taken in a unit: held for as long as the pooled connection lived.
    @Test func anAdvisoryLockEndsWithItsUnit() async throws {
        try await TestDatabase.withDatabase { url in
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            try await database.read { _ = try $0.connection.query("SELECT pg_advisory_lock(4242)") }
            let other = try Connection(url: url)
            // The replaced connection's backend ends in its own time.
            var free = false
            for _ in 0..<100 where !free {
                free = try other.query("SELECT pg_try_advisory_lock(4242)")[0].decode(Bool.self, at: 0)
                if !free { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(free)
        }
    }

    /// `DISCARD ALL` in a body reset what the pool sets on each connection: later units ran
    /// without the statement timeout, and in the database's zone, storing a `Date` hours off.
    @Test func aDiscardInABodyLeavesLaterUnitsAsConfigured() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("CREATE TABLE t (id int PRIMARY KEY, at timestamp); INSERT INTO t VALUES (1, NULL);")
            try setup.execute("DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET TimeZone = %L', current_database(), 'America/New_York'); END $$")
            let database = try Database(url: url, maxConnections: 1, statementTimeout: .milliseconds(300))
            defer { database.close() }
            try await database.read { _ = try $0.connection.execute("DISCARD ALL") }
            #expect(try await database.read { try $0.connection.query("SHOW statement_timeout")[0].decode(String.self, at: 0) } == "300ms")
            try await database.write { _ = try $0.update("t", primaryKey: 1, values: ["at": Date(timeIntervalSince1970: 1_700_000_000)]) }
            let stored = try setup.query("SELECT to_char(at, 'YYYY-MM-DD HH24:MI:SS') FROM t")[0].decode(String.self, at: 0)
            #expect(stored == "2023-11-14 22:13:20")
        }
    }

    /// A notification forged on Relate's channel by a role that may only connect, naming a
    /// key of the wrong arity and type: `changes()` hands it over keyless (the table's
    /// change), never as a key of texts where the key is a number.
    @Test func aForgedKeyOfTheWrongTypeComesKeyless() async throws {
        let roles = try TestRoles()
        let intruder = try roles.make("intruder")
        try await DatabaseObserveTests.withTrackedDatabase(.triggers, ChangeTrackingTests.schema) { url, setup, database in
            let changes = try await database.changes(using: .triggers)
            let forger = try Connection(url: TestRoles.url(url, as: intruder))
            _ = try forger.query(
                "SELECT pg_notify('relate_changes', $1)", [#"{"x":78,"s":"public","t":"person","k":"U","keys":[["abc", "def"]]}"#])
            try setup.execute("UPDATE title SET name = 'Dr' WHERE id = 3")
            var received: [Change] = []
            for try await committed in changes {
                received += committed.changes
                if committed.changes.contains(where: { $0.entity == "title" }) { break }
            }
            let people = received.filter { $0.entity == "person" }
            #expect(!people.isEmpty)
            #expect(people.allSatisfy { $0.primaryKey.isEmpty || ($0.primaryKey.count == 1 && $0.primaryKey.first is Int) }, "\(people.map(\.primaryKey))")
        }
    }

    /// A walk in batches declares a cursor without `HOLD`, which ends with the unit's
    /// transaction: the unit keeps its connection (the same backend serves the next).
    @Test func aWalkInBatchesKeepsItsConnection() async throws {
        try await TestDatabase.withDatabase { url in
            try Connection(url: url).executeScript("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 10);")
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            let (before, seen) = try await database.write { context in
                var seen = 0
                try context.fetch(FetchRequest("t"), batchSize: 3) { seen += $0.count }
                return (try context.connection.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0), seen)
            }
            #expect(seen == 10)
            let after = try await database.read { try $0.connection.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0) }
            #expect(after == before)
        }
    }

    /// Re-read mends: a unit whose context marks edits keeps its connection (its marks are
    /// let go of as it ends; the lock they take no longer counts as a change of the session),
    /// and `SELECT … INTO TEMP` in a body costs it, as `CREATE TEMP` does.
    @Test func editMarksKeepAndSelectIntoTempCostsTheConnection() async throws {
        try await TestDatabase.withDatabase { url in
            try Connection(url: url).executeScript(ChangeTrackingTests.schema)
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            func backend() async throws -> Int {
                try await database.read { try $0.connection.query("SELECT pg_backend_pid()")[0].decode(Int.self, at: 0) }
            }
            let first = try await backend()
            try await database.write { context in
                context.autocommits = false
                context.marksEdits = true
                try #require(try context.object("person", primaryKey: 1)).setValue("King", forKey: "surname")
            }
            #expect(try await backend() == first)
            try await database.write { _ = try $0.connection.execute("SELECT 1 AS n INTO TEMP scratch") }
            #expect(try await backend() != first)
        }
    }
}
