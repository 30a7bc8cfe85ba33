/// A view's key and foreign keys, from where its columns come from (``Catalog/ViewSource``).
///
/// The key: the view carries, unchanged, every column of a key of one relation it reads
/// (its identity key, else another unique key on `NOT NULL` columns), that relation is on
/// no outer join's nullable side, the query has no aggregate, `DISTINCT`, set operation,
/// set-returning function in its select list, nor anything but tables and views in its
/// `FROM`, and every other relation is joined to one row: an equality pins all columns of
/// one of its unique keys to constants or to columns of relations already joined to one
/// row, starting from the keyed one. Then no row of the keyed relation appears twice, and
/// the view's key is the columns that carry its key. Where several relations qualify, the
/// first the `FROM` names wins.
///
/// The foreign keys: every foreign key of a relation the view reads whose columns the view
/// carries, all of them unchanged, becomes the view's, to the same table, under the same
/// constraint name; the model infers the relationships from it as for a table (a to-one
/// named from the columns, the inverse to-many on the table referenced named after the view).
/// A relation outside the model (another schema, an ignored table) gives neither.
extension ModelBuilder {
    /// Gives each view without a key (none declared) the key its source carries, and adds
    /// that key to its unique keys (so a relationship from those columns is one-to-one).
    static func inferViewKeys(_ tables: inout [Catalog.Table], keys: inout [IdentityKey?], displayName: (String, String) -> String) {
        var position: [QualifiedName: Int] = [:]
        for (index, table) in tables.enumerated() { position[QualifiedName(table.schema, table.name)] = index }
        var done: [Int: IdentityKey?] = [:]
        var visiting = Set<Int>()

        // A relation's key as a view over it sees it: declared or inferred first (a view
        // over a view is keyed after the one it reads).
        func key(of index: Int) -> IdentityKey? {
            if let known = keys[index] { return known }
            if let known = done[index] { return known }
            guard let source = tables[index].viewSource, visiting.insert(index).inserted else { return nil }
            defer { visiting.remove(index) }
            let found = inferredKey(of: index, source: source)
            done[index] = found
            return found
        }
        // The unique keys an equality may pin to join a relation to one row.
        func uniqueKeys(of index: Int) -> [[String]] {
            tables[index].allUniqueKeys + (key(of: index).map { [$0.columns] } ?? [])
        }
        // The keys of a relation that tell its rows apart: its identity key first, then the
        // other unique keys on NOT NULL columns (fewest columns, then name).
        func identifyingKeys(of index: Int) -> [[String]] {
            let table = tables[index]
            let others = table.uniqueKeys
                .filter { $0.columns.allSatisfy { table.column(named: $0)?.isNullable == false } }
                .sorted { ($0.columns.count, $0.name) < ($1.columns.count, $1.name) }
                .map(\.columns)
            return (key(of: index).map { [$0.columns] } ?? []) + others
        }
        func inferredKey(of view: Int, source: Catalog.ViewSource) -> IdentityKey? {
            guard source.features.isDisjoint(with: .unkeyed), !source.relations.isEmpty else { return nil }
            let indices = source.relations.map { position[QualifiedName($0.table.schema, $0.table.name)] }
            guard !indices.contains(nil) else { return nil }
            let relations = indices.map { $0! }
            // A table read with the tables under it (no `ONLY`) may show one key twice: its
            // own row and a child's (a key is not inherited). It gives no key, and no join
            // to it pins one row.
            let readsChildren = source.relations.enumerated().map { position, relation in
                relation.readsDescendants != false && !(tables[relations[position]].children ?? []).isEmpty
            }
            let pinning = relations.enumerated().map { position, index in readsChildren[position] ? [] : uniqueKeys(of: index) }
            for (keyed, relation) in source.relations.enumerated() where !relation.isNullable && !readsChildren[keyed] {
                guard joinsToOne(from: keyed, source: source, uniqueKeys: pinning) else { continue }
                for candidate in identifyingKeys(of: relations[keyed]) where !candidate.isEmpty {
                    let carried = candidate.map { column in
                        source.columns.firstIndex { $0 == Catalog.ViewSource.ColumnReference(relation: keyed, column: column) }
                    }
                    guard !carried.contains(nil) else { continue }
                    let base = tables[relations[keyed]]
                    let baseName = displayName(base.schema, base.name)
                    return IdentityKey(
                        columns: carried.map { tables[view].columns[$0!].name }, source: .view,
                        name: candidate.map { "\(baseName).\($0)" }.joined(separator: ", "))
                }
            }
            return nil
        }

        for index in tables.indices where keys[index] == nil && tables[index].viewSource != nil {
            guard let found = key(of: index) else { continue }
            keys[index] = found
            if !tables[index].allUniqueKeys.contains(found.columns) {
                tables[index].uniqueKeys.append(Catalog.UniqueKey(name: found.name ?? tables[index].name, columns: found.columns))
            }
        }
    }

    /// Whether every relation of `source` is joined to at most one row of the others,
    /// starting from `keyed`: a relation joins once equalities pin all columns of one of
    /// its unique keys to constants or to columns of relations already joined.
    static func joinsToOne(from keyed: Int, source: Catalog.ViewSource, uniqueKeys: [[[String]]]) -> Bool {
        var joined: Set<Int> = [keyed]
        var changed = true
        while changed, joined.count < source.relations.count {
            changed = false
            for relation in source.relations.indices where !joined.contains(relation) {
                let pinned = Set(source.equalities.filter { equality in
                    equality.column.relation == relation && (equality.equals.map { joined.contains($0.relation) } ?? true)
                }.map(\.column.column))
                if uniqueKeys[relation].contains(where: { !$0.isEmpty && Set($0).isSubset(of: pinned) }) {
                    joined.insert(relation)
                    changed = true
                }
            }
        }
        return joined.count == source.relations.count
    }

    /// Gives each view the foreign keys of the relations it reads whose columns it carries
    /// (a view over a view after the one it reads).
    ///
    /// A key's actions reach the view's rows as the table's only where each view row is one
    /// row of that table, read as it is: a view over one relation. A materialized view's
    /// rows change only when it is refreshed, and a view that joins shows a cascade's
    /// effect on a joined table as the join makes it (a row with NULLs, or none): such a
    /// copy has no actions (`NO ACTION`), and after a delete of a row it refers to, its
    /// objects are read back (`onDeleteVaries`), as a copy on a child table is.
    static func inferViewForeignKeys(_ tables: inout [Catalog.Table]) {
        var position: [QualifiedName: Int] = [:]
        for (index, table) in tables.enumerated() { position[QualifiedName(table.schema, table.name)] = index }
        var done = Set<Int>()
        func resolve(_ index: Int) {
            guard let source = tables[index].viewSource, done.insert(index).inserted else { return }
            for (number, relation) in source.relations.enumerated() {
                guard let base = position[QualifiedName(relation.table.schema, relation.table.name)] else { continue }
                resolve(base)
                for key in tables[base].foreignKeys {
                    let carried = key.columns.map { column in
                        source.columns.firstIndex { $0 == Catalog.ViewSource.ColumnReference(relation: number, column: column) }
                    }
                    guard !carried.contains(nil) else { continue }
                    var copy = key
                    copy.columns = carried.map { tables[index].columns[$0!].name }
                    if tables[index].kind == .materializedView || source.relations.count > 1 {
                        (copy.onDelete, copy.onUpdate, copy.onDeleteSetColumns, copy.onDeleteVaries) = (.noAction, .noAction, nil, true)
                    }
                    tables[index].foreignKeys.append(copy)
                }
            }
        }
        for index in tables.indices { resolve(index) }
    }
}
