import RelatePostgres
import Synchronization

/// The change feeds a ``Database`` runs (each ``Database/changes(using:)`` stream, the live
/// queries' one among them): what ``Database/status`` reports of them, and how a shutdown
/// stops them all (it waits for their threads through `Database.background`).
final class ChangeFeedRegistry: Sendable {
    /// One feed: its state, and the flag that stops its thread.
    final class Entry: Sendable {
        let stopped = Atomic<Bool>(false)
        let status = Locked(DatabaseStatus.ChangeFeed(state: .starting, mechanism: nil, lastPosition: nil))

        var isStopped: Bool { stopped.load(ordering: .relaxed) }
        func stop() { stopped.store(true, ordering: .relaxed) }

        /// Notes what the feed is doing.
        func note(_ state: DatabaseStatus.ChangeFeed.State, of feed: (any ChangeFeed)? = nil) {
            let (mechanism, position) = (feed?.mechanism, feed?.position)
            status.withLock { status in
                status.state = state
                if let mechanism { status.mechanism = mechanism }
                if let position { status.lastPosition = position }
            }
        }
    }

    private let state = Locked(State())

    private struct State {
        var entries: [Int: Entry] = [:]
        var next = 0
        var isShutDown = false
    }

    /// A new feed's entry, until ``remove(_:)``.
    ///
    /// - Throws: ``RelateError/Kind-swift.struct/shuttingDown`` once ``stopAll()`` ran.
    func register() throws -> (id: Int, entry: Entry) {
        try state.withLock { state in
            guard !state.isShutDown else { throw UnitsInFlight.refused }
            state.next += 1
            let entry = Entry()
            state.entries[state.next] = entry
            return (state.next, entry)
        }
    }

    /// Forgets feed `id`: its thread ended and its connections are closed.
    func remove(_ id: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Stops every feed (each ends its stream without an error) and refuses new ones.
    func stopAll() {
        let entries = state.withLock { state in
            state.isShutDown = true
            return Array(state.entries.values)
        }
        for entry in entries { entry.stop() }
    }

    /// The feeds' states, oldest first.
    var statuses: [DatabaseStatus.ChangeFeed] {
        state.withLock { state in state.entries.sorted { $0.key < $1.key }.map { $0.value.status.withLock { $0 } } }
    }
}
