/// Every decision of a ``ConnectionPool``, and nothing else: which task gets which connection,
/// when one opens or closes, who waits in line. It holds no lock, no thread, no
/// continuation and reads no clock: each call takes what happened (a checkout, a connection
/// given back, an opening that ended, the time now) and answers what the pool must do, which
/// the pool then does outside its lock. So every rule is tested with plain values and a
/// clock the test moves (`PoolStateMachineTests`), and the pool is left with doing.
///
/// Generic over the connection, so that the tests can give it plain objects.
struct PoolStateMachine<Connection: AnyObject> {
    /// A task asking for a connection, numbered by the pool.
    typealias Waiter = Int

    let maxConnections: Int
    /// Connections kept idle (opened ahead), within ``maxConnections``.
    let minIdleConnections: Int
    /// How long a connection may stay idle above ``minIdleConnections``; `nil`: for ever.
    let idleTimeout: Duration?

    /// Idle connections, the one given back last at the end, each with when it was given back.
    private(set) var idle: [(connection: Connection, since: ContinuousClock.Instant)] = []
    /// Connections open, lent, idle or opening: never above ``maxConnections``.
    private(set) var openCount = 0
    /// Connections opening for no task, to keep ``minIdleConnections`` idle.
    private(set) var openingAhead = 0
    /// Tasks in line, first served first.
    private(set) var waiters: [Waiter] = []
    /// Tasks for which a connection is opening; a cancelled one leaves at once, without
    /// waiting for the opening to end.
    private(set) var opening: Set<Waiter> = []
    /// Connections being closed (libpq saying goodbye).
    private(set) var closing = 0
    private(set) var isClosed = false

    init(maxConnections: Int, minIdleConnections: Int = 0, idleTimeout: Duration? = nil) {
        self.maxConnections = maxConnections
        self.minIdleConnections = minIdleConnections
        self.idleTimeout = idleTimeout
    }

    /// A connection opened outside the pool joins it, idle.
    mutating func adopt(_ connection: Connection, now: ContinuousClock.Instant) {
        openCount += 1
        idle.append((connection, now))
    }

    // MARK: Checkout

    enum CheckoutAction {
        /// Lend this idle connection.
        case use(Connection)
        /// Open a connection for the task.
        case openConnection
        /// The task waits in line.
        case wait
        /// The pool is closed.
        case closed
    }

    /// A task asks for a connection: an idle one, a new one within the bound, or a place in line.
    mutating func checkout(_ waiter: Waiter) -> CheckoutAction {
        if isClosed { return .closed }
        if let last = idle.popLast() { return .use(last.connection) }
        if openCount < maxConnections {
            openCount += 1
            opening.insert(waiter)
            return .openConnection
        }
        waiters.append(waiter)
        return .wait
    }

    /// A task was cancelled: whether it was still in line or waiting for its opening (then
    /// it must be told; the opening, once done, gives its connection back as any other).
    mutating func cancel(_ waiter: Waiter) -> Bool {
        if let index = waiters.firstIndex(of: waiter) {
            waiters.remove(at: index)
            return true
        }
        return opening.remove(waiter) != nil
    }

    /// A task's checkout timeout passed: when it is still in line, it leaves it, and the
    /// answer says how busy the pool was (connections lent, other tasks in line).
    mutating func expire(_ waiter: Waiter) -> (busy: Int, waiting: Int)? {
        guard let index = waiters.firstIndex(of: waiter) else { return nil }
        waiters.remove(at: index)
        return (openCount - idle.count, waiters.count)
    }

    // MARK: Giving back

    enum ReleaseAction {
        /// Hand the connection to this task, first in line.
        case give(to: Waiter)
        /// Nobody waits: it stays idle.
        case keepIdle
        /// Close the connection (then see ``openAhead()``).
        case close
        /// Close the connection, and open another for this task, first in line.
        case closeAndOpen(for: Waiter)
    }

    /// A connection comes back: `reusable` when it may serve again (not broken, not inside a
    /// transaction, no cancel request sent on it). `now` is when, for the idle timeout.
    mutating func release(_ connection: Connection, reusable: Bool, now: ContinuousClock.Instant) -> ReleaseAction {
        if reusable, !isClosed {
            guard waiters.isEmpty else { return .give(to: waiters.removeFirst()) }
            idle.append((connection, now))
            return .keepIdle
        }
        openCount -= 1
        // The first in line gets a new connection in the closed one's place.
        guard !isClosed, !waiters.isEmpty else { return .close }
        openCount += 1
        return .closeAndOpen(for: firstInLineToOpening())
    }

    // MARK: Opening

    /// The connection opened for `waiter` is ready: whether the task still waits for it
    /// (else it was cancelled, and the connection is given back with ``release(_:reusable:now:)``).
    mutating func opened(for waiter: Waiter) -> Bool {
        opening.remove(waiter) != nil
    }

    /// The connection opened for `waiter` could not be opened: whether the task still waits
    /// (it gets the error), and the next task in line, which tries a connection of its own.
    mutating func openFailed(for waiter: Waiter) -> (tell: Bool, next: Waiter?) {
        let tell = opening.remove(waiter) != nil
        guard !isClosed, !waiters.isEmpty else {
            openCount -= 1
            return (tell, nil)
        }
        return (tell, firstInLineToOpening())
    }

    private mutating func firstInLineToOpening() -> Waiter {
        let waiter = waiters.removeFirst()
        opening.insert(waiter)
        return waiter
    }

    /// How many connections to open ahead now, so that ``minIdleConnections`` are idle or
    /// opening, within the bound. Each, once open, comes back through ``openedAhead()``
    /// and ``release(_:reusable:now:)``, or through ``openAheadFailed()``.
    mutating func openAhead() -> Int {
        guard minIdleConnections > 0, !isClosed else { return 0 }
        let wanted = minIdleConnections - idle.count - openingAhead
        let count = max(0, min(wanted, maxConnections - openCount))
        openCount += count
        openingAhead += count
        return count
    }

    /// A connection opened ahead is ready (give it back with ``release(_:reusable:now:)``).
    mutating func openedAhead() {
        openingAhead -= 1
    }

    /// A connection opened ahead could not be opened; the next housekeeping round tries again.
    mutating func openAheadFailed() {
        openingAhead -= 1
        openCount -= 1
    }

    // MARK: Closing

    /// The idle connections to close at `now`: those given back ``idleTimeout`` ago or more,
    /// oldest first, keeping the ``minIdleConnections`` given back last whatever their age.
    mutating func closeIdle(now: ContinuousClock.Instant) -> [Connection] {
        guard let idleTimeout, !isClosed else { return [] }
        let candidates = max(0, idle.count - minIdleConnections)
        let count = idle.prefix(candidates).prefix { now - $0.since >= idleTimeout }.count
        let expired = idle.prefix(count).map(\.connection)
        idle.removeFirst(count)
        openCount -= count
        return expired
    }

    /// The pool closes: the idle connections to close now, and every task to tell (in line,
    /// or waiting for an opening). Connections lent are closed as they come back, and one
    /// still opening when it is done.
    mutating func close() -> (idle: [Connection], waiters: [Waiter]) {
        isClosed = true
        openCount -= idle.count
        defer {
            idle = []
            waiters = []
            opening = []
        }
        return (idle.map(\.connection), waiters + opening.sorted())
    }

    /// A connection is being closed, off the lock.
    mutating func closingStarted() { closing += 1 }

    /// A connection finished closing.
    mutating func closingEnded() { closing -= 1 }

    // MARK: Counts

    /// Connections lent to units now (not idle, not opening).
    var inUse: Int { openCount - idle.count - openingAhead - opening.count }

    /// Tasks waiting: in line, or for a connection opening in their name.
    var waiting: Int { waiters.count + opening.count }

    /// Whether, once closed, every connection is: none lent, opening, or being closed.
    var isFullyClosed: Bool { isClosed && openCount == 0 && closing == 0 }
}
