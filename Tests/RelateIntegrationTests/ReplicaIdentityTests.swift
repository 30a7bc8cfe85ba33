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
}
