import Logging
import RelatePostgres
import Synchronization

/// A connection of the pool. A unit of work has it alone, on a thread of the pool's
/// executor: so the non-`Sendable` connection is reached only through this `Sendable`
/// owner, one thread at a time (the pool's lock orders one unit after the next).
final class PooledConnection: @unchecked Sendable {
    let connection: Connection
    /// Made when the connection opened; sent from any thread when a task is cancelled.
    let cancelRequest: CancelRequest

    init(connection: Connection, cancelRequest: CancelRequest) {
        self.connection = connection
        self.cancelRequest = cancelRequest
    }
}

/// How a pool keeps its connections beyond its bound: see the options of the same names in
/// ``Configuration``.
struct PoolOptions: Sendable {
    var minIdleConnections = 0
    var idleTimeout: Duration?
    var checkoutTimeout: Duration?
    var metrics: PoolMetrics?
}

/// At most `maxConnections` connections, opened when needed and kept open (at least
/// `minIdleConnections` of them idle, opened ahead; an idle one closed after `idleTimeout`,
/// down to that minimum). Tasks that find
/// none free wait in line and are served in order; a waiting task that is cancelled leaves
/// the line, and so does one whose connection is still opening (the connection, once open,
/// serves the next task or waits idle). A connection that comes back broken, inside a
/// transaction, or after a cancel request is closed, never handed out again.
///
/// Those rules are ``PoolStateMachine``'s: the pool asks it under its lock, and does what
/// it answers (resume a task, open or close a connection on a thread of its executor,
/// start a timer) after the lock is let go.
final class ConnectionPool: Sendable {
    let maxConnections: Int
    /// The threads units of work and connections opening run on.
    let executor: PoolExecutor
    private let conninfo: String
    /// Parameters for what `conninfo` and the environment leave out (a connect timeout).
    private let defaults: [String: String]
    private let logger: Logger
    /// Run on each new connection before its first use (session settings).
    private let setUp: @Sendable (Connection) throws -> Void
    private let options: PoolOptions
    private let state: Locked<State>

    /// The machine's decisions, and the continuations of the tasks it names (each waiter in
    /// line or opening has one here).
    private struct State {
        var machine: PoolStateMachine<PooledConnection>
        var continuations: [Int: CheckedContinuation<PooledConnection, any Error>] = [:]
        var nextWaiter = 0
        /// What checkouts throw once closed.
        var closedError = ConnectionPool.closedError
    }

    /// Whether ``close()`` shuts ``executor`` down (a replica's pool shares the primary's).
    private let ownsExecutor: Bool
    /// Where the housekeeping loop and the checkout timers run: the database's background
    /// work, which its shutdown (or ``Database/close()``) cancels and awaits.
    private let background: BackgroundTasks

    init(
        conninfo: String, defaults: [String: String], maxConnections: Int, logger: Logger, background: BackgroundTasks,
        executor: PoolExecutor? = nil, extraThreads: Int = 0, options: PoolOptions = PoolOptions(),
        setUp: @escaping @Sendable (Connection) throws -> Void
    ) {
        self.options = options
        self.conninfo = conninfo
        self.defaults = defaults
        self.maxConnections = maxConnections
        self.logger = logger
        self.setUp = setUp
        self.background = background
        state = Locked(State(machine: PoolStateMachine(
            maxConnections: maxConnections, minIdleConnections: options.minIdleConnections, idleTimeout: options.idleTimeout)))
        // One thread per connection for what blocks (a unit holds its connection, an opening
        // its place), and two more, so that tasks in line always find a thread to run on
        // (to leave when cancelled, to start when served) while every connection is busy.
        self.executor = executor ?? PoolExecutor(name: "relate.pool", maxThreads: min(maxConnections + extraThreads, Int.max - 2) + 2)
        ownsExecutor = executor == nil
        if options.minIdleConnections > 0 || options.idleTimeout != nil { startHousekeeping() }
    }

    /// Takes `connection` (already set up) into the pool, idle.
    func adopt(_ connection: Connection) throws {
        let cancel = try connection.makeCancelRequest()
        let pooled = PooledConnection(connection: connection, cancelRequest: cancel)
        state.withLock { $0.machine.adopt(pooled, now: .now) }
        report()
        openAhead()
    }

    /// Runs `work` on a thread of the pool: on the calling thread when it is one (a unit's
    /// task prefers the pool's executor, so it normally is), else as a job there.
    func onPoolThread<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        if executor.isCurrentThread { return try work() }
        return try await withCheckedThrowingContinuation { continuation in
            executor.submit { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    /// How many connections are open now.
    var openConnections: Int { state.withLock { $0.machine.openCount } }

    /// A connection for one unit of work: an idle one, a new one, or the next one given back.
    /// With a `checkoutTimeout`, a task still in line after it throws
    /// ``RelateError/Kind-swift.struct/checkoutTimeout``.
    func checkout() async throws -> PooledConnection {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let started = options.metrics.map { _ in ContinuousClock.now }
        defer {
            if let started, let metrics = options.metrics {
                metrics.checkout.recordNanoseconds(PoolMetrics.nanoseconds(ContinuousClock.now - started))
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PooledConnection, any Error>) in
                let decision = state.withLock { state -> PoolStateMachine<PooledConnection>.CheckoutAction? in
                    // Checked under the lock, so that a cancellation that came before the
                    // waiter was listed is not lost.
                    if Task.isCancelled, !state.machine.isClosed { return nil }
                    let decision = state.machine.checkout(id)
                    switch decision {
                    case .openConnection, .wait: state.continuations[id] = continuation
                    case .use, .closed: break
                    }
                    return decision
                }
                switch decision {
                case nil: continuation.resume(throwing: CancellationError())
                case .closed:
                    continuation.resume(throwing: state.withLock { $0.closedError })
                    report()
                case .use(let pooled):
                    continuation.resume(returning: pooled)
                    report()
                    openAhead()
                case .openConnection:
                    report()
                    open(for: id)
                case .wait:
                    report()
                    if let timeout = options.checkoutTimeout { expire(id, after: timeout) }
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.machine.cancel(id) ? state.continuations.removeValue(forKey: id) : nil
            }
            waiter?.resume(throwing: CancellationError())
            // The gauges: the task left the line.
            if waiter != nil { report() }
        }
    }

    /// Takes the task `id` out of line after `timeout`, if it is still there, with an error
    /// that says how busy the pool was. A background job: when the database shuts down or
    /// closes, it is cancelled, and the pool's closing answers the task instead.
    private func expire(_ id: Int, after timeout: Duration) {
        background.start { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled, let self else { return }
            let expired = state.withLock { state -> (CheckedContinuation<PooledConnection, any Error>, busy: Int, waiting: Int)? in
                guard let (busy, waiting) = state.machine.expire(id), let continuation = state.continuations.removeValue(forKey: id)
                else { return nil }
                return (continuation, busy, waiting)
            }
            guard let (continuation, busy, waiting) = expired else { return }
            report()
            continuation.resume(
                throwing: RelateError(
                    kind: .checkoutTimeout,
                    message: "no connection came free within \(timeout): \(busy) of \(maxConnections) connections busy, "
                        + "\(waiting) other task\(waiting == 1 ? "" : "s") waiting; raise maxConnections, shorten the units "
                        + "of work, or lengthen checkoutTimeout"))
        }
    }

    /// Gives a connection back: to the first task in line, or idle; closed instead when it
    /// may not serve again.
    func release(_ pooled: PooledConnection, reusable: Bool) {
        // The clock is read only for an idle timeout.
        let now = options.idleTimeout == nil ? Self.never : .now
        let (action, waiter) = state.withLock { state in
            let action = state.machine.release(pooled, reusable: reusable, now: now)
            switch action {
            case .give(let waiter): return (action, state.continuations.removeValue(forKey: waiter))
            case .keepIdle, .close, .closeAndOpen: return (action, nil)
            }
        }
        switch action {
        case .give: waiter?.resume(returning: pooled)
        case .keepIdle: break
        case .close:
            closeConnection(pooled)
            openAhead()
        case .closeAndOpen(let waiter):
            closeConnection(pooled)
            open(for: waiter)
        }
        report()
    }

    /// Closes idle connections now and the others as they come back; tasks in line (or
    /// waiting for a connection to open) and later checkouts get `error`.
    func close(error: RelateError = closedError) {
        let (idle, waiters) = state.withLock { state in
            if !state.machine.isClosed { state.closedError = error }
            let (idle, waiters) = state.machine.close()
            return (idle, waiters.compactMap { state.continuations.removeValue(forKey: $0) })
        }
        for pooled in idle { closeConnection(pooled) }
        report()
        for waiter in waiters { waiter.resume(throwing: error) }
        if ownsExecutor { executor.shutDown() }
    }

    /// Whether, after ``close(error:)``, every connection is closed: none lent, opening, or
    /// being closed.
    var isFullyClosed: Bool { state.withLock { $0.machine.isFullyClosed } }

    /// The pool's counts now, for ``Database/status``.
    func status(name: String) -> DatabaseStatus.Pool {
        state.withLock { state in
            DatabaseStatus.Pool(
                name: name, maxConnections: maxConnections, inUse: state.machine.inUse, idle: state.machine.idle.count,
                waiting: state.machine.waiting, isClosed: state.machine.isClosed)
        }
    }

    /// When an idle connection was given back, for a pool without an idle timeout.
    private static let never = ContinuousClock.now

    static let closedError = RelateError(kind: .invalidObject, message: "the Database was closed; make a new one")

    /// Reports the counts to the metrics backend, if any.
    private func report() {
        guard let metrics = options.metrics else { return }
        let (inUse, idle, waiting) = state.withLock { ($0.machine.inUse, $0.machine.idle.count, $0.machine.waiting) }
        metrics.record(inUse: inUse, idle: idle, waiting: waiting)
    }

    /// Opens connections ahead until `minIdleConnections` are idle (or opening), within
    /// `maxConnections`. A connection that cannot be opened is tried again at the next
    /// housekeeping round.
    func openAhead() {
        guard options.minIdleConnections > 0 else { return }
        let count = state.withLock { $0.machine.openAhead() }
        for _ in 0..<count {
            executor.submit { [self] in
                do {
                    let pooled = try openPooled()
                    state.withLock { $0.machine.openedAhead() }
                    release(pooled, reusable: true)
                } catch {
                    state.withLock { $0.machine.openAheadFailed() }
                    logger.warning("cannot open a connection ahead", metadata: ["relate.error": "\(error)"])
                    report()
                }
            }
        }
    }

    /// Closes the idle connections given back longer than `idleTimeout` ago, keeping the
    /// `minIdleConnections` given back last.
    func closeIdleConnections(now: ContinuousClock.Instant = .now) {
        let expired = state.withLock { $0.machine.closeIdle(now: now) }
        guard !expired.isEmpty else { return }
        for pooled in expired { closeConnection(pooled) }
        report()
    }

    /// A background job that, until the pool closes or the job is cancelled (the database
    /// shuts down), closes idle connections past `idleTimeout` and opens connections ahead
    /// (again, after a failure) — a round every quarter of `idleTimeout`, at most every second.
    private func startHousekeeping() {
        let interval = min(options.idleTimeout.map { $0 / 4 } ?? .seconds(1), .seconds(1))
        background.start { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: max(interval, .milliseconds(10)))
                guard !Task.isCancelled, let self, !self.isClosed else { return }
                self.closeIdleConnections()
                self.openAhead()
            }
        }
    }

    private var isClosed: Bool { state.withLock { $0.machine.isClosed } }

    /// How many connections are idle now.
    var idleConnections: Int { state.withLock { $0.machine.idle.count } }

    /// A connection of its own, outside the pool, opened as the pool's are (for a question
    /// that must not wait in line: what became of a commit whose reply was lost).
    func openOutside() throws -> Connection {
        try Connection(conninfo: conninfo, defaults: defaults, logger: logger)
    }

    /// Closes `pooled`'s connection on a thread of the pool (libpq says goodbye to the server).
    private func closeConnection(_ pooled: PooledConnection) {
        state.withLock { $0.machine.closingStarted() }
        executor.submit { [self] in
            pooled.connection.close()
            state.withLock { $0.machine.closingEnded() }
        }
    }

    /// A new connection, set up, with its cancel request: what every pooled connection is.
    /// Blocks (libpq connects): only on the pool's threads.
    private func openPooled() throws -> PooledConnection {
        let connection = try Connection(conninfo: conninfo, defaults: defaults, logger: logger)
        try setUp(connection)
        // Its settings (a statement timeout) are every unit's: a change after them counts.
        connection.sessionMayHaveChanged = false
        return PooledConnection(connection: connection, cancelRequest: try connection.makeCancelRequest())
    }

    /// Opens a connection on a thread of the pool for the task `waiter` (listed in `opening`). When
    /// that task was cancelled meanwhile, the connection is given back as any other is. When
    /// it cannot be opened, the error goes to the task, and the next task in line (if any)
    /// tries a connection of its own.
    private func open(for waiter: Int) {
        executor.submit { [self] in
            do {
                let pooled = try openPooled()
                let waiting = state.withLock { state in
                    state.machine.opened(for: waiter) ? state.continuations.removeValue(forKey: waiter) : nil
                }
                if let waiting {
                    waiting.resume(returning: pooled)
                } else {
                    release(pooled, reusable: true)
                }
            } catch {
                let (continuation, next) = state.withLock { state in
                    let (tell, next) = state.machine.openFailed(for: waiter)
                    return (tell ? state.continuations.removeValue(forKey: waiter) : nil, next)
                }
                continuation?.resume(throwing: DatabaseContext.relateError(error))
                // The gauges: the task that waited for it left the line.
                report()
                if let next { open(for: next) }
            }
        }
    }
}
