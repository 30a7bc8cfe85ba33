import RelatePostgres

/// What makes live queries one group, read once per change for all its observers: the
/// same statement, the same bound values, the same principal (role and settings, equal
/// whatever order the settings were given in). A value, not a string: two principals
/// never share a group by accident of how they print. Text is compared by its bytes
/// (``Swift/String/hasSameBytes(as:)``): a value the server tells apart is another group.
struct LiveGroupKey: Hashable, Sendable {
    /// The key's parts, in one object: the hub copies its keys in every round (into the
    /// sets of stale and undecided groups, into each round's batches), and a copy of the
    /// three parts retained each of their buffers — `swift_retain` was a fifth of the hub's
    /// time under `scripts/live-scaling` (one principal, 300 commits a second).
    private final class Parts: Sendable {
        let sql: String
        let parameters: [String?]
        let principal: Principal?
        /// The hash of all three, made once: hashing the SQL text each time was 5 % of the
        /// hub's time.
        let hash: Int

        init(sql: String, parameters: [String?], principal: Principal?) {
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
    /// The bound values, each as its type and its text (`Int:1` and `String:1` differ);
    /// `nil` for NULL.
    var parameters: [String?] { parts.parameters }
    /// Who the group's reads run as; `nil`: the pool's role.
    var principal: Principal? { parts.principal }

    init(_ statement: Statement, principal: Principal?) {
        parts = Parts(
            sql: statement.sql, parameters: statement.parameters.map { value in value.map { "\(type(of: $0)):\($0)" } },
            principal: principal)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(parts.hash)
    }

    static func == (left: LiveGroupKey, right: LiveGroupKey) -> Bool {
        left.parts === right.parts
            || (left.parts.hash == right.parts.hash && left.sql.hasSameBytes(as: right.sql)
                && left.parameters.count == right.parameters.count
                && zip(left.parameters, right.parameters).allSatisfy { $0.hasSameBytes(as: $1) } && left.principal == right.principal)
    }
}
