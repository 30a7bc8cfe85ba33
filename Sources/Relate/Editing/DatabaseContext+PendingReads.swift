import RelatePostgres

/// Reads of a context with pending changes answer as if they were saved: what the
/// database answers, corrected by what memory holds pending.
extension DatabaseContext {
    /// The objects pending writes changed (made, changed, deleted), each once, oldest first.
    var pendingTouched: [DatabaseObject] {
        var seen = Set<ObjectIdentifier>()
        var objects: [DatabaseObject] = []
        for object in pending.touched where seen.insert(ObjectIdentifier(object)).inserted { objects.append(object) }
        return objects
    }

    /// Corrects what a load of relationship `index` of `ownerEntity` found (`groups[slot]`,
    /// the slot of each owner key in `slots`) by the pending changes: deleted members leave,
    /// members whose foreign key memory changed go where it now points, new pairs join and
    /// removed ones leave.
    func correctLoadForPending(
        _ groups: inout [[DatabaseObject]], slots: ObjectKeyMap<Int>, relationship index: Int, ownerEntity: Int
    ) {
        let relationship = model.entities[ownerEntity].relationships[index]
        let target = graph.target(of: ownerEntity, index)
        for slot in groups.indices { groups[slot].removeAll { $0.isDeleted } }
        switch relationship.foreignKeyIn {
        case .to:
            let columns = graph.targetColumns(of: ownerEntity, index)
            for object in pendingTouched where object.entityIndex == target && !object.isDeleted {
                guard let key = object.key(at: columns), let slot = slots[key], !groups[slot].contains(where: { $0 === object }) else { continue }
                groups[slot].append(object)
            }
        case .via:
            let ownerColumns = graph.tables[ownerEntity].fromColumns[index]
            let inverse = graph.inverse(of: ownerEntity, index)
            for (owner, pairIndex, member, times) in pendingSummary().pairs.values where times != 0 {
                let (from, to): (DatabaseObject, DatabaseObject)
                if owner.entityIndex == ownerEntity, pairIndex == index {
                    (from, to) = (owner, member)
                } else if member.entityIndex == ownerEntity, owner.entityIndex == inverse.entity, pairIndex == inverse.relationship {
                    (from, to) = (member, owner)
                } else {
                    continue
                }
                guard let key = from.key(at: ownerColumns), let slot = slots[key] else { continue }
                if times > 0 {
                    groups[slot] += repeatElement(to, count: times)
                } else {
                    for _ in 0..<(-times) {
                        if let position = groups[slot].firstIndex(where: { $0 === to }) { groups[slot].remove(at: position) }
                    }
                }
            }
        case .from:
            break
        }
    }
}

extension DatabaseContext {
    /// ``fetch(_:)`` with pending changes of the entity: the database answers for the rows
    /// no pending write touched (those are left out by key), memory for the rest — judged by
    /// the request's condition, put where its order puts them — then the page is cut.
    func fetchSeeingPending(_ request: FetchRequest, entity: Int) throws -> [DatabaseObject]? {
        let touched = pendingTouched.filter { $0.entityIndex == entity }
        guard !touched.isEmpty else { return nil }
        let table = graph.tables[entity]
        let summary = pendingSummary()
        let inserted = Set(summary.inserted.map(ObjectIdentifier.init))
        // The keys the database holds them under: before any pending change of the key.
        let keys: [[StoredValue]] = touched.filter { !inserted.contains(ObjectIdentifier($0)) && !$0.primaryKeyValues.contains(where: \.isPendingKey) }
            .map { object in
                let originals = summary.originals(of: object)
                return table.primaryKey.map { column in originals.first { $0.column == column }?.value ?? object.values[column] }
            }
        var untouched = request
        if !keys.isEmpty {
            let names = table.primaryKey.map { table.entity.attributes[$0].key }
            let leftOut: Condition =
                names.count == 1
                ? !Key(names[0]).in(keys.map { $0[0].value })
                : !Condition.any(keys.map { key in Condition.all(zip(names, key).map { Key($0) == $1.value }) })
            untouched.condition = request.condition.map { $0 && leftOut } ?? leftOut
        }
        if let limit = request.limit { untouched.limit = limit + (request.offset ?? 0) }
        untouched.offset = nil
        let found = try fetchFromDatabase(untouched).filter { !$0.isDeleted }
        // Judged again once the server has ranked the values only it can compare (ServerRanks).
        let text = ServerRanks()
        var objects: [DatabaseObject]
        while true {
            objects = found
            for object in touched where !object.isDeleted {
                guard try request.condition.map({ try meets($0.node, object, text: text) }) ?? true else { continue }
                var position = objects.endIndex
                if !request.orderBy.isEmpty {
                    for (index, other) in objects.enumerated() where try precedes(object, other, in: request.orderBy, text: text) == true {
                        position = index
                        break
                    }
                }
                objects.insert(object, at: position)
            }
            guard text.hasUnranked else { break }
            try text.rank(in: self, entity: entity)
        }
        if let offset = request.offset, offset > 0 { objects.removeFirst(min(offset, objects.count)) }
        if let limit = request.limit, objects.count > limit { objects.removeLast(objects.count - limit) }
        return objects
    }
}
