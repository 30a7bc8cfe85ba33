import RelatePostgres

/// A primary key written through the context, in memory: the object keeps its identity
/// under its new key, and every foreign key that referred to the old one follows its
/// `ON UPDATE` action as it did in the database (see `DatabaseContext.followKeyChange`).
extension ObjectGraph {
    /// `object` now holds `newValues`: re-keyed if its key changed, moved between loaded
    /// sets as its foreign keys did, and what referred to its old values following their
    /// rules. Dependants whose rule memory cannot mirror go to `stale`, loaded many-to-many
    /// sets whose pairs the database changed otherwise than by CASCADE to `reloads`.
    func move(
        _ object: DatabaseObject, to newValues: [StoredValue], stale: inout [DatabaseObject],
        reloads: inout [(owner: DatabaseObject, relationship: Int)]
    ) {
        let old = Array(object.values)
        // The dependants by the old values, before the refresh lets go of the to-ones that
        // found them; those memory cannot tell by bytes are read again, as the database left them.
        var moving: [(index: Int, after: [StoredValue], found: [DatabaseObject])] = []
        for (index, relationship) in object.entity.relationships.enumerated() where relationship.foreignKeyIn != .from {
            let referenced = object.table.fromColumns[index]
            let before = referenced.map { old[$0] }
            let after = referenced.map { newValues[$0] }
            guard ObjectKey(before) != ObjectKey(after) else { continue }
            if relationship.foreignKeyIn == .via {
                // Helper rows in memory follow as the helper's own one-to-many (below); the
                // pairs stay the same under CASCADE, and are read again otherwise.
                if relationship.onUpdate != .cascade, object.sets[index] != nil { reloads.append((object, index)) }
                continue
            }
            var unsure: [DatabaseObject] = []
            moving.append((index, after, dependants(of: object, across: index, values: before, unsure: &unsure)))
            stale += unsure
        }
        rekey(object, from: old, to: newValues)
        object.refresh(newValues)
        noteChange(of: object.entityIndex)
        didChange(object, from: old)
        for (index, after, found) in moving {
            let relationship = object.entity.relationships[index]
            let columns = targetColumns(of: object.entityIndex, index)
            for dependant in found {
                var values = Array(dependant.values)
                switch relationship.onUpdate {
                case .cascade:
                    for (column, value) in zip(columns, after) { values[column] = value }
                case .setNull:
                    for column in columns { values[column] = .null }
                    // Found by its new key, the object is not the one its dependants' old values name.
                    detach(dependant, from: object, at: index)
                case .setDefault, .restrict, .noAction:
                    // A default is the database's to compute; under the others the database
                    // held no such dependant (else it refused), so memory's is stale — or
                    // the key is a copy the database does not enforce (a child table's, a
                    // view's): the row still names the old key, which the object no longer
                    // holds. Read again, it joins whatever its values name.
                    detach(dependant, from: object, at: index)
                    stale.append(dependant)
                    continue
                }
                move(dependant, to: values, stale: &stale, reloads: &reloads)
            }
        }
    }

    /// Registers `object` under the key `new` holds instead of the one `old` held. An object
    /// memory still holds under the new key is gone from the database (it took the key).
    func rekey(_ object: DatabaseObject, from old: [StoredValue], to new: [StoredValue]) {
        let primaryKey = object.table.primaryKey
        guard let oldKey = ObjectKey(old, at: primaryKey), let newKey = ObjectKey(new, at: primaryKey), oldKey != newKey else { return }
        let registry = registries[object.entityIndex]
        if let other = registry[newKey], other !== object {
            var ignored: [DatabaseObject] = []
            forget(other, applyingDeleteRules: false, settingDefaults: &ignored)
        }
        registry.remove(object, key: oldKey)
        registry.register(object, key: newKey)
        recordUndo {
            registry.remove(object, key: newKey)
            registry.register(object, key: oldKey)
        }
    }
}
