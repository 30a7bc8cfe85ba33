import Foundation
import Testing

@testable import Relate

/// Roles made for one test (LOGIN, a password, nothing else: PUBLIC's CONNECT on every
/// database), dropped afterwards; roles are the cluster's, so the names are random.
final class TestRoles {
    private(set) var names: [String] = []
    private let admin: Connection

    init() throws {
        admin = try TestDatabase.connect()
    }

    /// A new role that may log in with `password`, and nothing more.
    func make(_ purpose: String) throws -> (name: String, password: String) {
        let name = "\(purpose)_" + UUID().uuidString.prefix(8).lowercased()
        let password = "pw" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16)
        try admin.execute("CREATE ROLE \(name) LOGIN PASSWORD '\(password)'")
        names.append(name)
        return (name, password)
    }

    /// `url` (a URL or conninfo) as `role`.
    static func url(_ url: String, as role: (name: String, password: String)) -> String {
        if var components = URLComponents(string: url), components.scheme?.hasPrefix("postgres") == true {
            components.user = role.name
            components.password = role.password
            return components.string ?? url
        }
        return url + " user=\(role.name) password=\(role.password)"
    }

    deinit {
        for name in names.reversed() {
            _ = try? admin.execute("DROP OWNED BY \(name)")
            _ = try? admin.execute("DROP ROLE IF EXISTS \(name)")
        }
    }
}

/// Change tracking in a database other roles share (issue 26, items 1 and 2): a notification
/// is a hint that anyone who may connect can send, and the triggers never make another
/// program's write fail.
@Suite struct TrackingTrustTests {
    /// A role with nothing but CONNECT sends every kind of forged payload; the context keeps
    /// working (no error, sticky or not), reads rows again at worst, and agrees with the
    /// database afterwards; a real change still arrives.
    @Test func forgedNotificationsFromAConnectOnlyRoleCostAtMostARereading() throws {
        let roles = try TestRoles()
        let intruder = try roles.make("intruder")
        try ChangeTrackingTests.withTrackedDatabase(.triggers) { url, setup, observer in
            let context = observer.context
            let ada = try #require(try context.object("person", primaryKey: 1))
            let emailOID = try setup.query("SELECT 'email'::regclass::oid::int8")[0].decode(Int.self, at: 0)
            let personOID = try setup.query("SELECT 'person'::regclass::oid::int8")[0].decode(Int.self, at: 0)
            // A table of the same name elsewhere, with other columns.
            try setup.executeScript("CREATE SCHEMA elsewhere; CREATE TABLE elsewhere.person (x int)")
            let elsewhereOID = try setup.query("SELECT 'elsewhere.person'::regclass::oid::int8")[0].decode(Int.self, at: 0)
            let forger = try Connection(url: TestRoles.url(url, as: intruder))
            let storedByOwner = try setup.query("SELECT count(*) FROM relate_tracking.change")[0].decode(Int.self, at: 0)
            #expect(storedByOwner == 0)

            let huge = "{\"x\":9,\"s\":\"public\",\"t\":\"person\",\"k\":\"U\",\"keys\":["
                + (1...1_000).map { "[\($0)]" }.joined(separator: ",") + "]}"
            let payloads: [String] = [
                // The issue's: person's name with email's oid.
                #"{"x":2,"r":\#(emailOID),"s":"public","t":"person","k":"U","keys":[[4]]}"#,
                // email's oid under a name that exists nowhere; another schema's person.
                #"{"x":3,"r":\#(emailOID),"s":"public","t":"nope","k":"I","keys":[[1]]}"#,
                #"{"x":3,"r":\#(elsewhereOID),"s":"elsewhere","t":"person","k":"U","keys":[[1]]}"#,
                #"{"x":3,"r":\#(elsewhereOID),"s":"public","t":"person","k":"U","keys":[[1]]}"#,
                #"{"x":3,"r":999999999,"s":"public","t":"person","k":"D","keys":[[1]]}"#,
                // Not JSON, not an object, empty.
                "not json {", "[1,2,3]", "", "null", #""a string""#,
                // Every field of the wrong type.
                #"{"x":"y","r":"z","s":1,"t":[],"k":5,"keys":"abc","old":7}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"Z","keys":"abc"}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[["abc"]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[{"a":1}]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[1,2,3]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[1e308]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[99999999999999999999999]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[null]],"old":[[true]]}"#,
                #"{"x":4,"s":"public","t":"person","k":"U","keys":[[]]}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[1]],"c":5,"n":"x"}"#,
                #"{"x":4,"r":\#(personOID),"s":"public","t":"person","k":"U","keys":[[1]],"c":[1,{"a":1},null],"n":-3}"#,
                // A forged delete of a row that exists: read again, not deleted.
                #"{"x":5,"r":\#(personOID),"s":"public","t":"person","k":"D","keys":[[1]]}"#,
                // A stored payload's id that does not exist, and one that is not a number.
                #"{"x":6,"id":999999,"r":\#(personOID),"s":"public","t":"person","k":"U"}"#,
                #"{"x":6,"id":-1}"#, #"{"x":6,"id":"1"}"#,
                // As many keys as NOTIFY carries.
                huge,
            ]
            for payload in payloads {
                _ = try forger.query("SELECT pg_notify('relate_changes', $1)", [payload])
                #expect(throws: Never.self, "\(payload.prefix(80))") { _ = try context.waitForChanges(timeout: .milliseconds(100)) }
            }
            // NOTIFY refuses what is over its limit: the forger's problem.
            #expect(throws: (any Error).self) {
                _ = try forger.query("SELECT pg_notify('relate_changes', $1)", [String(repeating: "x", count: 9_000)])
            }
            #expect(!ada.isDeleted)
            #expect(try observer.disagreements() == [])

            // A CONNECT-only role cannot store a payload, nor install or remove triggers.
            for statement in [
                "INSERT INTO relate_tracking.change (payload) VALUES ('{}')",
                "SELECT relate_tracking.track('person')", "SELECT relate_tracking.untrack('person')",
            ] {
                let error = #expect(throws: PostgresError.self, "\(statement)") { try forger.execute(statement) }
                #expect(error?.sqlState?.rawValue == "42501", "\(statement)")
            }

            // Real changes still arrive, and the context never got stuck.
            let other = try Connection(url: url)
            try other.execute("UPDATE person SET surname = 'King' WHERE id = 1")
            #expect(try observer.settle().map(\.description).contains("update person (surname)"))
            #expect(try ada.value(forKey: "surname") as? String == "King")
            #expect(try observer.disagreements() == [])
        }
    }

    /// An update of a composite key under row-level security: the notification carries no
    /// key, and the payload stored for it (read back by a prepared statement) names the keys
    /// after and before, and the column changed.
    @Test func aStoredPayloadNamesACompositeKeyBeforeAndAfter() throws {
        try ChangeTrackingTests.withTrackedDatabase(.triggers) { url, setup, _ in
            let context = try DatabaseContext(url: url, schemas: ["public"])
            let feed = try NotificationFeed(main: context.connection, layout: context.layout)
            try setup.execute("ALTER TABLE person_title_rel ENABLE ROW LEVEL SECURITY")
            let listener = try Connection(url: url)
            try listener.execute("LISTEN relate_changes")
            try setup.execute("UPDATE person_title_rel SET title_id = 1 WHERE person_id = 2 AND title_id = 3")
            var (notified, events): ([String], [FeedEvent]) = ([], [])
            for _ in 0..<50 where notified.isEmpty || events.isEmpty {
                _ = try listener.waitForInput(timeout: .milliseconds(100))
                notified += try listener.notifications().map(\.payload)
                events += try feed.receive()
            }
            #expect(notified.count == 1 && notified.allSatisfy { $0.contains("\"id\"") && !$0.contains("keys") })
            guard case .changes(let notices, _) = try #require(events.first), let notice = notices.first else {
                Issue.record("no notice: \(events)")
                return
            }
            #expect(notice.table == "person_title_rel" && notice.kind == .update)
            #expect(notice.keys == [["2", "1"]] && notice.oldKeys == [["2", "3"]] && notice.changedColumns == ["title_id"])
        }
    }

    /// A table renamed after the model was read: its oid's name is not the model's, and the
    /// notifications of its writes (under the new name) say so.
    @Test func aRenamedTableIsASchemaChange() throws {
        try ChangeTrackingTests.withTrackedDatabase(.triggers) { url, setup, observer in
            try setup.execute("ALTER TABLE title RENAME TO honour")
            try setup.execute("UPDATE honour SET name = 'Lady' WHERE id = 1")
            let error = #expect(throws: RelateError.self) { _ = try observer.settle() }
            #expect(error?.kind == .schemaChanged)
            #expect(error?.message.contains("now named public.honour") == true)
        }
    }

    /// What each statement size costs the application's writes, tracked and not (printed).
    struct Timing: CustomStringConvertible {
        var rows: Int
        var tracked: [String: Duration] = [:]
        var untracked: [String: Duration] = [:]
        var description: String {
            ["insert", "update", "delete"].map { kind in
                "\(kind) \(rows) rows: tracked \(tracked[kind].map(Self.ms) ?? "?"), untracked \(untracked[kind].map(Self.ms) ?? "?")"
            }.joined(separator: "; ")
        }
        static func ms(_ duration: Duration) -> String {
            String(format: "%.0f ms", Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15)
        }
    }

    /// The owner of the tables runs `relate enable --grant-to reader` (the CLI); an
    /// application role granted only its tables writes 1, 2,000 and 100,000 rows in one
    /// statement each (insert, update, delete) and none fails; a context running as the
    /// reader receives every row of it and agrees with the database; neither the application
    /// nor the reader may write Relate's table.
    @Test func writersNeedNothingAndReadersGetEveryRow() throws {
        let roles = try TestRoles()
        let (owner, app, reader) = (try roles.make("owner"), try roles.make("app"), try roles.make("reader"))
        try TestDatabase.withDatabase { url in
            let admin = try Connection(url: url)
            let database = try admin.query("SELECT current_database()")[0].decode(String.self, at: 0)
            try admin.executeScript(
                """
                GRANT CREATE ON DATABASE \(database) TO \(owner.name);
                CREATE TABLE item (id int PRIMARY KEY, value int NOT NULL);
                ALTER TABLE item OWNER TO \(owner.name);
                GRANT SELECT, INSERT, UPDATE, DELETE ON item TO \(app.name);
                GRANT SELECT ON item TO \(reader.name);
                CREATE SCHEMA untracked;
                CREATE TABLE untracked.item (id int PRIMARY KEY, value int NOT NULL);
                GRANT USAGE ON SCHEMA untracked TO \(app.name);
                GRANT SELECT, INSERT, UPDATE, DELETE ON untracked.item TO \(app.name);
                """)
            let enabled = try InspectCommandTests.relate(["enable", TestRoles.url(url, as: owner), "--grant-to", reader.name])
            #expect(enabled.status == 0, "\(enabled.errors)")
            #expect(enabled.output.contains("\(reader.name) may read changes"))
            // The triggers' functions run as the owner, with search_path pinned.
            let functions = try admin.query(
                """
                SELECT count(*) FILTER (WHERE p.prosecdef AND pg_get_userbyid(p.proowner) = $1
                                          AND p.proconfig = ARRAY['search_path=pg_catalog, pg_temp']), count(*)
                  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                 WHERE n.nspname = 'relate_tracking' AND p.proname LIKE 'notify_%'
                """, [owner.name])
            #expect(try functions[0].decode(Int.self, at: 0) == 1 && functions[0].decode(Int.self, at: 1) == 1)
            let privileges = try admin.query(
                """
                SELECT has_schema_privilege($1, 'relate_tracking', 'USAGE'), has_schema_privilege($2, 'relate_tracking', 'USAGE'),
                       has_table_privilege($2, 'relate_tracking.change', 'SELECT'),
                       has_table_privilege($2, 'relate_tracking.change', 'INSERT, UPDATE, DELETE, TRUNCATE')
                """, [app.name, reader.name])[0]
            #expect(try privileges.decode(Bool.self, at: 0) == false)
            #expect(try privileges.decode(Bool.self, at: 1) == true)
            #expect(try privileges.decode(Bool.self, at: 2) == true)
            #expect(try privileges.decode(Bool.self, at: 3) == false)

            let writer = try Connection(url: TestRoles.url(url, as: app))
            let readerURL = TestRoles.url(url, as: reader)
            let context = try DatabaseContext(url: readerURL, schemas: ["public"])
            try context.startTrackingChanges(using: .triggers)
            /// Everything the reader's context is answered until `expected` changes came.
            func receive(_ expected: Int) throws -> [Change] {
                var all: [Change] = []
                while all.count < expected {
                    let more = try context.waitForChanges(timeout: .seconds(30))
                    if more.isEmpty { break }
                    all += more
                }
                return all
            }
            func timed(_ sql: String) throws -> Duration {
                let started = ContinuousClock.now
                try writer.execute(sql)
                return ContinuousClock.now - started
            }
            for rows in [1, 2_000, 100_000] {
                var timing = Timing(rows: rows)
                for (kind, sql) in [
                    ("insert", "INSERT INTO %@ SELECT i, 0 FROM generate_series(1, \(rows)) i"),
                    ("update", "UPDATE %@ SET value = value + 1"),
                    ("delete", "DELETE FROM %@"),
                ] {
                    timing.untracked[kind] = try timed(sql.replacingOccurrences(of: "%@", with: "untracked.item"))
                    timing.tracked[kind] = try timed(sql.replacingOccurrences(of: "%@", with: "item"))
                    let changes = try receive(rows)
                    #expect(changes.count == rows, "\(kind) of \(rows) rows")
                    #expect(changes.allSatisfy { $0.kind.rawValue == kind && $0.entity == "item" }, "\(kind) of \(rows) rows")
                    #expect(Set(changes.compactMap { $0.primaryKey.first as? Int }).count == rows, "\(kind) of \(rows) rows")
                    if kind == "insert" {
                        // The reader holds a few of them, which the update and the delete reach.
                        _ = try context.fetch("item", where: "id <= 5")
                    }
                    #expect(try ObjectFixture.disagreements(of: context, with: try DatabaseContext(url: url, schemas: ["public"])) == [])
                }
                print("TrackingTrustTests: \(timing)")
                context.reset()
            }

            // Only the owner writes Relate's table.
            for (role, connection) in [("app", writer), ("reader", try Connection(url: readerURL))] {
                let error = #expect(throws: PostgresError.self, "\(role)") {
                    try connection.execute("INSERT INTO relate_tracking.change (payload) VALUES ('{}')")
                }
                #expect(error?.sqlState?.rawValue == "42501", "\(role)")
            }
        }
    }
}
