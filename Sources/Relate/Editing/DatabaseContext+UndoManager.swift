#if canImport(ObjectiveC)
import Foundation

// Foundation's `UndoManager` exists on Darwin only, so this file is compiled there only.
// Linux builds check the same code against a stand-in with the SDK's declarations
// (`@MainActor class UndoManager`, `registerUndo(withTarget:handler:)` taking a
// `@MainActor` handler); the mechanism under it, ``UndoRegistrar``, is tested everywhere.

extension DatabaseContext {
    /// Foundation's undo manager (a window's, a document's) told of each undo step of this
    /// context's pending writes, so that the app's Undo and Redo menu items step through
    /// them (``UndoRegistrar``); `nil` by default. Held weakly, as a view holds its window's.
    ///
    /// ```swift
    /// context.autocommits = false
    /// context.undoManager = window.undoManager
    /// try ada.setValue("King", forKey: "surname")
    /// window.undoManager?.undo()               // ada's surname is what it was
    /// ```
    ///
    /// `UndoManager` belongs to the main actor: a context given one is used there.
    @MainActor
    public var undoManager: UndoManager? {
        get { (undoRegistrar as? UndoManagerRegistrar)?.manager }
        set { undoRegistrar = newValue.map { UndoManagerRegistrar(manager: $0, context: self) } }
    }
}

/// ``UndoRegistrar`` over Foundation's `UndoManager`: its undo calls the context's `undo()`,
/// its redo the context's `redo()`.
@MainActor
private final class UndoManagerRegistrar: UndoRegistrar {
    /// What the undo manager holds for the context: the main actor's to use, as the undo
    /// manager is (the context is not `Sendable`, the handlers are the main actor's).
    final class Target: @unchecked Sendable {
        weak var context: DatabaseContext?
        init(_ context: DatabaseContext) { self.context = context }
    }

    weak var manager: UndoManager?
    nonisolated let target: Target

    init(manager: UndoManager, context: DatabaseContext) {
        self.manager = manager
        target = Target(context)
    }

    nonisolated func registerUndo(_ action: UndoAction, in context: DatabaseContext) {
        MainActor.assumeIsolated {
            manager?.registerUndo(withTarget: target) { target in
                guard let context = target.context else { return }
                try? action.perform(on: context)
            }
        }
    }

    nonisolated func removeAllActions(of context: DatabaseContext) {
        MainActor.assumeIsolated { manager?.removeAllActions(withTarget: target) }
    }
}
#endif
