import RelatePostgres

/// Keeping the other side of every relationship in step, in memory.
extension DatabaseContext {
    /// The object's foreign key values changed from `old` (all NULL for a new row): it
    /// leaves the loaded collections of its old targets and joins its new targets'.
    func didChange(_ object: DatabaseObject, from old: [StoredValue]) {
        for (index, columns) in object.table.foreignKeys {
            let inverse = inverse(of: object.entityIndex, index)
            let setsAreLoaded = loadedRelationships.contains(inverse)
            guard setsAreLoaded || hasCachedCounts else { continue }
            let oldValues = columns.map { old[$0] }
            let newValues = columns.map { object.values[$0] }
            let before = ObjectKey(oldValues)
            let after = ObjectKey(newValues)
            guard before != after else { continue }
            membershipsMayChange()
            guard setsAreLoaded else { continue }
            let targetIndexes = targetColumns(of: object.entityIndex, index)
            if before != nil, let previous = registered(entity: inverse.entity, indexes: targetIndexes, values: oldValues) {
                detach(object, from: previous, at: inverse.relationship)
            }
            if after != nil, let next = registered(entity: inverse.entity, indexes: targetIndexes, values: newValues) {
                attach(object, to: next, at: inverse.relationship)
            }
        }
    }

    private func attach(_ object: DatabaseObject, to target: DatabaseObject, at index: Int) {
        if let set = target.sets[index] {
            if !set.contains(object) { set.add(object) }
        } else if target.table.isToMany[index] == false {
            setCachedToOne(target, index, object)
        }
    }

    func detach(_ object: DatabaseObject, from target: DatabaseObject, at index: Int) {
        if let set = target.sets[index] {
            set.drop(object)
        } else if target.table.isToMany[index] == false, target.toOne[index] ?? nil === object {
            setCachedToOne(target, index, nil)
        }
    }

    private func setCachedToOne(_ object: DatabaseObject, _ index: Int, _ value: DatabaseObject?) {
        let previous = object.toOne[index]
        object.relations.toOne[index] = .some(value)
        recordUndo { object.relations.toOne[index] = previous }
    }

    /// The object's row is gone: it is marked deleted and leaves every collection. With
    /// `applyingDeleteRules`, its dependants in memory follow their foreign keys' `ON DELETE`
    /// rules, as the database did; dependants whose key went to its default are collected to
    /// be read again. Without (a row that vanished in a roll-back), dependants stay as they are.
    func forget(_ object: DatabaseObject, applyingDeleteRules: Bool = true, settingDefaults defaults: inout [DatabaseObject]) {
        guard !object.isDeleted else { return }
        object.isDeleted = true
        recordUndo { object.isDeleted = false }
        unregister(object)
        for (index, relationship) in object.entity.relationships.enumerated() {
            let inverse = inverse(of: object.entityIndex, index)
            let values = object.table.fromColumns[index].map { object.values[$0] }
            let targetIndexes = targetColumns(of: object.entityIndex, index)
            switch relationship.foreignKeyIn {
            case .from:
                if let target = registered(entity: inverse.entity, indexes: targetIndexes, values: values) {
                    detach(object, from: target, at: inverse.relationship)
                }
            case .to:
                guard applyingDeleteRules else { continue }
                for dependant in registeredObjects(entity: inverse.entity, indexes: targetIndexes, values: values) {
                    // Partitions that disagree on the rule: the database knows, memory reads it back.
                    if relationship.onDeleteVaries {
                        defaults.append(dependant)
                        continue
                    }
                    switch relationship.onDelete {
                    case .cascade:
                        forget(dependant, settingDefaults: &defaults)
                    case .setNull:
                        var cleared = Array(dependant.values)
                        for column in targetIndexes { cleared[column] = .null }
                        dependant.refresh(cleared)
                    case .setDefault:
                        defaults.append(dependant)
                    case .restrict, .noAction:
                        break
                    }
                }
            case .via:
                break
            }
        }
        leaveManyToManySets(object)
        // A deleted object answers no relationship; its loaded ones would only keep others alive.
        if let box = object.loaded {
            let held = box.takeAll()
            if isRecordingUndo {
                recordUndo {
                    box.sets = held.sets
                    box.toOne = held.toOne
                }
            }
        }
    }

    /// Takes `object` out of every loaded many-to-many set that holds it.
    private func leaveManyToManySets(_ object: DatabaseObject) {
        guard object.table.layout.helpers.contains(where: { $0 != nil }) else { return }
        if manyToManyMemberships == nil { buildManyToManyMemberships() }
        for set in manyToManyMemberships?[ObjectIdentifier(object)] ?? [] {
            set.drop(object)
        }
    }

    /// Lists the members of every loaded many-to-many set, once; the sets keep it up to date.
    private func buildManyToManyMemberships() {
        var memberships: [ObjectIdentifier: [RelationshipSet]] = [:]
        for box in loadedBoxes {
            for (_, set) in box.sets where set.isManyToMany {
                for member in set.allObjects { memberships[ObjectIdentifier(member), default: []].append(set) }
            }
        }
        manyToManyMemberships = memberships
    }

    func listMembership(of member: DatabaseObject, in set: RelationshipSet) {
        guard manyToManyMemberships != nil else { return }
        manyToManyMemberships![ObjectIdentifier(member), default: []].append(set)
    }

    func unlistMembership(of member: DatabaseObject, in set: RelationshipSet) {
        let id = ObjectIdentifier(member)
        guard var sets = manyToManyMemberships?[id], let position = sets.firstIndex(where: { $0 === set }) else { return }
        sets.remove(at: position)
        manyToManyMemberships![id] = sets.isEmpty ? nil : sets
    }

    /// Reads objects' rows again (one query per entity, `= ANY` of their keys): each takes
    /// its row's values, moving between loaded sets as its foreign keys did; an object whose
    /// row is gone is marked deleted and leaves every loaded set. `afterDelete`: the rows
    /// are dependants of a deleted row, so one that vanished was deleted by the database's
    /// rules, and its own dependants in memory follow them too.
    func reread(_ objects: [DatabaseObject], afterDelete: Bool = false) throws {
        let groups = Dictionary(grouping: objects.filter { !$0.isDeleted && $0.objectKey != nil }, by: \.entityIndex)
        for (entity, members) in groups.sorted(by: { $0.key < $1.key }) {
            let primaryKey = tables[entity].primaryKey
            let result = try rows(of: entity, keys: members.map { member in primaryKey.map { member.values[$0] } })
            let found = Set(try materialize(entity: entity, result: result, rowsAreDistinct: false).map(ObjectIdentifier.init))
            var dependants: [DatabaseObject] = []
            for member in members where !found.contains(ObjectIdentifier(member)) {
                forget(member, applyingDeleteRules: afterDelete, settingDefaults: &dependants)
            }
            if !dependants.isEmpty { try reread(dependants, afterDelete: true) }
        }
    }

    /// The rows of `entity` whose primary keys are `keys` (in key order), in one query.
    func rows(of entity: Int, keys: [[StoredValue]]) throws -> PostgresResult {
        try send(Statements.rows(of: layout.entities[entity], keys: keys), entity: entity)
    }
}
