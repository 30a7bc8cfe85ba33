import RelatePostgres

/// Writes through a to-many relationship's ``RelationshipSet``: a one-to-many member is an
/// `UPDATE` of its foreign key, a many-to-many one a helper row. Each is planned
/// (``Statements``), sent, and what the database answered is handed to the graph.
extension DatabaseContext {
    func insert(_ object: DatabaseObject, into set: RelationshipSet, owner: DatabaseObject, helperValues: [String: Any?]) throws {
        // Membership may change whatever the outcome (a conflict corrects memory).
        defer { graph.noteChange(across: set.relationshipIndex, of: owner.entityIndex) }
        graph.membershipsMayChange()
        let relationship = set.relationship
        _ = try relatedObject(object, for: owner.entityIndex, set.relationshipIndex, key: relationship.key)
        switch relationship.foreignKeyIn {
        case .to:
            // Written even when memory shows it in the set: another client may have moved it.
            try setToOne(object, graph.inverse(of: owner.entityIndex, set.relationshipIndex).relationship, owner)
        case .via:
            let helper = try helperTable(of: set)
            if try writesPending() {
                guard helperValues.isEmpty else {
                    throw RelateError(
                        kind: .invalidWrite, message: "helper values of \"\(helper.entity.name)\" are written only by a context that autocommits; "
                            + "insert the helper row itself", entity: helper.entity.name, key: relationship.key)
                }
                if !helperIsKeyed(relationship, helper: helper) || !set.contains(object) {
                    try pendingStep { applyEffect(.link(owner: owner, relationship: set.relationshipIndex, member: object, times: 1)) }
                }
                return
            }
            // A keyed pair is stored once: the database, not memory, says whether it is there
            // (another client may have removed or added it), and the set ends holding it.
            let keyed = helperIsKeyed(relationship, helper: helper)
            let shown = helperRowsAreShown(helper)
            let statement = try helperInsert(
                set, helper: helper, member: object, helperValues: helperValues, returning: shown, skippingExisting: keyed)
            let result = try send(statement, entity: owner.entityIndex)
            if shown { try graph.didInsertHelperRows(result, helper: helper) }
            if !keyed || !set.contains(object) {
                graph.apply(.link(owner: owner, relationship: set.relationshipIndex, member: object, times: 1))
            }
        case .from:
            throw RelateError.notToMany(relationship)
        }
    }

    /// ``RelationshipSet/insert(contentsOf:)``: one statement whose answer memory follows.
    func insert(contentsOf objects: [DatabaseObject], into set: RelationshipSet, owner: DatabaseObject) throws {
        guard !objects.isEmpty else { return }
        // Membership may change whatever the outcome (a conflict corrects memory).
        defer { graph.noteChange(across: set.relationshipIndex, of: owner.entityIndex) }
        graph.membershipsMayChange()
        let relationship = set.relationship
        let index = set.relationshipIndex
        try relatedMembers(objects, for: owner.entityIndex, index, key: relationship.key)
        if try writesPending() {
            return try pendingStep { for object in objects { try insert(object, into: set, owner: owner, helperValues: [:]) } }
        }
        // Members refer to the owner by these values: a NULL would leave them belonging to nobody.
        for column in owner.table.fromColumns[index] where owner.values[column].isNull {
            let attribute = owner.entity.attributes[column]
            throw RelateError(
                kind: .invalidWrite,
                message: "this \(owner.entity.name) has no \"\(attribute.name)\" for its \"\(relationship.key)\" to refer to",
                entity: owner.entity.name, key: relationship.key)
        }
        let distinct = Self.distinct(objects).objects
        switch relationship.foreignKeyIn {
        case .to:
            // The children the database does not link to the owner yet move to it; each
            // row answered refreshes its object, which leaves its old owner's loaded set
            // and joins this one (`didChange`).
            let target = graph.target(of: owner.entityIndex, index)
            let targetTable = graph.tables[target]
            guard !targetTable.primaryKey.isEmpty else { throw RelateError.readOnly(targetTable) }
            try require(.update, on: targetTable)
            let childColumns = graph.targetColumns(of: owner.entityIndex, index)
            let ownerValues = owner.table.fromColumns[index].map { owner.values[$0].parameter }
            let statement = Statements.claim(
                targetTable.layout, foreignKey: childColumns, owner: ownerValues, members: distinct.map(\.primaryKeyValues))
            let moved = try graph.materialize(entity: target, result: try send(statement, entity: owner.entityIndex), rowsAreDistinct: true)
            // The others the database linked already, or no longer holds: whatever memory
            // believes of them, they are read again (one statement, only when some were not
            // moved) and follow; what memory learns stays learnt if a transaction rolls back.
            let answered = Set(moved.map(ObjectIdentifier.init))
            let unanswered = distinct.filter { !answered.contains(ObjectIdentifier($0)) }
            if !unanswered.isEmpty {
                for child in unanswered { graph.learntInTransaction(.corrected(child)) }
                try reread(unanswered, because: .stale)
            }
            for object in distinct where !set.contains(object) && !object.isDeleted {
                graph.apply(.link(owner: owner, relationship: index, member: object, times: 1))
            }
            if let gone = unanswered.first(where: \.isDeleted) {
                throw RelateError.conflict(gone, "was deleted by another client, so it was not added (the others were)")
            }
        case .via:
            let helper = try helperTable(of: set)
            let keyed = helperIsKeyed(relationship, helper: helper)
            let shown = helperRowsAreShown(helper)
            // A keyed pair is stored once; an unkeyed helper takes a row for each object given.
            let rows = keyed ? distinct : objects
            let results: [PostgresResult]
            if let all = try helperInsertAll(owner: owner, relationship: index, helper: helper, rows: rows, returning: shown, skippingExisting: keyed) {
                results = [try send(all, entity: owner.entityIndex)]
            } else {
                // Keys without an array type that goes into the helper's columns: one
                // INSERT a row, in one pipeline (one round trip, all or nothing).
                let statements = try helperInserts(
                    set, helper: helper, members: rows.map { ($0, 1) }, returning: shown, skippingExisting: keyed)
                results = try send(statements, entity: owner.entityIndex)
            }
            if shown { for result in results { try graph.didInsertHelperRows(result, helper: helper) } }
            if keyed {
                graph.apply(.linkOnce(owner: owner, relationship: index, members: distinct))
            } else {
                var given: [ObjectIdentifier: Int] = [:]
                for object in objects { given[ObjectIdentifier(object), default: 0] += 1 }
                for member in distinct {
                    graph.apply(.link(owner: owner, relationship: index, member: member, times: given[ObjectIdentifier(member)]!))
                }
            }
        case .from:
            throw RelateError.notToMany(relationship)
        }
    }

    func remove(_ object: DatabaseObject, from set: RelationshipSet, owner: DatabaseObject) throws {
        // Membership may change whatever the outcome (a conflict corrects memory).
        defer { graph.noteChange(across: set.relationshipIndex, of: owner.entityIndex) }
        graph.membershipsMayChange()
        try check(object)
        guard set.contains(object) else { return }
        let relationship = set.relationship
        switch relationship.foreignKeyIn {
        case .to:
            try requireNullable(relationship, childEntity: object.entityIndex)
            let columns = graph.targetColumns(of: owner.entityIndex, set.relationshipIndex)
            let ownerValues = owner.table.fromColumns[set.relationshipIndex].map { owner.values[$0] }
            do {
                try update(
                    object, columns: SmallArray(columns), values: SmallArray(Array(repeating: nil, count: columns.count)),
                    expecting: Array(zip(columns, ownerValues)))
            } catch let error as RelateError where error.kind == .conflict {
                // The database moved it elsewhere: the owner's set takes what the database holds.
                graph.learntInTransaction(.corrected(owner))
                try load(relationship: set.relationshipIndex, for: [owner])
                throw error
            }
        case .via:
            let helper = try helperTable(of: set)
            if try writesPending() {
                let times = set.count(for: object)
                return try pendingStep {
                    applyEffect(.unlink(owner: owner, relationship: set.relationshipIndex, member: object, times: times))
                }
            }
            let statement = helperDelete(set, helper: helper, member: object)
            let result = try send(statement, entity: owner.entityIndex)
            try graph.didDeleteHelperRows(result, helper: helper)
            guard result.count > 0 else {
                // No such helper row any more: memory lets go of the pair as the database did.
                graph.learntInTransaction(.corrected(owner))
                graph.learntInTransaction(.corrected(object))
                graph.apply(.unlink(owner: owner, relationship: set.relationshipIndex, member: object, times: set.count(for: object)))
                throw RelateError.conflict(object, "was no longer linked to this \(owner.entity.name) through \"\(helper.entity.name)\" "
                    + "(another client removed the pair); memory now agrees")
            }
            graph.apply(.unlink(owner: owner, relationship: set.relationshipIndex, member: object, times: result.count))
        case .from:
            throw RelateError.notToMany(relationship)
        }
    }

    /// Makes the set hold exactly `members` (with their multiplicity), writing only the
    /// difference, all of it in one pipeline — one round trip, all or nothing. What leaves
    /// is chosen by the database, not by memory (`… WHERE fk = $owner AND NOT (key = ANY(…))`),
    /// so a member another client added leaves too, even when memory saw nothing to remove;
    /// memory follows the rows that changed.
    func replace(members: [DatabaseObject], of set: RelationshipSet, owner: DatabaseObject) throws {
        // Membership may change whatever the outcome (a conflict corrects memory).
        defer { graph.noteChange(across: set.relationshipIndex, of: owner.entityIndex) }
        graph.membershipsMayChange()
        let relationship = set.relationship
        let index = set.relationshipIndex
        try relatedMembers(members, for: owner.entityIndex, index, key: relationship.key)
        // Members in the order given, each once, with how many times it was given.
        var wanted: [ObjectIdentifier: Int] = [:]
        var distinct: [DatabaseObject] = []
        for member in members {
            let id = ObjectIdentifier(member)
            if wanted[id] == nil { distinct.append(member) }
            wanted[id, default: 0] += 1
        }
        let current = set.allObjects
        let removesAny = current.contains { wanted[ObjectIdentifier($0)] == nil }
        if try writesPending() {
            // Memory is all a pending replace can go by: the difference from what it holds.
            return try pendingStep {
                for member in current where wanted[ObjectIdentifier(member)] == nil { try remove(member, from: set, owner: owner) }
                for member in distinct {
                    let delta = wanted[ObjectIdentifier(member)]! - set.count(for: member)
                    if relationship.foreignKeyIn == .via, delta < 0 {
                        applyEffect(.unlink(owner: owner, relationship: index, member: member, times: -delta))
                    } else if relationship.foreignKeyIn == .via, delta > 0 {
                        applyEffect(.link(owner: owner, relationship: index, member: member, times: delta))
                    } else if delta > 0 {
                        try insert(member, into: set, owner: owner, helperValues: [:])
                    }
                }
            }
        }
        let target = graph.target(of: owner.entityIndex, index)
        let targetTable = graph.tables[target]
        let targetKey = graph.targetColumns(of: owner.entityIndex, index)
        let ownerValues = owner.table.fromColumns[index].map { owner.values[$0].parameter }

        switch relationship.foreignKeyIn {
        case .to:
            try require(.update, on: targetTable)
            if removesAny { try requireNullable(relationship, childEntity: target) }
            // Both statements follow the database, not memory (which may be stale): what
            // leaves is whatever it links to the owner beyond the members, what arrives is
            // every member it does not link yet.
            let keys = distinct.map(\.primaryKeyValues)
            var statements = [Statements.release(targetTable.layout, foreignKey: targetKey, owner: ownerValues, keeping: keys)]
            if !distinct.isEmpty {
                statements.append(Statements.claim(targetTable.layout, foreignKey: targetKey, owner: ownerValues, members: keys))
            }
            let results = try send(statements, entity: owner.entityIndex)
            for result in results {
                _ = try graph.materialize(entity: target, result: result, rowsAreDistinct: true)
            }

        case .via:
            let helper = try helperTable(of: set)
            let helperTo = owner.table.layout.helperColumns[index].to
            var statements: [Statement] = []
            // Whole members leave by one statement the database answers; fewer copies of a
            // pair (a helper without a key) by one row each.
            statements.append(helperDelete(owner: owner, relationship: index, helper: helper, keeping: distinct))
            var added: [(object: DatabaseObject, times: Int)] = []
            if !members.isEmpty {
                for member in distinct {
                    let delta = (wanted[ObjectIdentifier(member)] ?? 0) - set.count(for: member)
                    if delta < 0 {
                        let statement = helperDelete(set, helper: helper, member: member)
                        for _ in 0..<(-delta) { statements.append(statement) }
                    } else if delta > 0 {
                        added.append((member, delta))
                    }
                }
            }
            let deletes = statements.count
            let shown = helperRowsAreShown(helper)
            if let many = try helperInsertAll(set, helper: helper, members: added, returning: shown) {
                statements.append(many)
            } else {
                statements += try helperInserts(set, helper: helper, members: added, returning: shown)
            }
            if statements.isEmpty { return }
            let results = try send(statements, entity: owner.entityIndex)
            // The deleted rows say which pairs left, and how often.
            var left: [ObjectIdentifier: (object: DatabaseObject, times: Int)] = [:]
            for result in results.prefix(deletes) {
                for row in try graph.didDeleteHelperRows(result, helper: helper) {
                    let values = helperTo.map { row.values[$0] }
                    guard let member = graph.registered(entity: target, indexes: targetKey, values: values) else { continue }
                    left[ObjectIdentifier(member), default: (member, 0)].times += 1
                }
            }
            for result in results.dropFirst(deletes) where !result.columns.isEmpty {
                try graph.didInsertHelperRows(result, helper: helper)
            }
            for (member, times) in left.values {
                graph.apply(.unlink(owner: owner, relationship: index, member: member, times: times))
            }
            for (member, times) in added {
                graph.apply(.link(owner: owner, relationship: index, member: member, times: times))
            }

        case .from:
            throw RelateError.notToMany(relationship)
        }
    }

    /// A replace of a many-to-many set through a helper that holds a pair once: the
    /// database is told the whole membership, not the difference from what memory
    /// believes, so neither a set nobody loaded (which needed a read first: it cost as much
    /// as the writes, 2.5× a single raw `INSERT … SELECT unnest`) nor a loaded one that is
    /// stale (a pair another client added or removed) can make it fail or leave it wrong.
    /// One pipeline: what leaves is deleted and answered (so the other side's loaded sets
    /// follow), every member is inserted unless its pair is there already; the set then
    /// holds exactly `members`. Answers false, having done nothing, where the helper may
    /// hold a pair twice or the keys have no array type that goes into the columns (then
    /// the set is loaded and the difference written).
    func replaceKeyedManyToMany(members: [DatabaseObject], relationship index: Int, owner: DatabaseObject) throws -> Bool {
        // Membership may change whatever the outcome (a conflict corrects memory).
        defer { graph.noteChange(across: index, of: owner.entityIndex) }
        let relationship = owner.entity.relationships[index]
        guard relationship.foreignKeyIn == .via, let helperIndex = owner.table.layout.helpers[index], autocommits else {
            return false
        }
        let helper = graph.tables[helperIndex]
        guard helperIsKeyed(relationship, helper: helper) else { return false }
        try relatedMembers(members, for: owner.entityIndex, index, key: relationship.key)
        let (distinct, seen) = Self.distinct(members)
        let helperTo = owner.table.layout.helperColumns[index].to
        let targetKey = graph.targetColumns(of: owner.entityIndex, index)
        let shown = helperRowsAreShown(helper)

        var statements = [helperDelete(owner: owner, relationship: index, helper: helper, keeping: distinct)]
        if !distinct.isEmpty {
            guard let insert = try helperInsertAll(
                owner: owner, relationship: index, helper: helper, rows: distinct, returning: shown, skippingExisting: true)
            else { return false }
            statements.append(insert)
        }
        graph.membershipsMayChange()
        let results = try send(statements, entity: owner.entityIndex)

        // The pairs that left, as the database answers them: those memory did not know of
        // (another client's) leave the other side's loaded sets too.
        let target = graph.target(of: owner.entityIndex, index)
        for row in try graph.didDeleteHelperRows(results[0], helper: helper) {
            guard let member = graph.registered(entity: target, indexes: targetKey, values: helperTo.map { row.values[$0] }) else { continue }
            graph.apply(.unlink(owner: owner, relationship: index, member: member, times: 1))
        }
        // Pairs memory held that the database no longer did (another client removed them).
        if let set = owner.sets[index] {
            for member in set.allObjects where !seen.contains(ObjectIdentifier(member)) {
                graph.apply(.unlink(owner: owner, relationship: index, member: member, times: set.count(for: member)))
            }
        }
        if results.count > 1, shown { try graph.didInsertHelperRows(results[1], helper: helper) }
        // Each member once, in one append to each side's loaded set.
        graph.apply(.linkOnce(owner: owner, relationship: index, members: distinct))
        // A set nobody loaded is known whole now.
        if owner.sets[index] == nil { graph.storeLoaded(relationship: index, of: [owner], related: [distinct], mayRepeat: true) }
        return true
    }

    /// `objects` each once, in the order given, with their identities.
    static func distinct(_ objects: [DatabaseObject]) -> (objects: [DatabaseObject], identities: Set<ObjectIdentifier>) {
        var distinct: [DatabaseObject] = []
        distinct.reserveCapacity(objects.count)
        var seen = Set<ObjectIdentifier>(minimumCapacity: objects.count)
        for object in objects where seen.insert(ObjectIdentifier(object)).inserted { distinct.append(object) }
        return (distinct, seen)
    }

    func requireNullable(_ relationship: Relationship, childEntity: Int) throws {
        let child = graph.tables[childEntity]
        for index in child.attributeIndexes(relationship.to.columns) where !child.entity.attributes[index].isNullable {
            let attribute = child.entity.attributes[index]
            throw RelateError(
                kind: .invalidWrite,
                message: "column \"\(attribute.name)\" of \"\(child.entity.name)\" is NOT NULL, so a \(child.entity.name) cannot leave "
                    + "its \(relationship.from.table) without another: move it (set its \"\(relationship.inverseKey)\") or delete it",
                entity: child.entity.name, key: attribute.key)
        }
    }
}
