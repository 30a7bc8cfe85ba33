import Foundation
import Relate
import Testing

/// `Entity.allowedWrites` from the catalog's `allowedWrites`, and its defaults for
/// catalogs made by hand. No server.
@Suite struct AllowedWritesTests {
    @Test func fromTheCatalogOrByKind() throws {
        var aggregate = view("department_counts", "region departments")
        aggregate.allowedWrites = []
        var triggered = view("town_names", "id name")
        triggered.allowedWrites = .update
        let tables = [
            table("person", "id name"), aggregate, triggered, view("plain", "id name"),
            Catalog.Table(name: "sizes", kind: .materializedView, columns: Examples.columns("region sizes")),
        ]
        let model = try makeModel(tables)
        #expect(try model.entity("person").allowedWrites == .all)
        #expect(try model.entity("department_counts").allowedWrites == [])
        #expect(try model.entity("town_names").allowedWrites == [.update])
        // Not known: taken as all, except for a materialized view, which takes none.
        #expect(try model.entity("plain").allowedWrites == .all)
        #expect(try model.entity("sizes").allowedWrites == [])
        // The bits are pg_relation_is_updatable's; others are ignored.
        #expect(Catalog.WriteOperations(rawValue: 28 | 1) == .all)
        #expect(try JSONDecoder().decode(Catalog.WriteOperations.self, from: Data("12".utf8)) == [.insert, .update])
    }
}
