import ServiceLifecycle

extension Database: Service {
    /// Runs the database as a service of a `ServiceGroup` (swift-service-lifecycle): returns
    /// once the group shuts down, with every connection closed. A `Database` used without
    /// a group works as well without it (``close()`` or `deinit` closes it then).
    ///
    /// ```swift
    /// let database = try Database(url: url, configuration: configuration)
    /// let group = ServiceGroup(services: [database, server], gracefulShutdownSignals: [.sigterm], logger: logger)
    /// try await group.run()        // SIGTERM: the server drains first, then the database
    /// ```
    ///
    /// On graceful shutdown (a `SIGTERM`, the group's `triggerGracefulShutdown()`):
    /// - a unit of work asked for from then on throws ``RelateError/Kind-swift.struct/shuttingDown``
    ///   at once, and so do ``changes(using:)`` and ``observe(_:)``;
    /// - streams of ``observe(_:)`` and ``changes(using:)`` finish, without an error;
    /// - units already running finish (a `write` commits) within
    ///   ``Configuration/shutdownGracePeriod``; those still running then are cancelled, their
    ///   statements cancelled on the server (libpq's cancel request), and throw
    ///   ``RelateError/Kind-swift.struct/shuttingDown`` (a `write` rolled back);
    /// - every connection is closed, and `run()` returns.
    ///
    /// Cancelling the task that runs `run()` does the same without the grace period.
    ///
    /// `run()` owns the database's background work: the pools' housekeeping and checkout
    /// timers, the live queries' feed and security watch, the wait for each change feed's
    /// thread run as child tasks of its task group, so that it returns only once every one
    /// of them ended, and cancelling it cancels them.
    ///
    /// - Throws: Nothing of its own; it returns when the shutdown is over.
    public func run() async throws {
        await background.run { [self] in
            do {
                try await gracefulShutdown()
            } catch {
                // Cancelled: no grace.
                await shutDown(grace: .zero)
                return
            }
            await shutDown(grace: shutdownGracePeriod)
        }
    }

    /// Refuses new units, ends the feeds and their streams, waits at most `grace` for the
    /// units under way (less when the task is cancelled meanwhile), cancels the rest, closes
    /// the pools, cancels and awaits the background work (which ends the change feeds once
    /// their threads closed their connections), and waits until every connection is closed.
    func shutDown(grace: Duration) async {
        units.beginShutdown()
        observation.shutDown()
        changeFeeds.stopAll()
        let deadline = ContinuousClock.now + grace
        await waitUntil(deadline: deadline) { units.count == 0 }
        // Units waiting for a connection are refused as the pools close; the others are
        // cancelled, and their connections closed when they come back.
        units.cancelAll()
        replicaSet?.close(error: UnitsInFlight.cancelled)
        pool.close(error: UnitsInFlight.cancelled)
        // Jobs in run()'s group are awaited by run() itself, once this returns.
        await background.closeAndWait()
        await waitUntil(deadline: nil) {
            units.count == 0 && pool.isFullyClosed && (replicaSet?.replicas.allSatisfy { $0.pool.isFullyClosed } ?? true)
        }
    }

    /// Polls `condition` every 10 ms until it holds, or until `deadline` passes or the
    /// task is cancelled; without a deadline, until it holds, cancelled or not (connections
    /// must be closed before `run()` returns). Polled rather than awaited: what it waits for
    /// is not a task of the database's but happens on other threads — units run in their
    /// callers' tasks on the pool's threads, connections close there as units give them
    /// back — and a few milliseconds do not matter to a shutdown.
    private func waitUntil(deadline: ContinuousClock.Instant?, _ condition: () -> Bool) async {
        while !condition() {
            if let deadline {
                if ContinuousClock.now >= deadline || Task.isCancelled { return }
                try? await Task.sleep(for: .milliseconds(10))
            } else {
                // A cancelled task's own sleep ends at once: sleep in one that is not cancelled.
                await Task.detached { try? await Task.sleep(for: .milliseconds(10)) }.value
            }
        }
    }
}
