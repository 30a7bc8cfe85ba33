import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Live queries under row-level security (issue 37, item 4, reduced): tenants under
/// `FORCE ROW LEVEL SECURITY`, a tenant policy, a viewer policy (published rows), a policy
/// through a subquery on another table, and a login role that policies give no rows; an
/// observer for every (principal × request) pair through a seeded random workload on both
/// feeds. No snapshot ever holds a row its principal may not see; at every quiet point
/// each stream's last answer equals a fresh `read(as:)`. The canary runs the same check
/// with the tenant role owning the tables and no `FORCE`: the check must find the leak.
@Suite struct RowLevelSecurityLeakTests {
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func noStreamHoldsARowItsPrincipalMayNotSee(_ mechanism: ChangeTracking.Mechanism) async throws {
        let outcome = try await Self.run(mechanism, canary: false, changes: 300, seed: 37)
        #expect(outcome.snapshots > 100, "snapshots checked: \(outcome.snapshots)")
        #expect(outcome.leaks == [])
        #expect(outcome.mismatches == [])
        #expect(outcome.payloadsWithKeys == 0)
        #expect(outcome.payloads > 0 || mechanism == .logicalDecoding)
    }

    /// The canary: the tables owned by the tenant role, without `FORCE`, so the owner
    /// bypasses its policies. The same check must report rows of other tenants.
    @Test func theCheckFindsTheLeakOfAnOwnerWithoutForce() async throws {
        let outcome = try await Self.run(.triggers, canary: true, changes: 20, seed: 5)
        #expect(!outcome.leaks.isEmpty, "the canary found no leak: the check cannot fail")
    }

    struct Outcome {
        var snapshots = 0
        var leaks: [String] = []
        var mismatches: [String] = []
        var payloads = 0
        var payloadsWithKeys = 0
    }

    /// Who may see which row, by the row's own values as a snapshot holds them: a tenant
    /// its tenant's, the viewer published ones, the member the tenants `u1` belongs to at
    /// some point of the run (2 and 3, never 1), the login role none.
    enum Who: CaseIterable {
        case tenant1, tenant2, viewer, member, login

        func principal(_ roles: PolicyRoles) -> Principal? {
            switch self {
            case .tenant1: Principal(role: roles.name("tenant"), settings: ["app.tenant": "1"])
            case .tenant2: Principal(role: roles.name("tenant"), settings: ["app.tenant": "2"])
            case .viewer: Principal(role: roles.name("viewer"))
            case .member: Principal(role: roles.name("member"), settings: ["app.user": "u1"])
            case .login: nil
            }
        }

        func maySee(tenant: Int, published: Bool) -> Bool {
            switch self {
            case .tenant1: tenant == 1
            case .tenant2: tenant == 2
            case .viewer: published
            case .member: tenant == 2 || tenant == 3
            case .login: false
            }
        }
    }

    static let requests: [(name: String, request: FetchRequest, docs: Bool)] = [
        ("all", FetchRequest("doc", orderBy: [.ascending("id")]), true),
        ("published", FetchRequest("doc", where: Key("published") == true, orderBy: [.ascending("id")]), true),
        ("top3", FetchRequest("doc", orderBy: [.descending("title"), .ascending("id")], limit: 3), true),
        ("hot", FetchRequest("doc", where: Key("note").any(Key("body") == "hot"), orderBy: [.ascending("id")]), true),
        ("notes", FetchRequest("note", orderBy: [.ascending("id")]), false),
        // Tasks' policies read their own columns only, so an update of a column neither a
        // request nor a policy reads is decided by no statement (the title, for "tasks",
        // until halfway the viewer's policy reads it too).
        ("tasks", FetchRequest("task", orderBy: [.ascending("id")]), true),
        ("titled tasks", FetchRequest("task", where: Key("title") >= "title 5", orderBy: [.ascending("id")]), true),
    ]

    static func schema(_ roles: PolicyRoles, canary: Bool) -> String {
        let (login, tenant, viewer, member) = (roles.name("login"), roles.name("tenant"), roles.name("viewer"), roles.name("member"))
        return """
            CREATE ROLE \(login) LOGIN NOINHERIT REPLICATION PASSWORD '\(roles.password)';
            CREATE ROLE \(tenant) NOLOGIN;
            CREATE ROLE \(viewer) NOLOGIN;
            CREATE ROLE \(member) NOLOGIN;
            GRANT \(tenant), \(viewer), \(member) TO \(login);
            CREATE TABLE membership (member text NOT NULL, tenant int NOT NULL, PRIMARY KEY (member, tenant));
            CREATE TABLE doc (id int PRIMARY KEY, tenant int NOT NULL, published bool NOT NULL, title text NOT NULL);
            CREATE TABLE note (id int PRIMARY KEY, doc_id int NOT NULL REFERENCES doc (id) ON DELETE CASCADE, body text NOT NULL);
            CREATE TABLE task (id int PRIMARY KEY, tenant int NOT NULL, published bool NOT NULL, title text NOT NULL);
            -- Logical decoding then sends the row before an update: its changed columns are known too.
            ALTER TABLE task REPLICA IDENTITY FULL;
            ALTER TABLE doc ENABLE ROW LEVEL SECURITY;
            ALTER TABLE note ENABLE ROW LEVEL SECURITY;
            ALTER TABLE task ENABLE ROW LEVEL SECURITY;
            \(canary ? "" : "ALTER TABLE doc FORCE ROW LEVEL SECURITY; ALTER TABLE note FORCE ROW LEVEL SECURITY; ALTER TABLE task FORCE ROW LEVEL SECURITY;")
            CREATE POLICY doc_tenant ON doc TO \(tenant)
                USING (tenant = current_setting('app.tenant')::int) WITH CHECK (tenant = current_setting('app.tenant')::int);
            CREATE POLICY doc_viewer ON doc FOR SELECT TO \(viewer) USING (published);
            CREATE POLICY doc_member ON doc FOR SELECT TO \(member)
                USING (tenant IN (SELECT m.tenant FROM membership m WHERE m.member = current_setting('app.user')));
            CREATE POLICY note_visible ON note TO \(tenant), \(viewer), \(member)
                USING (EXISTS (SELECT 1 FROM doc d WHERE d.id = note.doc_id));
            CREATE POLICY task_tenant ON task TO \(tenant)
                USING (tenant = current_setting('app.tenant')::int) WITH CHECK (tenant = current_setting('app.tenant')::int);
            CREATE POLICY task_viewer ON task FOR SELECT TO \(viewer) USING (published);
            GRANT SELECT ON membership TO \(member);
            GRANT SELECT, INSERT, UPDATE, DELETE ON doc, note, task TO \(tenant);
            GRANT SELECT ON doc, note, task TO \(viewer), \(member), \(login);
            INSERT INTO membership VALUES ('u1', 2), ('u2', 1), ('u2', 3);
            INSERT INTO doc SELECT i, 1 + i % 3, i % 2 = 0, 'title ' || (i * 7 % 10) FROM generate_series(1, 12) i;
            INSERT INTO note SELECT i, 1 + i % 12, CASE WHEN i % 3 = 0 THEN 'hot' ELSE 'cold' END FROM generate_series(1, 10) i;
            INSERT INTO task SELECT i, 1 + i % 3, i % 3 = 0, 'title ' || (i * 3 % 10) FROM generate_series(1, 12) i;
            -- The planner's estimates: a live round asks each principal once which rows of a
            -- table it sees only where the estimate says the table is small.
            ANALYZE membership, doc, note, task;
            """
    }

    /// Collects every snapshot of one stream, checking each row as it comes.
    final class Observer: Sendable {
        let who: Who
        let request: Int
        let last = Locked<[LiveRow]?>(nil)
        let count = Locked(0)
        let leaks = Locked<[String]>([])
        let failure = Locked<String?>(nil)
        private let task: Task<Void, Never>

        init(_ stream: AsyncThrowingStream<LiveSnapshot, any Error>, who: Who, request: Int) {
            self.who = who
            self.request = request
            let (last, count, leaks, failure) = (self.last, self.count, self.leaks, self.failure)
            let docs = RowLevelSecurityLeakTests.requests[request].docs
            task = Task {
                do {
                    for try await snapshot in stream {
                        count.withLock { $0 += 1 }
                        last.withLock { $0 = snapshot.rows }
                        for row in snapshot.rows {
                            if !docs {
                                // Notes: the login role sees none; the rest are checked at quiet points.
                                if who == .login { leaks.withLock { $0.append("\(who) note \(row.primaryKey)") } }
                                continue
                            }
                            let tenant = row.values["tenant"] as? Int ?? -1
                            let published = row.values["published"] as? Bool ?? false
                            if !who.maySee(tenant: tenant, published: published) {
                                leaks.withLock { $0.append("\(who) \(RowLevelSecurityLeakTests.requests[request].name): doc \(row.primaryKey) of tenant \(tenant)") }
                            }
                        }
                    }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
            }
        }

        deinit { task.cancel() }
    }

    static func text(_ rows: [LiveRow]) -> String {
        rows.map { "\($0.primaryKey.map { "\($0 ?? "nil")" }) \($0.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })" }
            .joined(separator: "; ")
    }

    static func run(_ mechanism: ChangeTracking.Mechanism, canary: Bool, changes: Int, seed: UInt64) async throws -> Outcome {
        try await PolicyRoles.with { roles in
            try await TestDatabase.withDatabase { url in
                let setup = try Connection(url: url)
                try setup.executeScript(schema(roles, canary: canary))
                try ChangeTrackingTests.enable(mechanism, on: setup)
                if mechanism == .triggers { try ChangeTracking.grant(readingTo: roles.name("login"), on: setup) }
                if canary {
                    try setup.execute("ALTER TABLE doc OWNER TO \(roles.name("tenant"))")
                    try setup.execute("ALTER TABLE note OWNER TO \(roles.name("tenant"))")
                    try setup.execute("ALTER TABLE task OWNER TO \(roles.name("tenant"))")
                }
                let loginURL = roles.url(url, as: roles.name("login"))
                // What any role that may connect hears: no key of a table under row-level security.
                let eavesdropper = try Connection(url: loginURL)
                try eavesdropper.execute("LISTEN \(ChangeTracking.channel)")
                let database = try Database(url: loginURL, maxConnections: 4)
                defer { database.close() }
                var observers: [Observer] = []
                for who in Who.allCases {
                    for (index, entry) in requests.enumerated() {
                        let stream: AsyncThrowingStream<LiveSnapshot, any Error>
                        if let principal = who.principal(roles) {
                            stream = try await database.observe(entry.request, as: principal)
                        } else {
                            stream = try await database.observe(entry.request)
                        }
                        observers.append(Observer(stream, who: who, request: index))
                    }
                }
                var outcome = Outcome()
                var random = SeededRandom(seed: seed)
                var nextID = 1000
                for step in 0..<changes {
                    let policyColumnChanged = try await Self.change(step, changes: changes, &random, &nextID, setup: setup, database: database, roles: roles)
                    // A task's column a policy reads changed: the streams that did not hold
                    // it are checked before a later change to a row they hold reads them anyway.
                    if !canary, policyColumnChanged {
                        outcome.mismatches += try await Self.quietPoint(observers, database: database, roles: roles)
                    }
                    if !canary, step % 60 == 59 || step == changes - 1 {
                        outcome.mismatches += try await Self.quietPoint(observers, database: database, roles: roles)
                        // Once all is quiet, a change only a policy's table sees: notes change
                        // hands with their documents, or u1's memberships change.
                        if step % 120 == 59 {
                            try setup.execute("UPDATE doc SET tenant = 3 - tenant % 2, published = NOT published WHERE id IN (SELECT doc_id FROM note)")
                        } else if try setup.execute("DELETE FROM membership WHERE member = 'u1' AND tenant = 3") == 0 {
                            try setup.execute("INSERT INTO membership VALUES ('u1', 3)")
                        }
                        outcome.mismatches += try await Self.quietPoint(observers, database: database, roles: roles)
                    }
                }
                if canary { _ = try await eventually(within: 60) { observers.allSatisfy { $0.count.withLock { $0 } > 0 } } }
                outcome.snapshots = observers.reduce(0) { $0 + $1.count.withLock { $0 } }
                outcome.leaks = observers.flatMap { $0.leaks.withLock { $0 } }
                outcome.mismatches += observers.compactMap { observer in observer.failure.withLock { $0 }.map { "\(observer.who) ended: \($0)" } }
                for notification in try eavesdropper.notifications() where notification.channel == ChangeTracking.channel {
                    let tables = ["doc", "note", "task"]
                    guard tables.contains(where: { notification.payload.contains("\"t\" : \"\($0)\"") || notification.payload.contains("\"t\":\"\($0)\"") })
                    else { continue }
                    outcome.payloads += 1
                    if notification.payload.contains("\"keys\"") { outcome.payloadsWithKeys += 1 }
                }
                if !canary { try await PrincipalTests.expectEveryConnectionClean(database, login: roles.name("login")) }
                return outcome
            }
        }
    }

    /// Waits until every stream's last answer equals a fresh read as its principal; what
    /// still differs after a long wait.
    static func quietPoint(_ observers: [Observer], database: Database, roles: PolicyRoles) async throws -> [String] {
        var differing: [String] = []
        let deadline = ContinuousClock.now + .seconds(Double(ProcessInfo.processInfo.environment["RLS_QUIET_SECONDS"] ?? "") ?? 300)
        repeat {
            differing = []
            for observer in observers {
                let request = requests[observer.request].request
                let read: @Sendable (DatabaseContext) throws -> [LiveRow] = { context in
                    try context.fetch(request).map(LiveRow.init)
                }
                let fresh: [LiveRow]
                if let principal = observer.who.principal(roles) {
                    fresh = try await database.read(as: principal, read)
                } else {
                    fresh = try await database.read(read)
                }
                let last = observer.last.withLock { $0 } ?? []
                if text(fresh) != text(last) {
                    differing.append("\(observer.who) \(requests[observer.request].name): stream [\(text(last))] read [\(text(fresh))]")
                }
            }
            if differing.isEmpty { return [] }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return differing
    }

    /// One change of the workload: inserts, updates, deletes, rows moved between tenants,
    /// published toggled, multi-row and rolled-back transactions, notes, memberships, tasks,
    /// writes under a tenant principal, and halfway two policies altered. Answers whether it
    /// changed one task's column that a policy reads and no request does.
    static func change(
        _ step: Int, changes: Int, _ random: inout SeededRandom, _ nextID: inout Int, setup: Connection, database: Database, roles: PolicyRoles
    ) async throws -> Bool {
        let doc = 1 + random.next(14)
        let tenant = 1 + random.next(3)
        if step == changes / 2 {
            try setup.execute("ALTER POLICY doc_viewer ON doc USING (published AND id % 2 = 0)")
            try setup.execute("ALTER POLICY task_viewer ON task USING (published AND title <> 'title 3')")
            return false
        }
        let task = 1 + random.next(14)
        switch random.next(17) {
        case 0:
            nextID += 1
            try setup.execute("INSERT INTO doc VALUES ($1, $2, $3, $4)", [nextID, tenant, random.next(2) == 0, "title \(random.next(10))"])
        case 1: try setup.execute("UPDATE doc SET title = $1 WHERE id = (SELECT min(id) FROM doc WHERE id >= $2)", ["title \(random.next(10))", doc])
        case 2: try setup.execute("UPDATE doc SET tenant = $1 WHERE id = (SELECT min(id) FROM doc WHERE id >= $2)", [tenant, doc])
        case 3: try setup.execute("UPDATE doc SET published = NOT published WHERE id = (SELECT min(id) FROM doc WHERE id >= $1)", [doc])
        case 4: try setup.execute("DELETE FROM doc WHERE id = (SELECT max(id) FROM doc WHERE id <= $1 OR id > 999)", [doc + 1000])
        case 5: try setup.execute("UPDATE doc SET published = NOT published, title = title || '!' WHERE tenant = $1", [tenant])
        case 6:
            try setup.transaction {
                try setup.execute("UPDATE doc SET tenant = 3 - tenant % 3 WHERE id % 2 = $1", [random.next(2)])
                try setup.execute("UPDATE note SET body = 'hot' WHERE id % 3 = 1")
            }
        case 7:
            // Rolled back: nothing to see.
            try setup.execute("BEGIN")
            try setup.execute("UPDATE doc SET tenant = 1")
            try setup.execute("ROLLBACK")
        case 8:
            nextID += 1
            try setup.execute(
                "INSERT INTO note SELECT $1, id, $2 FROM doc WHERE id = (SELECT min(id) FROM doc WHERE id >= $3)",
                [nextID, random.next(2) == 0 ? "hot" : "cold", doc])
        case 9: try setup.execute("UPDATE note SET body = CASE body WHEN 'hot' THEN 'cold' ELSE 'hot' END WHERE doc_id = $1", [doc])
        case 12: try setup.execute("UPDATE task SET title = $1 WHERE id = (SELECT min(id) FROM task WHERE id >= $2)", ["title \(random.next(10))", task])
        case 13:
            try setup.execute("UPDATE task SET tenant = $1 WHERE id = (SELECT min(id) FROM task WHERE id >= $2)", [tenant, task])
            return true
        case 14:
            try setup.execute("UPDATE task SET published = NOT published WHERE id = (SELECT min(id) FROM task WHERE id >= $1)", [task])
            return true
        case 15:
            nextID += 1
            try setup.execute("INSERT INTO task VALUES ($1, $2, $3, $4)", [nextID, tenant, random.next(2) == 0, "title \(random.next(10))"])
        case 16: try setup.execute("DELETE FROM task WHERE id = (SELECT max(id) FROM task WHERE id <= $1 OR id > 999)", [task + 1000])
        case 10:
            // The subquery policy's table: u1 joins or leaves tenant 3.
            if try setup.execute("DELETE FROM membership WHERE member = 'u1' AND tenant = 3") == 0 {
                try setup.execute("INSERT INTO membership VALUES ('u1', 3)")
            }
        default:
            // A writer under a tenant principal: only its tenant's rows, by the policy.
            nextID += 1
            let id = nextID
            let principal = Principal(role: roles.name("tenant"), settings: ["app.tenant": "\(tenant)"])
            try await database.write(as: principal) { context in
                if let mine = try context.fetch("doc", limit: 1).first {
                    try mine.setValue("title \(id % 10)", forKey: "title")
                }
                _ = try context.insert("doc", values: ["id": id, "tenant": tenant, "published": id % 3 == 0, "title": "title \(id % 7)"])
            }
        }
        return false
    }
}
