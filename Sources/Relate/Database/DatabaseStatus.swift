import RelatePostgres

/// A ``Database``'s state at one moment, for a readiness probe or a status page: its pools,
/// its replicas, its change feeds, and whether it is shutting down. Read without a
/// statement (``Database/ping()`` asks the server).
///
/// ```swift
/// let status = database.status
/// let ready = !status.isShuttingDown && status.primary.waiting < status.primary.maxConnections
/// for replica in status.replicas where replica.isSkipped { print("replica \(replica.index) is left out") }
/// ```
public struct DatabaseStatus: Sendable {
    /// One pool's connections.
    public struct Pool: Sendable {
        /// `primary`, or `replica0`, `replica1`, … in the order of ``Configuration/replicas``
        /// (the names the pool metrics carry).
        public var name: String
        /// The most connections the pool keeps open (``Configuration/maxConnections``).
        public var maxConnections: Int
        /// Connections lent to units of work now.
        public var inUse: Int
        /// Open connections no unit has now.
        public var idle: Int
        /// Units of work waiting for a connection (in line, or for one being opened for them).
        public var waiting: Int
        /// Whether the pool was closed (``Database/close()``, or a shutdown).
        public var isClosed: Bool
    }

    /// One replica of ``Configuration/replicas``.
    public struct Replica: Sendable {
        /// Its place in ``Configuration/replicas`` (its URL is left out: it may hold a password).
        public var index: Int
        /// Its pool.
        public var pool: Pool
        /// How far it had replayed the log when a read last asked; `nil` before any read asked.
        public var replayed: LSN?
        /// How many bytes of log it had still to replay, when last asked, to reach the last
        /// commit of this `Database`'s `write` units; `nil` when either is unknown (no read
        /// or no write yet), 0 when it had caught up.
        public var lagBytes: UInt64?
        /// Whether reads leave it out now: it stopped answering (refused or lost a
        /// connection) less than ``Configuration/replicaRetry`` ago.
        public var isSkipped: Bool
        /// Whether reads that must see the last write do not wait on it now: one waited for
        /// it in vain less than ``Configuration/replicaRetry`` ago (it lags). It still serves
        /// reads it is known to have replayed for.
        public var isLagging: Bool
    }

    /// One change feed: a ``Database/changes(using:)`` stream, or the one all of
    /// ``Database/observe(_:)``'s live queries share.
    public struct ChangeFeed: Sendable {
        /// What a feed is doing.
        public enum State: String, Sendable {
            /// Opening its connection and reading which tables it tracks.
            case starting
            /// Connected, delivering what commits.
            case streaming
            /// Lost the server; trying again (what commits meanwhile is reported as a gap).
            case reconnecting
        }

        /// What it is doing now.
        public var state: State
        /// Its mechanism, once it started.
        public var mechanism: ChangeTracking.Mechanism?
        /// How far in the server's log it has read (logical decoding); `nil` for triggers'
        /// notifications, which carry no position, and before the first message.
        public var lastPosition: LSN?
    }

    /// The primary's pool.
    public var primary: Pool
    /// The replicas, in the order of ``Configuration/replicas``.
    public var replicas: [Replica]
    /// The change feeds running now.
    public var changeFeeds: [ChangeFeed]
    /// Units of work under way (running, or waiting for a connection).
    public var unitsInFlight: Int
    /// Whether a shutdown began (``Database/run()``): new units of work are refused.
    public var isShuttingDown: Bool
}
