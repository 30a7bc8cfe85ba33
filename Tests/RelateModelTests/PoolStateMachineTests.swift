import Testing

@testable import Relate

/// The pool's rules, with no thread, no server and a clock the test moves: every answer of
/// ``PoolStateMachine`` for checkouts, connections given back, openings that end or fail,
/// cancellation, timeouts, idle connections and closing.
@Suite struct PoolStateMachineTests {
    /// A stand-in connection: the machine only keeps and hands back references.
    final class Conn: CustomStringConvertible {
        let name: String
        init(_ name: String) { self.name = name }
        var description: String { name }
    }

    /// The machine under test, behind a reference so that `#expect` can call its mutating
    /// members (the macro's closures cannot mutate a local).
    @dynamicMemberLookup final class Machine {
        var machine: PoolStateMachine<Conn>
        init(maxConnections: Int, minIdleConnections: Int = 0, idleTimeout: Duration? = nil) {
            machine = PoolStateMachine(maxConnections: maxConnections, minIdleConnections: minIdleConnections, idleTimeout: idleTimeout)
        }
        subscript<Value>(dynamicMember path: KeyPath<PoolStateMachine<Conn>, Value>) -> Value { machine[keyPath: path] }
        func checkout(_ waiter: Int) -> PoolStateMachine<Conn>.CheckoutAction { machine.checkout(waiter) }
        func cancel(_ waiter: Int) -> Bool { machine.cancel(waiter) }
        func expire(_ waiter: Int) -> (busy: Int, waiting: Int)? { machine.expire(waiter) }
        func release(_ connection: Conn, reusable: Bool, now: ContinuousClock.Instant) -> PoolStateMachine<Conn>.ReleaseAction {
            machine.release(connection, reusable: reusable, now: now)
        }
        func opened(for waiter: Int) -> Bool { machine.opened(for: waiter) }
        func openFailed(for waiter: Int) -> (tell: Bool, next: Int?) { machine.openFailed(for: waiter) }
        func openAhead() -> Int { machine.openAhead() }
        func openedAhead() { machine.openedAhead() }
        func openAheadFailed() { machine.openAheadFailed() }
        func closeIdle(now: ContinuousClock.Instant) -> [Conn] { machine.closeIdle(now: now) }
        func close() -> (idle: [Conn], waiters: [Int]) { machine.close() }
        func closingStarted() { machine.closingStarted() }
        func closingEnded() { machine.closingEnded() }
    }

    /// The test's clock: instants the test chooses, never read from the system.
    let start = ContinuousClock.Instant.now
    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    func used(_ action: PoolStateMachine<Conn>.CheckoutAction) -> Conn? {
        if case .use(let connection) = action { return connection }
        return nil
    }

    @Test func tasksOpenUpToTheBoundThenWaitInLineAndAreServedInOrder() {
        let machine = Machine(maxConnections: 2)
        #expect(machine.checkout(1).isOpen)
        #expect(machine.checkout(2).isOpen)
        #expect(machine.checkout(3).isWait)
        #expect(machine.checkout(4).isWait)
        #expect((machine.inUse, machine.waiting, machine.openCount) == (0, 4, 2))
        let (a, b) = (Conn("a"), Conn("b"))
        #expect(machine.opened(for: 1))
        #expect(machine.opened(for: 2))
        #expect((machine.inUse, machine.waiting) == (2, 2))
        // Given back, each goes to the first in line.
        #expect(machine.release(b, reusable: true, now: at(1)).giveTo == 3)
        #expect(machine.release(a, reusable: true, now: at(1)).giveTo == 4)
        #expect(machine.release(a, reusable: true, now: at(2)).isKeepIdle)
        #expect(machine.release(b, reusable: true, now: at(3)).isKeepIdle)
        #expect((machine.inUse, machine.idle.count, machine.waiting) == (0, 2, 0))
        // The one given back last is lent first (its session is warmest).
        #expect(used(machine.checkout(5)) === b)
        #expect(used(machine.checkout(6)) === a)
        #expect(machine.checkout(7).isWait)
    }

    /// A connection that may not serve again is closed; the first in line gets a new one in
    /// its place, within the bound.
    @Test func aBrokenConnectionIsClosedAndReplacedForTheFirstInLine() {
        let machine = Machine(maxConnections: 1)
        #expect(machine.checkout(1).isOpen)
        #expect(machine.opened(for: 1))
        #expect(machine.checkout(2).isWait)
        #expect(machine.release(Conn("a"), reusable: false, now: at(0)).closeAndOpenFor == 2)
        #expect((machine.openCount, machine.waiting) == (1, 1))
        #expect(machine.opened(for: 2))
        #expect(machine.release(Conn("b"), reusable: false, now: at(0)).isClose)
        #expect(machine.openCount == 0)
    }

    @Test func cancelledTasksLeaveTheLineAndTheirOpening() {
        let machine = Machine(maxConnections: 1)
        #expect(machine.checkout(1).isOpen)
        #expect(machine.checkout(2).isWait)
        #expect(machine.checkout(3).isWait)
        #expect(machine.cancel(2))
        #expect(!machine.cancel(2))
        // Cancelled while its connection opens: it leaves at once; the connection, once
        // open, serves the next in line.
        #expect(machine.cancel(1))
        #expect(!machine.opened(for: 1))
        #expect(machine.release(Conn("a"), reusable: true, now: at(0)).giveTo == 3)
        #expect(machine.waiters.isEmpty && machine.opening.isEmpty)
    }

    @Test func aTimeoutTakesATaskOutOfLineWithHowBusyThePoolWas() {
        let machine = Machine(maxConnections: 2)
        #expect(machine.checkout(1).isOpen)
        #expect(machine.checkout(2).isOpen)
        #expect(machine.opened(for: 1) && machine.opened(for: 2))
        #expect(machine.checkout(3).isWait)
        #expect(machine.checkout(4).isWait)
        let expired = machine.expire(3)
        #expect(expired?.busy == 2 && expired?.waiting == 1)
        #expect(machine.expire(3) == nil)
        #expect(machine.waiters == [4])
    }

    /// An opening that fails tells its task; the next in line tries a connection of its own,
    /// so no task waits for a connection that will never come.
    @Test func aFailedOpeningPassesItsPlaceToTheNextInLine() {
        let machine = Machine(maxConnections: 1)
        #expect(machine.checkout(1).isOpen)
        #expect(machine.checkout(2).isWait)
        let failed = machine.openFailed(for: 1)
        #expect(failed.tell && failed.next == 2)
        #expect((machine.openCount, machine.opening) == (1, [2]))
        let last = machine.openFailed(for: 2)
        #expect(last.tell && last.next == nil)
        #expect(machine.openCount == 0)
        #expect(machine.checkout(3).isOpen)
    }

    @Test func connectionsAreOpenedAheadToKeepTheMinimumIdleWithinTheBound() {
        let machine = Machine(maxConnections: 3, minIdleConnections: 2)
        #expect(machine.openAhead() == 2)
        #expect(machine.openAhead() == 0)
        machine.openedAhead()
        #expect(machine.release(Conn("a"), reusable: true, now: at(0)).isKeepIdle)
        machine.openAheadFailed()
        #expect((machine.openCount, machine.openingAhead, machine.idle.count) == (1, 0, 1))
        // The next round tries again; a task took the idle one meanwhile.
        #expect(used(machine.checkout(1)) != nil)
        #expect(machine.openAhead() == 2)
        #expect(machine.openCount == 3)
        #expect(machine.inUse == 1)
    }

    /// Idle connections past the timeout close oldest first; the newest `minIdleConnections`
    /// stay whatever their age.
    @Test func idleConnectionsPastTheTimeoutCloseButTheMinimumStays() {
        let machine = Machine(maxConnections: 3, minIdleConnections: 1, idleTimeout: .milliseconds(1500))
        for id in 1...3 { #expect(machine.checkout(id).isOpen) }
        let (a, b, c) = (Conn("a"), Conn("b"), Conn("c"))
        for id in 1...3 { #expect(machine.opened(for: id)) }
        _ = machine.release(a, reusable: true, now: at(0))
        _ = machine.release(b, reusable: true, now: at(1))
        _ = machine.release(c, reusable: true, now: at(2))
        #expect(machine.closeIdle(now: at(1.4)).isEmpty)
        #expect(machine.closeIdle(now: at(2)).map(\.name) == ["a"])
        #expect(machine.closeIdle(now: at(10)).map(\.name) == ["b"])
        #expect(machine.closeIdle(now: at(100)).isEmpty)
        #expect((machine.openCount, machine.idle.count) == (1, 1))
        #expect(Machine(maxConnections: 1).closeIdle(now: at(100)).isEmpty)
    }

    /// Closing: idle connections close now, every task waiting is told, later checkouts
    /// fail, connections lent or opening close as they come back; fully closed once none is
    /// left, closing included.
    @Test func closingTellsEveryTaskAndClosesConnectionsAsTheyComeBack() {
        let machine = Machine(maxConnections: 3)
        for id in 1...3 { #expect(machine.checkout(id).isOpen) }
        #expect(machine.opened(for: 1) && machine.opened(for: 2))
        let (a, b) = (Conn("a"), Conn("b"))
        _ = machine.release(a, reusable: true, now: at(0))
        #expect(machine.checkout(4).isUse)
        #expect(machine.checkout(5).isWait)
        // Lent: b (task 2) and a (task 4); task 3's connection still opening; task 5 in line.
        let (idle, told) = machine.close()
        #expect(idle.isEmpty)
        #expect(told == [5, 3])
        #expect(machine.checkout(6).isClosed)
        #expect(machine.release(a, reusable: true, now: at(1)).isClose)
        #expect(machine.release(b, reusable: true, now: at(1)).isClose)
        #expect(!machine.opened(for: 3))
        #expect(!machine.isFullyClosed)
        #expect(machine.release(Conn("c"), reusable: true, now: at(1)).isClose)
        machine.closingStarted()
        #expect(machine.openCount == 0 && !machine.isFullyClosed)
        machine.closingEnded()
        #expect(machine.isFullyClosed)
        #expect(machine.openAhead() == 0)
    }
}

extension PoolStateMachine.CheckoutAction {
    var isOpen: Bool { if case .openConnection = self { true } else { false } }
    var isWait: Bool { if case .wait = self { true } else { false } }
    var isUse: Bool { if case .use = self { true } else { false } }
    var isClosed: Bool { if case .closed = self { true } else { false } }
}

extension PoolStateMachine.ReleaseAction {
    var giveTo: Int? { if case .give(let waiter) = self { waiter } else { nil } }
    var closeAndOpenFor: Int? { if case .closeAndOpen(let waiter) = self { waiter } else { nil } }
    var isKeepIdle: Bool { if case .keepIdle = self { true } else { false } }
    var isClose: Bool { if case .close = self { true } else { false } }
}
