import Foundation
import Testing

@testable import Relate

/// Issue 23, item 4: a schema subset reads only what it was asked. A table read only
/// because a foreign key points at it is an end, never a source.
@Suite struct SchemaSubsetTests {
    /// The minimal case, in schemas `<s>_a` and `<s>_b`.
    static func withSubset<Result>(_ body: (_ a: String, _ b: String) throws -> Result) throws -> Result {
        try TestDatabase.withSchema { connection, schema in
            let (a, b) = ("\(schema)_a", "\(schema)_b")
            defer {
                if let cleaner = try? TestDatabase.connect() {
                    _ = try? cleaner.execute("DROP SCHEMA IF EXISTS \(a) CASCADE")
                    _ = try? cleaner.execute("DROP SCHEMA IF EXISTS \(b) CASCADE")
                }
            }
            try connection.executeScript("""
                CREATE SCHEMA \(a); CREATE SCHEMA \(b);
                CREATE TABLE \(b).x (id int PRIMARY KEY); CREATE TABLE \(b).y (id int PRIMARY KEY);
                CREATE TABLE \(b).z (id int PRIMARY KEY);
                CREATE TABLE \(b).h (x_id int NOT NULL REFERENCES \(b).x, y_id int NOT NULL REFERENCES \(b).y,
                                  z_id int REFERENCES \(b).z, PRIMARY KEY (x_id, y_id));
                CREATE TABLE \(a).t (id int PRIMARY KEY, h_x int, h_y int, x_id int REFERENCES \(b).x,
                                  y_id int REFERENCES \(b).y, FOREIGN KEY (h_x, h_y) REFERENCES \(b).h);
                """)
            return try body(a, b)
        }
    }

    @Test func onlyTheRequestedSchemasAreSources() throws {
        try Self.withSubset { a, b in
            for rule in [ManyToManyRule.keyed, .anyTwoForeignKeys, .strict] {
                let context = try DatabaseContext(url: TestDatabase.url(), manyToMany: rule, schemas: [a])
                let model = context.model
                // The three foreign keys of a.t, once per direction, and nothing else.
                let pairs = Set(model.relationships.map { "\($0.from.table) \($0.kind.rawValue) \($0.to.table)" })
                #expect(model.relationships.count == 6)
                #expect(pairs == [
                    "t many-to-one h", "h one-to-many t",
                    "t many-to-one x", "x one-to-many t",
                    "t many-to-one y", "y one-to-many t",
                ], "\(rule)")
                #expect(model.relationships.allSatisfy { $0.from.schema == a || $0.to.schema == a })
                #expect(model.entity(schema: b, table: "z") == nil)
            }
        }
    }

    @Test func inspectJSONOfTheSubset() throws {
        try Self.withSubset { a, b in
            let run = try InspectCommandTests.relate(["inspect", TestDatabase.url(), "--schema", a, "--format", "json", "--many-to-many", "any"])
            #expect(run.status == 0, "\(run.errors)")
            let description = try JSONDecoder().decode(ModelDescription.self, from: Data(run.output.utf8))
            #expect(description.relationships.count == 6)
            #expect(!description.relationships.contains { $0.kind == "many-to-many" })
            #expect(!description.relationships.contains { $0.from.table == "h" && $0.to.table != "t" })
            #expect(description.entities.first { $0.name == "t" }?.modelName == "t")
            #expect(description.entities.first { $0.name == "h" }?.modelName == "\(b).h")
            #expect(Set(description.entities.map { "\($0.schema).\($0.name)" }) == ["\(a).t", "\(b).h", "\(b).x", "\(b).y"])
        }
    }
}
