/// Catalog + options → entities: overrides, relationship inference, naming. Pure.
struct ModelBuilder {
    let catalog: Catalog
    let options: ModelOptions
    private let firstSchema: String

    init(catalog: Catalog, options: ModelOptions) {
        self.catalog = catalog
        self.options = options
        firstSchema = catalog.schemas.first ?? catalog.tables.map(\.schema).min() ?? "public"
    }

    func displayName(schema: String, table: String) -> String {
        schema == firstSchema ? table : "\(schema).\(table)"
    }

    func build() throws(RelateError) -> [Entity] {
        var (tables, keys) = try applyTableOverrides(catalog.tables.sorted { ($0.schema, $0.name) < ($1.schema, $1.name) })
        var position: [QualifiedName: Int] = [:]
        for (index, table) in tables.enumerated() { position[QualifiedName(table.schema, table.name)] = index }
        let ownedCopies = Self.inheritForeignKeys(&tables, position: position)
        Self.inferViewForeignKeys(&tables)
        // A parent's key a child declares again answers to the parent's name too.
        let duplicateNames = normalizeForeignKeys(&tables).merging(ownedCopies) { found, owned in
            found.merging(owned) { $0 + $1 }
        }
        var entities = tables.indices.map { index in
            var entity = Entity(
                table: tables[index], name: displayName(schema: tables[index].schema, table: tables[index].name), key: keys[index])
            if let parent = tables[index].parent, position[QualifiedName(parent.schema, parent.name)] != nil {
                entity.parent = displayName(schema: parent.schema, table: parent.name)
            }
            for relation in tables[index].viewSource?.relations ?? []
            where position[QualifiedName(relation.table.schema, relation.table.name)] != nil {
                let name = displayName(schema: relation.table.schema, table: relation.table.name)
                if !entity.reads.contains(name) { entity.reads.append(name) }
            }
            return entity
        }
        let overridden = overriddenKeys()

        var pairID = 0
        func add(_ forward: Relationship, on source: Int, _ backward: Relationship, on target: Int) {
            entities[source].relationships.append(forward)
            entities[target].relationships.append(backward)
            pairID += 1
        }

        for (source, table) in tables.enumerated() {
            for key in table.foreignKeys {
                guard let target = position[QualifiedName(key.referencedSchema, key.referencedTable)] else { continue }
                let unique = Self.isUnique(key.columns, in: table)
                let rule: Relationship.Rule =
                    overridden.contains(OverriddenKey(table: QualifiedName(table.schema, table.name), name: key.name))
                    ? .override : unique ? .uniqueForeignKey : .foreignKey
                let sourceName = entities[source].name
                let targetName = entities[target].name
                let holder = Relationship.End(schema: table.schema, table: table.name, columns: key.columns)
                let referenced = Relationship.End(
                    schema: key.referencedSchema, table: key.referencedTable, columns: key.referencedColumns)
                let derived = Self.toOneName(key, targetName: targetName)
                var toOne = Relationship(
                    name: derived, qualifiedName: key.name,
                    aliases: (derived == key.name ? [] : [key.name])
                        + duplicateNames[QualifiedName(table.schema, table.name), default: [:]][key.name, default: []],
                    kind: unique ? .oneToOne : .manyToOne, from: holder, to: referenced, via: nil, foreignKeyIn: .from,
                    constraint: key.name, rule: rule, onDelete: key.onDelete, onDeleteVaries: key.onDeleteVaries,
                    onDeleteSetColumns: key.onDeleteSetColumns, onUpdate: key.onUpdate, pairID: pairID)
                var inverse = Relationship(
                    name: sourceName, qualifiedName: "\(sourceName)_by_\(key.columns.joined(separator: "_"))", aliases: [],
                    kind: unique ? .oneToOne : .oneToMany, from: referenced, to: holder, via: nil, foreignKeyIn: .to,
                    constraint: key.name, rule: rule, onDelete: key.onDelete, onDeleteVaries: key.onDeleteVaries,
                    onDeleteSetColumns: key.onDeleteSetColumns, onUpdate: key.onUpdate, pairID: pairID)
                (toOne.isInitiallyDeferred, inverse.isInitiallyDeferred) = (key.isInitiallyDeferred, key.isInitiallyDeferred)
                add(toOne, on: source, inverse, on: target)
            }
        }

        for table in tables {
            guard let (first, second) = helperKeys(of: table),
                let left = position[QualifiedName(first.referencedSchema, first.referencedTable)],
                let right = position[QualifiedName(second.referencedSchema, second.referencedTable)]
            else { continue }
            let rule: Relationship.Rule =
                switch options.manyToMany {
                case .anyTwoForeignKeys: .anyTwoForeignKeys
                case .keyed: .keyed
                case .strict: .strict
                }
            let helperName = displayName(schema: table.schema, table: table.name)
            let leftEnd = Relationship.End(schema: first.referencedSchema, table: first.referencedTable, columns: first.referencedColumns)
            let rightEnd = Relationship.End(schema: second.referencedSchema, table: second.referencedTable, columns: second.referencedColumns)
            let forward = Relationship(
                name: entities[right].name, qualifiedName: "\(entities[right].name)_via_\(helperName)", aliases: [],
                kind: .manyToMany, from: leftEnd, to: rightEnd,
                via: .init(schema: table.schema, table: table.name, fromColumns: first.columns, toColumns: second.columns),
                foreignKeyIn: .via, constraint: second.name, rule: rule, onDelete: first.onDelete, onDeleteVaries: first.onDeleteVaries,
                onUpdate: first.onUpdate, pairID: pairID)
            let backward = Relationship(
                name: entities[left].name, qualifiedName: "\(entities[left].name)_via_\(helperName)", aliases: [],
                kind: .manyToMany, from: rightEnd, to: leftEnd,
                via: .init(schema: table.schema, table: table.name, fromColumns: second.columns, toColumns: first.columns),
                foreignKeyIn: .via, constraint: first.name, rule: rule, onDelete: second.onDelete, onDeleteVaries: second.onDeleteVaries,
                onUpdate: second.onUpdate, pairID: pairID)
            add(forward, on: left, backward, on: right)
        }

        try applyRenames(&entities)
        for index in entities.indices {
            Self.assignNames(&entities[index])
        }
        Self.linkInverses(&entities)
        return entities
    }

    // MARK: - Inference rules

    /// A unique key of the table lies within `columns`: each referenced row has at most one
    /// referencing row.
    static func isUnique(_ columns: [String], in table: Catalog.Table) -> Bool {
        let set = Set(columns)
        return table.allUniqueKeys.contains { !$0.isEmpty && Set($0).isSubset(of: set) }
    }

    /// The two foreign keys of a helper table, when the context's rule makes it one.
    func helperKeys(of table: Catalog.Table) -> (Catalog.ForeignKey, Catalog.ForeignKey)? {
        guard table.kind == .table || table.kind == .partitionedTable, table.foreignKeys.count == 2 else { return nil }
        let first = table.foreignKeys[0]
        let second = table.foreignKeys[1]
        guard !Self.isUnique(first.columns, in: table), !Self.isUnique(second.columns, in: table) else { return nil }
        let together = Set(first.columns + second.columns)
        switch options.manyToMany {
        case .anyTwoForeignKeys:
            return (first, second)
        case .keyed, .strict:
            guard table.allUniqueKeys.contains(where: { Set($0) == together }) else { return nil }
            if options.manyToMany == .strict, !Set(table.columns.map(\.name)).isSubset(of: together) { return nil }
            return (first, second)
        }
    }

    /// A child table (`INHERITS`) takes the foreign keys its ancestors declare where it
    /// carries their columns: PostgreSQL does not copy foreign keys to children, but the
    /// columns mean what they mean in the parent. The copies keep the ancestor's constraint
    /// name; one with the same columns and target as another of the child's is the same key
    /// (``normalizeForeignKeys(_:)``: both names answer). The database enforces no copy, nor
    /// applies its actions: a copy has none (`NO ACTION`), and after a delete of a row it
    /// refers to, its objects are read back (`onDeleteVaries`) rather than guessed.
    /// Answers, per child, the names of the ancestors' keys it declares again itself (by its
    /// own key's name): not copied, they are that key's other names.
    @discardableResult
    static func inheritForeignKeys(_ tables: inout [Catalog.Table], position: [QualifiedName: Int]) -> [QualifiedName: [String: [String]]] {
        let declared = tables.map(\.foreignKeys)
        var owned: [QualifiedName: [String: [String]]] = [:]
        for index in tables.indices where tables[index].parent != nil {
            var seen = Set([index])
            let columns = Set(tables[index].columns.map(\.name))
            // A key the child declares itself, enforced with its own actions, is not copied over.
            let own = Dictionary(declared[index].map { (signature($0), $0.name) }) { first, _ in first }
            let table = QualifiedName(tables[index].schema, tables[index].name)
            var next = tables[index].parent.flatMap { position[QualifiedName($0.schema, $0.name)] }
            while let ancestor = next, seen.insert(ancestor).inserted {
                for key in declared[ancestor] {
                    if let name = own[signature(key)] { owned[table, default: [:]][name, default: []].append(key.name) }
                }
                tables[index].foreignKeys += declared[ancestor].filter { Set($0.columns).isSubset(of: columns) && own[signature($0)] == nil }.map { key in
                    var copy = key
                    (copy.onDelete, copy.onUpdate, copy.onDeleteSetColumns, copy.onDeleteVaries) = (.noAction, .noAction, nil, true)
                    return copy
                }
                next = tables[ancestor].parent.flatMap { position[QualifiedName($0.schema, $0.name)] }
            }
        }
        return owned
    }

    /// What makes two foreign keys one: the same columns referring to the same columns of
    /// the same table, whatever their names and actions.
    static func signature(_ key: Catalog.ForeignKey) -> [String] {
        key.columns + ["\u{0}", key.referencedSchema, key.referencedTable] + key.referencedColumns
    }

    /// `person_id` → `person`, `authorId` → `author`; otherwise the target's name.
    static func toOneName(_ key: Catalog.ForeignKey, targetName: String) -> String {
        guard key.columns.count == 1 else { return targetName }
        let column = key.columns[0]
        if column.count > 3, column.hasSuffix("_id") { return String(column.dropLast(3)) }
        if column.count > 2, column.hasSuffix("Id"), let last = column.dropLast(2).last, last.isLowercase || last.isNumber {
            return String(column.dropLast(2))
        }
        return targetName
    }

    /// Identical keys (same columns, same target) count once; keys to tables outside the
    /// catalog are dropped; the rest sorted by name, so the catalog's order never matters.
    /// Returns, per table, the names of the dropped duplicates of each kept key.
    @discardableResult
    func normalizeForeignKeys(_ tables: inout [Catalog.Table]) -> [QualifiedName: [String: [String]]] {
        let present = Set(tables.map { QualifiedName($0.schema, $0.name) })
        var duplicates: [QualifiedName: [String: [String]]] = [:]
        for index in tables.indices {
            var kept: [[String]: String] = [:]
            let table = QualifiedName(tables[index].schema, tables[index].name)
            tables[index].foreignKeys = tables[index].foreignKeys
                .sorted { $0.name < $1.name }
                .filter { key in
                    guard present.contains(QualifiedName(key.referencedSchema, key.referencedTable)) else { return false }
                    let signature = Self.signature(key)
                    if let first = kept[signature] {
                        duplicates[table, default: [:]][first, default: []].append(key.name)
                        return false
                    }
                    kept[signature] = key.name
                    return true
                }
            tables[index].uniqueKeys.sort { ($0.name, $0.columns.joined(separator: ",")) < ($1.name, $1.columns.joined(separator: ",")) }
        }
        return duplicates
    }

    // MARK: - Overrides

    private func lookup(_ name: String, in tables: [Catalog.Table]) throws(RelateError) -> Int {
        if let index = tables.firstIndex(where: { displayName(schema: $0.schema, table: $0.name) == name || "\($0.schema).\($0.name)" == name }) {
            return index
        }
        let nearest = RelateError.nearestNames(to: name, in: tables.map { displayName(schema: $0.schema, table: $0.name) })
        throw RelateError(
            kind: .invalidOverride,
            message: "an override names table \"\(name)\", which the catalog does not have"
                + (nearest.isEmpty ? "" : "; did you mean " + nearest.map { "\"\($0)\"" }.joined(separator: " or ") + "?"),
            key: name, candidates: nearest)
    }

    private func checkColumns(_ columns: [String], of table: Catalog.Table) throws(RelateError) {
        let tableName = displayName(schema: table.schema, table: table.name)
        if columns.isEmpty {
            throw RelateError(kind: .invalidOverride, message: "an override on \"\(tableName)\" names no column", entity: tableName)
        }
        for column in columns where table.column(named: column) == nil {
            let existing = table.columns.map(\.name)
            throw RelateError(
                kind: .invalidOverride,
                message: "an override names column \"\(column)\" of \"\(tableName)\", which has only: " + existing.joined(separator: ", "),
                entity: tableName, key: column, candidates: RelateError.nearestNames(to: column, in: existing))
        }
    }

    /// Applies the overrides that change tables: ignores, declared keys, declared foreign
    /// keys (which refer to a table's key, declared or not, when they name no columns).
    /// Returns the tables and each one's key (``IdentityKey``), by position.
    private func applyTableOverrides(_ input: [Catalog.Table]) throws(RelateError) -> ([Catalog.Table], [IdentityKey?]) {
        var tables = input
        for case .ignore(let name) in options.overrides {
            tables.remove(at: try lookup(name, in: tables))
        }
        var keys = tables.map(IdentityKey.init(of:))
        for case .primaryKey(let name, let columns) in options.overrides {
            let index = try lookup(name, in: tables)
            try checkColumns(columns, of: tables[index])
            if Set(columns).count != columns.count {
                throw RelateError(
                    kind: .invalidOverride, message: "a primary key override on \"\(name)\" names a column twice: \(columns.joined(separator: ", "))",
                    entity: name)
            }
            keys[index] = IdentityKey(columns: columns, source: .override, name: nil)
            // A declared key is unique: relationships from its columns are one-to-one.
            if !tables[index].allUniqueKeys.contains(columns) {
                tables[index].uniqueKeys.append(
                    Catalog.UniqueKey(name: "\(tables[index].name)_\(columns.joined(separator: "_"))_key_override", columns: columns))
            }
        }
        // A view's key follows the keys of the tables it reads, declared ones included.
        Self.inferViewKeys(&tables, keys: &keys, displayName: displayName)
        for case .foreignKey(let tableName, let columns, let targetName, let targetColumns, let name) in options.overrides {
            let source = try lookup(tableName, in: tables)
            let target = try lookup(targetName, in: tables)
            try checkColumns(columns, of: tables[source])
            let referenced = targetColumns ?? keys[target]?.columns ?? []
            if referenced.isEmpty {
                throw RelateError(
                    kind: .invalidOverride,
                    message: "\"\(targetName)\" has no key; name the columns \(columns) of \"\(tableName)\" refer to",
                    entity: targetName)
            }
            try checkColumns(referenced, of: tables[target])
            if referenced.count != columns.count {
                throw RelateError(
                    kind: .invalidOverride,
                    message: "an override pairs \(columns.count) column(s) of \"\(tableName)\" with \(referenced.count) of \"\(targetName)\"",
                    entity: tableName)
            }
            tables[source].foreignKeys.append(Catalog.ForeignKey(
                name: name ?? Self.overrideName(table: tables[source].name, columns: columns),
                columns: columns, referencedSchema: tables[target].schema, referencedTable: tables[target].name,
                referencedColumns: referenced))
        }
        return (tables, keys)
    }

    static func overrideName(table: String, columns: [String]) -> String {
        "\(table)_\(columns.joined(separator: "_"))_override"
    }

    private struct OverriddenKey: Hashable {
        var table: QualifiedName
        var name: String
    }

    private func overriddenKeys() -> Set<OverriddenKey> {
        var keys = Set<OverriddenKey>()
        for case .foreignKey(let tableName, let columns, _, _, let name) in options.overrides {
            guard let table = catalog.tables.first(where: {
                displayName(schema: $0.schema, table: $0.name) == tableName || "\($0.schema).\($0.name)" == tableName
            }) else { continue }
            keys.insert(OverriddenKey(
                table: QualifiedName(table.schema, table.name),
                name: name ?? Self.overrideName(table: table.name, columns: columns)))
        }
        return keys
    }

    /// Renames resolve their key exactly as ``Entity/property(forKey:)`` would on the model
    /// without renames: any name it answers to; an ambiguous one is an error.
    /// Only the entities a rename names get their provisional names: naming every entity
    /// twice was a seventh of modelling 10,000 tables.
    private func applyRenames(_ entities: inout [Entity]) throws(RelateError) {
        var named: [Int: Entity] = [:]
        for case .rename(let tableName, let key, let newName) in options.overrides {
            guard let index = entities.firstIndex(where: { $0.name == tableName || "\($0.schema).\($0.table)" == tableName }) else {
                var error = RelateError.unknownEntity(tableName, existing: entities.map(\.name))
                error.kind = .invalidOverride
                error.message = "a rename override: " + error.message
                throw error
            }
            // Named as the model without renames would be, whatever renames came before.
            let provisional = named[index] ?? {
                var copy = entities[index]
                Self.assignNames(&copy)
                return copy
            }()
            named[index] = provisional
            switch provisional.keys[key] {
            case .relationship(let position):
                let target = provisional.relationships[position]
                guard let relationship = entities[index].relationships.firstIndex(where: {
                    $0.pairID == target.pairID && $0.foreignKeyIn == target.foreignKeyIn && $0.from == target.from && $0.via == target.via
                }) else { continue }
                let old = entities[index].relationships[relationship]
                for alias in [old.name, key]
                where alias != newName && alias != old.qualifiedName && !entities[index].relationships[relationship].aliases.contains(alias) {
                    entities[index].relationships[relationship].aliases.append(alias)
                }
                entities[index].relationships[relationship].name = newName
            case .attribute(let position):
                entities[index].attributes[position].key = newName
            case .ambiguous(let candidates):
                var error = RelateError.ambiguousKey(key, entity: entities[index].name, candidates: candidates)
                error.kind = .invalidOverride
                error.message = "a rename override: " + error.message
                throw error
            case nil:
                var error = RelateError.unknownKey(key, entity: entities[index].name, existing: provisional.keyNames)
                error.kind = .invalidOverride
                error.message = "a rename override: " + error.message
                throw error
            }
        }
    }

    // MARK: - Naming

    /// Gives every key of the entity its names: a bare name claimed by one thing is its
    /// key; a bare name claimed by several names none of them (asking for it lists their
    /// qualified names); qualified names and aliases always work unless taken.
    static func assignNames(_ entity: inout Entity) {
        entity.relationships.sort { ($0.qualifiedName, $0.name, $0.pairID) < ($1.qualifiedName, $1.name, $1.pairID) }
        makeQualifiedNamesUnique(&entity.relationships)

        enum Claimant: Hashable { case attribute(Int), relationship(Int) }
        var claims: [String: [Claimant]] = [:]
        for (index, attribute) in entity.attributes.enumerated() { claims[attribute.key, default: []].append(.attribute(index)) }
        for (index, relationship) in entity.relationships.enumerated() { claims[relationship.name, default: []].append(.relationship(index)) }

        var keys: [String: Entity.KeyTarget] = [:]
        var ambiguous: [(String, [Claimant])] = []
        for (name, claimants) in claims.sorted(by: { $0.key < $1.key }) {
            if claimants.count == 1 {
                switch claimants[0] {
                case .attribute(let index): keys[name] = .attribute(index)
                case .relationship(let index):
                    keys[name] = .relationship(index)
                    entity.relationships[index].key = name
                }
            } else {
                ambiguous.append((name, claimants))
            }
        }
        func unused(_ candidate: String) -> String {
            var name = candidate
            var counter = 2
            while keys[name] != nil || claims[name] != nil { name = "\(candidate)_\(counter)"; counter += 1 }
            return name
        }
        for (name, claimants) in ambiguous {
            var candidates: [String] = []
            for claimant in claimants {
                switch claimant {
                case .attribute(let index):
                    let key = unused("\(name)_column")
                    entity.attributes[index].key = key
                    keys[key] = .attribute(index)
                    candidates.append(key)
                case .relationship(let index):
                    var qualified = entity.relationships[index].qualifiedName
                    if keys[qualified] != nil || claims[qualified] != nil {
                        qualified = unused(qualified)
                        entity.relationships[index].qualifiedName = qualified
                    }
                    entity.relationships[index].key = qualified
                    keys[qualified] = .relationship(index)
                    candidates.append(qualified)
                }
            }
            keys[name] = .ambiguous(candidates.sorted())
        }
        for index in entity.relationships.indices {
            let relationship = entity.relationships[index]
            for name in [relationship.qualifiedName] + relationship.aliases where keys[name] == nil {
                keys[name] = .relationship(index)
            }
            if keys[relationship.qualifiedName] != .relationship(index) {
                let qualified = unused(relationship.qualifiedName)
                entity.relationships[index].qualifiedName = qualified
                keys[qualified] = .relationship(index)
            }
        }
        entity.keys = keys
    }

    /// Two relationships of one entity with the same qualified name (a self many-to-many
    /// has two through the same helper) are told apart by the columns they start from.
    private static func makeQualifiedNamesUnique(_ relationships: inout [Relationship]) {
        let groups = Dictionary(grouping: relationships.indices, by: { relationships[$0].qualifiedName })
        for (name, indices) in groups where indices.count > 1 {
            var used = Set<String>()
            for index in indices {
                let relationship = relationships[index]
                let columns = relationship.via?.fromColumns ?? relationship.from.columns
                var candidate = "\(name)_by_\(columns.joined(separator: "_"))"
                var counter = 2
                while !used.insert(candidate).inserted { candidate = "\(name)_\(counter)"; counter += 1 }
                relationships[index].qualifiedName = candidate
            }
        }
    }

    static func linkInverses(_ entities: inout [Entity]) {
        var keys: [Int: [(entity: Int, relationship: Int)]] = [:]
        for (entityIndex, entity) in entities.enumerated() {
            for (index, relationship) in entity.relationships.enumerated() {
                keys[relationship.pairID, default: []].append((entityIndex, index))
            }
        }
        for pair in keys.values where pair.count == 2 {
            let (a, b) = (pair[0], pair[1])
            let keyA = entities[a.entity].relationships[a.relationship].key
            let keyB = entities[b.entity].relationships[b.relationship].key
            entities[a.entity].relationships[a.relationship].inverseKey = keyB
            entities[b.entity].relationships[b.relationship].inverseKey = keyA
            entities[a.entity].relationships[a.relationship].inverseIndex = b.relationship
            entities[b.entity].relationships[b.relationship].inverseIndex = a.relationship
        }
    }
}

struct QualifiedName: Hashable {
    var schema: String
    var name: String
    init(_ schema: String, _ name: String) {
        self.schema = schema
        self.name = name
    }
}
