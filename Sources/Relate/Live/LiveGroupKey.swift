import RelatePostgres

/// What makes live queries one group, read once per change for all its observers: the
/// same statement, the same bound values, the same principal (role and settings, equal
/// whatever order the settings were given in). A value, not a string: two principals
/// never share a group by accident of how they print.
struct LiveGroupKey: Hashable, Sendable {
    /// The request's `SELECT`.
    var sql: String
    /// The bound values, each as its type and its text (`Int:1` and `String:1` differ);
    /// `nil` for NULL.
    var parameters: [String?]
    /// Who the group's reads run as; `nil`: the pool's role.
    var principal: Principal?

    init(_ statement: Statement, principal: Principal?) {
        sql = statement.sql
        parameters = statement.parameters.map { value in value.map { "\(type(of: $0)):\($0)" } }
        self.principal = principal
    }
}
