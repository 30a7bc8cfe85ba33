import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// What a policy reads beyond its table's plain columns — a generated column, a table
/// through a view — still decides which live answers read again: a change there reaches
/// every principal whose answer it changes. (Found by a review: both streams missed it.)
@Suite struct PolicyReadTests {
    /// Runs `body` with a login role that may take role `a` (the policies' role), the tables
    /// `schema` makes (given `a` and the login role), `mechanism` enabled for the login role,
    /// a database as the login role, and the owner's connection.
    static func withSchema(
        _ mechanism: ChangeTracking.Mechanism, _ schema: (_ a: String, _ login: String) -> String,
        _ body: (Database, PolicyRoles, Connection) async throws -> Void
    ) async throws {
        try await PolicyRoles.with { roles in
            try await TestDatabase.withDatabase { url in
                let setup = try Connection(url: url)
                let (login, a) = (roles.name("login"), roles.name("a"))
                try setup.executeScript("""
                    CREATE ROLE \(login) LOGIN PASSWORD '\(roles.password)';
                    CREATE ROLE \(a) NOLOGIN;
                    GRANT \(a) TO \(login);
                    """)
                try setup.executeScript(schema(a, login))
                switch mechanism {
                case .triggers:
                    try ChangeTracking.enable(on: setup)
                    try ChangeTracking.grant(readingTo: login, on: setup)
                case .logicalDecoding:
                    try ChangeTracking.enable(logicalDecodingOn: setup)
                    try setup.execute("ALTER ROLE \(login) REPLICATION")
                }
                let database = try Database(url: roles.url(url, as: login), configuration: Configuration(maxConnections: 2))
                defer { database.close() }
                try await body(database, roles, setup)
            }
        }
    }

    /// Observes `request` as each principal, runs `statement` as the owner, then waits until
    /// every stream's last answer is what a fresh read as its principal answers (at most 20
    /// s): answers the streams that differ.
    static func streamsBehind(
        _ database: Database, _ request: FetchRequest, as principals: [Principal], after statement: String, on setup: Connection
    ) async throws -> [String] {
        var streams: [DatabaseObserveTests.Collector] = []
        for principal in principals {
            let stream = DatabaseObserveTests.Collector(try await database.observe(request, as: principal))
            _ = try await stream.wait(for: 1)
            streams.append(stream)
        }
        try setup.execute(statement)
        func ids(_ rows: [LiveRow]) -> [String] { rows.map { "\($0.primaryKey)" } }
        let deadline = ContinuousClock.now + .seconds(20)
        var behind: [String] = []
        repeat {
            try await Task.sleep(for: .milliseconds(100))
            behind = []
            for (principal, stream) in zip(principals, streams) {
                let fresh = try await database.read(as: principal) { try $0.fetch(request).map(LiveRow.init) }
                let last = stream.snapshots.withLock { $0.last?.rows } ?? []
                if ids(fresh) != ids(last) { behind.append("\(principal.settings): stream \(ids(last)), a read \(ids(fresh))") }
            }
        } while !behind.isEmpty && ContinuousClock.now < deadline
        return behind
    }

    /// The policy reads a generated column, which no feed names as changed: an update of the
    /// column it is made of moves the row to the other tenant.
    @Test(arguments: [ChangeTracking.Mechanism.triggers, .logicalDecoding])
    func aPolicyOnAGeneratedColumn(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await Self.withSchema(mechanism, { a, login in
            """
            CREATE TABLE doc (id int PRIMARY KEY, tenant text NOT NULL,
                              tenant_key text GENERATED ALWAYS AS (lower(tenant)) STORED, title text NOT NULL);
            ALTER TABLE doc REPLICA IDENTITY FULL;
            ALTER TABLE doc ENABLE ROW LEVEL SECURITY;
            ALTER TABLE doc FORCE ROW LEVEL SECURITY;
            CREATE POLICY tenant ON doc TO \(a) USING (tenant_key = current_setting('app.tenant'));
            GRANT SELECT ON doc TO \(a), \(login);
            INSERT INTO doc (id, tenant, title) VALUES (1, 'X', 'one'), (2, 'Y', 'two'), (3, 'X', 'three');
            ANALYZE doc;
            """
        }) { database, roles, setup in
            let doc = try database.layout.withLock { try $0.entityIndex(named: "doc") }
            #expect(try await database.securityState(after: nil).policyColumns[doc] == .unknown)
            let behind = try await Self.streamsBehind(
                database, FetchRequest("doc", orderBy: [.ascending("id")]),
                as: ["x", "y"].map { Principal(role: roles.name("a"), settings: ["app.tenant": $0]) },
                after: "UPDATE doc SET tenant = 'Y' WHERE id = 1", on: setup)
            #expect(behind.isEmpty, "\(behind)")
        }
    }

    /// The policy reads another table through a view, which `pg_depend` names instead of the
    /// table: a change of the table moves a note to the other tenant.
    @Test(arguments: [ChangeTracking.Mechanism.triggers, .logicalDecoding])
    func aPolicyReadingATableThroughAView(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await Self.withSchema(mechanism, { a, login in
            """
            CREATE TABLE doc (id int PRIMARY KEY, tenant int NOT NULL);
            CREATE TABLE note (id int PRIMARY KEY, doc_id int NOT NULL, body text NOT NULL);
            CREATE VIEW doc_tenant AS SELECT id, tenant FROM doc;
            CREATE VIEW doc_tenant_again AS SELECT id, tenant FROM doc_tenant;
            ALTER TABLE note ENABLE ROW LEVEL SECURITY;
            ALTER TABLE note FORCE ROW LEVEL SECURITY;
            CREATE POLICY note_tenant ON note TO \(a)
                USING (doc_id IN (SELECT d.id FROM doc_tenant_again d WHERE d.tenant = current_setting('app.tenant')::int));
            GRANT SELECT ON doc, note, doc_tenant, doc_tenant_again TO \(a), \(login);
            INSERT INTO doc VALUES (1, 1), (2, 2);
            INSERT INTO note VALUES (10, 1, 'a'), (20, 2, 'b');
            ANALYZE doc, note;
            """
        }) { database, roles, setup in
            let (doc, note) = try database.layout.withLock { (try $0.entityIndex(named: "doc"), try $0.entityIndex(named: "note")) }
            #expect(try await database.securityState(after: nil).policyRegion(of: [note]).contains(doc))
            let behind = try await Self.streamsBehind(
                database, FetchRequest("note", orderBy: [.ascending("id")]),
                as: ["1", "2"].map { Principal(role: roles.name("a"), settings: ["app.tenant": $0]) },
                after: "UPDATE doc SET tenant = 2 WHERE id = 1", on: setup)
            #expect(behind.isEmpty, "\(behind)")
        }
    }

    /// The view a policy reads is redefined to read another table: the streams read again
    /// (what the policy lets through changed), and a change of the new table reaches them.
    @Test(arguments: [ChangeTracking.Mechanism.triggers, .logicalDecoding])
    func aViewAPolicyReadsRedefined(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await Self.withSchema(mechanism, { a, login in
            """
            CREATE TABLE doc (id int PRIMARY KEY, tenant int NOT NULL);
            CREATE TABLE moved (id int PRIMARY KEY, tenant int NOT NULL);
            CREATE TABLE note (id int PRIMARY KEY, doc_id int NOT NULL, body text NOT NULL);
            CREATE VIEW doc_tenant AS SELECT id, tenant FROM doc;
            ALTER TABLE note ENABLE ROW LEVEL SECURITY;
            ALTER TABLE note FORCE ROW LEVEL SECURITY;
            CREATE POLICY note_tenant ON note TO \(a)
                USING (doc_id IN (SELECT d.id FROM doc_tenant d WHERE d.tenant = current_setting('app.tenant')::int));
            GRANT SELECT ON doc, moved, note, doc_tenant TO \(a), \(login);
            INSERT INTO doc VALUES (1, 1), (2, 2);
            INSERT INTO moved VALUES (1, 2), (2, 1);
            INSERT INTO note VALUES (10, 1, 'a'), (20, 2, 'b');
            ANALYZE doc, moved, note;
            """
        }) { database, roles, setup in
            let request = FetchRequest("note", orderBy: [.ascending("id")])
            let principals = ["1", "2"].map { Principal(role: roles.name("a"), settings: ["app.tenant": $0]) }
            let redefined = try await Self.streamsBehind(
                database, request, as: principals, after: "CREATE OR REPLACE VIEW doc_tenant AS SELECT id, tenant FROM moved", on: setup)
            #expect(redefined.isEmpty, "\(redefined)")
            let (note, movedTable) = try database.layout.withLock { (try $0.entityIndex(named: "note"), try $0.entityIndex(named: "moved")) }
            #expect(try await database.securityState(after: nil).policyRegion(of: [note]).contains(movedTable))
            let moved = try await Self.streamsBehind(database, request, as: principals, after: "UPDATE moved SET tenant = 1 WHERE id = 1", on: setup)
            #expect(moved.isEmpty, "\(moved)")
        }
    }
}
