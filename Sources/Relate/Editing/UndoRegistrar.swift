/// An undo stack outside the context that a context that does not autocommit tells of each
/// undo step: a user interface's, whose Undo and Redo menu items then step through the
/// context's pending writes. On Darwin, `DatabaseContext.undoManager` is Foundation's
/// `UndoManager` made one; elsewhere (there is no `UndoManager` on Linux) any stack can be.
///
/// The context calls ``registerUndo(_:in:)`` once for each step it can undo or redo, as
/// `UndoManager` expects: after a write (or ``DatabaseContext/undoGroup(_:)``) the action
/// ``UndoAction/undo``; after ``DatabaseContext/undo()`` the action ``UndoAction/redo``
/// (which an `UndoManager`, while undoing, keeps as its redo); after
/// ``DatabaseContext/redo()`` the action ``UndoAction/undo`` again. ``DatabaseContext/save()``
/// and ``DatabaseContext/rollback()`` end every step: ``removeAllActions(of:)``.
///
/// With a registrar, undo and redo through it (the Undo and Redo menu items), not by
/// calling ``DatabaseContext/undo()`` yourself: the context registers the opposite action
/// either way, and a stack that is not undoing keeps it as an undo.
///
/// ```swift
/// final class MenuStack: UndoRegistrar {
///     var undoable: [UndoAction] = [], redoable: [UndoAction] = []
///     private var undoing = false, redoing = false
///     func registerUndo(_ action: UndoAction, in context: DatabaseContext) {
///         if undoing {
///             redoable.append(action)
///         } else {
///             undoable.append(action)
///             if !redoing { redoable = [] }   // a new write: nothing to redo
///         }
///     }
///     func removeAllActions(of context: DatabaseContext) { undoable = []; redoable = [] }
///     func undo(_ context: DatabaseContext) throws {   // the Undo menu item
///         guard let action = undoable.popLast() else { return }
///         undoing = true
///         defer { undoing = false }
///         try action.perform(on: context)
///     }
/// }
/// ```
public protocol UndoRegistrar: AnyObject {
    /// Keeps `action` as what undoes the step `context` has just made (or, while the stack
    /// is undoing, what redoes the step just undone).
    ///
    /// - Parameters:
    ///   - action: What to call on `context` (``UndoAction/perform(on:)``) to undo or redo.
    ///   - context: The context whose step it is.
    func registerUndo(_ action: UndoAction, in context: DatabaseContext)
    /// Forgets every action registered for `context`: its steps were saved or rolled back.
    ///
    /// - Parameter context: The context whose actions go.
    func removeAllActions(of context: DatabaseContext)
}

/// What an ``UndoRegistrar`` calls on the context to undo (or redo) a step.
public enum UndoAction: Sendable, Hashable {
    /// ``DatabaseContext/undo()``.
    case undo
    /// ``DatabaseContext/redo()``.
    case redo

    /// Calls ``DatabaseContext/undo()`` or ``DatabaseContext/redo()`` on `context`, which
    /// registers the opposite action in turn.
    ///
    /// - Parameter context: The context to undo or redo a step of.
    /// - Throws: What `undo()` or `redo()` throws (a context that autocommits, a call
    ///   inside ``DatabaseContext/undoGroup(_:)``).
    public func perform(on context: DatabaseContext) throws {
        switch self {
        case .undo: try context.undo()
        case .redo: try context.redo()
        }
    }
}
