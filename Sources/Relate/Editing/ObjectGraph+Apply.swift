import RelatePostgres

/// Effects applied to memory: the one place a write of a context that does not autocommit
/// changes objects, sets and inverses, journaled so that the step can be undone.
extension ObjectGraph {
    /// Applies `effect` to memory, as the database will apply (or applied) its statement:
    /// the object's values, both sides of every loaded relationship, the `ON DELETE` rules,
    /// the watchers and Observation. A pending write calls it inside ``beginStep()`` /
    /// ``endStep(journal:touched:)``; a write through, once the database accepted.
    ///
    /// - Returns: The dependants a delete's `SET DEFAULT` rules gave values only the
    ///   database knows: a write through reads them again; a pending write when saved.
    @discardableResult
    func apply(_ effect: Effect) -> [DatabaseObject] {
        membershipsMayChange()
        var defaults: [DatabaseObject] = []
        switch effect {
        case .insert(let object, _):
            if object.isDeleted {
                object.setDeleted(false)
                recordUndo { object.setDeleted(true) }
            }
            // A pending insert's object is registered here; a written row's was as the row
            // was read back (no lookup: a copy of 100,000 rows applies 100,000 inserts).
            if isInStep, let key = object.objectKey {
                let registry = registries[object.entityIndex]
                // An object deleted pending that held the key holds it again once this is undone.
                let displaced = registry[key]
                if let displaced { registry.remove(displaced, key: key) }
                registry.register(object, key: key)
                recordUndo {
                    registry.remove(object, key: key)
                    if let displaced { registry.register(displaced, key: key) }
                }
            }
            touch(object)
            noteChange(of: object.entityIndex)
            didChange(object, from: nil)

        case .update(let object, let columns, let from, let to, _):
            touch(object)
            let joinsOn = object.table.layout.joinsOn
            if object.table.layout.movesReferences(writing: columns) {
                // Dependants in memory follow their ON UPDATE rules (a unique column's as a
                // primary key's).
                var values = Array(object.values)
                for (column, value) in zip(columns, to) { values[column] = value }
                var stale: [DatabaseObject] = []
                var reloads: [(owner: DatabaseObject, relationship: Int)] = []
                move(object, to: values, stale: &stale, reloads: &reloads)
                // The dependants whose values the database computes: the caller reads them
                // (once the change is in the database).
                defaults += stale
            } else if columns.contains(where: { joinsOn[$0] }) {
                let old = Array(object.values)
                object.write(to, at: columns, held: from)
                noteChange(of: object.entityIndex)
                didChange(object, from: old)
            } else {
                // No relationship joins on these columns: no set or to-one can change.
                object.write(to, at: columns, held: from)
                noteChange(of: object.entityIndex)
            }

        case .delete(let object):
            let first = touchedInStep.count
            forget(object, settingDefaults: &defaults)
            // Kept in the identity map, marked deleted, while the delete is pending: a fetch
            // that meets the row finds it deleted instead of making a new object for it.
            for forgotten in touchedInStep[first...] where forgotten.isDeleted {
                guard let key = forgotten.objectKey else { continue }
                let registry = registries[forgotten.entityIndex]
                guard registry[key] == nil else { continue }
                registry.register(forgotten, key: key)
                recordUndo { registry.remove(forgotten, key: key) }
            }

        case .link(let owner, let index, let member, let times), .unlink(let owner, let index, let member, let times):
            touch(owner)
            touch(member)
            let joins = if case .link = effect { true } else { false }
            // From the owner's side when its set is loaded, else from the member's.
            if let set = owner.sets[index] {
                pair(owner, member, set: set, times: times, joins: joins)
            } else if let other = member.sets[inverse(of: owner.entityIndex, index).relationship] {
                pair(member, owner, set: other, times: times, joins: joins)
            }

        case .linkOnce(let owner, let index, let members):
            touch(owner)
            for member in members { touch(member) }
            if let set = owner.sets[index] {
                noteChange(across: index, of: owner.entityIndex)
                set.addNew(set.isEmpty ? members : members.filter { !set.contains($0) })
            }
            linkInverses(of: owner, relationship: index, to: members)
        }
        return defaults
    }

    /// Both sides of a many-to-many, in memory: `times` copies of the pair join, or leave.
    private func pair(_ owner: DatabaseObject, _ member: DatabaseObject, set: RelationshipSet, times: Int, joins: Bool) {
        noteChange(across: set.relationshipIndex, of: owner.entityIndex)
        let inverse = inverse(of: owner.entityIndex, set.relationshipIndex)
        let other = member.sets[inverse.relationship].flatMap { $0 !== set ? $0 : nil }
        if joins {
            set.add(member, times: times)
            other?.add(owner, times: times)
        } else {
            set.drop(member, times: times)
            other?.drop(owner, times: times)
        }
    }

    /// The other side of a keyed many-to-many that gained `members`: `owner` joins each
    /// member's loaded set of relationship `index`'s inverse, where it is not there yet.
    private func linkInverses(of owner: DatabaseObject, relationship index: Int, to members: [DatabaseObject]) {
        let inverse = inverse(of: owner.entityIndex, index).relationship
        for member in members {
            if let other = member.sets[inverse], !other.contains(owner) { other.add(owner) }
        }
    }

    /// A pending write begins: every memory change is journaled, and the objects it
    /// changes are collected (``touchedInStep``).
    func beginStep() {
        beginTransaction()
        isInStep = true
    }

    /// The pending write ended: how to undo it and the objects it changed are appended to
    /// `journal` and `touched` (the pending changes' own, see ``PendingChanges``).
    func endStep(journal: inout [JournalEntry], touched: inout [DatabaseObject]) {
        moveJournal(to: &journal)
        touched.append(contentsOf: touchedInStep)
        touchedInStep.removeAll(keepingCapacity: true)
        isInStep = false
    }

    /// The pending write failed: what it changed in memory is undone.
    func abandonStep() {
        touchedInStep.removeAll(keepingCapacity: true)
        isInStep = false
        _ = rollBackTransaction()
    }

    /// Notes that a pending write changed `object` (its values, or its being deleted).
    func touch(_ object: DatabaseObject) {
        guard isInStep else { return }
        touchedInStep.append(object)
    }
}
