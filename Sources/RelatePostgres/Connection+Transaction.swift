import CLibPQ

extension Connection {
    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws
    /// (the error is rethrown). A nested call runs in a savepoint, so an inner failure
    /// that the outer body catches undoes only the inner work.
    ///
    /// A transaction begun by other means (`execute("BEGIN")`) counts as the outer one: the
    /// body runs in a savepoint of it, and whoever began it commits or rolls it back.
    ///
    /// ```swift
    /// try connection.transaction {
    ///     try connection.execute("UPDATE account SET balance = balance - 100 WHERE id = $1", [1])
    ///     do {
    ///         try connection.transaction {          // a savepoint
    ///             try connection.execute("INSERT INTO audit (note) VALUES ($1)", ["debit"])
    ///         }
    ///     } catch {
    ///         // only the audit row is undone
    ///     }
    /// }
    /// ```
    ///
    /// `options` say how an outermost transaction begins (`BEGIN READ ONLY`, settings made
    /// in the same pipeline) and what it learns; a nested call ignores them. A lone `BEGIN`
    /// is sent with the transaction's first statement, in its pipeline: a transaction of
    /// one statement costs two round trips, its statement and `COMMIT`, and one that sends
    /// nothing costs none.
    ///
    /// - Parameters:
    ///   - options: How the transaction opens and what it learns; `BEGIN` alone by default.
    ///   - body: The work of the transaction, run on this connection.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, after the rollback; or a ``PostgresError`` when an
    ///   opening statement, `COMMIT` or a savepoint fails (an opening statement that fails
    ///   rolls the transaction back, and `body` never runs). When the connection is lost
    ///   during `COMMIT`, the outcome is unknown and ``unconfirmedCommit`` names the
    ///   transaction (with ``TransactionOptions/learnsTransactionID`` on). A body that ends
    ///   the transaction itself (`COMMIT`, `ROLLBACK`) finds every later call on this
    ///   connection refused, until it returns or throws, with a ``PostgresError`` of kind
    ///   ``PostgresError/Kind-swift.struct/client``, which `transaction` then throws too.
    @discardableResult
    public func transaction<Result>(_ options: TransactionOptions = TransactionOptions(), _ body: () throws -> Result) throws -> Result {
        let depth = transactionDepth == 0 && isInTransaction ? 1 : transactionDepth
        let savepoint = "relate_savepoint_\(depth)"
        if depth == 0 {
            transactionID = nil
            unconfirmedCommit = nil
            if options.opening.count <= 1 {
                // Sent with the first statement. Opening statements beyond `BEGIN` (a
                // principal's role) are sent first, so that the body never runs when one fails.
                deferredOpening = options.opening.first ?? PostgresStatement("BEGIN")
            } else {
                try open(options)
            }
        } else {
            try execute("SAVEPOINT \(savepoint)")
        }
        let outer = transactionDepth
        let outerOptions = transactionOptions
        transactionDepth = depth + 1
        if depth == 0 { transactionOptions = options }
        defer {
            transactionDepth = outer
            transactionOptions = outerOptions
            if depth == 0 { deferredOpening = nil }
        }
        let result: Result
        do {
            result = try body()
        } catch {
            rollBack(depth: depth, savepoint: savepoint)
            if depth == 0 { transactionID = nil }
            throw error
        }
        if depth == 0, deferredOpening != nil {
            // Nothing was sent: nothing to commit.
            lastCommitPosition = nil
            return result
        }
        do {
            if depth == 0, options.learnsCommitPosition {
                try commitLearningPosition()
            } else {
                try execute(depth == 0 ? "COMMIT" : "RELEASE SAVEPOINT \(savepoint)")
            }
        } catch {
            // A failed COMMIT (a deferred constraint) has already ended the transaction;
            // a failed RELEASE leaves the outer one to decide.
            if depth > 0 { rollBack(depth: depth, savepoint: savepoint) }
            if depth == 0 {
                // The reply was lost, not refused: the server may have committed.
                if (error as? PostgresError)?.kind == .connectionClosed { unconfirmedCommit = transactionID }
                transactionID = nil
            }
            throw error
        }
        if depth == 0 { transactionID = nil }
        return result
    }

    /// Sends the statements that begin an outermost transaction, more than `BEGIN`, in one
    /// pipeline. When one fails after `BEGIN` went through, the transaction is rolled back
    /// before the error is thrown.
    private func open(_ options: TransactionOptions) throws {
        do {
            try pipeline(options.opening)
        } catch {
            if isInTransaction { rollBack(depth: 0, savepoint: "") }
            throw error
        }
    }

    /// Whether a transaction is open on this connection: by libpq's account, or begun by
    /// ``transaction(_:_:)`` and its `BEGIN` waiting for the first statement.
    public var isInTransaction: Bool {
        guard let handle else { return false }
        return deferredOpening != nil || PQtransactionStatus(handle) != PQTRANS_IDLE
    }

    private func rollBack(depth: Int, savepoint: String) {
        if depth == 0, deferredOpening != nil {
            // Nothing was sent: nothing to roll back.
            deferredOpening = nil
            return
        }
        // The body ended the transaction itself: nothing is left to roll back.
        guard let handle, PQtransactionStatus(handle) != PQTRANS_IDLE else { return }
        do {
            if depth == 0 {
                try execute("ROLLBACK")
            } else {
                try execute("ROLLBACK TO SAVEPOINT \(savepoint)")
                try execute("RELEASE SAVEPOINT \(savepoint)")
            }
        } catch {
            // The body's error is the one worth reporting; a lost connection shows on the next call.
            logger.warning("rollback failed", metadata: ["relate.error": "\(error)"])
        }
    }
}
