import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// `read(as:)` and `write(as:)`: one transaction begun with the principal's role and
/// settings in one pipeline, failing closed, and every connection back in the pool as the
/// login role with no setting, however the unit ended.
@Suite struct PrincipalTests {
    /// A unit pipelined among others (a live re-read, a live decision) is its group's
    /// implicit transaction, without `BEGIN` or `COMMIT`: read only, with the principal's
    /// settings, and neither they nor a failure reach the next group.
    @Test func aPipelinedUnitIsItsGroupsTransaction() throws {
        let connection = try TestDatabase.connect()
        let seven = Principal(settings: ["app.tenant": "7"])
        let settings = try #require(Statements.readOnlySettings(as: seven))
        let groups = [
            Statements.sharedReadOnly([(seven, settings, PostgresStatement("SELECT current_setting('app.tenant'), current_setting('transaction_read_only')"))]).statements,
            Statements.sharedReadOnly([(seven, settings, PostgresStatement("CREATE TEMP TABLE written (i int)"))]).statements,
            [PostgresStatement("SELECT coalesce(current_setting('app.tenant', true), ''), current_setting('transaction_read_only')")],
        ]
        #expect(groups.map(\.count) == [2, 2, 1])
        let answers = try connection.pipeline(groups: groups)
        let first = try #require(try answers[0].get().last)
        #expect(try first[0].decode(String.self, at: 0) == "7" && first[0].decode(String.self, at: 1) == "on")
        guard case .failure(let error) = answers[1] else {
            Issue.record("a pipelined read unit could write")
            return
        }
        #expect(error.sqlState?.rawValue == "25006")
        let last = try #require(try answers[2].get().last)
        #expect(try last[0].decode(String.self, at: 0) == "" && last[0].decode(String.self, at: 1) == "off")
        #expect(!connection.isInTransaction)

        // Two principals in one transaction: each statement after its own settings, made
        // once for a principal's statements, which go together. The settings statement is
        // prepared once a session, whatever the values: a live round sends it for every
        // principal.
        let eight = Principal(settings: ["app.tenant": "8"])
        let other = Statements.readOnlySettings(as: eight)
        let asked = PostgresStatement("SELECT current_setting('app.tenant')")
        let shared = Statements.sharedReadOnly([(eight, other, asked), (seven, settings, asked), (eight, other, asked)])
        #expect(shared.statements.count == 5 && shared.positions == [1, 4, 2])
        let again = try connection.pipeline(groups: [shared.statements])
        let results = try again[0].get()
        let tenants = try shared.positions.map { try results[$0][0].decode(String.self, at: 0) }
        #expect(tenants == ["8", "7", "8"])
        let prepared = try connection.query("SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%set_config(%'")
        #expect(try prepared[0].decode(Int.self, at: 0) == 1)
    }

    /// A tenant table under `FORCE ROW LEVEL SECURITY`, two tenant roles the login role may
    /// take, and a login role that owns nothing.
    static func setUp(_ setup: Connection, _ roles: PolicyRoles) throws {
        let (login, a, b, outsider) = (roles.name("login"), roles.name("a"), roles.name("b"), roles.name("outsider"))
        try setup.executeScript("""
            CREATE ROLE \(login) LOGIN PASSWORD '\(roles.password)';
            CREATE ROLE \(a) NOLOGIN;
            CREATE ROLE \(b) NOLOGIN;
            CREATE ROLE \(outsider) NOLOGIN;
            GRANT \(a), \(b) TO \(login);
            CREATE TABLE doc (id serial PRIMARY KEY, tenant int NOT NULL, title text NOT NULL);
            ALTER TABLE doc ENABLE ROW LEVEL SECURITY;
            ALTER TABLE doc FORCE ROW LEVEL SECURITY;
            CREATE POLICY tenant ON doc TO \(a), \(b)
                USING (tenant = current_setting('app.tenant')::int) WITH CHECK (tenant = current_setting('app.tenant')::int);
            GRANT SELECT, INSERT, UPDATE, DELETE ON doc TO \(a), \(b), \(login);
            GRANT USAGE ON SEQUENCE doc_id_seq TO \(a), \(b);
            INSERT INTO doc (tenant, title) SELECT 1 + i % 3, 'doc ' || i FROM generate_series(1, 30) i;
            """)
    }

    /// Runs `body` with the tenant table of ``setUp(_:_:)`` and a database of `connections`
    /// as its login role (given its name), with the owner's connection.
    static func withTenants(
        connections: Int, _ body: (_ database: Database, _ roles: PolicyRoles, _ login: String, _ owner: Connection) async throws -> Void
    ) async throws {
        try await PolicyRoles.with { roles in
            try await TestDatabase.withDatabase { url in
                let owner = try Connection(url: url)
                try Self.setUp(owner, roles)
                let login = roles.name("login")
                let database = try Database(url: roles.url(url, as: login), maxConnections: connections)
                defer { database.close() }
                try await body(database, roles, login, owner)
            }
        }
    }

    /// The opening pipeline: `BEGIN READ ONLY` for a read, then one statement setting the
    /// role then the settings by name, every name and value bound.
    @Test func theOpeningStatementsBindEveryNameAndValue() {
        let principal = Principal(role: "tenant \"x\"", settings: ["app.user": "u'1", "app.tenant": "42"])
        let read = Statements.opening(of: UnitOfWork(.read, as: principal), learnsTransactionID: false, learnsCommitPosition: false)
        #expect(read.opening.map(\.sql) == [
            "BEGIN READ ONLY", "SELECT set_config('role', $1, true), set_config($2, $3, true), set_config($4, $5, true)",
        ])
        #expect(read.opening.map { $0.parameters.map { "\($0!)" } } == [[], ["tenant \"x\"", "app.tenant", "42", "app.user", "u'1"]])
        let write = Statements.opening(of: UnitOfWork(.write, as: Principal(settings: ["app.tenant": "1"])), learnsTransactionID: true, learnsCommitPosition: false)
        #expect(write.opening.map(\.sql) == ["BEGIN", "SELECT set_config($1, $2, true)"])
        #expect(write.learnsTransactionID)
        // Equal principals whatever the order their settings were given in.
        #expect(Principal(settings: ["a.x": "1", "a.y": "2"]) == Principal(settings: ["a.y": "2", "a.x": "1"]))
    }

    /// A role the login role may not take, a setting that cannot be made, a role of
    /// `none`: the unit throws and its body never runs.
    @Test func aPrincipalThatCannotBeTakenFailsClosed() async throws {
        try await Self.withTenants(connections: 2) { database, roles, login, _ in
            let ran = Locked(0)
            let cases: [(Principal, String?)] = [
                (Principal(role: roles.name("outsider")), "42501"),
                (Principal(role: roles.name("nobody")), "22023"),
                (Principal(role: roles.name("a"), settings: ["nodot": "1"]), nil),
                (Principal(role: "NONE"), nil),
                (Principal(settings: ["role": roles.name("a")]), nil),
                // What Relate's values are sent and read by: a `Date` would be stored
                // hours off, text mangled (found by a review).
                (Principal(role: roles.name("a"), settings: ["TimeZone": "America/New_York"]), nil),
                (Principal(role: roles.name("a"), settings: ["client_encoding": "LATIN1"]), nil),
                (Principal(role: roles.name("a"), settings: ["DATESTYLE": "SQL, DMY"]), nil),
            ]
            for (principal, state) in cases {
                for write in [false, true] {
                    do {
                        if write {
                            try await database.write(as: principal) { _ in ran.withLock { $0 += 1 } }
                        } else {
                            try await database.read(as: principal) { _ in ran.withLock { $0 += 1 } }
                        }
                        Issue.record("\(principal) ran")
                    } catch let error as RelateError {
                        if let state { #expect(error.postgresError?.sqlState?.rawValue == state, "\(principal): \(error)") }
                    }
                }
            }
            #expect(ran.withLock { $0 } == 0)
            // The policy's cast fails under a setting it cannot read: the body's statement
            // throws, and its description does not quote the setting's value.
            let cast = await #expect(throws: RelateError.self) {
                try await database.read(as: Principal(role: roles.name("a"), settings: ["app.tenant": "abc-secret"])) { try $0.fetch("doc").count }
            }
            #expect(cast?.postgresError?.sqlState?.rawValue == "22P02")
            #expect(!"\(String(describing: cast))".contains("abc-secret"), "\(String(describing: cast))")
            // A read is READ ONLY.
            let error = await #expect(throws: RelateError.self) {
                try await database.read(as: Principal(role: roles.name("a"), settings: ["app.tenant": "1"])) {
                    _ = try $0.insert("doc", values: ["tenant": 1, "title": "x"])
                }
            }
            #expect(error?.postgresError?.sqlState?.rawValue == "25006")
            try await Self.expectEveryConnectionClean(database, login: login)
        }
    }

    /// Hundreds of units under random principals, ending every way a unit ends (returned,
    /// thrown, cancelled, connection lost, refused at the opening), then every pooled
    /// connection is asked who it is and what it has set.
    @Test func everyConnectionGoesBackAsTheLoginRoleWithNoSetting() async throws {
        try await Self.withTenants(connections: 4) { database, roles, login, owner in
            var random = SeededRandom(seed: 37)
            let leaks = Locked<[String]>([])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<320 {
                    let tenant = 1 + random.next(3)
                    let principal = Principal(role: roles.name(random.next(2) == 0 ? "a" : "b"), settings: ["app.tenant": "\(tenant)"])
                    let kind = random.next(8)
                    if index >= 8 { try await group.next() }
                    group.addTask {
                        switch kind {
                        case 0, 1:
                            // Reads see their tenant only, as the principal's role.
                            let (rows, who) = try await database.read(as: principal) { context in
                                (try context.fetch("doc").map { try $0.value(forKey: "tenant", as: Int.self) },
                                 try context.connection.query("SELECT current_user::text")[0].decode(String.self, at: 0))
                            }
                            if rows.contains(where: { $0 != tenant }) || who != principal.role { leaks.withLock { $0.append("read \(index)") } }
                        case 2:
                            try await database.write(as: principal) { _ = try $0.insert("doc", values: ["tenant": tenant, "title": "w \(index)"]) }
                        case 3:
                            // Thrown: rolled back.
                            _ = try? await database.write(as: principal) { context in
                                try context.insert("doc", values: ["tenant": tenant, "title": "gone"])
                                throw CancellationError()
                            }
                        case 4:
                            // Cancelled while its statement runs.
                            let task = Task { try await database.read(as: principal) { try $0.connection.query("SELECT pg_sleep(30)") } }
                            try await Task.sleep(for: .milliseconds(20))
                            task.cancel()
                            _ = try? await task.value
                        case 5:
                            // The connection lost under the unit.
                            _ = try? await database.write(as: principal) {
                                try $0.connection.query("SELECT pg_terminate_backend(pg_backend_pid())")
                            }
                        case 6:
                            // Refused at the opening.
                            _ = try? await database.read(as: Principal(role: roles.name("outsider"))) { _ in 0 }
                        default:
                            // A plain unit between them finds the login role and no setting.
                            let state = try await database.read { try Self.state(of: $0.connection) }
                            if state.user != login || state.tenant != "" || state.role != "none" {
                                leaks.withLock { $0.append("plain \(index): \(state)") }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(leaks.withLock { $0 } == [])
            // Rolled back and refused units left nothing.
            let gone = try owner.query("SELECT count(*) FROM doc WHERE title = 'gone'")[0].decode(Int.self, at: 0)
            #expect(gone == 0)
            try await Self.expectEveryConnectionClean(database, login: login)
        }
    }

    /// A body that changes the session for good — its role, a setting, by `SET`, `RESET`,
    /// `set_config(…, false)` or a script — leaves it to no later unit: its connection is
    /// replaced. One that sets only for its transaction (`SET LOCAL`) keeps its connection.
    /// (Found by a review: the next plain unit ran as the role another tenant's body took.)
    @Test func aBodyThatChangesTheSessionLeavesItToNoLaterUnit() async throws {
        try await Self.withTenants(connections: 1) { database, roles, login, owner in
            let tenant = Principal(role: roles.name("a"), settings: ["app.tenant": "1"])
            let b = roles.name("b")
            let changes = [
                "SET ROLE \(b)", "set session role \(b)", "/* a comment */ SET app.tenant = '2'", "RESET search_path",
                "SELECT set_config('app.tenant', '2', false)", "SELECT SET_CONFIG('app.tenant', '2', 1 = 1)", "SET search_path = pg_catalog",
            ]
            for change in changes {
                for write in [true, false] {
                    let body: @Sendable (DatabaseContext) throws -> Void = { _ = try $0.connection.execute(change) }
                    if write { try await database.write(as: tenant, body) } else { try await database.read(body) }
                    let state = try await database.read { try Self.state(of: $0.connection) }
                    #expect(state.user == login && state.role == "none" && state.tenant == "", "after `\(change)`: \(state)")
                    let path = try await database.read { try $0.connection.query("SHOW search_path")[0].decode(String.self, at: 0) }
                    #expect(path == "\"$user\", public", "after `\(change)`: \(path)")
                }
            }
            // A script: the connection is replaced, whatever its last statement.
            try await database.write(as: tenant) { try $0.connection.executeScript("SET ROLE \(b); SELECT 1") }
            #expect(try await database.read { try Self.state(of: $0.connection) }.user == login)
            // Made for the transaction only: the connection serves again.
            let before = try await database.read { $0.connection.backendProcessID }
            for local in ["SET LOCAL app.tenant = '2'", "SELECT set_config('app.tenant', '2', true)", "SET CONSTRAINTS ALL DEFERRED"] {
                try await database.write(as: tenant) { _ = try $0.connection.execute(local) }
            }
            try await database.write { try $0.connection.executeScript("SET LOCAL statement_timeout = 1000; SELECT 1") }
            #expect(try await database.read { $0.connection.backendProcessID } == before)
            try await Self.expectEveryConnectionClean(database, login: login)
        }
    }

    /// A policy's cast that fails on another tenant's row: the error says what failed,
    /// never the row's value (found by a review: the description quoted it).
    @Test func aFailedCastQuotesNoRow() async throws {
        try await Self.withTenants(connections: 1) { database, roles, login, owner in
            try owner.executeScript("""
                UPDATE doc SET title = (100 + id)::text;
                UPDATE doc SET title = 'salary: 91000 EUR' WHERE id = 2;
                ALTER POLICY tenant ON doc USING (tenant = current_setting('app.tenant')::int OR title::int < 0);
                """)
            let error = await #expect(throws: RelateError.self) {
                try await database.read(as: Principal(role: roles.name("a"), settings: ["app.tenant": "1"])) { try $0.fetch("doc").count }
            }
            #expect(error?.postgresError?.sqlState?.rawValue == "22P02")
            #expect(error?.postgresError?.message == "invalid input syntax for type integer: \"…\"", "\(String(describing: error))")
            #expect(!"\(String(describing: error))".contains("salary"))
            #expect(Connection.withoutQuotedValues(#"invalid value for parameter "TimeZone": "Mars/Base""#) == #"invalid value for parameter "TimeZone": "…""#)
        }
    }

    /// A body that ends the unit's transaction itself (its own `COMMIT` or `ROLLBACK`) fails
    /// the unit, and nothing it sends after runs outside the principal's transaction.
    /// (Found by a review: an insert after a read's `COMMIT` ran as the login role and was
    /// kept; a write whose body rolled back returned as if committed.)
    @Test func aBodyThatEndsItsTransactionFailsItsUnit() async throws {
        try await Self.withTenants(connections: 1) { database, roles, login, owner in
            try owner.executeScript("CREATE TABLE note (t text); GRANT ALL ON note TO \(login), \(roles.name("a"));")
            let tenant = Principal(role: roles.name("a"), settings: ["app.tenant": "1"])
            let error = await #expect(throws: RelateError.self) {
                try await database.read(as: tenant) { context in
                    _ = try context.connection.execute("COMMIT")
                    _ = try context.connection.execute("INSERT INTO note VALUES ('written by a read')")
                }
            }
            #expect(error?.postgresError?.kind == .client, "\(String(describing: error))")
            await #expect(throws: RelateError.self) {
                try await database.write(as: tenant) { context in
                    _ = try context.insert("doc", values: ["tenant": 1, "title": "rolled back"])
                    _ = try context.connection.execute("ROLLBACK")
                }
            }
            await #expect(throws: RelateError.self) {
                try await database.write { _ = try $0.connection.execute("END") }
            }
            #expect(try owner.query("SELECT count(*) FROM note")[0].decode(Int.self, at: 0) == 0)
            #expect(try owner.query("SELECT count(*) FROM doc WHERE title = 'rolled back'")[0].decode(Int.self, at: 0) == 0)
            try await Self.expectEveryConnectionClean(database, login: login)
        }
    }

    /// Who a connection is and what it has set.
    static func state(of connection: Connection) throws -> (user: String, session: String, role: String, tenant: String) {
        let row = try connection.query(
            "SELECT current_user::text, session_user::text, current_setting('role'), coalesce(current_setting('app.tenant', true), '')")[0]
        return (try row.decode(String.self, at: 0), try row.decode(String.self, at: 1), try row.decode(String.self, at: 2), try row.decode(String.self, at: 3))
    }

    /// Holds every connection of the pool at once (each unit waits until all have started,
    /// so no two share one) and asks each who it is and what it has set.
    static func expectEveryConnectionClean(_ database: Database, login: String) async throws {
        let count = database.openConnections
        let started = Locked(0)
        let states = try await withThrowingTaskGroup(of: (Int, String, String, String, String).self) { group in
            for _ in 0..<count {
                group.addTask {
                    try await database.read { context in
                        started.withLock { $0 += 1 }
                        let deadline = ContinuousClock.now + .seconds(60)
                        while started.withLock({ $0 }) < count, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.005) }
                        let state = try Self.state(of: context.connection)
                        return (context.connection.backendProcessID, state.user, state.session, state.role, state.tenant)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(states.map(\.0)).count == count, "every pooled connection asked once")
        for (_, user, session, role, tenant) in states {
            #expect(user == login && session == login && role == "none" && tenant == "", "\(user) \(session) \(role) \(tenant)")
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing workload can be run again.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A number in `0..<bound`.
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Int(z % UInt64(bound))
    }
}
