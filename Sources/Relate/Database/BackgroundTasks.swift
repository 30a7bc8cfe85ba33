/// The background work of one ``Database`` (the pools' housekeeping and checkout timers, the
/// live queries' feed, evaluations and security watch, the wait for each change feed's
/// thread), owned in one place: every such job starts here, and here a shutdown cancels and
/// awaits it.
///
/// While the database runs as a service (``Database/run()``), a job is a child task of
/// `run()`'s task group: jobs reach the group through a stream its body reads (as
/// postgres-nio's `ConnectionPool.run()` takes its pool's actions), so `run()` returns only
/// once every job ended, and cancelling `run()` cancels them. Without a `ServiceGroup`
/// (nobody calls `run()`), a job is a task of its own, kept here until it ends, so that
/// ``Database/close()`` can cancel it; those started before `run()` began are awaited (and
/// cancelled) by its group as well.
///
/// Once closed, a job asked for is not started: `start` says so, and the caller treats the
/// database as closed.
final class BackgroundTasks: Sendable {
    typealias Work = @Sendable () async -> Void

    private let state = Locked(State())

    private struct State {
        /// Where jobs go while `run()`'s group takes them.
        var group: AsyncStream<Work>.Continuation?
        /// Jobs running as tasks of their own, by number, until they end.
        var detached: [Int: Task<Void, Never>] = [:]
        var next = 0
        /// How many jobs have started and not ended, in the group or not.
        var live = 0
        var isClosed = false
    }

    /// How many jobs are running now (started, not yet ended).
    var count: Int { state.withLock { $0.live } }

    /// How many of them run as tasks of their own, outside `run()`'s group.
    var detachedCount: Int { state.withLock { $0.detached.count } }

    /// Whether `run()`'s group takes the jobs started now.
    var hasGroup: Bool { state.withLock { $0.group != nil } }

    /// Starts `work` in `run()`'s group, or as a task of its own without one.
    ///
    /// - Returns: Whether it started; `false` once closed (the database shut down or closed).
    @discardableResult
    func start(_ work: @escaping Work) -> Bool {
        let counted: Work = { [self] in
            await work()
            state.withLock { $0.live -= 1 }
        }
        // Under the lock, so that a job is either in the group or on its own before
        // ``close()`` ends the group or collects the jobs on their own to cancel.
        return state.withLock { state in
            guard !state.isClosed else { return false }
            state.live += 1
            // The group may have stopped taking jobs (its task was cancelled): then the job
            // runs on its own, and the shutdown under way cancels and awaits it.
            if let group = state.group, case .enqueued = group.yield(counted) { return true }
            state.next += 1
            let id = state.next
            // Detached: a job takes neither the caller's executor preference (a unit's task
            // prefers the pool's threads) nor its task-local values (a unit's span).
            state.detached[id] = Task.detached { [self] in
                await counted()
                _ = self.state.withLock { $0.detached.removeValue(forKey: id) }
            }
            return true
        }
    }

    /// Starts `work` as ``start(_:)`` does, with a signal that cancels it alone (a feed
    /// nobody listens to any more), as a child of the group cannot be otherwise: the job
    /// runs `work` beside a wait for the signal, and whichever ends first ends the other.
    ///
    /// - Returns: The signal to fire to cancel the job; `nil` once closed.
    func startCancellable(_ work: @escaping Work) -> Signal? {
        let cancel = Signal()
        let started = start {
            await withTaskGroup(of: Void.self) { job in
                job.addTask { await work() }
                job.addTask { await withTaskCancellationHandler { await cancel.wait() } onCancel: { cancel.fire() } }
                _ = await job.next()
                job.cancelAll()
            }
        }
        return started ? cancel : nil
    }

    /// Runs `body` (the service's life: waiting for the shutdown, then shutting down) as a
    /// child of a task group that every job started meanwhile joins; returns once `body`
    /// and every job ended. `body` ends the group by ``close()``; cancelling the calling
    /// task cancels `body` and every job.
    ///
    /// Jobs already running on their own are awaited by the group too (a task cannot join
    /// a group late), and cancelled with it. A second `run` while one is active, or one
    /// after ``close()``, only runs `body`.
    func run(_ body: @escaping @Sendable () async -> Void) async {
        let (jobs, continuation) = AsyncStream.makeStream(of: Work.self)
        let earlier = state.withLock { state -> [Task<Void, Never>]? in
            guard state.group == nil, !state.isClosed else { return nil }
            state.group = continuation
            return Array(state.detached.values)
        }
        guard let earlier else {
            await body()
            return
        }
        await withDiscardingTaskGroup { group in
            for task in earlier {
                group.addTask { await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() } }
            }
            group.addTask { await body() }
            // Ends when `body` closes, or when this task is cancelled.
            for await job in jobs { group.addTask { await job() } }
            group.cancelAll()
        }
    }

    /// Cancels every job and starts none from now on; the group of `run()`, if any, stops
    /// taking jobs and cancels its children.
    ///
    /// - Returns: The jobs running as tasks of their own, to await.
    @discardableResult
    func close() -> [Task<Void, Never>] {
        let (group, detached) = state.withLock { state in
            state.isClosed = true
            defer { state.group = nil }
            return (state.group, Array(state.detached.values))
        }
        group?.finish()
        for task in detached { task.cancel() }
        return detached
    }

    /// ``close()``, then waits until every job running as a task of its own ended (the
    /// group's children are awaited by `run()` itself).
    func closeAndWait() async {
        for task in close() { await task.value }
    }

    /// Something that happens once (a job told to stop, a thread ended), which tasks wait for.
    final class Signal: Sendable {
        private let state = Locked<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        /// Wakes the tasks waiting, and those that wait from now on at once.
        func fire() {
            let waiters = state.withLock { state in
                state.fired = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        /// Returns once ``fire()`` was called, cancelled or not.
        func wait() async {
            await withCheckedContinuation { continuation in
                let fired = state.withLock { state in
                    if !state.fired { state.waiters.append(continuation) }
                    return state.fired
                }
                if fired { continuation.resume() }
            }
        }
    }
}
