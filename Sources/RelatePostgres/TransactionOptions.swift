/// How ``Connection/transaction(_:_:)`` opens and ends an outermost transaction: the
/// statements that begin it (sent in one pipeline), and what it learns on the way. A nested
/// call (a savepoint) takes its outer transaction's as they are.
///
/// ```swift
/// let options = TransactionOptions(opening: [
///     PostgresStatement("BEGIN READ ONLY"),
///     PostgresStatement("SELECT set_config('role', $1, true)", ["app_user"]),
/// ])
/// try connection.transaction(options) { try connection.query("SELECT current_user") }
/// ```
public struct TransactionOptions {
    /// The statements that begin the transaction, `BEGIN` first: sent together in one
    /// pipeline (one round trip), so a setting made there (`set_config(…, true)`) is in
    /// place before the body's first statement. When one fails, the transaction is rolled
    /// back and the body never runs.
    public var opening: [PostgresStatement]
    /// Whether statements sent in the transaction learn its id (``Connection/transactionID``):
    /// until the first statement that writes, each `query` and `pipeline` carries
    /// `SELECT txid_current_if_assigned()` in the same pipeline, so no round trip is added.
    /// Then a `COMMIT` whose reply is lost leaves ``Connection/unconfirmedCommit`` naming it.
    public var learnsTransactionID: Bool
    /// Whether `COMMIT` goes with `SELECT pg_current_wal_insert_lsn()` in one pipeline, to
    /// learn where the commit ended in the log (``Connection/lastCommitPosition``) with no
    /// round trip more.
    public var learnsCommitPosition: Bool

    /// Options for an outermost transaction.
    ///
    /// - Parameters:
    ///   - opening: The statements that begin it, `BEGIN` (or `BEGIN READ ONLY`) first;
    ///     `BEGIN` alone by default.
    ///   - learnsTransactionID: Whether it learns its id with its first write; `false` by default.
    ///   - learnsCommitPosition: Whether its `COMMIT` learns its position in the log; `false` by default.
    public init(
        opening: [PostgresStatement] = [PostgresStatement("BEGIN")], learnsTransactionID: Bool = false,
        learnsCommitPosition: Bool = false
    ) {
        self.opening = opening
        self.learnsTransactionID = learnsTransactionID
        self.learnsCommitPosition = learnsCommitPosition
    }
}
