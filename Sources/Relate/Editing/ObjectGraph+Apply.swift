import RelatePostgres

/// Effects applied to memory: the one place a write of a context that does not autocommit
/// changes objects, sets and inverses, journaled so that the step can be undone.
extension ObjectGraph {
    /// Applies `effect` to memory, as the database will apply its statement: the object's
    /// values, both sides of every loaded relationship, the `ON DELETE` rules, the watchers
    /// and Observation. Called inside ``beginStep()`` / ``endStep()``.
    func apply(_ effect: Effect) {
        membershipsMayChange()
        switch effect {
        case .insert(let object, _):
            if object.isDeleted {
                object.setDeleted(false)
                recordUndo { object.setDeleted(true) }
            }
            if let key = object.objectKey {
                let registry = registries[object.entityIndex]
                registry.register(object, key: key)
                recordUndo { registry.remove(object, key: key) }
            }
            touch(object)
            noteChange(of: object.entityIndex)
            didChange(object, from: nil)

        case .update(let object, let columns, _, let to, _):
            let old = Array(object.values)
            var values = old
            for (column, value) in zip(columns, to) { values[column] = value }
            touch(object)
            if columns.contains(where: object.table.primaryKey.contains) {
                // Dependants in memory follow their ON UPDATE rules; what the database
                // computes (SET DEFAULT) is read when the change is saved.
                var stale: [DatabaseObject] = []
                var reloads: [(owner: DatabaseObject, relationship: Int)] = []
                move(object, to: values, stale: &stale, reloads: &reloads)
            } else {
                object.refresh(values)
                noteChange(of: object.entityIndex)
                didChange(object, from: old)
            }

        case .delete(let object):
            let first = touchedInStep?.count ?? 0
            var defaults: [DatabaseObject] = []
            forget(object, settingDefaults: &defaults)
            // Kept in the identity map, marked deleted, while the delete is pending: a fetch
            // that meets the row finds it deleted instead of making a new object for it.
            for forgotten in touchedInStep?[first...] ?? [] where forgotten.isDeleted {
                guard let key = forgotten.objectKey else { continue }
                let registry = registries[forgotten.entityIndex]
                guard registry[key] == nil else { continue }
                registry.register(forgotten, key: key)
                recordUndo { registry.remove(forgotten, key: key) }
            }

        case .link(let owner, let index, let member, let times), .unlink(let owner, let index, let member, let times):
            touch(owner)
            touch(member)
            let change = if case .link = effect { link } else { unlink }
            // From the owner's side when its set is loaded, else from the member's.
            if let set = owner.sets[index] {
                change(owner, member, set, times)
            } else if let other = member.sets[inverse(of: owner.entityIndex, index).relationship] {
                change(member, owner, other, times)
            }
        }
    }

    /// A pending write begins: every memory change is journaled, and the objects it
    /// changes are collected (``touchedInStep``).
    func beginStep() {
        beginTransaction()
        touchedInStep = []
    }

    /// The pending write ended: answers how to undo it, and the objects it changed.
    func endStep() -> (undo: [() -> Void], touched: [DatabaseObject]) {
        let undo = takeJournal()
        let touched = touchedInStep ?? []
        touchedInStep = nil
        return (undo, touched)
    }

    /// Notes that a pending write changed `object` (its values, or its being deleted).
    func touch(_ object: DatabaseObject) {
        guard touchedInStep != nil else { return }
        touchedInStep!.append(object)
    }
}
