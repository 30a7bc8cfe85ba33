import RelatePostgres

extension Statements {
    /// The statements that open a unit's transaction, sent in one pipeline: `BEGIN` (`BEGIN
    /// READ ONLY` for a read), then for a principal its ``settings(of:readOnly:)``.
    static func opening(of unit: UnitOfWork, learnsTransactionID: Bool, learnsCommitPosition: Bool) -> TransactionOptions {
        var opening = [PostgresStatement(unit.access == .read ? "BEGIN READ ONLY" : "BEGIN")]
        if let settings = settings(of: unit, readOnly: false) { opening.append(settings) }
        return TransactionOptions(opening: opening, learnsTransactionID: learnsTransactionID, learnsCommitPosition: learnsCommitPosition)
    }

    /// One `SELECT set_config('role', $1, true), set_config($2, $3, true), …`: the
    /// principal's role, then each setting in the order of their names; first, when
    /// `readOnly`, `set_config('transaction_read_only', 'on', true)` (what `BEGIN READ ONLY`
    /// does, for a transaction that has no `BEGIN`). One statement, however many settings,
    /// because each costs the server a statement's work and a live re-read pays it for
    /// every group (Benchmarks/README.md). Every name and value is bound; `true` makes each
    /// last as long as the transaction. `nil` when there is nothing to set.
    ///
    /// Prepared in a live round (``PostgresStatement/prepares``): its text depends only on
    /// how many settings there are, and a round sends it once for each principal — a
    /// hundred tenants, a hundred parses and plans of the same text.
    static func settings(of unit: UnitOfWork, readOnly: Bool) -> PostgresStatement? {
        var calls: [String] = readOnly ? ["set_config('transaction_read_only', 'on', true)"] : []
        var parameters: [(any PostgresEncodable)?] = []
        if let principal = unit.principal {
            if let role = principal.role {
                parameters.append(role)
                calls.append("set_config('role', $\(parameters.count), true)")
            }
            for (name, value) in principal.sortedSettings {
                parameters += [name, value]
                calls.append("set_config($\(parameters.count - 1), $\(parameters.count), true)")
            }
        }
        guard !calls.isEmpty else { return nil }
        var statement = PostgresStatement("SELECT " + calls.joined(separator: ", "), parameters)
        statement.prepares = true
        return statement
    }

    /// `statement` run as `unit` among many in one round trip (``Connection/pipeline(groups:)``),
    /// as one group. For a unit that is a transaction, the group is its transaction: in a
    /// pipeline, the statements before a sync are one transaction (PostgreSQL's implicit
    /// transaction, committed at the sync, or rolled back when one of them failed), so the
    /// unit's ``settings(of:readOnly:)`` and `statement` need no `BEGIN` or `COMMIT`; the
    /// principal's role and settings end at the sync, and neither they nor a failure reach
    /// the next group. Two statements a unit where `BEGIN`, the settings, `statement` and
    /// `COMMIT` were four: a live round sends one unit per principal and group.
    static func pipelined(_ statement: PostgresStatement, as unit: UnitOfWork) -> [[PostgresStatement]] {
        guard unit.isTransaction, let settings = settings(of: unit, readOnly: unit.access == .read) else { return [[statement]] }
        return [[settings, statement]]
    }
}
