/// The writes of a context that does not autocommit, kept as the undo stack keeps them:
/// each write call is one step (its effects, and the journal that undoes them in memory);
/// ``DatabaseContext/save()`` sends the effects of the steps done, in order.
///
/// The steps done share three flat lists, each step a stretch of them that ``steps`` ends:
/// a `setValue` appends to arrays that grow by doubling, where an array of its own for
/// each (three a step, made and freed) cost more than the write itself.
///
/// Its lists are read and grown for every pending write, by its context only and never in
/// overlapping accesses: their exclusivity is not checked at run time (13 checks a
/// `setValue`, 80 instructions each).
final class PendingChanges {
    /// How far the lists of a step reach: where the next step's entries begin.
    struct Ends: Equatable {
        var effects = 0
        var journal = 0
        var touched = 0
    }

    /// The effects of the steps done and not undone, and of the ``DatabaseContext/undoGroup(_:)``
    /// under way, oldest first: what `save()` sends.
    @exclusivity(unchecked) var effects: [Effect] = []
    /// What undoes them in memory, oldest first.
    @exclusivity(unchecked) var journal: [JournalEntry] = []
    /// The objects they changed in memory (see ``ObjectGraph/pendingObjects``); an object
    /// may be listed more than once.
    @exclusivity(unchecked) var touched: [DatabaseObject] = []
    /// Where each step done ends, oldest first.
    @exclusivity(unchecked) var steps: [Ends] = []
    /// The effects of the steps undone, the last undone last: what `redo()` applies again.
    @exclusivity(unchecked) var undone: [[Effect]] = []
    /// Objects whose values the database computes when the pending writes are saved (the
    /// dependants an `ON DELETE` or `ON UPDATE SET DEFAULT` gives their defaults): read
    /// after `save()` commits. One listed by a write undone since is read all the same.
    @exclusivity(unchecked) var computedBySave: [DatabaseObject] = []
    /// Relationships loaded while writes were pending, with the owners they were loaded
    /// for: their sets took the pending members then, which no step's journal holds, so an
    /// undo or a redo loads them again.
    @exclusivity(unchecked) var loadsSeeingPending: [RelationshipAddress: [ObjectIdentifier: DatabaseObject]] = [:]

    /// Notes `owners`' sets of `relationship` loaded while writes are pending (each owner once).
    func noteLoadSeeingPending(_ owners: [DatabaseObject], relationship: Int) {
        guard let first = owners.first else { return }
        let address = RelationshipAddress(entity: first.entityIndex, relationship: relationship)
        for owner in owners { loadsSeeingPending[address, default: [:]][ObjectIdentifier(owner)] = owner }
    }
    /// How deep ``DatabaseContext/undoGroup(_:)``s are nested: inside one, a write's
    /// entries join the group's step, which ends when the outermost group does.
    @exclusivity(unchecked) var groupDepth = 0
    /// The rows this context marks as being edited, by object (see ``DatabaseContext/marksEdits``).
    var marks: [ObjectIdentifier: EditMarkKey] = [:]
    /// The last ``PendingKey`` number given.
    var lastPendingKey = 0

    /// Whether any write is pending.
    var hasChanges: Bool { !effects.isEmpty }

    /// Where the lists end now: where a new step begins.
    var ends: Ends { Ends(effects: effects.count, journal: journal.count, touched: touched.count) }

    /// Where the last step done ends: what an open group, or nothing, adds after it.
    var lastStepEnds: Ends { steps.last ?? Ends() }

    /// A new pending key.
    func nextPendingKey() -> PendingKey {
        lastPendingKey += 1
        return PendingKey(number: lastPendingKey)
    }

    /// Drops the entries after `ends` (a step with no effect, or one undone).
    func truncate(to ends: Ends) {
        effects.removeSubrange(ends.effects...)
        journal.removeSubrange(ends.journal...)
        touched.removeSubrange(ends.touched...)
    }

    /// Every list at once: what a save clears, and puts back should the transaction it ran
    /// in roll back.
    var saveState: (
        [Effect], [JournalEntry], [DatabaseObject], [Ends], [[Effect]], [DatabaseObject], [RelationshipAddress: [ObjectIdentifier: DatabaseObject]]
    ) {
        get { (effects, journal, touched, steps, undone, computedBySave, loadsSeeingPending) }
        set { (effects, journal, touched, steps, undone, computedBySave, loadsSeeingPending) = newValue }
    }

    /// Forgets every step (after a save, or a roll-back that undid them).
    func clear() {
        effects = []
        journal = []
        touched = []
        steps = []
        undone = []
        computedBySave = []
        loadsSeeingPending = [:]
    }
}
