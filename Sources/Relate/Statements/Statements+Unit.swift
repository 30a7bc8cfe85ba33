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

    /// The settings statement a live round's read runs after as `principal`: its role and
    /// settings in a read-only transaction (``settings(of:readOnly:)``); `nil` without a
    /// principal, whose read is a bare `SELECT`.
    static func readOnlySettings(as principal: Principal?) -> PostgresStatement? {
        guard let principal else { return nil }
        return settings(of: UnitOfWork(.read, as: principal, replicas: .primaryOnly), readOnly: true)
    }

    /// What a principal's ``settings(of:readOnly:)`` set: a role or none, and the settings'
    /// names. Principals of one shape may share a transaction
    /// (``sharedReadOnly(_:)``): each one's settings replace all that the one before set.
    struct SettingsShape: Hashable {
        var setsRole: Bool
        /// By their bytes: a name written with a composed `é` and one with a decomposed `é`
        /// are two settings to the server, and the second principal would not have set
        /// the first one's again.
        var names: ExactTexts

        init(_ principal: Principal?) {
            setsRole = principal?.role != nil
            names = ExactTexts(principal?.settings.keys.sorted() ?? [])
        }
    }

    /// Read-only statements of several principals of one ``SettingsShape`` as one group of
    /// a round (``Connection/pipeline(groups:)``): each principal's statements together,
    /// after its ``readOnlySettings(as:)`` once. In a pipeline, the statements before a sync are one
    /// transaction (PostgreSQL's implicit transaction, committed at the sync, or rolled back
    /// when one of them failed): no `BEGIN` or `COMMIT`, and every role and setting made
    /// (all local to the transaction) ends at the sync. A live round's reads and decisions
    /// under a hundred tenants were each a transaction of their own, ended by a sync the
    /// server answered with a send of its own — a fifth of its work a round
    /// (Benchmarks/README.md, "Decisions of a round in one transaction"). The statements of
    /// one principal go together, so that it makes its settings once: a row moved between
    /// two of a tenant's answers read both, each after the same settings statement.
    ///
    /// Nothing of one principal reaches the next: every name the one before set, and the
    /// role, is set again before the next statement; a statement runs only after its own
    /// principal's settings succeeded (a failure aborts the rest of the group, whose
    /// statements the server skips to the sync). A policy that calls `set_config` itself is
    /// the exception: what it set lasts until the transaction ends.
    ///
    /// - Returns: The group's statements, and where each member's own statement is among
    ///   them (by member, in the order of `members`).
    static func sharedReadOnly(
        _ members: [(principal: Principal?, settings: PostgresStatement?, statement: PostgresStatement)]
    ) -> (statements: [PostgresStatement], positions: [Int]) {
        // Each principal's members together, in the order the principals first came.
        var first: [Principal?: Int] = [:]
        var together: [[Int]] = []
        for (index, member) in members.enumerated() {
            if let slot = first[member.principal] {
                together[slot].append(index)
            } else {
                first[member.principal] = together.count
                together.append([index])
            }
        }
        var statements: [PostgresStatement] = []
        var positions = Array(repeating: 0, count: members.count)
        for indexes in together {
            if let settings = members[indexes[0]].settings { statements.append(settings) }
            for index in indexes {
                positions[index] = statements.count
                statements.append(members[index].statement)
            }
        }
        return (statements, positions)
    }
}
