import Foundation
import Testing

@testable import Relate

/// `enable(logicalDecodingOn:usingUniqueIndexes:)`: a table without a primary key is
/// identified by the unique index Relate keys it by, where the user allows it, else by the
/// whole row (`FULL`); changes then carry that key; `disable` gives the default back.
@Suite struct ReplicaIdentityTests {
    static let schema = """
        CREATE TABLE town (id serial UNIQUE NOT NULL, code text NOT NULL, name text NOT NULL, UNIQUE (code, name));
        CREATE TABLE loose (code text UNIQUE, label text);
        CREATE TABLE person (id serial PRIMARY KEY, name text);
        INSERT INTO town (code, name) VALUES ('69123', 'Lyon'), ('75056', 'Paris');
        """

    static func identities(_ connection: Connection) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try connection.query("""
            SELECT c.relname::text, c.relreplident::text || coalesce(':' || (SELECT ic.relname::text FROM pg_index x
                     JOIN pg_class ic ON ic.oid = x.indexrelid WHERE x.indrelid = c.oid AND x.indisreplident), '')
            FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
            """)
        {
            result[try row.decode(String.self, at: 0)] = try row.decode(String.self, at: 1)
        }
        return result
    }

    @Test func theKeysIndexWhereAllowedElseFull() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(Self.schema)
            try ChangeTracking.enable(logicalDecodingOn: setup, usingUniqueIndexes: true)
            // town's key is its one-column constraint on id; loose's unique column may be NULL.
            #expect(try Self.identities(setup) == ["town": "i:town_id_key", "loose": "f", "person": "d"])

            let context = try DatabaseContext(url: url)
            #expect(try context.model.entity("town").primaryKey == ["id"])
            try context.startTrackingChanges(using: .logicalDecoding)
            let lyon = try #require(try context.object("town", primaryKey: 1))
            let other = try Connection(url: url)
            try other.execute("UPDATE town SET name = 'Lyon 1er' WHERE id = 1")
            try other.execute("DELETE FROM town WHERE id = 2")
            var changes: [Change] = []
            for _ in 0..<120 where !changes.contains(where: { $0.kind == .delete }) {
                changes += try context.waitForChanges(timeout: .milliseconds(500))
            }
            // Each change names its row by the key the index gave.
            #expect(changes.contains { $0.entity == "town" && $0.kind == .update && ($0.primaryKey.first as? Int) == 1 })
            #expect(changes.contains { $0.entity == "town" && $0.kind == .delete && ($0.primaryKey.first as? Int) == 2 })
            #expect(try lyon.value(forKey: "name", as: String.self) == "Lyon 1er")

            try ChangeTracking.disable(logicalDecodingOn: setup)
            #expect(try Self.identities(setup) == ["town": "d", "loose": "d", "person": "d"])
            // Not allowed: FULL, as before.
            try ChangeTracking.enable(logicalDecodingOn: setup)
            #expect(try Self.identities(setup) == ["town": "f", "loose": "f", "person": "d"])
            try ChangeTracking.disable(logicalDecodingOn: setup)
        }
    }

    /// Asked, tables with row-level security (on themselves, or on a table they inherit
    /// from or are a partition of) get `FULL`, in place of the default identity or of the
    /// index an earlier run set, and an update of a row the feed never saw says which
    /// columns it changed; not asked, they keep their default (and the feed, whose role
    /// here bypasses the policies, names them against the row its slot's snapshot held).
    /// An identity the user chose stays. `disable` gives back all that the runs set.
    @Test func fullUnderRowSecurityWhereAsked() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(Self.schema + """
                CREATE TABLE note (id int PRIMARY KEY, body text, tag text);
                INSERT INTO note VALUES (1, 'a', 't'), (2, 'b', 't');
                ALTER TABLE note ENABLE ROW LEVEL SECURITY;
                CREATE TABLE entry (id int, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
                CREATE TABLE entry_2026 PARTITION OF entry FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
                ALTER TABLE entry ENABLE ROW LEVEL SECURITY;
                CREATE TABLE tag (code text UNIQUE NOT NULL);
                ALTER TABLE tag ENABLE ROW LEVEL SECURITY;
                CREATE TABLE memo (id int PRIMARY KEY, body text);
                ALTER TABLE memo ENABLE ROW LEVEL SECURITY;
                CREATE TABLE urgent_memo (level int, PRIMARY KEY (id)) INHERITS (memo);
                CREATE TABLE badge (id int PRIMARY KEY, code text UNIQUE NOT NULL);
                ALTER TABLE badge ENABLE ROW LEVEL SECURITY, REPLICA IDENTITY USING INDEX badge_code_key;
                """)
            func changedColumns(updating id: Int) async throws -> [String]? {
                let database = try Database(url: url, maxConnections: 1)
                defer { database.close() }
                let changes = try await database.changes(using: .logicalDecoding)
                try setup.execute("UPDATE note SET body = body || 'x' WHERE id = \(id)")
                for try await committed in changes {
                    if let change = committed.changes.first { return change.changedColumns }
                }
                return ["the stream ended"]
            }
            let untouched = ["town": "d", "loose": "d", "person": "d", "note": "d", "entry_2026": "d", "tag": "d", "memo": "d", "urgent_memo": "d", "badge": "i:badge_code_key"]
            // Not asked: the tables with row-level security keep their default, or get their
            // unique index as any keyless table does.
            try ChangeTracking.enable(logicalDecodingOn: setup, usingUniqueIndexes: true)
            #expect(try Self.identities(setup) == untouched.merging(["town": "i:town_id_key", "loose": "f", "tag": "i:tag_code_key"]) { $1 })
            #expect(try await changedColumns(updating: 1) == ["body"])

            // Asked, without a disable between: those, the partition of a root and the child
            // of a parent with row-level security, and the keyless table with row-level
            // security (its index set by the run before) get FULL; the user's index stays.
            try ChangeTracking.enable(logicalDecodingOn: setup, usingUniqueIndexes: true, fullIdentityUnderRowSecurity: true)
            let asked = untouched.merging(["town": "i:town_id_key", "loose": "f", "note": "f", "entry_2026": "f", "tag": "f", "memo": "f", "urgent_memo": "f"]) { $1 }
            #expect(try Self.identities(setup) == asked)
            #expect(try await changedColumns(updating: 2) == ["body"])
            // Row-level security turned on for another table: enabling again sets it too.
            try setup.execute("ALTER TABLE person ENABLE ROW LEVEL SECURITY")
            try ChangeTracking.enable(logicalDecodingOn: setup, usingUniqueIndexes: true, fullIdentityUnderRowSecurity: true)
            #expect(try Self.identities(setup) == asked.merging(["person": "f"]) { $1 })
            try ChangeTracking.disable(logicalDecodingOn: setup)
            #expect(try Self.identities(setup) == untouched)
        }
    }

    /// `disable` gives back each identity `enable` set while it is still that one: a table
    /// whose identity the user changed since keeps it. Tables are remembered by their
    /// schema-qualified names, so a `search_path` other than `enable`'s finds them; a
    /// comment of an earlier version (names alone) is still read.
    @Test func disableGivesBackOnlyWhatEnableSet() throws {
        try TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(Self.schema + """
                CREATE SCHEMA app;
                CREATE TABLE app.keyless (code text);
                """)
            try setup.execute("SET search_path = app, public")
            try ChangeTracking.enable(logicalDecodingOn: setup, schemas: ["public", "app"], usingUniqueIndexes: true)
            try setup.execute("RESET search_path")
            #expect(try Self.identities(setup) == ["town": "i:town_id_key", "loose": "f", "person": "d"])
            #expect(try setup.query("SELECT relreplident::text FROM pg_class WHERE oid = 'app.keyless'::regclass")[0].decode(String.self, at: 0) == "f")
            // The user's own choice since: town by the whole row.
            try setup.execute("ALTER TABLE town REPLICA IDENTITY FULL")
            try ChangeTracking.disable(logicalDecodingOn: setup)
            #expect(try Self.identities(setup) == ["town": "f", "loose": "d", "person": "d"])
            #expect(try setup.query("SELECT relreplident::text FROM pg_class WHERE oid = 'app.keyless'::regclass")[0].decode(String.self, at: 0) == "d")

            // An earlier version's comment: names alone, any identity but the default given back.
            try setup.execute("ALTER TABLE town REPLICA IDENTITY DEFAULT")
            try ChangeTracking.enable(logicalDecodingOn: setup)
            try setup.execute("COMMENT ON PUBLICATION relate_changes IS '[\"loose\", \"town\"]'")
            try ChangeTracking.disable(logicalDecodingOn: setup)
            #expect(try Self.identities(setup) == ["town": "d", "loose": "d", "person": "d"])
        }
    }
}
