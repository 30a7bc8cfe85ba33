@testable import Relate
import Testing

/// Properties every model must have, over random catalogs from a seeded generator: any
/// number of tables in two schemas, composite keys, self-references, FKs to unique
/// non-PK columns, helpers with and without keys, duplicate FKs, FKs to tables that are
/// not there, and names chosen to collide.
@Suite struct ModelPropertyTests {
    static let seeds = Array(UInt64(1)...200)

    @Test(arguments: seeds)
    func randomCatalogs(seed: UInt64) throws {
        var generator = CatalogGenerator(seed: seed)
        let catalog = generator.catalog()
        for rule in ManyToManyRule.allCases {
            let options = ModelOptions(manyToMany: rule)
            let context = "seed \(seed), \(rule)"
            let model: Model
            do {
                model = try Model(catalog: catalog, options: options)
            } catch {
                Issue.record("\(context): building threw \(error)")
                continue
            }
            expectNone(entityViolations(model, catalog), "entities", context)
            expectNone(inverseViolations(model), "inverses", context)
            expectNone(keyViolations(model), "keys", context)
            expectNone(foreignKeyViolations(model, catalog), "foreign keys", context)

            var shuffled = catalog
            generator.shuffle(&shuffled)
            #expect((try? Model(catalog: shuffled, options: options)) == model, "\(context): catalog order changed the model")
        }
    }

    /// Renaming any relationship by the key the model gives it works, and keeps every
    /// property above: the new name is its key, its old qualified name still answers, and
    /// its inverse names it by the new key.
    @Test(arguments: seeds.prefix(100))
    func randomRenames(seed: UInt64) throws {
        var generator = CatalogGenerator(seed: seed)
        let catalog = generator.catalog()
        let model = try Model(catalog: catalog)
        let all = model.entities.flatMap { entity in entity.relationships.map { (entity: entity.name, relationship: $0) } }
        guard !all.isEmpty else { return }
        var renamed: [(entity: String, relationship: Relationship, newName: String)] = []
        for index in 0..<min(3, all.count) {
            let (entity, relationship) = generator.pick(all)
            if renamed.contains(where: { $0.entity == entity && $0.relationship == relationship }) { continue }
            renamed.append((entity, relationship, "renamed\(index)"))
        }
        let context = "seed \(seed), renames \(renamed.map { "\($0.entity).\($0.relationship.key) → \($0.newName)" })"
        let options = ModelOptions(overrides: renamed.map { .rename($0.entity, key: $0.relationship.key, to: $0.newName) })
        let result: Model
        do {
            result = try Model(catalog: catalog, options: options)
        } catch {
            Issue.record("\(context): building threw \(error)")
            return
        }
        var problems: [String] = []
        for (entityName, old, newName) in renamed {
            let entity = try result.entity(entityName)
            let relationship = try? entity.relationship(forKey: newName)
            if relationship?.key != newName {
                problems.append("\(entityName).\(newName) has key \(relationship?.key ?? "-")")
            }
            if relationship?.to != old.to || relationship?.via != old.via || relationship?.constraint != old.constraint {
                problems.append("\(entityName).\(newName) is another relationship")
            }
            if (try? entity.relationship(forKey: old.qualifiedName)) != relationship {
                problems.append("\(entityName).\(old.qualifiedName) no longer answers")
            }
        }
        expectNone(problems, "renamed keys", context)
        expectNone(inverseViolations(result), "inverses", context)
        expectNone(keyViolations(result), "keys", context)
    }

    /// One expectation per property and seed, listing the first few violations.
    func expectNone(_ violations: [String], _ property: String, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(violations.isEmpty, "\(context): \(property): \(violations.count) violations, e.g. \(violations.prefix(4))",
                sourceLocation: sourceLocation)
    }

    /// One entity per table, named `table` in the first schema and `schema.table` elsewhere.
    func entityViolations(_ model: Model, _ catalog: Catalog) -> [String] {
        var problems: [String] = []
        if model.entities.count != catalog.tables.count { problems.append("\(model.entities.count) entities") }
        for table in catalog.tables {
            let name = table.schema == catalog.schemas[0] ? table.name : "\(table.schema).\(table.name)"
            guard let entity = try? model.entity(name), entity.table == table.name, entity.schema == table.schema else {
                problems.append("no entity \(name)")
                continue
            }
            if table.kind == .view, !entity.relationships.isEmpty { problems.append("view \(name) has relationships") }
        }
        return problems
    }

    /// Every relationship has exactly one inverse on its target, with from/to, via columns
    /// and the side of the FK swapped; `inverseKey` names it and it names this one back.
    func inverseViolations(_ model: Model) -> [String] {
        var problems: [String] = []
        for entity in model.entities {
            for relationship in entity.relationships {
                let here = "\(entity.name).\(relationship.key)"
                if relationship.from.schema != entity.schema || relationship.from.table != entity.table {
                    problems.append("\(here) starts elsewhere")
                }
                guard let target = model.entity(schema: relationship.to.schema, table: relationship.to.table) else {
                    problems.append("\(here): no target entity")
                    continue
                }
                let inverses = target.relationships.filter { isInverse($0, of: relationship) }
                if inverses.count != 1 { problems.append("\(here): \(inverses.count) inverses") }
                let named = try? target.relationship(forKey: relationship.inverseKey)
                if named.map({ isInverse($0, of: relationship) }) != true {
                    problems.append("\(here): inverseKey \(relationship.inverseKey) names \(named?.summary ?? "nothing")")
                } else if named?.inverseKey != relationship.key {
                    problems.append("\(here): its inverse names \(named?.inverseKey ?? "-") back")
                }
                // The stored pairing, which the object layer uses, agrees with the names.
                let paired = relationship.inverseIndex.flatMap { target.relationships.indices.contains($0) ? target.relationships[$0] : nil }
                if paired.map({ isInverse($0, of: relationship) && $0.key == relationship.inverseKey }) != true {
                    problems.append("\(here): inverseIndex \(relationship.inverseIndex.map(String.init) ?? "nil") is not its inverse")
                }
            }
        }
        return problems
    }

    func isInverse(_ other: Relationship, of relationship: Relationship) -> Bool {
        let side: Relationship.Side = switch relationship.foreignKeyIn {
        case .from: .to
        case .to: .from
        case .via: .via
        }
        return other.from == relationship.to && other.to == relationship.from && other.foreignKeyIn == side
            && other.via?.schema == relationship.via?.schema && other.via?.table == relationship.via?.table
            && other.via?.fromColumns == relationship.via?.toColumns && other.via?.toColumns == relationship.via?.fromColumns
            && other.rule == relationship.rule
    }

    /// No entity has two keys with one name: keys are distinct, each resolves to its owner,
    /// and every name the entity lists resolves.
    func keyViolations(_ model: Model) -> [String] {
        var problems: [String] = []
        for entity in model.entities {
            let keys = entity.attributes.map(\.key) + entity.relationships.map(\.key)
            if Set(keys).count != keys.count { problems.append("\(entity.name) has keys \(keys.sorted())") }
            for attribute in entity.attributes where (try? entity.property(forKey: attribute.key)) != .attribute(attribute) {
                problems.append("\(entity.name).\(attribute.key) is not the attribute \(attribute.name)")
            }
            for relationship in entity.relationships {
                if (try? entity.property(forKey: relationship.key)) != .relationship(relationship) {
                    problems.append("\(entity.name).\(relationship.key) is not its relationship")
                }
                if (try? entity.property(forKey: relationship.qualifiedName)) != .relationship(relationship) {
                    problems.append("\(entity.name).\(relationship.qualifiedName) (qualified) is not its relationship")
                }
            }
            for name in entity.keyNames where (try? entity.property(forKey: name)) == nil {
                problems.append("\(entity.name) lists \(name), which does not resolve")
            }
        }
        return problems
    }

    /// Each distinct FK to a table in the catalog gives one to-one on its table (one-to-one
    /// exactly when a unique key lies within its columns) and one inverse on its target.
    func foreignKeyViolations(_ model: Model, _ catalog: Catalog) -> [String] {
        var problems: [String] = []
        let present = Set(catalog.tables.map { "\($0.schema).\($0.name)" })
        var expected = 0
        for table in catalog.tables {
            var seen = Set<[String]>()
            for key in table.foreignKeys where present.contains("\(key.referencedSchema).\(key.referencedTable)") {
                if seen.insert(key.columns + ["->", key.referencedSchema, key.referencedTable] + key.referencedColumns).inserted {
                    expected += 1
                }
            }
        }
        let direct = model.relationships.filter { $0.foreignKeyIn != .via }
        if direct.count != 2 * expected { problems.append("\(direct.count) FK relationships for \(expected) FKs") }
        for relationship in direct where relationship.foreignKeyIn == .from {
            guard let table = catalog.tables.first(where: { $0.schema == relationship.from.schema && $0.name == relationship.from.table })
            else { continue }
            let unique = table.allUniqueKeys.contains { !$0.isEmpty && Set($0).isSubset(of: relationship.from.columns) }
            if relationship.kind != (unique ? .oneToOne : .manyToOne) {
                problems.append("\(table.name).\(relationship.key) is \(relationship.kind.rawValue)")
            }
        }
        for relationship in model.relationships where relationship.kind == .manyToMany {
            if relationship.via == nil || relationship.foreignKeyIn != .via { problems.append("\(relationship.summary) has no helper") }
        }
        return problems
    }
}

// MARK: - Generator

/// SplitMix64 (Steele, Lea, Flood 2014): small, fast, and the same on every platform.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct CatalogGenerator {
    var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(state: seed)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &random) < probability }
    mutating func pick<T>(_ values: [T]) -> T { values[int(0...values.count - 1)] }

    /// Table names chosen to collide with column-derived names (`person_id` → `person`).
    static let names = ["person", "book", "title", "email", "tag", "item", "player", "club", "member", "order",
                        "country", "city", "author", "note", "link", "a", "b"]

    mutating func catalog() -> Catalog {
        let schemas = chance(0.8) ? ["public", "other"] : ["other", "public"]
        var tables: [Catalog.Table] = []
        var used = Set<String>()
        for _ in 0..<int(1...15) {
            var schema: String
            var name: String
            repeat {
                schema = chance(0.25) ? "other" : "public"
                name = pick(Self.names)
            } while used.contains("\(schema).\(name)")
            used.insert("\(schema).\(name)")
            tables.append(baseTable(schema: schema, name: name))
        }
        // Foreign keys, once every table (and so every target) exists. Helpers change their
        // keys, so they are chosen first and never referenced.
        var helpers = Set<Int>()
        for index in tables.indices where tables[index].kind != .view && chance(0.25) { helpers.insert(index) }
        for index in tables.indices where tables[index].kind != .view {
            let targets = tables.indices.filter { !helpers.contains($0) }.map { tables[$0] }
            if helpers.contains(index) {
                makeHelper(&tables[index], targets: targets)
            } else {
                for _ in 0..<pick([0, 0, 1, 1, 1, 2, 2, 3]) {
                    addForeignKey(to: &tables[index], targets: tables.indices.filter { !helpers.contains($0) }.map { tables[$0] })
                }
            }
        }
        return Catalog(schemas: schemas, tables: tables)
    }

    mutating func baseTable(schema: String, name: String) -> Catalog.Table {
        if chance(0.08) {
            return table(name, schema: schema, kind: .view, "id label", primaryKey: [])
        }
        var columns = ["id", "name"]
        var primaryKey = ["id"]
        switch int(0...9) {
        case 0...1:
            columns = ["k1", "k2", "name"]
            primaryKey = ["k1", "k2"]
        case 2:
            primaryKey = []
        default:
            break
        }
        var unique: [[String]] = []
        if chance(0.3) {
            columns.append("code")
            unique.append(["code"])
        }
        return table(name, schema: schema, kind: chance(0.1) ? .partitionedTable : .table, columns.joined(separator: " "),
                     primaryKey: primaryKey, unique: unique)
    }

    /// A target table and one of its unique keys, or `nil` when no table has a key.
    mutating func target(in tables: [Catalog.Table]) -> (Catalog.Table, [String])? {
        let candidates = tables.filter { !$0.allUniqueKeys.isEmpty }
        guard !candidates.isEmpty else { return nil }
        let target = pick(candidates)
        return (target, pick(target.allUniqueKeys))
    }

    mutating func foreignKeyName(_ table: Catalog.Table, _ columns: [String], target: String) -> String {
        var name = switch int(0...3) {
        case 0: target                                   // BaseTen: CONSTRAINT person REFERENCES person
        case 1: "fk\(table.foreignKeys.count)"
        default: "\(table.name)_\(columns.joined(separator: "_"))_fkey"
        }
        while table.foreignKeys.contains(where: { $0.name == name }) { name += "_1" }
        return name
    }

    mutating func addColumns(_ names: [String], to table: inout Catalog.Table) {
        for name in names where table.column(named: name) == nil {
            table.columns.append(Catalog.Column(name: name, type: "int4"))
        }
    }

    mutating func addForeignKey(to table: inout Catalog.Table, targets: [Catalog.Table]) {
        if chance(0.05) {
            // A target the catalog does not hold: dropped by the model.
            addColumns(["ghost_id"], to: &table)
            table.foreignKeys.append(fk("fk_ghost\(table.foreignKeys.count)", ["ghost_id"], "ghost", schema: "public"))
            return
        }
        guard let (target, key) = target(in: targets) else { return }
        var columns: [String]
        if chance(0.15) {
            // Reuse columns already there: the primary key (one-to-one) or another FK's.
            let existing = table.allUniqueKeys.filter { $0.count == key.count } + table.foreignKeys.map(\.columns).filter { $0.count == key.count }
            columns = existing.isEmpty ? key.map { "\(target.name)_\($0)" } : pick(existing)
        } else if key.count == 1 {
            columns = [pick(["\(target.name)_id", "\(target.name)Id", target.name, "ref\(table.foreignKeys.count)_id", "owner"])]
        } else {
            columns = key.map { "\(target.name)_\($0)" }
        }
        addColumns(columns, to: &table)
        if chance(0.12) {
            // One-to-one: a unique key on the FK's columns, or on the first of them.
            let unique = chance(0.5) ? columns : [columns[0]]
            if !table.allUniqueKeys.contains(unique) {
                table.uniqueKeys.append(Catalog.UniqueKey(name: "\(table.name)_u\(table.uniqueKeys.count)", columns: unique))
            }
        }
        let name = foreignKeyName(table, columns, target: target.name)
        let onDelete = pick([Catalog.ForeignKey.Action.noAction, .cascade, .setNull, .restrict])
        table.foreignKeys.append(fk(name, columns, target.name, key, schema: target.schema, onDelete: onDelete))
        if chance(0.1) {
            // The same FK declared twice, under another name.
            table.foreignKeys.append(fk(name + "_again", columns, target.name, key, schema: target.schema, onDelete: onDelete))
        }
    }

    /// Replaces the table's columns and keys with a helper's: two FKs (maybe to one table),
    /// keyed by a primary key, a unique key, a larger key or nothing, maybe with extra columns.
    mutating func makeHelper(_ table: inout Catalog.Table, targets: [Catalog.Table]) {
        guard let (left, leftKey) = target(in: targets), let (right, rightKey) = target(in: targets) else { return }
        let leftColumns = leftKey.map { "l_\(left.name)_\($0)" }
        let rightColumns = rightKey.map { "r_\(right.name)_\($0)" }
        table.columns = []
        table.primaryKey = []
        table.uniqueKeys = []
        table.foreignKeys = []
        addColumns(leftColumns + rightColumns, to: &table)
        switch int(0...5) {
        case 0: table.primaryKey = leftColumns + rightColumns
        case 1: table.primaryKey = rightColumns + leftColumns
        case 2:
            addColumns(["id"], to: &table)
            table.primaryKey = ["id"]
            table.uniqueKeys = [Catalog.UniqueKey(name: "\(table.name)_pair", columns: leftColumns + rightColumns)]
        case 3:
            addColumns(["since"], to: &table)
            table.primaryKey = leftColumns + rightColumns + ["since"]
        case 4:
            table.uniqueKeys = [Catalog.UniqueKey(name: "\(table.name)_left", columns: leftColumns)]
        default:
            break
        }
        if chance(0.4) { addColumns(["note"], to: &table) }
        table.foreignKeys.append(fk(foreignKeyName(table, leftColumns, target: left.name), leftColumns, left.name, leftKey, schema: left.schema))
        table.foreignKeys.append(fk(foreignKeyName(table, rightColumns, target: right.name), rightColumns, right.name, rightKey, schema: right.schema))
        if chance(0.15) { addForeignKey(to: &table, targets: targets) }
    }

    /// The same catalog in another order: tables, and each table's FKs and unique keys.
    mutating func shuffle(_ catalog: inout Catalog) {
        catalog.tables.shuffle(using: &random)
        for index in catalog.tables.indices {
            catalog.tables[index].foreignKeys.shuffle(using: &random)
            catalog.tables[index].uniqueKeys.shuffle(using: &random)
        }
    }
}
