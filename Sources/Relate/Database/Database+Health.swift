import RelatePostgres

extension Database {
    /// Sends `SELECT 1` on a pooled connection (one round trip, as a unit of work) and
    /// answers how long the round trip took: a liveness or readiness probe that the server
    /// answers. Checking a connection out is not part of the time.
    ///
    /// ```swift
    /// let roundTrip = try await database.ping()      // 180µs on a local server
    /// ```
    ///
    /// - Returns: The time from sending the statement to its answer.
    /// - Throws: A ``RelateError`` when no connection can be had or the server does not
    ///   answer; of kind ``RelateError/Kind-swift.struct/shuttingDown`` during a shutdown
    ///   (``run()``), so that a readiness probe fails then.
    public func ping() async throws -> Duration {
        try await unit("relate.ping") {
            try await withConnection { connection, _ in
                let started = ContinuousClock.now
                try connection.query("SELECT 1")
                return ContinuousClock.now - started
            }
        }
    }

    /// The pools, replicas and change feeds as they are now, read without a statement (see
    /// ``DatabaseStatus``).
    public var status: DatabaseStatus {
        let lastWrite = replicaSet?.lastWrite
        let now = ContinuousClock.now
        let replicas = (replicaSet?.replicas ?? []).map { replica in
            let state = replica.state.withLock { $0 }
            let lag = state.replayed.flatMap { replayed in
                lastWrite.map { $0 > replayed ? $0.rawValue - replayed.rawValue : 0 }
            }
            return DatabaseStatus.Replica(
                index: replica.index, pool: replica.pool.status(name: "replica\(replica.index)"), replayed: state.replayed,
                lagBytes: lag, isSkipped: state.downUntil.map { now < $0 } ?? false,
                isLagging: state.laggingUntil.map { now < $0 } ?? false)
        }
        return DatabaseStatus(
            primary: pool.status(name: "primary"), replicas: replicas, changeFeeds: changeFeeds.statuses,
            unitsInFlight: units.count, isShuttingDown: units.isShuttingDown)
    }
}
