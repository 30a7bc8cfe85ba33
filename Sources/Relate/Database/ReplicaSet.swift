import Foundation
import Logging
import RelatePostgres

/// The replicas of a ``Database``: a pool for each, where each has replayed the log to when
/// last asked, and which stopped answering. `read` units ask it where to run; `write` units
/// tell it where their commits ended.
///
/// Which replica serves a read: one that is known to have replayed the last write unit's
/// commit, spread over those in turn; else the next in turn, which the read waits on (at
/// most `wait`); else, or when none answers, the primary. A replica that kept a read waiting
/// in vain is not waited on for `retry` (it lags, or replays with a delay); one that fails
/// to connect or loses its connection is left out for `retry`, then tried again.
final class ReplicaSet: Sendable {
    /// One replica: its pool, and what the reads learnt of it.
    final class Replica: Sendable {
        /// Its place in ``Configuration/replicas`` (logged: the URL may hold a password).
        let index: Int
        let pool: ConnectionPool
        let state = Locked(State())

        struct State {
            /// How far it had replayed when last asked.
            var replayed: LSN?
            /// Left out until then, after it failed to answer.
            var downUntil: ContinuousClock.Instant?
            /// Not waited on until then, after a read waited for it in vain (it lags, or
            /// replays with a delay); it still serves reads it is known to have replayed for.
            var laggingUntil: ContinuousClock.Instant?
        }

        init(index: Int, pool: ConnectionPool) {
            self.index = index
            self.pool = pool
        }

        /// Whether it has replayed at least `position`, by what it last said.
        func hasReplayed(_ position: LSN) -> Bool {
            state.withLock { ($0.replayed ?? LSN.zero) >= position }
        }

        /// Notes how far it has replayed now.
        func noteReplayed(_ position: LSN) {
            state.withLock { $0.replayed = max($0.replayed ?? position, position) }
        }
    }

    let replicas: [Replica]
    /// How long a read waits for a replica to replay the last write before it reads on the primary.
    let wait: Duration
    /// How long a replica that stopped answering is left out.
    let retry: Duration
    private let logger: Logger
    private let state = Locked(State())

    private struct State {
        /// Where the last write unit's commit ended (the furthest seen).
        var lastWrite: LSN?
        /// Turns so that reads spread over the replicas.
        var turn = 0
    }

    init(replicas: [Replica], wait: Duration, retry: Duration, logger: Logger) {
        self.replicas = replicas
        self.wait = wait
        self.retry = retry
        self.logger = logger
    }

    /// Where the last write unit's commit ended; a read must see at least that.
    var lastWrite: LSN? { state.withLock { $0.lastWrite } }

    /// Notes where a write unit's commit ended.
    func noteCommit(at position: LSN) {
        state.withLock { $0.lastWrite = max($0.lastWrite ?? position, position) }
    }

    /// The replica a read that must see `position` runs on, and whether it may have to wait
    /// for it; `nil` when none answers (the read runs on the primary). `excluding` lists the
    /// replicas this read already tried.
    func choose(for position: LSN?, excluding tried: [Replica] = []) -> (replica: Replica, mayWait: Bool)? {
        let now = ContinuousClock.now
        let turn = state.withLock { state in
            state.turn &+= 1
            return state.turn
        }
        let count = replicas.count
        let inTurn = (0..<count).map { replicas[(turn + $0) % count] }.filter { replica in
            !tried.contains { $0 === replica } && replica.state.withLock { $0.downUntil.map { now >= $0 } ?? true }
        }
        guard let position else { return inTurn.first.map { ($0, false) } }
        if let ready = inTurn.first(where: { $0.hasReplayed(position) }) { return (ready, false) }
        // None is known to be there yet: the next in turn that has not lately kept a read
        // waiting in vain is waited on.
        let waitable = inTurn.first { replica in replica.state.withLock { $0.laggingUntil.map { now >= $0 } ?? true } }
        return waitable.map { ($0, true) }
    }

    /// Waits on `replica` no more for ``retry``: a read waited for it in vain.
    func markLagging(_ replica: Replica) {
        let until = ContinuousClock.now + retry
        replica.state.withLock { $0.laggingUntil = until }
    }

    /// Leaves `replica` out for ``retry``.
    func markDown(_ replica: Replica, because error: any Error) {
        let now = ContinuousClock.now
        let wasUp = replica.state.withLock { state in
            defer { state.downUntil = now + retry }
            return state.downUntil.map { now >= $0 } ?? true
        }
        // Logged once, not by every read that found it down meanwhile.
        guard wasUp else { return }
        logger.warning(
            "a replica stopped answering; reads go elsewhere for a while",
            metadata: ["relate.replica": "\(replica.index)", "relate.retry_after": "\(retry)", "relate.error": "\(error)"])
    }

    /// Whether `error` says the server cannot serve (lost connection, cannot connect,
    /// shutting down, starting up): the read goes elsewhere.
    static func isUnavailable(_ error: any Error) -> Bool {
        let postgres = (error as? RelateError)?.postgresError ?? (error as? PostgresError)
        guard let postgres else { return false }
        if postgres.kind == .connectionClosed || postgres.kind == .connectionFailed { return true }
        guard let state = postgres.sqlState?.rawValue else { return false }
        // 08: connection exceptions; 57P: admin shutdown, crash shutdown, cannot connect now.
        return state.hasPrefix("08") || state.hasPrefix("57P")
    }

    func close(error: RelateError = ConnectionPool.closedError) {
        for replica in replicas { replica.pool.close(error: error) }
    }
}
