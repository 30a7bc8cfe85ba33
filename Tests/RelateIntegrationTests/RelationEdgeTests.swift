import Foundation
import RelatePostgres
import Testing

@testable import Relate

/// Relations whose rows are not all their entity's own — tables under them the model does
/// not have — and keys that cannot find a row: each found by a review, each failing before
/// its fix.
@Suite struct RelationEdgeTests {
    static func with(
        _ sql: String, overrides: [Override] = [], extraSchemas: [String] = [], _ body: (ObjectFixture, Connection) throws -> Void
    ) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(sql.replacingOccurrences(of: "$SCHEMA", with: schema))
            let context = try DatabaseContext(
                connection: connection, overrides: overrides, schemas: [schema] + extraSchemas.map { "\(schema)\($0)" })
            try body(ObjectFixture(context: context, schema: schema), connection)
        }
    }

    static func names(_ connection: Connection, _ sql: String) throws -> [String] {
        try connection.query(sql).map { try $0.decode(String?.self, at: 0) ?? "NULL" }
    }

    /// A child table in a schema not searched: a fetch of the parent keeps to the parent's
    /// rows (the child's row under the same key was a second object), and a write by key
    /// changes the parent's row alone (it renamed the child's too).
    @Test func aChildOutsideTheModelIsNeitherReadNorWrittenThroughItsParent() throws {
        try Self.with(
            """
            CREATE SCHEMA $SCHEMA_archive;
            CREATE TABLE place (id int PRIMARY KEY, name text);
            CREATE TABLE $SCHEMA_archive.old_place (PRIMARY KEY (id)) INHERITS (place);
            INSERT INTO place VALUES (1, 'Lyon');
            INSERT INTO $SCHEMA_archive.old_place VALUES (1, 'Lugdunum');
            """
        ) { fixture, connection in
            defer { _ = try? connection.execute("DROP SCHEMA \"\(fixture.schema)_archive\" CASCADE") }
            let places = try fixture.context.fetch("place", orderBy: "id")
            #expect(places.count == 1)
            #expect(try fixture.context.count(FetchRequest("place")) == 1)
            let lyon = try #require(try fixture.context.object("place", primaryKey: 1))
            try lyon.setValue("Lyon (69)", forKey: "name")
            #expect(try Self.names(connection, "SELECT name FROM \"\(fixture.schema)_archive\".old_place") == ["Lugdunum"])
            #expect(try fixture.context.update("place", where: Key("id") == 1, values: ["name": "Lyon"]) == 1)
            #expect(try Self.names(connection, "SELECT name FROM \"\(fixture.schema)_archive\".old_place") == ["Lugdunum"])
        }
    }

    /// The same, the child in the schema searched but left out by an override.
    @Test func anIgnoredChildIsNotWrittenThroughItsParent() throws {
        try Self.with(
            """
            CREATE TABLE place (id int PRIMARY KEY, name text);
            CREATE TABLE old_place (PRIMARY KEY (id)) INHERITS (place);
            INSERT INTO place VALUES (1, 'Lyon');
            INSERT INTO old_place VALUES (1, 'Lugdunum');
            """, overrides: [.ignore("old_place")]
        ) { fixture, connection in
            let lyon = try #require(try fixture.context.object("place", primaryKey: 1))
            try lyon.setValue("Lyon (69)", forKey: "name")
            #expect(try Self.names(connection, "SELECT name FROM old_place") == ["Lugdunum"])
            #expect(try fixture.disagreements() == [])
        }
    }

    /// A table that inherits from two: to the second, whose descendant it is not in the
    /// model, it is a table under it that a fetch and a write keep out.
    @Test func aSecondParentKeepsToItsOwnRows() throws {
        try Self.with(
            """
            CREATE TABLE a (id int PRIMARY KEY, name text);
            CREATE TABLE b (id int PRIMARY KEY, label text);
            CREATE TABLE c (extra text, PRIMARY KEY (id)) INHERITS (a, b);
            INSERT INTO b VALUES (1, 'b-own');
            INSERT INTO c (id, name, label, extra) VALUES (1, 'c-name', 'c-label', 'x');
            """
        ) { fixture, connection in
            let context = fixture.context
            #expect(try context.model.entity("c").parent == "a")
            let child = try #require(try context.object("c", primaryKey: 1))
            let own = try context.fetch("b", orderBy: "id")
            #expect(own.count == 1)
            try #require(own.first).setValue("b-new", forKey: "label")
            #expect(try Self.names(connection, "SELECT label FROM ONLY c") == ["c-label"])
            #expect(try child.value(forKey: "label") as? String == "c-label")
            #expect(try fixture.disagreements() == [])
        }
    }
}
