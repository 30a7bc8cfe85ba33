import Foundation
import Relate
import Testing

/// Tables that `INHERITS` from others: the parent is known, and the parent's foreign keys
/// apply to the children that carry their columns. Hand-built catalogs, no server.
@Suite struct InheritanceTests {
    /// place ← capital ← seat, and a country they refer to.
    let tree: [Catalog.Table] = [
        table("country", "id name"),
        table("region", "id name"),
        table("place", "id name country_id", foreignKeys: [fk(on: "place", ["country_id"], "country")]),
        Catalog.Table(
            name: "capital", columns: Examples.columns("id! name country_id region_id since"), primaryKey: ["id"],
            foreignKeys: [fk(on: "capital", ["region_id"], "region")], parent: .init(name: "place")),
        Catalog.Table(
            name: "seat", columns: Examples.columns("id! name country_id region_id since chamber"), primaryKey: ["id"],
            parent: .init(name: "capital")),
    ]

    @Test func theParentIsKnown() throws {
        let model = try makeModel(tree)
        #expect(try model.entity("capital").parent == "place")
        #expect(try model.entity("seat").parent == "capital")
        #expect(try model.entity("place").parent == nil)
        // A parent the model does not have (another schema not read, or ignored) is none.
        let ignored = try makeModel(tree, overrides: [.ignore("place")])
        #expect(try ignored.entity("capital").parent == nil)
    }

    @Test func theParentsForeignKeysApplyToItsDescendants() throws {
        let model = try makeModel(tree)
        #expect(try model.summary("capital", "country")
            == "country many-to-one capital(country_id) → country(id) fk:from place_country_id_fkey foreign-key inverse:capital")
        #expect(try model.summary("country", "capital")
            == "capital one-to-many country(id) → capital(country_id) fk:to place_country_id_fkey foreign-key inverse:country")
        // A grandchild gets its grandparent's and its parent's.
        #expect(try model.entity("seat").relationships.map(\.key).sorted() == ["country", "region"])
        #expect(try model.summary("seat", "region")
            == "region many-to-one seat(region_id) → region(id) fk:from capital_region_id_fkey foreign-key inverse:seat")
        // The parent keeps its own, and gets none of its children's.
        #expect(try model.entity("place").relationships.map(\.key) == ["country"])
    }

    @Test func aChildsOwnForeignKeyIsNotRepeatedAndMissingColumnsAreNoRelationship() throws {
        var tables = tree
        // capital declares the same key itself, under another name.
        tables[3].foreignKeys.append(fk("capital_country", ["country_id"], "country"))
        // seat without country_id (a hand-built catalog; PostgreSQL copies every column).
        tables[4].columns.removeAll { $0.name == "country_id" }
        let model = try makeModel(tables)
        let capital = try model.entity("capital").relationship(forKey: "country")
        #expect(capital.constraint == "capital_country")
        #expect(try model.entity("capital").relationship(forKey: "place_country_id_fkey") == capital)
        #expect(try model.entity("seat").relationships.map(\.key) == ["region"])
    }

    @Test func inspectShowsTheParent() throws {
        let model = try makeModel(tree)
        #expect(model.textDescription().contains("capital  (public.capital, table, primary key: id, inherits place)"))
        let description = try JSONDecoder().decode(ModelDescription.self, from: Data(model.jsonDescription().utf8))
        #expect(description.entities.first { $0.name == "seat" }?.parent == "capital")
        #expect(description.entities.first { $0.name == "place" }?.parent == nil)
    }
}
