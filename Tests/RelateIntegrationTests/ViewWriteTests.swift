import Foundation
import Testing

@testable import Relate

/// `hard_cases.sql`'s views and materialized view, keyed by an override: writes go through where PostgreSQL
/// takes them (a simple view, an `INSTEAD OF` trigger) and are refused, naming the view,
/// before any statement is sent where it does not; a materialized view is refreshed.
@Suite struct ViewWriteTests {
    /// The views are `hard_cases.sql`'s; the materialized view is refreshed once the rows are there.
    static let views = UniqueKeyedTableTests.data + "REFRESH MATERIALIZED VIEW region_sizes;"

    static let overrides: [Override] = [
        .primaryKey(of: "big_departments", columns: ["code"]),
        .primaryKey(of: "department_counts", columns: ["region"]),
        .primaryKey(of: "town_names", columns: ["id"]),
        .primaryKey(of: "region_sizes", columns: ["region"]),
    ]

    static func with(_ body: (ObjectFixture) throws -> Void) throws {
        try TestDatabase.withSchema { connection, schema in
            try TestDatabase.loadExample("hard_cases", into: connection, schema: schema)
            try connection.executeScript(views)
            let context = try DatabaseContext(connection: connection, overrides: overrides, schemas: [schema, "\(schema)_other"])
            try body(ObjectFixture(context: context, schema: schema))
        }
    }

    @Test func whatEachRelationTakesIsRead() throws {
        try Self.with { fixture throws in
            let model = fixture.context.model
            let expected: [(String, Catalog.WriteOperations)] = [
                ("departments", .all), ("big_departments", .all), ("department_counts", []), ("town_names", .update),
                ("region_sizes", []), ("book_with_author", []),
            ]
            for (name, writes) in expected {
                #expect(try model.entity(name).allowedWrites == writes, "\(name)")
            }
            #expect(try model.entity("region_sizes").kind == .materializedView)
        }
    }

    @Test func anAggregateViewsWritesAreRefusedBeforeAnyStatement() throws {
        try Self.with { fixture throws in
            let context = fixture.context
            let auvergne = try #require(try context.object("department_counts", primaryKey: "84"))
            #expect(try auvergne.value(forKey: "departments", as: Int.self) == 2)
            let statements = fixture.sql {
                let update = #expect(throws: RelateError.self) { try auvergne.setValue(3, forKey: "departments") }
                #expect(update?.kind == .invalidWrite && update?.entity == "department_counts")
                #expect(update?.message.contains("an update of \"department_counts\" was not sent: it is a view PostgreSQL cannot update") == true,
                        "\(update?.message ?? "")")
                let insert = #expect(throws: RelateError.self) { try context.insert("department_counts", values: ["region": "11"]) }
                #expect(insert?.message.contains("an insert into \"department_counts\"") == true)
                let delete = #expect(throws: RelateError.self) { try context.delete(auvergne) }
                #expect(delete?.message.contains("a delete from \"department_counts\"") == true)
                let byKey = #expect(throws: RelateError.self) { try context.update("department_counts", primaryKey: "84", values: ["departments": 1]) }
                #expect(byKey?.kind == .invalidWrite)
            }
            #expect(statements.isEmpty, "\(statements)")
        }
    }

    @Test func writesGoThroughASimpleViewAndAnInsteadOfTrigger() throws {
        try Self.with { fixture throws in
            let context = fixture.context
            let rhone = try #require(try context.object("big_departments", primaryKey: "69"))
            try rhone.setValue("Rhône (69)", forKey: "name")
            let lyon = try #require(try context.object("town_names", primaryKey: 1))
            try lyon.setValue("Lyon 2e", forKey: "name")
            #expect(try lyon.value(forKey: "department_name", as: String.self) == "Rhône (69)")
            let towns = try context.fetch("towns", where: "id = $1", [1])
            #expect(try towns.first?.value(forKey: "name", as: String.self) == "Lyon 2e")
            // The trigger is for updates only.
            let statements = fixture.sql {
                let delete = #expect(throws: RelateError.self) { try context.delete(lyon) }
                #expect(delete?.message.contains("a delete from \"town_names\" was not sent") == true)
            }
            #expect(statements.isEmpty)
        }
    }

    @Test func aMaterializedViewIsReadOnlyAndRefreshed() throws {
        try Self.with { fixture throws in
            let context = fixture.context
            func sizes() throws -> [String: Int] {
                Dictionary(uniqueKeysWithValues: try context.fetch("region_sizes").map {
                    (try $0.value(forKey: "region", as: String.self)!, try $0.value(forKey: "departments", as: Int.self)!)
                })
            }
            #expect(try sizes() == ["84": 2, "93": 1])
            try context.insert("departments", values: ["code": "26", "capital": "26362", "region": "84", "name": "Drôme"])
            #expect(try sizes() == ["84": 2, "93": 1])
            try context.refreshMaterializedView("region_sizes")
            let auvergne = try #require(try context.object("region_sizes", primaryKey: "84"))
            try context.refresh(auvergne)
            #expect(try sizes() == ["84": 3, "93": 1])
            try context.insert("departments", values: ["code": "04", "capital": "04070", "region": "93", "name": "Alpes-de-Haute-Provence"])
            try context.refreshMaterializedView("region_sizes", concurrently: true)
            #expect(try sizes() == ["84": 3, "93": 2])

            let statements = fixture.sql {
                let write = #expect(throws: RelateError.self) { try auvergne.setValue(0, forKey: "departments") }
                #expect(write?.message.contains("it is a materialized view, which is read-only") == true, "\(write?.message ?? "")")
                let notAView = #expect(throws: RelateError.self) { try context.refreshMaterializedView("departments") }
                #expect(notAView?.kind == .invalidRequest)
            }
            #expect(statements.isEmpty)
        }
    }
}
