import RelatePostgres

/// Editing: a context that does not autocommit keeps its writes in memory until
/// ``save()``, and can ``rollback()``, ``undo()`` and ``redo()`` them.
extension DatabaseContext {
    /// Whether writes are pending: made since the last ``save()`` or ``rollback()`` and
    /// not undone.
    public var hasChanges: Bool { pending.hasChanges }

    /// The objects inserted and not yet saved, in the order they were made.
    public var insertedObjects: [DatabaseObject] {
        pendingSummary().inserted
    }

    /// The objects whose attributes, foreign keys or many-to-many pairs have pending
    /// changes: those in the database already, not deleted.
    public var updatedObjects: [DatabaseObject] {
        pendingSummary().updates.compactMap { $0.object.isDeleted ? nil : $0.object }
    }

    /// The objects deleted and not yet saved — those deleted, and the dependants their
    /// `ON DELETE CASCADE` rules deleted with them — but never one inserted since the last
    /// save (that one is simply forgotten).
    public var deletedObjects: [DatabaseObject] {
        pendingSummary().deleted
    }

    /// Whether ``undo()`` has a step to undo.
    public var canUndo: Bool { !pending.steps.isEmpty }

    /// Whether ``redo()`` has a step to apply again.
    public var canRedo: Bool { !pending.undone.isEmpty }

    /// Forgets every pending change, without a statement: memory is what it was before the
    /// first of them (a new object is forgotten and answers as deleted, a deleted one is
    /// back, every set and to-one as it was). The undo stack is emptied.
    ///
    /// ```swift
    /// context.autocommits = false
    /// try ada.setValue("King", forKey: "surname")
    /// context.rollback()                       // ada's surname is what it was
    /// ```
    public func rollback() {
        // Inside an undoGroup { }, the group's writes so far go too; the group goes on empty.
        undo(pending.journal[...])
        pending.clear()
        graph.pendingObjects = []
        undoRegistrar?.removeAllActions(of: self)
        releaseEditMarks()
    }

    /// Undoes the last write (or ``undoGroup(_:)``) of a context that does not autocommit,
    /// in memory: nothing is sent. ``redo()`` applies it again.
    ///
    /// ```swift
    /// try ada.setValue("King", forKey: "surname")
    /// try ada.setValue("Byron", forKey: "surname")
    /// try context.undo()                       // "King"
    /// ```
    ///
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidRequest``
    ///   for a context that autocommits (its writes are in the database already) or inside
    ///   an ``undoGroup(_:)``.
    public func undo() throws {
        try requireEditing("undo()")
        guard let ends = pending.steps.popLast() else { return }
        let start = pending.lastStepEnds
        undo(pending.journal[start.journal..<ends.journal])
        pending.undone.append(Array(pending.effects[start.effects..<ends.effects]))
        pending.truncate(to: start)
        recomputePendingObjects()
        // A row no pending write changes any longer is no longer being edited here.
        releaseEditMarks(except: graph.pendingObjects)
        undoRegistrar?.registerUndo(.redo, in: self)
        try reloadSetsSeeingPending()
    }

    /// Loads again the sets loaded while writes were pending (``PendingChanges/loadsSeeingPending``),
    /// which still are: they show the pending writes as they are now, after an undo or a redo.
    private func reloadSetsSeeingPending() throws {
        let loads = pending.loadsSeeingPending
        guard !loads.isEmpty else { return }
        pending.loadsSeeingPending = [:]
        // One query a relationship.
        for (address, owners) in loads.sorted(by: { ($0.key.entity, $0.key.relationship) < ($1.key.entity, $1.key.relationship) }) {
            let loaded = owners.values.filter { !$0.isDeleted && $0.sets[address.relationship] != nil }
            if !loaded.isEmpty { try load(relationship: address.relationship, for: loaded) }
        }
    }

    /// Applies again the write ``undo()`` undid last. A new write empties what can be redone.
    ///
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidRequest``
    ///   for a context that autocommits or inside an ``undoGroup(_:)``.
    public func redo() throws {
        try requireEditing("redo()")
        guard let effects = pending.undone.popLast() else { return }
        graph.beginStep()
        for effect in effects { pending.computedBySave += graph.apply(effect) }
        let first = pending.touched.count
        graph.endStep(journal: &pending.journal, touched: &pending.touched)
        pending.effects += effects
        recomputePendingObjects()
        endStep()
        markEdits(of: pending.touched[first...])
        try reloadSetsSeeingPending()
    }

    /// Makes the writes of `body` one undo step.
    ///
    /// ```swift
    /// try context.undoGroup {
    ///     try ada.setValue("King", forKey: "surname")
    ///     try ada.objects(forKey: "email").insert(newEmail)
    /// }
    /// try context.undo()                       // both
    /// ```
    ///
    /// - Parameter body: The writes to group.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (the writes it made before stay pending, as one step).
    @discardableResult
    public func undoGroup<Result>(_ body: () throws -> Result) throws -> Result {
        pending.groupDepth += 1
        defer {
            pending.groupDepth -= 1
            // The group's writes, one step (none when they had no effect).
            if pending.groupDepth == 0, pending.effects.count > pending.lastStepEnds.effects { endStep() }
        }
        return try body()
    }

    // MARK: - Pending writes

    /// Whether a write should change memory only: the context does not autocommit. A
    /// write-through write while changes are pending would interleave with them: refused.
    func writesPending() throws(RelateError) -> Bool {
        if !autocommits { return true }
        if pending.hasChanges {
            throw RelateError(
                kind: .invalidWrite,
                message: "this context has pending changes (autocommits was false): save() or rollback() them before writing through")
        }
        return false
    }

    /// Runs `body`, whose effects (``applyEffect(_:)``) make one undo step; a write made of
    /// several (a replace, a one-to-one that steals) is one step too, since steps do not
    /// nest. When `body` throws, what it applied is undone.
    func pendingStep<Result>(_ body: () throws -> Result) throws -> Result {
        if graph.isInStep { return try body() }
        let start = pending.ends
        graph.beginStep()
        let result: Result
        do {
            result = try body()
        } catch {
            graph.abandonStep()
            pending.effects.removeSubrange(start.effects...)
            throw error
        }
        graph.endStep(journal: &pending.journal, touched: &pending.touched)
        guard pending.effects.count > start.effects else {
            pending.truncate(to: start)
            return result
        }
        pending.undone = []
        let touched = pending.touched[start.touched...]
        for object in touched { graph.pendingObjects.insert(ObjectIdentifier(object)) }
        // Inside an undoGroup { }, the group's step ends with the group.
        if pending.groupDepth == 0 { endStep() }
        markEdits(of: touched)
        return result
    }

    /// A step is done: undo reaches back to here, and the undo registrar is told.
    private func endStep() {
        pending.steps.append(pending.ends)
        undoRegistrar?.registerUndo(.undo, in: self)
    }

    /// Applies `effect` to memory within the step under way, and keeps it for `save()`.
    func applyEffect(_ effect: Effect) {
        let computed = graph.apply(effect)
        if graph.isInStep {
            pending.effects.append(effect)
            pending.computedBySave += computed
        }
    }

    /// An update of `object`'s `columns` to `values`, pending.
    func pendUpdate(_ object: DatabaseObject, columns: SmallArray<Int>, to values: SmallArray<StoredValue>, releasing: Bool = false) throws {
        try pendingStep {
            applyEffect(.update(object, columns: columns, from: columns.smallMap { object.values[$0] }, to: values, releasing: releasing))
        }
    }

    private func undo(_ entries: ArraySlice<JournalEntry>) {
        graph.membershipsMayChange()
        graph.undo(entries)
        graph.noteChangeOfEverything()
    }

    private func recomputePendingObjects() {
        graph.pendingObjects = Set(pending.touched.map(ObjectIdentifier.init))
    }

    private func requireEditing(_ call: String) throws(RelateError) {
        guard !autocommits else {
            throw RelateError(
                kind: .invalidRequest, message: "\(call) needs a context that does not autocommit (set autocommits to false): "
                    + "this context's writes are in the database already")
        }
        guard pending.groupDepth == 0 else {
            throw RelateError(kind: .invalidRequest, message: "\(call) cannot run inside undoGroup { }")
        }
    }

    // MARK: - What is pending

    /// The pending changes by object: what was inserted, updated and deleted, and for each
    /// object updated the values its row held before (what `save()` expects it still holds).
    struct PendingSummary {
        var inserted: [DatabaseObject] = []
        /// The objects the database holds that have pending changes, in order (those deleted
        /// since too: a skip for most uses), each with the columns changed and the value memory
        /// held for each before the first change.
        var updates: [(object: DatabaseObject, originals: SmallArray<(column: Int, value: StoredValue)>)] = []
        /// Where each object is in ``updates``.
        var updateIndex: [ObjectIdentifier: Int] = [:]
        var deleted: [DatabaseObject] = []
        /// By inserted object: the columns its insert and later updates gave.
        var givenColumns: [ObjectIdentifier: [Int]] = [:]
        /// Updates that take a one-to-one's target from its other holders, by object and columns.
        var releasing: [ObjectIdentifier: [Int]] = [:]
        /// The net helper rows: by pair, how many join (positive) or leave (negative).
        var pairs: [PairKey: (owner: DatabaseObject, relationship: Int, member: DatabaseObject, times: Int)] = [:]
        var pairOrder: [PairKey] = []
        /// Objects given a delete effect of their own (not those the rules deleted), in order.
        var deletedExplicitly: [DatabaseObject] = []

        /// The columns of `object` changed, each with the value memory held before the first change.
        func originals(of object: DatabaseObject) -> SmallArray<(column: Int, value: StoredValue)> {
            updateIndex[ObjectIdentifier(object)].map { updates[$0].originals } ?? []
        }

        /// What the database holds at `columns` of `object`'s row: memory's values, but for the
        /// columns changed pending, what they held before.
        func held(_ object: DatabaseObject, at columns: [Int]) -> [StoredValue] {
            let originals = originals(of: object)
            return columns.map { column in originals.first { $0.column == column }?.value ?? object.values[column] }
        }
    }

    /// A many-to-many pair, by owner, relationship and member.
    struct PairKey: Hashable {
        let owner: ObjectIdentifier
        let relationship: Int
        let member: ObjectIdentifier
    }

    func pendingSummary() -> PendingSummary {
        var summary = PendingSummary()
        var inserted = Set<ObjectIdentifier>()
        // An effect a changed object at most: grown once, not rehashed as it fills.
        summary.updateIndex.reserveCapacity(pending.effects.count)
        summary.updates.reserveCapacity(pending.effects.count)
        func isInserted(_ id: ObjectIdentifier) -> Bool { !inserted.isEmpty && inserted.contains(id) }
        /// Notes an update of `object` (listed once, in order) and the values memory held
        /// for `columns` before the first change of each: one lookup of the object a write,
        /// which a save of 1,000 changed objects makes 1,000 times.
        func noteUpdated(_ object: DatabaseObject, columns: SmallArray<Int> = [], from: SmallArray<StoredValue> = []) {
            let next = summary.updates.count
            if let earlier = summary.updateIndex.updateValue(next, forKey: ObjectIdentifier(object)) {
                // Changed again: its first entry stays, and takes the columns changed first now.
                summary.updateIndex[ObjectIdentifier(object)] = earlier
                Self.keepFirst(columns, from, in: &summary.updates[earlier].originals)
            } else {
                var originals: SmallArray<(column: Int, value: StoredValue)> = []
                Self.keepFirst(columns, from, in: &originals)
                summary.updates.append((object, originals))
            }
        }
        /// Notes `times` helper rows more (fewer when negative) for a pair, named in one
        /// direction for both: as the owner's side of its first effect names it.
        func notePair(_ owner: DatabaseObject, _ index: Int, _ member: DatabaseObject, times: Int) {
            let key = PairKey(owner: ObjectIdentifier(owner), relationship: index, member: ObjectIdentifier(member))
            let inverse = graph.inverse(of: owner.entityIndex, index)
            let reversed = PairKey(owner: ObjectIdentifier(member), relationship: inverse.relationship, member: ObjectIdentifier(owner))
            let found = summary.pairs[key] != nil ? key : summary.pairs[reversed] != nil ? reversed : nil
            if let found {
                summary.pairs[found]!.times += times
            } else {
                summary.pairs[key] = (owner, index, member, times)
                summary.pairOrder.append(key)
            }
            if !isInserted(ObjectIdentifier(owner)) { noteUpdated(owner) }
            if !isInserted(ObjectIdentifier(member)) { noteUpdated(member) }
        }
        for effect in pending.effects {
            switch effect {
            case .insert(let object, let columns):
                let id = ObjectIdentifier(object)
                if inserted.insert(id).inserted { summary.inserted.append(object) }
                summary.givenColumns[id, default: []] += columns
            case .update(let object, let columns, let from, _, let releasing):
                let id = ObjectIdentifier(object)
                if isInserted(id) {
                    summary.givenColumns[id, default: []] += Array(columns)
                } else {
                    noteUpdated(object, columns: columns, from: from)
                }
                if releasing { summary.releasing[id] = Array(columns) }
            case .delete(let object):
                summary.deletedExplicitly.append(object)
            case .link(let owner, let index, let member, let times):
                notePair(owner, index, member, times: times)
            case .unlink(let owner, let index, let member, let times):
                notePair(owner, index, member, times: -times)
            case .linkOnce(let owner, let index, let members):
                // Made by writes through only; as pending, each pair once more.
                for member in members { notePair(owner, index, member, times: 1) }
            }
        }
        var seenDeleted = Set<ObjectIdentifier>()
        for object in pending.touched where object.isDeleted && !isInserted(ObjectIdentifier(object)) {
            if seenDeleted.insert(ObjectIdentifier(object)).inserted { summary.deleted.append(object) }
        }
        summary.inserted.removeAll { $0.isDeleted }
        return summary
    }

    /// Appends to `originals` each of `columns` it does not hold yet, with its value in `from`.
    private static func keepFirst(
        _ columns: SmallArray<Int>, _ from: SmallArray<StoredValue>, in originals: inout SmallArray<(column: Int, value: StoredValue)>
    ) {
        // The first change of one column (most writes): no search, no array.
        if originals.isEmpty, case .one(let column) = columns, case .one(let value) = from {
            originals = .one((column, value))
            return
        }
        for (column, value) in zip(columns, from) where !originals.contains(where: { $0.column == column }) {
            originals.append((column, value))
        }
    }
}
