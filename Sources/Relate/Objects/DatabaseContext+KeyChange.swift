import RelatePostgres

/// A primary key written through the context. The object keeps its identity under its new
/// key, and every foreign key that referred to the old one follows its `ON UPDATE` action
/// in memory as it did in the database: CASCADE moves the dependants' keys (re-keying them
/// in turn where the key is part of theirs), SET NULL empties them, SET DEFAULT and the
/// rest read them again. BaseTen allowed it, and natural keys with `ON UPDATE CASCADE`
/// rely on it.
extension DatabaseContext {
    /// `object`'s row, whose key changed, is now `row`.
    func followKeyChange(_ object: DatabaseObject, to row: PostgresRow) throws {
        var stale: [DatabaseObject] = []
        var reloads: [(owner: DatabaseObject, relationship: Int)] = []
        move(object, to: try storedValues(of: row, entity: object.entityIndex), stale: &stale, reloads: &reloads)
        try reread(stale)
        for (owner, index) in reloads where !owner.isDeleted {
            try reloadManyToMany(index, of: owner)
        }
    }

    /// `object` now holds `newValues`: re-keyed if its key changed, moved between loaded
    /// sets as its foreign keys did, and what referred to its old values following their
    /// rules. Dependants whose rule memory cannot mirror go to `stale`, loaded many-to-many
    /// sets whose pairs the database changed otherwise than by CASCADE to `reloads`.
    private func move(
        _ object: DatabaseObject, to newValues: [StoredValue], stale: inout [DatabaseObject],
        reloads: inout [(owner: DatabaseObject, relationship: Int)]
    ) {
        let old = Array(object.values)
        rekey(object, from: old, to: newValues)
        object.refresh(newValues)
        didChange(object, from: old)
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
            let inverse = inverse(of: object.entityIndex, index)
            let columns = targetColumns(of: object.entityIndex, index)
            for dependant in registeredObjects(entity: inverse.entity, indexes: columns, values: before) {
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
                    // held no such dependant (else it refused), so memory's is stale.
                    stale.append(dependant)
                    continue
                }
                move(dependant, to: values, stale: &stale, reloads: &reloads)
            }
        }
    }

    /// Registers `object` under the key `new` holds instead of the one `old` held. An object
    /// memory still holds under the new key is gone from the database (it took the key).
    private func rekey(_ object: DatabaseObject, from old: [StoredValue], to new: [StoredValue]) {
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

    /// Loads the owner's many-to-many set again; members it no longer has let go of the owner too.
    private func reloadManyToMany(_ index: Int, of owner: DatabaseObject) throws {
        let before = owner.sets[index]?.allObjects ?? []
        try load(relationship: index, for: [owner])
        let inverse = inverse(of: owner.entityIndex, index)
        for member in before where owner.sets[index]?.contains(member) != true {
            member.sets[inverse.relationship]?.drop(owner)
        }
    }

    /// The error for a key change the database refused because rows still refer to the old
    /// key (`ON UPDATE RESTRICT` / `NO ACTION`): names the constraint and the table; `nil`
    /// for any other error.
    func keyChangeDenied(_ error: RelateError, _ object: DatabaseObject) -> RelateError? {
        guard let postgres = error.postgresError, postgres.sqlState == .foreignKeyViolation || postgres.sqlState == .restrictViolation,
            let constraint = postgres.constraint,
            object.entity.relationships.contains(where: { $0.foreignKeyIn == .to && $0.constraint == constraint })
        else { return nil }
        return RelateError(
            kind: .updateDenied,
            message: "the key of this \(object.entity.name) object cannot change: rows of table \"\(postgres.table ?? "?")\" still refer to it "
                + "through constraint \"\(constraint)\" (ON UPDATE RESTRICT or NO ACTION)",
            entity: object.entity.name, postgresError: postgres, detail: "\(object)")
    }
}
