import Foundation
import Testing

@testable import Relate

/// A context over a fresh schema loaded from `sql/examples`, with the SQL it sends recorded.
final class ObjectFixture {
    let context: DatabaseContext
    let schema: String
    private(set) var statements: [String] = []

    /// Ada (emails 1 and 2) and Grace (email 3), for `seed_person_email`.
    static let peopleWithEmails = """
        INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper');
        INSERT INTO email (address, person_id) VALUES ('ada@example.com', 1), ('ada@work.example', 1), ('grace@example.com', 2);
        """

    /// A shelf `A1`, three books and three paints, and the keyed helpers `shelf_book` (a
    /// `varchar` key against a `text` one) and `shelf_paint` (an enum key, which has no
    /// array type a Swift array goes into), both empty.
    static let shelves = """
        CREATE TYPE colour AS ENUM ('red', 'green', 'blue');
        CREATE TABLE shelf (code varchar(10) PRIMARY KEY);
        CREATE TABLE book (isbn text PRIMARY KEY);
        CREATE TABLE paint (colour colour PRIMARY KEY);
        CREATE TABLE shelf_book (shelf_code varchar(10) REFERENCES shelf, book_isbn varchar(20) REFERENCES book,
            PRIMARY KEY (shelf_code, book_isbn));
        CREATE TABLE shelf_paint (shelf_code varchar(10) REFERENCES shelf, paint_colour colour REFERENCES paint,
            PRIMARY KEY (shelf_code, paint_colour));
        INSERT INTO shelf VALUES ('A1');
        INSERT INTO book VALUES ('978-0'), ('978-1'), ('978-2');
        INSERT INTO paint VALUES ('red'), ('green'), ('blue');
        """

    /// Ada (Countess) and Grace (Rear Admiral, Doctor), for `seed_person_title`.
    static let peopleWithTitles = """
        INSERT INTO person (firstname, surname) VALUES ('Ada', 'Lovelace'), ('Grace', 'Hopper');
        INSERT INTO title (name) VALUES ('Countess'), ('Rear Admiral'), ('Doctor');
        INSERT INTO person_title_rel VALUES (1, 1), (2, 2), (2, 3);
        """

    init(context: DatabaseContext, schema: String) {
        self.context = context
        self.schema = schema
        context.connection.trace = { [weak self] sql in self?.statements.append(sql) }
    }

    /// Runs `body` and returns the SQL it sent, in order.
    func sql(_ body: () throws -> Void) rethrows -> [String] {
        statements.removeAll()
        try body()
        return statements
    }

    /// A second context on its own connection, reading the database as it is now.
    func freshContext(manyToMany: ManyToManyRule = .keyed) throws -> DatabaseContext {
        let connection = try TestDatabase.connect()
        var schemas: [String] = []
        for name in [schema, "\(schema)_other"] where try connection.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [name]).count == 1 {
            schemas.append(name)
        }
        return try DatabaseContext(connection: connection, manyToMany: manyToMany, schemas: schemas)
    }

    /// Every registered object's values and every loaded collection, compared with what a
    /// second context reads from the database; the differences, empty when they agree.
    func disagreements() throws -> [String] {
        try Self.disagreements(of: context, with: try freshContext(manyToMany: context.model.manyToManyRule))
    }

    /// Every object `context` holds and every set it has loaded, against `fresh`, a
    /// context that reads the database as it is now; the differences.
    static func disagreements(of context: DatabaseContext, with fresh: DatabaseContext) throws -> [String] {
        var differences: [String] = []
        for (entityIndex, registry) in context.graph.registries.enumerated() {
            let entity = context.model.entities[entityIndex]
            for object in registry.all {
                guard let twin = try fresh.object(entity.name, primaryKey: object.primaryKey.map { $0 as Any }) else {
                    differences.append("\(object) is in memory but not in the database")
                    continue
                }
                if "\(object.values)" != "\(twin.values)" {
                    differences.append("\(object): memory \(object.values), database \(twin.values)")
                }
                for (index, set) in object.sets {
                    let relationship = entity.relationships[index]
                    let expected = try twin.objects(forKey: relationship.qualifiedName)
                    let mine = set.allObjects.map { "\($0.primaryKey) ×\(set.count(for: $0))" }.sorted()
                    let theirs = expected.allObjects.map { "\($0.primaryKey) ×\(expected.count(for: $0))" }.sorted()
                    if mine != theirs {
                        differences.append("\(object).\(relationship.key): memory \(mine), database \(theirs)")
                    }
                }
            }
        }
        return differences
    }

    /// A context over a new schema that `sql` makes (dropped afterwards).
    static func inSchema(made sql: String, _ body: (ObjectFixture) throws -> Void) throws {
        try TestDatabase.withSchema { connection, schema in
            try connection.executeScript(sql)
            let context = try DatabaseContext(connection: connection, schemas: [schema])
            try body(ObjectFixture(context: context, schema: schema))
        }
    }

    static func with<Result>(
        _ example: String, manyToMany: ManyToManyRule = .keyed, extraSQL: String? = nil,
        _ body: (ObjectFixture) throws -> Result
    ) throws -> Result {
        try TestDatabase.withSchema { connection, schema in
            try TestDatabase.loadExample(example, into: connection, schema: schema)
            if let extraSQL { try connection.executeScript(extraSQL) }
            var schemas = [schema]
            if example == "hard_cases" { schemas.append("\(schema)_other") }
            let context = try DatabaseContext(connection: connection, manyToMany: manyToMany, schemas: schemas)
            return try body(ObjectFixture(context: context, schema: schema))
        }
    }
}
