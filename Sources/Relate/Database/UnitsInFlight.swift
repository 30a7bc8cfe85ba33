/// The units of work a ``Database`` has under way, and whether it is shutting down: what
/// its service's `run()` drains. Without a `ServiceGroup` nobody shuts it down, and this
/// only counts.
final class UnitsInFlight: Sendable {
    private let state = Locked(State())

    private struct State {
        var isShuttingDown = false
        /// Set once the grace period is over: units still running are cancelled.
        var isCancelling = false
        /// The units under way, each with what cancels its statement once it has a connection.
        var running: [Int: (@Sendable () -> Void)?] = [:]
        var next = 0
    }

    /// The unit the current task runs, so that the connection it borrows is registered
    /// with it (a read that moves from a lost replica to another stays one unit).
    @TaskLocal static var current: Int?

    /// Starts a unit, refused once shutdown began.
    ///
    /// - Throws: ``RelateError/Kind-swift.struct/shuttingDown``.
    func enter() throws -> Int {
        try state.withLock { state in
            guard !state.isShuttingDown else { throw Self.refused }
            state.next += 1
            state.running[state.next] = .some(nil)
            return state.next
        }
    }

    /// Ends unit `id`.
    func leave(_ id: Int) {
        _ = state.withLock { $0.running.removeValue(forKey: id) }
    }

    /// Registers what cancels unit `id`'s statement on the server (`nil`: its connection
    /// went back). When the units are being cancelled already, `cancel` runs at once.
    func setCanceller(_ id: Int, _ cancel: (@Sendable () -> Void)?) {
        let now = state.withLock { state -> Bool in
            guard state.running[id] != nil else { return false }
            state.running[id] = .some(cancel)
            return state.isCancelling
        }
        if now { cancel?() }
    }

    /// Refuses units from now on.
    func beginShutdown() {
        state.withLock { $0.isShuttingDown = true }
    }

    /// Cancels every unit still running (those holding a connection; a unit waiting for
    /// one is refused by the pool as it closes), and any that gets a connection later.
    func cancelAll() {
        let cancellers = state.withLock { state in
            state.isCancelling = true
            return state.running.values.compactMap { $0 }
        }
        for cancel in cancellers { cancel() }
    }

    /// How many units are under way.
    var count: Int { state.withLock { $0.running.count } }

    var isShuttingDown: Bool { state.withLock { $0.isShuttingDown } }

    /// Whether the grace period ended and running units were cancelled.
    var isCancelling: Bool { state.withLock { $0.isCancelling } }

    /// What a unit asked for during shutdown throws.
    static let refused = RelateError(
        kind: .shuttingDown, message: "the Database is shutting down: no new unit of work starts")

    /// What a unit cancelled at the end of the grace period throws.
    static let cancelled = RelateError(
        kind: .shuttingDown,
        message: "the Database shut down while this unit of work ran: its statement was cancelled (a write unit rolled back)")
}
