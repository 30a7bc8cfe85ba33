import RelatePostgres

/// Keeping the other side of every relationship in step, in memory.
extension ObjectGraph {
    /// The object's foreign key values changed from `old` (`nil` for a row new to memory:
    /// all NULL before): it leaves the loaded collections of its old targets and joins its
    /// new targets'.
    func didChange(_ object: DatabaseObject, from old: [StoredValue]?) {
        for (index, columns) in object.table.foreignKeys {
            let inverse = inverse(of: object.entityIndex, index)
            let setsAreLoaded = loadedRelationships.contains(inverse)
            guard setsAreLoaded || hasCachedCounts else { continue }
            let oldValues = columns.map { old?[$0] ?? .null }
            let newValues = columns.map { object.values[$0] }
            let before = ObjectKey(oldValues)
            let after = ObjectKey(newValues)
            guard before != after else { continue }
            noteChange(of: object.entityIndex)
            membershipsMayChange()
            guard setsAreLoaded else { continue }
            let targetIndexes = targetColumns(of: object.entityIndex, index)
            let previous = before == nil ? nil : registered(entity: inverse.entity, indexes: targetIndexes, values: oldValues)
            let next = after == nil ? nil : registered(entity: inverse.entity, indexes: targetIndexes, values: newValues)
            // Across a relationship the server links, a row may name its target in other
            // bytes (`ADA@x` for `ada@x`): it leaves the sets memory put it in, and where
            // its new values name no target memory holds by bytes, the sets are loaded again
            // as the server pairs them.
            let byServer = object.table.layout.linksByServer[index]
            if let previous {
                detach(object, from: previous, at: inverse.relationship)
            } else if before != nil, byServer {
                for target in registries[inverse.entity].all where !target.isDeleted {
                    if target.sets[inverse.relationship]?.contains(object) == true || target.toOne[inverse.relationship] ?? nil === object {
                        detach(object, from: target, at: inverse.relationship)
                    }
                }
            }
            if let next {
                attach(object, to: next, at: inverse.relationship)
            } else if after != nil, byServer {
                unsettled.insert(inverse)
            }
        }
    }

    /// The dependants of `object` across relationship `index` (its key referred to there)
    /// that memory holds: those whose values name its key by their bytes; for a
    /// relationship the server links (``EntityLayout/linksByServer``), also the members of
    /// its loaded set or to-one, which the server paired (a delete or a key change loads
    /// them first: ``DatabaseContext/loadServerLinks(of:)``). When not loaded, the objects
    /// that may refer to it by other bytes — those whose values name no object memory
    /// holds — are added to `unsure`, for the caller to read again.
    func dependants(of object: DatabaseObject, across index: Int, values: [StoredValue], unsure: inout [DatabaseObject]) -> [DatabaseObject] {
        let inverse = inverse(of: object.entityIndex, index)
        let columns = targetColumns(of: object.entityIndex, index)
        var found = registeredObjects(entity: inverse.entity, indexes: columns, values: values)
        guard object.table.layout.linksByServer[index] else { return found }
        var seen = Set(found.map(ObjectIdentifier.init))
        if let set = object.sets[index] {
            for member in set.heldMembers where seen.insert(ObjectIdentifier(member)).inserted { found.append(member) }
            return found
        }
        if case .some(let member) = object.toOne[index] {
            if let member, seen.insert(ObjectIdentifier(member)).inserted { found.append(member) }
            return found
        }
        if scannedUnsure != nil, scannedUnsure?.insert(RelationshipAddress(entity: object.entityIndex, relationship: index)).inserted == false {
            return found
        }
        let referenced = object.table.fromColumns[index]
        for candidate in registries[inverse.entity].all where !candidate.isDeleted && !seen.contains(ObjectIdentifier(candidate)) {
            let named = columns.map { candidate.values[$0] }
            guard !named.contains(where: \.isNull), registered(entity: object.entityIndex, indexes: referenced, values: named) == nil else { continue }
            unsure.append(candidate)
        }
        return found
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
        object.setToOne(index, .some(value))
        recordUndo { object.setToOne(index, previous) }
    }

    /// The object's row is gone: it is marked deleted and leaves every collection. With
    /// `applyingDeleteRules`, its dependants in memory follow their foreign keys' `ON DELETE`
    /// rules, as the database did; dependants whose key went to its default are collected to
    /// be read again. Without (a row that vanished in a roll-back), dependants stay as they are.
    func forget(_ object: DatabaseObject, applyingDeleteRules: Bool = true, settingDefaults defaults: inout [DatabaseObject]) {
        guard !object.isDeleted else { return }
        touch(object)
        object.setDeleted(true)
        recordUndo { object.setDeleted(false) }
        noteChange(of: object.entityIndex)
        unregister(object)
        for (index, relationship) in object.entity.relationships.enumerated() {
            let inverse = inverse(of: object.entityIndex, index)
            let values = object.table.fromColumns[index].map { object.values[$0] }
            let targetIndexes = targetColumns(of: object.entityIndex, index)
            switch relationship.foreignKeyIn {
            case .from:
                if let target = registered(entity: inverse.entity, indexes: targetIndexes, values: values) {
                    detach(object, from: target, at: inverse.relationship)
                } else if object.table.layout.linksByServer[index], !values.contains(where: \.isNull), loadedRelationships.contains(inverse) {
                    // A target paired by other bytes may hold it in its set.
                    unsettled.insert(inverse)
                }
            case .to:
                guard applyingDeleteRules else { continue }
                // Those memory cannot tell by bytes are read again: gone, or holding the
                // values the rule gave them.
                var unsure: [DatabaseObject] = []
                let found = dependants(of: object, across: index, values: values, unsure: &unsure)
                defaults += unsure
                for dependant in found {
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
                        var columns: [Int] = []
                        for (name, column) in zip(relationship.to.columns, targetIndexes)
                        where relationship.onDeleteSetColumns?.contains(name) ?? true {
                            cleared[column] = .null
                            columns.append(column)
                        }
                        if dependant.table.layout.movesReferences(writing: columns) {
                            // Columns another table refers to: what refers to them follows its
                            // `ON UPDATE` rule, as in the database; sets memory cannot follow
                            // are read again with the dependant.
                            var reloads: [(owner: DatabaseObject, relationship: Int)] = []
                            move(dependant, to: cleared, stale: &defaults, reloads: &reloads)
                            defaults += reloads.map(\.owner)
                        } else {
                            dependant.refresh(cleared)
                            noteChange(of: dependant.entityIndex)
                        }
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

    // MARK: - Many-to-many and helper rows

    /// New helper rows join the loaded one-to-many sets of both ends (`person.person_title_rel`).
    /// Only when ``helperRowsAreShown(_:)``: otherwise a new row is in no set anybody
    /// loaded, and no object has its key yet; the first fetch or load that reaches it
    /// makes its object.
    func didInsertHelperRows(_ result: PostgresResult, helper: EntityTable) throws {
        for object in try materialize(entity: helper.index, result: result, rowsAreDistinct: true) {
            apply(.insert(object, columns: []))
        }
    }

    /// Deleted helper rows leave the loaded sets that show them; answers their objects.
    @discardableResult
    func didDeleteHelperRows(_ result: PostgresResult, helper: EntityTable) throws -> [DatabaseObject] {
        let rows = try materialize(entity: helper.index, result: result, rowsAreDistinct: true)
        // The graph sends nothing: a dependant a SET DEFAULT changed (of a helper row other
        // tables refer to, which is rare) is not read again here.
        for object in rows { apply(.delete(object)) }
        return rows
    }
}
