import RelatePostgres

/// `save()`: the pending changes planned into statements, in an order the foreign keys
/// allow, sent in one transaction in a few pipelines, and checked against what other
/// clients committed meanwhile.
extension DatabaseContext {
    /// Sends every pending change in one transaction, then forgets them (and the undo stack).
    ///
    /// ```swift
    /// context.autocommits = false
    /// try ada.setValue("King", forKey: "surname")
    /// let grace = try context.insert("person", values: ["firstname": "Grace"])
    /// try grace.objects(forKey: "email").insert(newEmail)
    /// try context.save()     // INSERT person, UPDATE person, UPDATE email: one transaction
    /// ```
    ///
    /// ``validateChanges()`` runs first. New rows go first, a parent before the rows that
    /// refer to it (one pipeline a level: their keys come back and take the place of their
    /// ``PendingKey``s, each object keeping its instance); then, in one pipeline, the updates,
    /// the many-to-many pairs that leave and join, and the deletes, a row's dependants before
    /// the row. A write another needs sooner goes sooner, with what it needs in turn: a
    /// delete, or an update, that frees a key a new row takes goes before that row, after
    /// the updates that move the deleted row's dependants away and the deletes of its
    /// dependants. Each `UPDATE` writes only the columns changed and only where the row still
    /// holds what memory held before the change (`IS NOT DISTINCT FROM`), each `DELETE` only
    /// where the row is still there: another client's change to the same column throws
    /// ``RelateError/Kind-swift.struct/conflict`` and nothing is written; a change of another
    /// column goes through, and both stand. A new row comes back as stored (its key,
    /// defaults, generated columns); an updated one only where the database may store other
    /// than was sent (a `BEFORE UPDATE` trigger, a rule, a generated column, a `numeric` or
    /// timestamp column, a view), so that memory holds what the database holds for every
    /// column a save writes. Another client's change of a column the save did not write is
    /// learned as any other change is (the next read, ``refresh(_:)``, a change feed); were
    /// that column changed here later, its save would be a conflict.
    ///
    /// In a `Database.write` unit, or inside ``transaction(_:)``, the changes go in that
    /// transaction (as a savepoint); should it roll back, they are pending again, as they
    /// were before the save (but for the undo manager's actions and the edit marks, which
    /// the save let go of).
    ///
    /// - Throws: A ``RelateError``: ``RelateError/Kind-swift.struct/validationFailed`` before
    ///   anything is sent, ``RelateError/Kind-swift.struct/conflict`` naming the entity and
    ///   the columns another client changed, or the database's error (a `CHECK`, a unique
    ///   index) naming the object whose statement failed. Nothing is written then, and the
    ///   changes stay pending, memory as it was.
    public func save() throws {
        guard pending.groupDepth == 0 else {
            throw RelateError(kind: .invalidRequest, message: "save() cannot run inside undoGroup { }")
        }
        // Nothing left to save (undone, say): the marks go all the same.
        guard pending.hasChanges else { return releaseEditMarks() }
        let summary = pendingSummary()
        try validate(summary)
        let steps = try saveSteps(summary)
        // Rows read back during the save refresh their objects; a failed save puts memory
        // back as it was, pending changes and all.
        let pendingObjects = graph.pendingObjects
        graph.pendingObjects = []
        graph.beginTransaction()
        do {
            try inDatabaseTransaction {
                for step in steps {
                    switch step {
                    case .inserts(let objects): try saveInserts(objects, summary)
                    case .changes(let changes): try saveChanges(summary, changes)
                    }
                }
            }
        } catch {
            let (registered, _) = graph.rollBackTransaction()
            graph.pendingObjects = pendingObjects
            // What the save registered first (a helper table's rows, read back as objects)
            // the database does not hold: read again and let go of, as a rolled-back
            // transaction's are. The pending objects stay as they were, pending.
            let touched = Set(pending.touched.map(ObjectIdentifier.init))
            rereadAfterRollback(
                registered: registered.filter { !pendingObjects.contains(ObjectIdentifier($0)) && !touched.contains(ObjectIdentifier($0)) },
                learnt: [])
            throw Self.relateError(error)
        }
        graph.commitTransaction()
        // Objects the deletes' cascades may have reached through rows memory does not hold
        // (found while the deleted objects are still registered, as memory followed them).
        let deletedEntities = Set(pending.touched.lazy.filter(\.isDeleted).map(\.entityIndex))
        let beyond = deletedEntities.isEmpty ? [] : heldBeyondMemory(deleting: deletedEntities)
        // Deleted objects stayed in the identity map while pending; their rows are gone now.
        for object in pending.touched where object.isDeleted { graph.unregister(object) }
        // What the database computed (a SET DEFAULT's dependants) and what its cascades
        // reached are read now; an object that cannot be (the connection lost after COMMIT)
        // is let go of, never trusted.
        let computed = pending.computedBySave.filter { !$0.isDeleted }
        do {
            if !computed.isEmpty { try reread(computed, because: .stale) }
            if !beyond.isEmpty {
                let asked = parentsStatements(beyond)
                let parents = asked.count == 1 ? [try send(asked[0], entity: nil)] : try send(asked, entity: nil)
                let reached = try reachedBeyond(beyond, parents: parents)
                if !reached.isEmpty { try reread(reached, because: .parentDeleted) }
            }
        } catch {
            var ignored: [DatabaseObject] = []
            for object in computed + beyond.map(\.object) where !object.isDeleted {
                graph.forget(object, applyingDeleteRules: false, settingDefaults: &ignored)
            }
        }
        // Inside an enclosing transaction (`transaction {}`, a unit) the save stands only
        // if that commits: rolled back, memory goes back to the pending values (its journal
        // holds what the save changed), and so do the pending writes, to be saved again.
        if graph.isRecordingUndo {
            let (kept, objects) = (pending.saveState, pendingObjects)
            graph.recordUndo { [pending, graph] in
                pending.saveState = kept
                graph.pendingObjects = objects
            }
        }
        // The to-ones saved rows found while pending, across relationships the server
        // links, which it answered for their rows as they were (not as pending).
        for object in pending.touched where !object.isDeleted {
            let layout = object.table.layout
            for index in layout.linksByServer.indices where layout.linksByServer[index] && !layout.isToMany[index] {
                object.loaded?.toOne[index] = nil
            }
        }
        pending.clear()
        undoRegistrar?.removeAllActions(of: self)
        graph.noteChangeOfEverything()
        releaseEditMarks()
        // Sets across relationships the server links, which pending rows joined by bytes,
        // as the database now pairs them.
        settleLinks()
    }

    /// New rows in one pipeline (a level of ``saveSteps(_:)``); each object takes its row and key.
    private func saveInserts(_ objects: [DatabaseObject], _ summary: PendingSummary) throws {
        let statements = objects.map { object in
            var columns: [Int] = []
            for column in summary.givenColumns[ObjectIdentifier(object)] ?? [] where !columns.contains(column) { columns.append(column) }
            let layout = object.table.layout
            return Statements.insert(into: layout, columns: columns, values: columns.map { layout.parameter(object.values[$0], column: $0) })
        }
        let results = try sendSaving(statements, for: objects)
        for (object, result) in zip(objects, results) {
            if !object.entity.kind.keysEveryRow { _ = try requireKeys([result], count: 1, of: object.table) }
            guard let row = result.first else { throw RelateError.noRowReturned(object.table) }
            graph.saved(object, as: try graph.storedValues(of: row, entity: object.entityIndex))
        }
    }

    /// What a statement of the last pipeline was for, to read its result by.
    private enum Saved {
        /// An update with its own statement (the columns it changed, the key the database
        /// holds the row under): its row must be written (and come back, when `returning`),
        /// or another client changed it.
        case update(entity: Int, Update, returning: Bool)
        /// Updates of rows of one entity in one statement, each answered with its position;
        /// or, with `counted` (the statement's arrays, to find a row not written), counted.
        case updates(entity: Int, [Update], counted: Update.Arrays?)
        case rowsOf(Int)
        /// View rows read again through the view: a member the view no longer shows leaves memory.
        case throughView(Int, [DatabaseObject])
        case pairs(helper: EntityTable, joined: Bool)
        /// A delete; `implied`: a row already gone is no conflict (``Changes/implied``).
        case delete(DatabaseObject, implied: Bool)
    }

    /// Updates, pairs that leave and join, deletes: one pipeline, then each answer checked.
    /// `changes`: those of this round trip (``saveSteps(_:)``).
    func saveChanges(_ summary: PendingSummary, _ changes: Changes) throws {
        func isSaved(_ object: DatabaseObject) -> Bool { changes.objects?.contains(ObjectIdentifier(object)) ?? true }
        var statements: [Statement] = []
        var saved: [Saved] = []
        var objects: [DatabaseObject] = []
        func add(_ statement: Statement, _ what: Saved, for object: DatabaseObject) {
            statements.append(statement)
            saved.append(what)
            objects.append(object)
        }

        // Updates; one that takes a one-to-one's target comes after those that let go of it,
        // and after the database's other holders let go.
        let updated =
            summary.releasing.isEmpty
            ? summary.updates
            : summary.updates.filter { summary.releasing[ObjectIdentifier($0.object)] == nil }
                + summary.updates.filter { summary.releasing[ObjectIdentifier($0.object)] != nil }
        var batches: [UpdateShape: [Update]] = [:]
        var batchOrder: [UpdateShape] = []
        // Objects of views updated, read through their views again.
        var throughViews: [DatabaseObject] = []
        // Rows most often come in runs of one shape (a form's field, a loop's column): the
        // run under way is kept apart, and looked up by its shape only when another begins.
        var run: (shape: UpdateShape, updates: [Update])?
        func endRun() {
            guard let (shape, updates) = run else { return }
            if batches[shape] == nil {
                batchOrder.append(shape)
                batches[shape] = updates
            } else {
                batches[shape]! += updates
            }
            run = nil
        }
        /// The batches so far, each one statement (or one a row where a column's values
        /// cannot go as an array).
        func addBatches() {
            endRun()
            for shape in batchOrder {
                let updates = batches[shape]!
                let layout = graph.tables[shape.entity].layout
                if updates.count > 1, let arrays = Update.arrays(updates, of: layout) {
                    // columnArray took only values of each column type's own kind.
                    let returning = !shape.columns.allSatisfy { layout.storesAsSent[$0] }
                    let statement = Statements.savedUpdates(
                        layout, setting: shape.columns, keys: arrays.keys, values: arrays.values, held: arrays.held, returning: returning)
                    add(statement, .updates(entity: shape.entity, updates, counted: returning ? nil : arrays), for: updates[0].object)
                } else {
                    for update in updates {
                        let returning = update.returns
                        add(update.statement(returning: returning), .update(entity: shape.entity, update, returning: returning), for: update.object)
                    }
                }
            }
            (batches, batchOrder) = ([:], [])
        }
        /// Adds the update of `object` (whose columns held `originals` before), batched with
        /// others of its shape when `batching`.
        func addUpdate(_ object: DatabaseObject, _ originals: SmallArray<(column: Int, value: StoredValue)>, batching: Bool) {
            let id = ObjectIdentifier(object)
            let layout = object.table.layout
            var changed = originals.smallFilter { !object.values[$0.column].isSame(as: $0.value) }
            guard !changed.isEmpty else { return }
            if object.entity.kind == .view { throughViews.append(object) }
            if changed.count > 1 { changed = SmallArray(changed.sorted { $0.column < $1.column }) }
            let key = Update.heldKey(of: object, changed: changed)
            let update = Update(object: object, changed: changed, key: key)
            if !summary.releasing.isEmpty, let columns = summary.releasing[id] {
                // After the holders memory knows let go (batched so far: they come first).
                addBatches()
                let statement = Statements.nullify(
                    layout, columns: columns, matching: columns.map { object.values[$0].parameter }, exceptKey: Array(key))
                add(statement, .rowsOf(object.entityIndex), for: object)
            } else if batching, !changed.contains(where: { object.table.primaryKey.contains($0.column) }) {
                // Rows of one entity changed in the same columns go in one statement.
                if let shape = run?.shape, shape.entity == object.entityIndex, shape.columns.count == changed.count,
                    changed.indices.allSatisfy({ shape.columns[$0] == changed[$0].column })
                {
                    run!.updates.append(update)
                } else {
                    endRun()
                    run = (UpdateShape(entity: object.entityIndex, columns: changed.map(\.column)), [update])
                }
                return
            }
            let returning = update.returns
            add(update.statement(returning: returning), .update(entity: object.entityIndex, update, returning: returning), for: object)
        }
        // The updates that need one another first, one statement each, in their order; then
        // the others.
        for object in changes.ordered { addUpdate(object, summary.originals(of: object), batching: false) }
        let ordered = changes.ordered.isEmpty ? [] : Set(changes.ordered.map(ObjectIdentifier.init))
        for (object, originals) in updated where !object.isDeleted && isSaved(object) && (ordered.isEmpty || !ordered.contains(ObjectIdentifier(object))) {
            addUpdate(object, originals, batching: true)
        }
        addBatches()
        // A view's UPDATE … RETURNING answers the row as written (what an INSTEAD OF
        // trigger returned), not as the view shows it: its rows are read through the view
        // again, after the updates.
        for (entity, members) in Self.byEntity(throughViews) { add(rowsStatement(of: entity, members), .throughView(entity, members), for: members[0]) }

        // Pairs: those that leave first (a delete below may need them gone), then those that join.
        let pairs = summary.pairOrder.compactMap { key in changes.pairs?.contains(key) ?? true ? summary.pairs[key] : nil }
        for joining in [false, true] {
            for (owner, index, member, times) in pairs where joining ? times > 0 : times < 0 {
                if joining, owner.isDeleted || member.isDeleted { continue }
                let relationship = owner.entity.relationships[index]
                guard let helperIndex = owner.table.layout.helpers[index] else { throw RelateError.notToMany(relationship) }
                let helper = graph.tables[helperIndex]
                let pair = owner.table.layout.helperColumns[index]
                let keyed = helperIsKeyed(relationship, helper: helper)
                // A pair that leaves names the keys its row holds (an end's key may change after it).
                let ownerKey = joining ? owner.table.fromColumns[index].map { owner.values[$0] } : summary.held(owner, at: owner.table.fromColumns[index])
                let targetColumns = graph.targetColumns(of: owner.entityIndex, index)
                let memberKey = joining ? targetColumns.map { member.values[$0] } : summary.held(member, at: targetColumns)
                let values = (ownerKey + memberKey).map(\.parameter)
                let statement: Statement
                if joining {
                    try requireValues(helper, columns: pair.from + pair.to)
                    statement = Statements.insertPair(
                        into: helper.layout, pair: pair, values: values, returning: helperRowsAreShown(helper), skippingExisting: keyed)
                } else {
                    statement = Statements.deletePair(from: helper.layout, pair: pair, values: values, keyed: keyed)
                }
                for _ in 0..<(keyed ? 1 : abs(times)) { add(statement, .pairs(helper: helper, joined: joining), for: owner) }
            }
        }

        // Deletes: a row's dependants before the row.
        for object in changes.deletes {
            let key = summary.held(object, at: object.table.primaryKey)
            let implied = !changes.implied.isEmpty && changes.implied.contains(ObjectIdentifier(object))
            add(Statements.delete(from: object.table.layout, key: key.map(\.parameter)), .delete(object, implied: implied), for: object)
        }

        guard !statements.isEmpty else { return }
        let results = try sendSaving(statements, for: objects)
        for (what, result) in zip(saved, results) {
            switch what {
            case .delete(let object, implied: false) where (result.affectedRows ?? 0) == 0:
                // Gone, or still there: a trigger or rule declined the delete (a soft delete).
                let key = summary.held(object, at: object.table.primaryKey)
                if try send(Statements.row(of: object.table.layout, key: key.map(\.parameter)), entity: object.entityIndex).count > 0 {
                    throw RelateError.declined(object, "delete", then: "nothing was saved, and the changes stay pending")
                }
                throw RelateError.conflict(object, "was deleted by another client since this context read it; nothing was saved, and the changes stay pending")
            // A row that comes back is taken as stored (a failed save puts memory back as it was).
            case .update(let entity, let update, let returning):
                let written =
                    returning
                    ? !(try graph.materialize(entity: entity, result: result, rowsAreDistinct: true).isEmpty)
                    : (result.affectedRows ?? 0) == 1
                if !written { throw try conflict(update.object, update.changed, key: update.key) }
            case .updates(let entity, let updates, nil):
                let returned = try graph.takeSavedRows(result, entity: entity, objects: updates.map(\.object))
                if let missing = returned.firstIndex(of: false) {
                    throw try conflict(updates[missing].object, updates[missing].changed, key: updates[missing].key)
                }
            case .updates(let entity, let updates, let arrays?) where (result.affectedRows ?? 0) != updates.count:
                throw try conflict(amongst: updates, entity: entity, arrays: arrays)
            default:
                break
            }
        }
        for (what, result) in zip(saved, results) {
            switch what {
            case .rowsOf(let entity): _ = try graph.materialize(entity: entity, result: result, rowsAreDistinct: true)
            case .throughView(let entity, let members): try take(result, as: members, of: entity, applyingDeleteRules: false)
            case .pairs(let helper, true) where !result.columns.isEmpty: try graph.didInsertHelperRows(result, helper: helper)
            case .pairs(let helper, false): try graph.didDeleteHelperRows(result, helper: helper)
            default: break
            }
        }
    }

    /// An update `save()` sends: the columns changed, each with what memory held before,
    /// and the key the database holds the row under.
    private struct Update {
        let object: DatabaseObject
        let changed: SmallArray<(column: Int, value: StoredValue)>
        let key: SmallArray<StoredValue>

        /// The key the database holds `object`'s row under: memory's, but for the key
        /// columns in `changed` (a pending change of the key), what they held before.
        static func heldKey(of object: DatabaseObject, changed: SmallArray<(column: Int, value: StoredValue)>) -> SmallArray<StoredValue> {
            let primaryKey = object.table.primaryKey
            func held(_ column: Int) -> StoredValue {
                for index in changed.indices where changed[index].column == column { return changed[index].value }
                return object.values[column]
            }
            // Most keys are one column: no array.
            return primaryKey.count == 1 ? .one(held(primaryKey[0])) : SmallArray(primaryKey.map(held))
        }

        /// Whether its row must come back: the database may store other than it sends
        /// (``EntityLayout/storesAsSent(_:_:)``).
        var returns: Bool {
            let layout = object.table.layout
            return !changed.allSatisfy { layout.storesAsSent($0.column, object.values[$0.column]) }
        }

        /// Its own statement, answering its row when `returning` (``returns``).
        func statement(returning: Bool) -> Statement {
            let columns = changed.map(\.column)
            return Statements.update(
                object.table.layout, setting: columns, to: columns.map { object.table.layout.parameter(object.values[$0], column: $0) }, key: key.map(\.parameter),
                expecting: Array(changed), nullSafe: true, returning: returning)
        }

        /// A column's values as one array parameter each: the keys, the new values, the values held.
        typealias Arrays = (keys: [(any PostgresEncodable)?], values: [(any PostgresEncodable)?], held: [(any PostgresEncodable)?])

        /// The arrays of one statement for all of `updates` (rows of one entity, the same
        /// columns changed), a column each: the keys, the new values, the values held. 1,000
        /// rows cost one statement's planning, not 1,000. `nil` when a column's values cannot
        /// go as an array of the column's type.
        static func arrays(_ updates: [Update], of table: EntityLayout) -> Arrays? {
            let columns = updates[0].changed.map(\.column)
            // Optional, as parameters are bound: a cast of each array from `any
            // PostgresEncodable` cost a dynamic cast and a conformance lookup.
            var keys: [(any PostgresEncodable)?] = []
            for (position, column) in table.primaryKey.enumerated() {
                guard let array = Statements.columnArray(count: updates.count, type: table.types[column], value: { updates[$0].key[position] }) else { return nil }
                keys.append(array)
            }
            var values: [(any PostgresEncodable)?] = []
            var held: [(any PostgresEncodable)?] = []
            // A column whose values go as texts the library makes goes row by row.
            if columns.contains(where: { table.sendsAsText[$0] }) { return nil }
            for (position, column) in columns.enumerated() {
                guard let new = Statements.columnArray(count: updates.count, type: table.types[column], value: { updates[$0].object.values[column] }),
                    let old = Statements.columnArray(count: updates.count, type: table.types[column], value: { updates[$0].changed[position].value })
                else { return nil }
                values.append(new)
                held.append(old)
            }
            return (keys, values, held)
        }
    }

    /// Sends a pipeline of `save()`; an error the database raised names the object whose
    /// statement failed (`objects[i]` is statement `i`'s).
    private func sendSaving(_ statements: [Statement], for objects: [DatabaseObject]) throws -> [PostgresResult] {
        do {
            return try send(statements, entity: nil)
        } catch let error as RelateError {
            guard let postgres = error.postgresError, let index = postgres.statementIndex, objects.indices.contains(index) else { throw error }
            let object = objects[index]
            if let denied = RelateError.deleteDenied(error, entity: object.entity.name, detail: "\(object)"), object.isDeleted { throw denied }
            throw RelateError(
                kind: .database, message: "saving this \(object.entity.name) object: \(postgres.description)", entity: object.entity.name,
                postgresError: postgres, detail: "\(object)")
        }
    }

    /// The conflict of a statement of `updates` (of `entity`) that wrote fewer rows than it
    /// was sent, in the save's transaction: the first update whose row does not hold what
    /// was sent is the one another client changed. Its statement is made here, on the
    /// conflict's path, from the `arrays` the update sent.
    private func conflict(amongst updates: [Update], entity: Int, arrays: Update.Arrays) throws -> RelateError {
        let layout = graph.tables[entity].layout
        let columns = updates[0].changed.map(\.column)
        let result = try send(
            Statements.firstUpdateNotWritten(layout, setting: columns, keys: arrays.keys, values: arrays.values), entity: entity)
        if let row = result.first {
            let update = updates[try read(entity: entity) { try row.decode(Int.self, at: 0) } - 1]
            return try conflict(update.object, update.changed, key: update.key)
        }
        // Each row holds what was sent: another client wrote the same in one of them.
        let names = columns.map { "\"\(layout.entity.attributes[$0].name)\"" }.joined(separator: ", ")
        return RelateError(
            kind: .conflict,
            message: "another client changed \(names) of one of these \(updates.count) \(layout.entity.name) objects since this context "
                + "read them; nothing was saved, and the changes stay pending",
            entity: layout.entity.name, key: layout.entity.attributes[columns[0]].key,
            candidates: columns.map { layout.entity.attributes[$0].key })
    }

    /// The conflict of an update whose row no longer held what memory held: names the
    /// columns another client changed (read again, within the save's transaction).
    private func conflict(
        _ object: DatabaseObject, _ changed: SmallArray<(column: Int, value: StoredValue)>, key: SmallArray<StoredValue>
    ) throws -> RelateError {
        let result = try send(Statements.row(of: object.table.layout, key: key.map(\.parameter)), entity: object.entityIndex)
        guard let row = result.first else {
            return RelateError.conflict(object, "was deleted by another client since this context read it; nothing was saved, and the changes stay pending")
        }
        let stored = try graph.storedValues(of: row, entity: object.entityIndex)
        let columns = changed.filter { !stored[$0.column].isSame(as: $0.value) }.map { object.entity.attributes[$0.column] }
        let names = columns.map { "\"\($0.name)\"" }.joined(separator: ", ")
        // None differs, where a trigger may decline an update: one did.
        if columns.isEmpty && object.table.entity.rewritesUpdates {
            return .declined(object, "update", then: "its row holds what was read; nothing was saved, and the changes stay pending")
        }
        // None differs as memory reads it: a value a Swift type cannot hold exactly (a `Date`
        // of a far year, past microseconds) was sent back other than the row holds it.
        let what = columns.isEmpty
            ? "this \(object.entity.name) object's row no longer holds what was read, as the database compares it, though memory reads "
                + "no change (a value its Swift type cannot hold exactly, such as a Date past microsecond precision); "
                + "nothing was saved, and the changes stay pending"
            : "another client changed \(names) of this \(object.entity.name) object since this context read it; "
                + "nothing was saved, and the changes stay pending"
        return RelateError(
            kind: .conflict,
            message: what,
            entity: object.entity.name, key: columns.first?.key, candidates: columns.map(\.key), detail: "\(object)")
    }
}

extension ObjectGraph {
    /// A new row was saved as `values`: its object leaves its pending key for the real one
    /// (re-keyed in the identity map), and the objects that referred to the pending key
    /// take the real one.
    func saved(_ object: DatabaseObject, as values: [StoredValue]) {
        let old = Array(object.values)
        rekey(object, from: old, to: values)
        object.refresh(values)
        noteChange(of: object.entityIndex)
        didChange(object, from: old)
        for (index, relationship) in object.entity.relationships.enumerated() where relationship.foreignKeyIn == .to {
            let referenced = object.table.fromColumns[index]
            let before = referenced.map { old[$0] }
            guard before.contains(where: \.isPendingKey) else { continue }
            let after = referenced.map { values[$0] }
            let inverse = inverse(of: object.entityIndex, index)
            let columns = targetColumns(of: object.entityIndex, index)
            for dependant in registeredObjects(entity: inverse.entity, indexes: columns, values: before) {
                let previous = Array(dependant.values)
                var moved = previous
                for (column, value) in zip(columns, after) { moved[column] = value }
                rekey(dependant, from: previous, to: moved)
                dependant.refresh(moved)
                didChange(dependant, from: previous)
            }
        }
    }
}
