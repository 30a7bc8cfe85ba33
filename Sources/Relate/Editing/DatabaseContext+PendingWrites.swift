import RelatePostgres

/// The writes of a context that does not autocommit whose effects need more than one
/// column's new value: a new row, a to-one (which may take its target from another holder).
extension DatabaseContext {
    /// A new object of `entity`, in memory only: the values given (to-ones as objects,
    /// whose keys may be pending too), a ``PendingKey`` for each primary-key column the
    /// database will fill, NULL for the rest until `save()` reads the row back.
    func pendInsert(_ entity: Int, values: [String: Any?]) throws -> DatabaseObject {
        let table = graph.tables[entity]
        guard !table.primaryKey.isEmpty else { throw RelateError.readOnly(table) }
        var cells = [StoredValue](repeating: .null, count: table.columns.count)
        var given: [Int] = []
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            switch try resolve(key, in: entity) {
            case .attribute(let index):
                let attribute = table.entity.attributes[index]
                cells[index] = StoredValue(pending: try AttributeValue.encodable(value, for: attribute, entity: table.entity), for: attribute, of: table.entity)
                given.append(index)
            case .relationship(let index):
                for (column, value) in try heldToOne(key, value, of: entity, index, for: "insert first, then set it") {
                    cells[column] = value
                    given.append(column)
                }
            }
        }
        for column in table.primaryKey where !given.contains(column) && table.entity.attributes[column].hasDefault {
            cells[column] = StoredValue(pending.nextPendingKey())
        }
        // A key memory holds for a live object the database holds too (or will): the save
        // would fail, and the identity map cannot answer one key with two objects.
        if let key = ObjectKey(table.primaryKey.map { cells[$0] }), let holder = graph.registries[entity][key], !holder.isDeleted {
            throw RelateError(
                kind: .invalidWrite,
                message: "a \(table.entity.name) with this key is in memory already: delete it first, or change its key, "
                    + "then insert", entity: table.entity.name, detail: "\(holder)")
        }
        let storage = ValueStorage(table: table, capacity: cells.count)
        storage.cells.append(contentsOf: cells)
        let object = DatabaseObject(storage: storage, base: 0)
        // Not alive until its insert is applied (and again once that is undone).
        object.isDeleted = true
        try pendingStep { applyEffect(.insert(object, columns: given)) }
        return object
    }

    /// A to-one set, pending: the foreign key's columns take the target's values (its
    /// pending key, for a new one). A one-to-one steals: whoever held the target in memory
    /// lets go in the same step, and on save the database's other holders too.
    func pendToOne(_ object: DatabaseObject, _ index: Int, _ target: DatabaseObject?) throws {
        let relationship = object.entity.relationships[index]
        switch relationship.foreignKeyIn {
        case .from:
            let columns = object.table.fromColumns[index]
            let values =
                target.map { target in graph.targetColumns(of: object.entityIndex, index).map { target.values[$0] } }
                ?? Array(repeating: StoredValue.null, count: columns.count)
            let steals = relationship.kind == .oneToOne && target != nil
            // The holder the database knows, read so that memory can let go of it.
            if steals, let target, !target.primaryKeyValues.contains(where: \.isPendingKey) {
                _ = try target.toOneObject(graph.inverse(of: object.entityIndex, index).relationship)
            }
            try pendingStep {
                if steals {
                    for holder in graph.registeredObjects(entity: object.entityIndex, indexes: columns, values: values)
                    where holder !== object && !holder.isDeleted {
                        try pendUpdate(holder, columns: SmallArray(columns), to: SmallArray(Array(repeating: .null, count: columns.count)))
                    }
                }
                try pendUpdate(object, columns: SmallArray(columns), to: SmallArray(values), releasing: steals)
            }
        case .to:
            // The inverse side of a one-to-one: the key is in the other table.
            let child = graph.target(of: object.entityIndex, index)
            let childColumns = graph.targetColumns(of: object.entityIndex, index)
            let ownerValues = object.table.fromColumns[index].map { object.values[$0] }
            if !ownerValues.contains(where: \.isPendingKey) { _ = try object.toOneObject(index) }
            try pendingStep {
                for holder in graph.registeredObjects(entity: child, indexes: childColumns, values: ownerValues)
                where holder !== target && !holder.isDeleted {
                    try pendUpdate(holder, columns: SmallArray(childColumns), to: SmallArray(Array(repeating: .null, count: childColumns.count)))
                }
                if let target { try pendUpdate(target, columns: SmallArray(childColumns), to: SmallArray(ownerValues), releasing: true) }
            }
        case .via:
            throw RelateError.notToOne(relationship)
        }
    }
}
