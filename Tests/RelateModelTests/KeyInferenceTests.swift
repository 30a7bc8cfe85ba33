import Foundation
import Relate
import RelateCodeGen
import Testing

/// The key of an entity without a primary key: a unique constraint, else a unique index,
/// on `NOT NULL` columns (a constraint first, then the fewest columns, then the name), or
/// one an override declares. Hand-built catalogs, no server.
@Suite struct KeyInferenceTests {
    func entity(_ name: String, in tables: [Catalog.Table] = Examples.keyedWithoutPrimaryKey, overrides: [Override] = [])
        throws -> Entity
    {
        try makeModel(tables, overrides: overrides).entity(name)
    }

    @Test func frenchRegionsDepartmentsAndTownsAreKeyedByTheirUniqueConstraints() throws {
        let regions = try entity("regions")
        // Three one-column constraints: the first by name.
        #expect(regions.primaryKey == ["code"] && regions.keySource == .uniqueConstraint && regions.keyName == "regions_code_key")
        // The key is not repeated among the other unique keys.
        #expect(regions.uniqueKeys == [["id"], ["name"]])
        let departments = try entity("departments")
        #expect(departments.primaryKey == ["code"] && departments.keyName == "departments_code_key")
        // One column before two, whatever the names.
        let towns = try entity("towns")
        #expect(towns.primaryKey == ["id"] && towns.keySource == .uniqueConstraint && towns.keyName == "towns_id_key")
    }

    @Test func theirForeignKeysToTheCodesAreRelationshipsBothWays() throws {
        let model = try makeModel(Examples.keyedWithoutPrimaryKey)
        #expect(try model.summary("departments", "regions")
            == "regions many-to-one departments(region) → regions(code) fk:from departments_region_fkey foreign-key inverse:departments")
        #expect(try model.summary("regions", "departments")
            == "departments one-to-many regions(code) → departments(region) fk:to departments_region_fkey foreign-key inverse:regions")
        #expect(try model.summary("towns", "departments")
            == "departments many-to-one towns(department) → departments(code) fk:from towns_department_fkey foreign-key inverse:towns")
        #expect(try model.entity("departments").attribute(forKey: "region").name == "region")
    }

    @Test func aNullableUniqueColumnOrAPartialIndexIsNoKey() throws {
        for name in ["nullable_code", "partial_code"] {
            let entity = try entity(name)
            #expect(entity.primaryKey.isEmpty && entity.keySource == nil && entity.keyName == nil, "\(name)")
        }
        // The nullable unique column stays a unique key for relationship inference.
        #expect(try entity("nullable_code").uniqueKeys == [["code"]])
    }

    @Test func anIndexWhenThereIsNoConstraintAndAConstraintBeforeAnIndex() throws {
        let indexed = try entity("index_keyed")
        #expect(indexed.primaryKey == ["code"] && indexed.keySource == .uniqueIndex && indexed.keyName == "index_keyed_code")
        // The index on c has fewer columns; the constraint on (a, b) wins.
        let first = try entity("constraint_first")
        #expect(first.primaryKey == ["a", "b"] && first.keySource == .uniqueConstraint && first.keyName == "constraint_first_a_b_key")
        #expect(first.uniqueKeys == [["c"]])
    }

    @Test func aPrimaryKeyAlwaysWinsAndSaysSo() throws {
        let person = try entity("person", in: Examples.seed)
        #expect(person.primaryKey == ["id"] && person.keySource == .primaryKey && person.keyName == nil)
        let view = try entity("book_with_author", in: Examples.hardCases)
        #expect(view.primaryKey.isEmpty && view.keySource == nil)
    }

    /// The rule does not depend on the catalog's order, and ties fall to the name.
    @Test func theRuleIsDeterministic() throws {
        let keys: [Catalog.UniqueKey] = [
            .init(name: "t_zz", columns: ["z"], isConstraint: false),
            .init(name: "t_b_key", columns: ["b"]),
            .init(name: "t_a_c_key", columns: ["a", "c"]),
            .init(name: "t_a_key", columns: ["a"]),
        ]
        for order in [keys, keys.reversed(), [keys[2], keys[0], keys[3], keys[1]]] {
            let table = Catalog.Table(name: "t", columns: Examples.columns("a! b! c! z!"), uniqueKeys: order)
            let entity = try entity("t", in: [table])
            #expect(entity.primaryKey == ["a"] && entity.keyName == "t_a_key")
        }
        // With `a` nullable, the next constraint of one column.
        let nullable = Catalog.Table(name: "t", columns: Examples.columns("a b! c! z!"), uniqueKeys: keys)
        #expect(try entity("t", in: [nullable]).keyName == "t_b_key")
        // With every constraint's column nullable, the index.
        let onlyIndex = Catalog.Table(name: "t", columns: Examples.columns("a b c z!"), uniqueKeys: keys)
        #expect(try entity("t", in: [onlyIndex]).keySource == .uniqueIndex)
    }

    @Test func inspectShowsTheKeyAndWhereItCameFrom() throws {
        let model = try makeModel(Examples.keyedWithoutPrimaryKey + Examples.seed)
        let text = model.textDescription()
        #expect(text.contains("regions  (public.regions, table, key: code (unique constraint regions_code_key))"))
        #expect(text.contains("index_keyed  (public.index_keyed, table, key: code (unique index index_keyed_code))"))
        #expect(text.contains("nullable_code  (public.nullable_code, table, no key)"))
        #expect(text.contains("person  (public.person, table, primary key: id)"))

        let description = try JSONDecoder().decode(ModelDescription.self, from: Data(model.jsonDescription().utf8))
        func described(_ name: String) throws -> ModelDescription.EntityDescription {
            try #require(description.entities.first { $0.name == name })
        }
        #expect(try described("regions").keySource == "unique-constraint" && described("regions").keyName == "regions_code_key")
        #expect(try described("regions").primaryKey == ["code"])
        #expect(try described("index_keyed").keySource == "unique-index")
        #expect(try described("person").keySource == "primary-key" && described("person").keyName == nil)
        #expect(try described("nullable_code").keySource == nil && described("nullable_code").primaryKey.isEmpty)
    }

    @Test func theGeneratedTypeSaysWhichKeyItUses() throws {
        let model = try makeModel(Examples.keyedWithoutPrimaryKey + [view("recent", "id title")], overrides: [.primaryKey(of: "recent", columns: ["id"])])
        let files = try Generator(ModelSnapshot(json: Data(model.jsonDescription().utf8))).files()
        func file(_ entity: String) throws -> String {
            try #require(files.first { $0.name == Generator.fileName(ofEntity: entity) }?.contents)
        }
        #expect(try file("regions").contains("/// Keyed by the unique constraint `regions_code_key` (`code`): the table has no primary key."))
        #expect(try file("regions").contains("/// The key (unique-constraint)'s type: its one column's.\n    public typealias PrimaryKey = String"))
        #expect(try file("index_keyed").contains("/// Keyed by the unique index `index_keyed_code` (`code`)"))
        #expect(try file("recent").contains("/// Keyed by `id`, as an override declares (`Override.primaryKey(of:columns:)`)."))
        #expect(try file("nullable_code").contains("/// It has no key: its rows are read, never written or opened by key."))
    }

    /// A catalog encoded before `isConstraint` existed still decodes, its keys as constraints.
    @Test func olderCatalogsDecode() throws {
        let json = #"{"name": "t_code_key", "columns": ["code"]}"#
        let key = try JSONDecoder().decode(Catalog.UniqueKey.self, from: Data(json.utf8))
        #expect(key == Catalog.UniqueKey(name: "t_code_key", columns: ["code"], isConstraint: true))
        let index = Catalog.UniqueKey(name: "t_code", columns: ["code"], isConstraint: false)
        #expect(try JSONDecoder().decode(Catalog.UniqueKey.self, from: JSONEncoder().encode(index)) == index)
    }

    // MARK: - Override.primaryKey(of:columns:)

    @Test func anOverrideKeysAView() throws {
        let tables = Examples.hardCases
        let view = try entity("book_with_author", in: tables, overrides: [.primaryKey(of: "book_with_author", columns: ["id"])])
        #expect(view.primaryKey == ["id"] && view.keySource == .override && view.keyName == nil)
    }

    @Test func anOverrideReplacesTheCatalogsKey() throws {
        let regions = try entity("regions", overrides: [.primaryKey(of: "regions", columns: ["id"])])
        #expect(regions.primaryKey == ["id"] && regions.keySource == .override)
        let person = try entity("person", in: Examples.seed, overrides: [.primaryKey(of: "person", columns: ["surname", "firstname"])])
        #expect(person.primaryKey == ["surname", "firstname"] && person.keySource == .override)
    }

    /// A foreign key override that names no columns refers to the key, declared or inferred;
    /// a relationship from a declared key's columns is one-to-one.
    @Test func overriddenAndInferredKeysServeForeignKeyOverrides() throws {
        let tables = Examples.keyedWithoutPrimaryKey + [view("region_summary", "region_code towns")]
        let model = try makeModel(tables, overrides: [
            .primaryKey(of: "region_summary", columns: ["region_code"]),
            .foreignKey("region_summary", ["region_code"], references: "regions"),
        ])
        #expect(try model.summary("region_summary", "regions")
            == "regions one-to-one region_summary(region_code) → regions(code) fk:from region_summary_region_code_override override inverse:region_summary")
    }

    @Test func wrongKeyOverridesAreErrors() throws {
        let cases: [(Override, String)] = [
            (.primaryKey(of: "nowhere", columns: ["id"]), "table \"nowhere\""),
            (.primaryKey(of: "regions", columns: ["kode"]), "column \"kode\" of \"regions\""),
            (.primaryKey(of: "regions", columns: []), "names no column"),
            (.primaryKey(of: "regions", columns: ["code", "code"]), "names a column twice"),
        ]
        for (override, fragment) in cases {
            let error = #expect(throws: RelateError.self) { try makeModel(Examples.keyedWithoutPrimaryKey, overrides: [override]) }
            #expect(error?.kind == .invalidOverride)
            #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
        }
        // A foreign key override to a table without any key must name the columns.
        let error = #expect(throws: RelateError.self) {
            try makeModel(Examples.keyedWithoutPrimaryKey, overrides: [.foreignKey("towns", ["code"], references: "nullable_code")])
        }
        #expect(error?.message.contains("\"nullable_code\" has no key") == true)
    }
}
