import RelatePostgres

extension Statements {
    /// The statements that open a unit's transaction, sent in one pipeline: `BEGIN` (`BEGIN
    /// READ ONLY` for a read), then for a principal one `SELECT set_config('role', $1, true),
    /// set_config($2, $3, true), …`: the role, then each setting in the order of their names.
    /// One statement, however many settings, because each costs the server a statement's
    /// work and a live re-read pays it for every group (Benchmarks/README.md). Every name and
    /// value is bound; `true` makes each last as long as the transaction.
    static func opening(of unit: UnitOfWork, learnsTransactionID: Bool, learnsCommitPosition: Bool) -> TransactionOptions {
        var opening = [PostgresStatement(unit.access == .read ? "BEGIN READ ONLY" : "BEGIN")]
        if let principal = unit.principal {
            var calls: [String] = []
            var parameters: [(any PostgresEncodable)?] = []
            if let role = principal.role {
                parameters.append(role)
                calls.append("set_config('role', $\(parameters.count), true)")
            }
            for (name, value) in principal.sortedSettings {
                parameters += [name, value]
                calls.append("set_config($\(parameters.count - 1), $\(parameters.count), true)")
            }
            if !calls.isEmpty { opening.append(PostgresStatement("SELECT " + calls.joined(separator: ", "), parameters)) }
        }
        return TransactionOptions(opening: opening, learnsTransactionID: learnsTransactionID, learnsCommitPosition: learnsCommitPosition)
    }
}

extension Statements {
    /// `statement` run as `unit` among many in one round trip (``Connection/pipeline(groups:)``):
    /// for a unit that is a transaction, its opening statements and `statement` in one
    /// group, then `COMMIT` in a group of its own, which ends the transaction whether the
    /// first group ran or failed (a failed one is rolled back), so that neither a failure
    /// nor the principal's role and settings reach the next unit; `statement` alone otherwise.
    static func pipelined(_ statement: PostgresStatement, as unit: UnitOfWork) -> [[PostgresStatement]] {
        guard unit.isTransaction else { return [[statement]] }
        let begin = opening(of: unit, learnsTransactionID: false, learnsCommitPosition: false).opening
        return [begin + [statement], [PostgresStatement("COMMIT")]]
    }
}
