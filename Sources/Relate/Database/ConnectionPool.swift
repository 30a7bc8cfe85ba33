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

/// At most `maxConnections` connections, opened when needed and kept open. Tasks that find
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
    private let state = Locked(State())

    private struct State {
        var idle: [PooledConnection] = []
        var open = 0
        var waiters: [(id: Int, continuation: CheckedContinuation<PooledConnection, any Error>)] = []
        /// Tasks for which a connection is being opened, by waiter id; a cancelled one is
        /// removed at once, without waiting for the opening to end.
        var opening: [Int: CheckedContinuation<PooledConnection, any Error>] = [:]
        var nextWaiter = 0
        var isClosed = false

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
        executor: PoolExecutor? = nil, extraThreads: Int = 0, setUp: @escaping @Sendable (Connection) throws -> Void
    ) {
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
    }

    /// Takes `connection` (already set up) into the pool, idle.
    func adopt(_ connection: Connection) throws {
        let cancel = try connection.makeCancelRequest()
        let pooled = PooledConnection(connection: connection, cancelRequest: cancel)
        state.withLock {
            $0.open += 1
            $0.idle.append(pooled)
        }
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
    func checkout() async throws -> PooledConnection {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PooledConnection, any Error>) in
                let decision = state.withLock { state -> Checkout in
                    if state.isClosed { return .fail(Self.closedError) }
                    // Checked under the lock, so that a cancellation that came before the
                    // waiter was listed is not lost.
                    if Task.isCancelled { return .fail(CancellationError()) }
                    if let idle = state.idle.popLast() { return .use(idle) }
                    if state.open < maxConnections {
                        state.open += 1
                        state.opening[id] = continuation
                        return .open
                    }
                    state.waiters.append((id, continuation))
                    return .wait
                }
                switch decision {
                case .use(let pooled): continuation.resume(returning: pooled)
                case .open: open(for: id)
                case .fail(let error): continuation.resume(throwing: error)
                case .wait: break
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
                    state.idle.append(pooled)
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
        case .closed: closeConnection(pooled)
        case .openFor(let waiter):
            closeConnection(pooled)
            open(for: waiter)
        }
    }

    /// Closes idle connections now and the others as they come back; tasks in line (or
    /// waiting for a connection to open) and later checkouts get an error.
    func close() {
        let (idle, waiters) = state.withLock { state in
            state.isClosed = true
            state.open -= state.idle.count
            // A connection still opening is closed when it comes back (see `open(for:)`).
            defer {
                state.idle = []
                state.waiters = []
                state.opening = [:]
            }
            return (state.idle, state.waiters.map(\.continuation) + state.opening.values)
        }
        for pooled in idle { closeConnection(pooled) }
        for waiter in waiters { waiter.resume(throwing: Self.closedError) }
        if ownsExecutor { executor.shutDown() }
    }

    static let closedError = RelateError(kind: .invalidObject, message: "the Database was closed; make a new one")

    /// A connection of its own, outside the pool, opened as the pool's are (for a question
    /// that must not wait in line: what became of a commit whose reply was lost).
    func openOutside() throws -> Connection {
        try Connection(conninfo: conninfo, defaults: defaults, logger: logger)
    }

    /// Closes `pooled`'s connection on a thread of the pool (libpq says goodbye to the server).
    private func closeConnection(_ pooled: PooledConnection) {
        executor.submit { pooled.connection.close() }
    }

    /// Opens a connection on a thread of the pool for the task `waiter` (listed in `opening`). When
    /// that task was cancelled meanwhile, the connection is given back as any other is. When
    /// it cannot be opened, the error goes to the task, and the next task in line (if any)
    /// tries a connection of its own.
    private func open(for waiter: Int) {
        executor.submit { [self] in
            do {
                let connection = try Connection(conninfo: conninfo, defaults: defaults, logger: logger)
                try setUp(connection)
                let pooled = PooledConnection(connection: connection, cancelRequest: try connection.makeCancelRequest())
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
