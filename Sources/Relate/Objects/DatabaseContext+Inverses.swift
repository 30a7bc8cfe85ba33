/// Keeping the other side of every relationship in step, in memory.
extension DatabaseContext {
    /// The object's foreign key values changed from `old` (all NULL for a new row): it
    /// leaves the loaded collections of its old targets and joins its new targets'.
    func didChange(_ object: DatabaseObject, from old: [StoredValue]) {
        for (index, columns) in object.table.foreignKeys {
            guard let inverse = inverses[object.entityIndex][index], loadedRelationships.contains(inverse) else { continue }
            let oldValues = columns.map { old[$0] }
            let newValues = columns.map { object.values[$0] }
            let before = ObjectKey(oldValues)
            let after = ObjectKey(newValues)
            guard before != after else { continue }
            let targetIndexes = targetColumns[object.entityIndex][index]
            if before != nil, let previous = registered(entity: inverse.entity, indexes: targetIndexes, values: oldValues) {
                detach(object, from: previous, at: inverse.relationship)
            }
            if after != nil, let next = registered(entity: inverse.entity, indexes: targetIndexes, values: newValues) {
                attach(object, to: next, at: inverse.relationship)
            }
        }
    }

    /// The entity a relationship leads to.
    func targetEntity(of address: RelationshipAddress) -> Int {
        entityIndex(of: model.entities[address.entity].relationships[address.relationship].to)
    }

    private func attach(_ object: DatabaseObject, to target: DatabaseObject, at index: Int) {
        if let set = target.sets[index] {
            if !set.contains(object) { set.add(object) }
        } else if target.entity.relationships[index].isToOne {
            setCachedToOne(target, index, object)
        }
    }

    private func detach(_ object: DatabaseObject, from target: DatabaseObject, at index: Int) {
        if let set = target.sets[index] {
            set.drop(object)
        } else if target.entity.relationships[index].isToOne, target.toOne[index] ?? nil === object {
            setCachedToOne(target, index, nil)
        }
    }

    private func setCachedToOne(_ object: DatabaseObject, _ index: Int, _ value: DatabaseObject?) {
        let previous = object.toOne[index]
        object.relations.toOne[index] = .some(value)
        recordUndo { object.relations.toOne[index] = previous }
    }

    /// The object's row is gone: it is marked deleted, leaves every collection, and its
    /// dependants in memory follow their foreign keys' `ON DELETE` rules, as the database did.
    /// Dependants whose key went to its default are collected to be read again.
    func forget(_ object: DatabaseObject, settingDefaults defaults: inout [DatabaseObject]) {
        guard !object.isDeleted else { return }
        object.isDeleted = true
        recordUndo { object.isDeleted = false }
        unregister(object)
        for (index, relationship) in object.entity.relationships.enumerated() {
            guard let inverse = inverses[object.entityIndex][index] else { continue }
            let values = object.table.fromColumns[index].map { object.values[$0] }
            let targetIndexes = targetColumns[object.entityIndex][index]
            switch relationship.foreignKeyIn {
            case .from:
                if let target = registered(entity: inverse.entity, indexes: targetIndexes, values: values) {
                    detach(object, from: target, at: inverse.relationship)
                }
            case .to:
                for dependant in registeredObjects(entity: inverse.entity, indexes: targetIndexes, values: values) {
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
                for other in registries[inverse.entity].all {
                    other.sets[inverse.relationship]?.drop(object)
                }
            }
        }
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

    /// Reads objects' rows again (one query per entity), after the database changed them.
    func refetch(_ objects: [DatabaseObject]) throws {
        let groups = Dictionary(grouping: objects.filter { !$0.isDeleted }, by: \.entityIndex)
        for (entity, members) in groups.sorted(by: { $0.key < $1.key }) {
            let table = tables[entity]
            let keys = members.map { member in table.primaryKey.map { member.values[$0] } }
            let (condition, parameters) = Self.keyCondition(
                table.primaryKey.map { table.columns[$0] }, types: table.primaryKey.map { table.types[$0] }, keys)
            let result = try database(entity: entity) {
                try connection.query("SELECT \(table.selectList()) FROM \(table.table) WHERE \(condition)", parameters, format: .binary)
            }
            _ = try materialize(entity: entity, result: result, rowsAreDistinct: true)
        }
    }
}
