/// The writes of a context that does not autocommit, kept as the undo stack keeps them:
/// each write call is one step (its effects, and the journal that undoes them in memory);
/// ``DatabaseContext/save()`` sends the steps done, in order.
final class PendingChanges {
    /// One undo step: the effects of one write call (or of an ``DatabaseContext/undoGroup(_:)``).
    struct Step {
        var effects: [Effect] = []
        /// Undoes the step in memory, run last to first.
        var undo: [() -> Void] = []
        /// The objects the step changed in memory (see ``ObjectGraph/pendingObjects``).
        var touched: [DatabaseObject] = []
    }

    /// The steps done and not undone, oldest first: what `save()` sends.
    var done: [Step] = []
    /// The steps undone, the last undone last: what `redo()` applies again.
    var undone: [Step] = []
    /// The step an ``DatabaseContext/undoGroup(_:)`` under way collects, and how deep.
    var group: Step?
    var groupDepth = 0
    /// The effects of the write under way (see ``DatabaseContext/pendingStep(_:)``).
    var current: [Effect]?
    /// The rows this context marks as being edited, by object (see ``DatabaseContext/marksEdits``).
    var marks: [ObjectIdentifier: EditMarkKey] = [:]
    /// The last ``PendingKey`` number given.
    var lastPendingKey = 0

    /// Whether any write is pending.
    var hasChanges: Bool { done.contains { !$0.effects.isEmpty } || !(group?.effects.isEmpty ?? true) }

    /// Every effect pending, oldest first.
    var effects: [Effect] { done.flatMap(\.effects) + (group?.effects ?? []) }

    /// A new pending key.
    func nextPendingKey() -> PendingKey {
        lastPendingKey += 1
        return PendingKey(number: lastPendingKey)
    }

    /// Forgets every step (after a save, or a roll-back that undid them).
    func clear() {
        done = []
        undone = []
    }
}
