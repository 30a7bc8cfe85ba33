import RelatePostgres

/// What makes live queries one group, read once per change for all its observers: the
/// same statement, the same bound values, the same principal (role and settings, equal
/// whatever order the settings were given in). A value, not a string: two principals
/// never share a group by accident of how they print. Text is compared by its bytes
/// (``Swift/String/hasSameBytes(as:)``), and the bound values as the server receives them
/// (their types, forms and bytes), not as they print: a `Date` prints to the second and
/// `Data` as its length, so two live queries on two instants of one second, or on two
/// tokens of one length, shared one group, and the one's observers had the other's rows.
struct LiveGroupKey: Hashable, Sendable {
    /// The key's parts, in one object: the hub copies its keys in every round (into the
    /// sets of stale and undecided groups, into each round's batches), and a copy of the
    /// three parts retained each of their buffers — `swift_retain` was a fifth of the hub's
    /// time under `scripts/live-scaling` (one principal, 300 commits a second).
    private final class Parts: Sendable {
        let sql: String
        let parameters: BoundParameters
        let principal: Principal?
        /// The hash of all three, made once: hashing the SQL text each time was 5 % of the
        /// hub's time.
        let hash: Int

        init(sql: String, parameters: BoundParameters, principal: Principal?) {
            self.sql = sql
            self.parameters = parameters
            self.principal = principal
            var hasher = Hasher()
            hasher.combine(sql)
            hasher.combine(parameters)
            hasher.combine(principal)
            hash = hasher.finalize()
        }
    }

    private let parts: Parts

    /// The request's `SELECT`.
    var sql: String { parts.sql }
    /// The bound values as the server receives them.
    var parameters: BoundParameters { parts.parameters }
    /// Who the group's reads run as; `nil`: the pool's role.
    var principal: Principal? { parts.principal }

    /// The key of `statement`'s reads as `principal`.
    ///
    /// - Throws: A ``PostgresError`` for a bound value PostgreSQL cannot take, as the read would.
    init(_ statement: Statement, principal: Principal?) throws(PostgresError) {
        parts = Parts(sql: statement.sql, parameters: try BoundParameters(statement.parameters), principal: principal)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(parts.hash)
    }

    static func == (left: LiveGroupKey, right: LiveGroupKey) -> Bool {
        left.parts === right.parts
            || (left.parts.hash == right.parts.hash && left.sql.hasSameBytes(as: right.sql)
                && left.parameters == right.parameters && left.principal == right.principal)
    }
}
