import RelatePostgres

/// What makes live queries one group, read once per change for all its observers: the
/// same statement, the same bound values, the same principal (role and settings, equal
/// whatever order the settings were given in). A value, not a string: two principals
/// never share a group by accident of how they print.
struct LiveGroupKey: Hashable, Sendable {
    /// The request's `SELECT`.
    let sql: String
    /// The bound values, each as its type and its text (`Int:1` and `String:1` differ);
    /// `nil` for NULL.
    let parameters: [String?]
    /// Who the group's reads run as; `nil`: the pool's role.
    let principal: Principal?
    /// The hash of all three, made once: the hub hashes its keys in every round (the groups
    /// by key, the sets of stale and undecided ones), and hashing the SQL text each time
    /// was 5 % of its time under `scripts/live-scaling`.
    private let hash: Int

    init(_ statement: Statement, principal: Principal?) {
        sql = statement.sql
        parameters = statement.parameters.map { value in value.map { "\(type(of: $0)):\($0)" } }
        self.principal = principal
        var hasher = Hasher()
        hasher.combine(sql)
        hasher.combine(parameters)
        hasher.combine(principal)
        hash = hasher.finalize()
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    static func == (left: LiveGroupKey, right: LiveGroupKey) -> Bool {
        left.hash == right.hash && left.sql == right.sql && left.parameters == right.parameters && left.principal == right.principal
    }
}
