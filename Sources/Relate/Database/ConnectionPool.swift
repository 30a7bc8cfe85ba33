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
    private let state = Locked(State())

    private struct State {
        /// Idle connections, the one given back last at the end, each with when it was given back.
        var idle: [(pooled: PooledConnection, since: ContinuousClock.Instant)] = []
        var open = 0
        /// Connections opening for no task, to keep `minIdleConnections` idle.
        var openingAhead = 0
        var waiters: [(id: Int, continuation: CheckedContinuation<PooledConnection, any Error>)] = []
        /// Tasks for which a connection is being opened, by waiter id; a cancelled one is
        /// removed at once, without waiting for the opening to end.
        var opening: [Int: CheckedContinuation<PooledConnection, any Error>] = [:]
        var nextWaiter = 0
        var isClosed = false
        /// What checkouts throw once closed.
        var closedError = ConnectionPool.closedError
        /// Connections being closed on a thread of the pool (libpq saying goodbye).
        var closing = 0

        /// Moves the first task in line to `opening`, for a connection opened in its name.
        mutating func firstInLineToOpening() -> Int {
            let waiter = waiters.removeFirst()
            opening[waiter.id] = waiter.continuation
            return waiter.id
        }
    }

    private enum Checkout {
        case use(PooledConnection)
        case open
        case wait
        case fail(any Error)
    }

    /// Whether ``close()`` shuts ``executor`` down (a replica's pool shares the primary's).
    private let ownsExecutor: Bool

    init(
        conninfo: String, defaults: [String: String], maxConnections: Int, logger: Logger,
        executor: PoolExecutor? = nil, extraThreads: Int = 0, options: PoolOptions = PoolOptions(),
        setUp: @escaping @Sendable (Connection) throws -> Void
    ) {
        self.options = options
        self.conninfo = conninfo
        self.defaults = defaults
        self.maxConnections = maxConnections
        self.logger = logger
        self.setUp = setUp
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
        state.withLock {
            $0.open += 1
            $0.idle.append((pooled, .now))
        }
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
    var openConnections: Int { state.withLock { $0.open } }

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
                let decision = state.withLock { state -> Checkout in
                    if state.isClosed { return .fail(state.closedError) }
                    // Checked under the lock, so that a cancellation that came before the
                    // waiter was listed is not lost.
                    if Task.isCancelled { return .fail(CancellationError()) }
                    if let idle = state.idle.popLast() { return .use(idle.pooled) }
                    if state.open < maxConnections {
                        state.open += 1
                        state.opening[id] = continuation
                        return .open
                    }
                    state.waiters.append((id, continuation))
                    return .wait
                }
                switch decision {
                case .use(let pooled):
                    continuation.resume(returning: pooled)
                    report()
                    openAhead()
                case .open:
                    report()
                    open(for: id)
                case .fail(let error): continuation.resume(throwing: error)
                case .wait:
                    report()
                    if let timeout = options.checkoutTimeout { expire(id, after: timeout) }
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0).continuation }
                    ?? state.opening.removeValue(forKey: id)
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Takes the task `id` out of line after `timeout`, if it is still there, with an error
    /// that says how busy the pool was.
    private func expire(_ id: Int, after timeout: Duration) {
        Task.detached { [weak self] in
            try? await Task.sleep(for: timeout)
            guard let self else { return }
            let expired = state.withLock { state -> (CheckedContinuation<PooledConnection, any Error>, busy: Int, waiting: Int)? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                let waiter = state.waiters.remove(at: index)
                return (waiter.continuation, state.open - state.idle.count, state.waiters.count)
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
        enum Next {
            case give(CheckedContinuation<PooledConnection, any Error>)
            case openFor(Int)
            case idle, closed
        }
        let next = state.withLock { state -> Next in
            if reusable, !state.isClosed {
                guard !state.waiters.isEmpty else {
                    // The clock is read only for an idle timeout.
                    state.idle.append((pooled, options.idleTimeout == nil ? Self.never : .now))
                    return .idle
                }
                return .give(state.waiters.removeFirst().continuation)
            }
            state.open -= 1
            // The first in line gets a new connection in its place.
            guard !state.isClosed, !state.waiters.isEmpty else { return .closed }
            state.open += 1
            return .openFor(state.firstInLineToOpening())
        }
        switch next {
        case .give(let waiter): waiter.resume(returning: pooled)
        case .idle: break
        case .closed:
            closeConnection(pooled)
            openAhead()
        case .openFor(let waiter):
            closeConnection(pooled)
            open(for: waiter)
        }
        report()
    }

    /// Closes idle connections now and the others as they come back; tasks in line (or
    /// waiting for a connection to open) and later checkouts get `error`.
    func close(error: RelateError = closedError) {
        let (idle, waiters) = state.withLock { state in
            if !state.isClosed { state.closedError = error }
            state.isClosed = true
            state.open -= state.idle.count
            // A connection still opening is closed when it comes back (see `open(for:)`).
            defer {
                state.idle = []
                state.waiters = []
                state.opening = [:]
            }
            return (state.idle.map(\.pooled), state.waiters.map(\.continuation) + state.opening.values)
        }
        for pooled in idle { closeConnection(pooled) }
        report()
        for waiter in waiters { waiter.resume(throwing: error) }
        if ownsExecutor { executor.shutDown() }
    }

    /// Whether, after ``close(error:)``, every connection is closed: none lent, opening, or
    /// being closed.
    var isFullyClosed: Bool { state.withLock { $0.isClosed && $0.open == 0 && $0.closing == 0 } }

    /// The pool's counts now, for ``Database/status``.
    func status(name: String) -> DatabaseStatus.Pool {
        state.withLock { state in
            DatabaseStatus.Pool(
                name: name, maxConnections: maxConnections,
                inUse: state.open - state.idle.count - state.openingAhead - state.opening.count, idle: state.idle.count,
                waiting: state.waiters.count + state.opening.count, isClosed: state.isClosed)
        }
    }

    /// When an idle connection was given back, for a pool without an idle timeout.
    private static let never = ContinuousClock.now

    static let closedError = RelateError(kind: .invalidObject, message: "the Database was closed; make a new one")

    /// Reports the counts to the metrics backend, if any.
    private func report() {
        guard let metrics = options.metrics else { return }
        let (inUse, idle, waiting) = state.withLock { state in
            (state.open - state.idle.count - state.openingAhead - state.opening.count, state.idle.count,
             state.waiters.count + state.opening.count)
        }
        metrics.record(inUse: inUse, idle: idle, waiting: waiting)
    }

    /// Opens connections ahead until `minIdleConnections` are idle (or opening), within
    /// `maxConnections`. A connection that cannot be opened is tried again at the next
    /// housekeeping round.
    func openAhead() {
        guard options.minIdleConnections > 0 else { return }
        let count = state.withLock { state -> Int in
            guard !state.isClosed else { return 0 }
            let wanted = options.minIdleConnections - state.idle.count - state.openingAhead
            let count = max(0, min(wanted, maxConnections - state.open))
            state.open += count
            state.openingAhead += count
            return count
        }
        for _ in 0..<count {
            executor.submit { [self] in
                do {
                    let pooled = try openPooled()
                    state.withLock { $0.openingAhead -= 1 }
                    release(pooled, reusable: true)
                } catch {
                    state.withLock { state in
                        state.openingAhead -= 1
                        state.open -= 1
                    }
                    logger.warning("cannot open a connection ahead", metadata: ["relate.error": "\(error)"])
                    report()
                }
            }
        }
    }

    /// Closes the idle connections given back longer than `idleTimeout` ago, keeping the
    /// `minIdleConnections` given back last.
    func closeIdleConnections(now: ContinuousClock.Instant = .now) {
        guard let timeout = options.idleTimeout else { return }
        let expired = state.withLock { state -> [PooledConnection] in
            guard !state.isClosed else { return [] }
            // The oldest are first; the newest `minIdleConnections` stay whatever their age.
            let candidates = max(0, state.idle.count - options.minIdleConnections)
            let count = state.idle.prefix(candidates).prefix { now - $0.since >= timeout }.count
            let expired = state.idle.prefix(count).map(\.pooled)
            state.idle.removeFirst(count)
            state.open -= count
            return expired
        }
        guard !expired.isEmpty else { return }
        for pooled in expired { closeConnection(pooled) }
        report()
    }

    /// A task that, until the pool closes, closes idle connections past `idleTimeout` and
    /// opens connections ahead (again, after a failure) — a round every quarter of
    /// `idleTimeout`, at most every second.
    private func startHousekeeping() {
        let interval = min(options.idleTimeout.map { $0 / 4 } ?? .seconds(1), .seconds(1))
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: max(interval, .milliseconds(10)))
                guard let self, !self.isClosed else { return }
                self.closeIdleConnections()
                self.openAhead()
            }
        }
    }

    private var isClosed: Bool { state.withLock { $0.isClosed } }

    /// How many connections are idle now.
    var idleConnections: Int { state.withLock { $0.idle.count } }

    /// A connection of its own, outside the pool, opened as the pool's are (for a question
    /// that must not wait in line: what became of a commit whose reply was lost).
    func openOutside() throws -> Connection {
        try Connection(conninfo: conninfo, defaults: defaults, logger: logger)
    }

    /// Closes `pooled`'s connection on a thread of the pool (libpq says goodbye to the server).
    private func closeConnection(_ pooled: PooledConnection) {
        state.withLock { $0.closing += 1 }
        executor.submit { [self] in
            pooled.connection.close()
            state.withLock { $0.closing -= 1 }
        }
    }

    /// A new connection, set up, with its cancel request: what every pooled connection is.
    /// Blocks (libpq connects): only on the pool's threads.
    private func openPooled() throws -> PooledConnection {
        let connection = try Connection(conninfo: conninfo, defaults: defaults, logger: logger)
        try setUp(connection)
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
                if let continuation = state.withLock({ $0.opening.removeValue(forKey: waiter) }) {
                    continuation.resume(returning: pooled)
                } else {
                    release(pooled, reusable: true)
                }
            } catch {
                let (continuation, next) = state.withLock { state -> (CheckedContinuation<PooledConnection, any Error>?, Int?) in
                    let continuation = state.opening.removeValue(forKey: waiter)
                    guard !state.isClosed, !state.waiters.isEmpty else {
                        state.open -= 1
                        return (continuation, nil)
                    }
                    return (continuation, state.firstInLineToOpening())
                }
                continuation?.resume(throwing: DatabaseContext.relateError(error))
                if let next { open(for: next) }
            }
        }
    }
}
