/// The live queries' change feed (``Database/changeMailbox(using:)``): what the feed's
/// thread read, taken all at once.
///
/// An `AsyncThrowingStream` hands its consumer one transaction a wait. The hub that reads
/// the live groups again could not read in its own loop, then: every transaction that
/// arrived during a round would have started a round of its own. So it started a task for
/// each round, which woke a thread and then switched onto the hub, an actor then (Benchmarks/
/// README.md, "The hub reads in the feed's task"). Taking every transaction that arrived
/// meanwhile, the hub's loop reads in place, once for all of them.
final class ChangeMailbox: Sendable {
    private struct State {
        var waiting: [CommittedChanges] = []
        /// How the feed ended: without an error (stopped), or with one.
        var end: Result<Void, any Error>?
        var taker: CheckedContinuation<[CommittedChanges]?, any Error>?
        var isCancelled = false
    }

    private let state = Locked(State())
    private let stopFeed: @Sendable () -> Void

    /// A mailbox whose taker's cancellation calls `stopFeed`.
    init(stopFeed: @escaping @Sendable () -> Void) {
        self.stopFeed = stopFeed
    }

    /// Hands `changes` over (from the feed's thread); dropped once the feed ended or the
    /// taker was cancelled.
    func post(_ changes: CommittedChanges) {
        let taker = state.withLock { state -> CheckedContinuation<[CommittedChanges]?, any Error>? in
            guard state.end == nil, !state.isCancelled else { return nil }
            guard let taker = state.taker else {
                state.waiting.append(changes)
                return nil
            }
            state.taker = nil
            return taker
        }
        taker?.resume(returning: [changes])
    }

    /// The feed ended: with `error`, or without one (it was stopped).
    func finish(_ error: (any Error)?) {
        let taker = state.withLock { state -> CheckedContinuation<[CommittedChanges]?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = error.map { .failure($0) } ?? .success(())
            defer { state.taker = nil }
            return state.taker
        }
        guard let taker else { return }
        if let error { taker.resume(throwing: error) } else { taker.resume(returning: nil) }
    }

    /// Every transaction posted since the last call, in order, waiting for one when there
    /// is none; `nil` once the feed ended without an error and everything was taken.
    ///
    /// - Throws: The feed's error once everything before it was taken, or a
    ///   `CancellationError` when the calling task is cancelled (which stops the feed).
    func next() async throws -> [CommittedChanges]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { taker in
                let answer = state.withLock { state -> Result<[CommittedChanges]?, any Error>? in
                    if !state.waiting.isEmpty {
                        defer { state.waiting = [] }
                        return .success(state.waiting)
                    }
                    if state.isCancelled { return .failure(CancellationError()) }
                    if let end = state.end { return end.map { nil } }
                    state.taker = taker
                    return nil
                }
                if let answer { taker.resume(with: answer) }
            }
        } onCancel: {
            let taker = state.withLock { state -> CheckedContinuation<[CommittedChanges]?, any Error>? in
                state.isCancelled = true
                defer { state.taker = nil }
                return state.taker
            }
            taker?.resume(throwing: CancellationError())
            stopFeed()
        }
    }
}
