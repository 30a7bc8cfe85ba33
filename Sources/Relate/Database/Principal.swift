import RelatePostgres

/// Who a unit of work or a live query runs as, for row-level security: a role to take and
/// transaction-local settings, the way PostgREST and Supabase run each request.
///
/// ```swift
/// let tenant = Principal(role: "app_user", settings: ["app.tenant": "42"])
/// let count = try await database.read(as: tenant) { try $0.fetch("document").count }
/// ```
///
/// A unit run as a principal is one transaction, begun in the same pipeline as one
/// `SELECT set_config('role', $1, true), set_config($2, $3, true), …` for the role and each
/// setting (names and values bound, never spliced), so the role and the settings end with it: the
/// connection goes back to the pool as the login role with no setting. Two principals
/// are equal when their roles and settings are (the settings' order does not matter): live
/// queries of equal principals share their reads (see <doc:RowLevelSecurity>).
public struct Principal: Hashable, Sendable {
    /// The role to take (`SET LOCAL ROLE`), which the login role must be a member of;
    /// `nil` for the pool's own.
    public var role: String?
    /// Transaction-local settings by name (`app.tenant`), as policies read them with
    /// `current_setting`. Pass only what policies read: every other difference splits
    /// live queries that could share a read.
    public var settings: [String: String]

    /// A principal.
    ///
    /// - Parameters:
    ///   - role: The role to take; `nil` (the default) for the pool's own.
    ///   - settings: Transaction-local settings by name; none by default.
    public init(role: String? = nil, settings: [String: String] = [:]) {
        self.role = role
        self.settings = settings
    }

    /// Equal when their roles and settings are, byte for byte, as the server tells them
    /// apart: Swift's `==` takes a composed and a decomposed `é` for one, and two tenants
    /// named so would have shared one live query's reads, each seeing the other's rows.
    ///
    /// - Parameters:
    ///   - left: A principal.
    ///   - right: Another principal.
    /// - Returns: Whether they take the same role with the same settings.
    public static func == (left: Principal, right: Principal) -> Bool {
        guard left.role.hasSameBytes(as: right.role), left.settings.count == right.settings.count else { return false }
        return left.settings.allSatisfy { name, value in
            // A dictionary holds one of names that Swift takes for one: the one to compare.
            guard let index = right.settings.index(forKey: name) else { return false }
            return name.hasSameBytes(as: right.settings[index].key) && value.hasSameBytes(as: right.settings[index].value)
        }
    }

    /// The settings in one order, by name: how they are sent, whatever order they were given in.
    var sortedSettings: [(name: String, value: String)] {
        settings.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
    }

    /// Refuses what would make a principal quietly run as another: a role of `none` (which
    /// `set_config` takes as "back to the login role") and a setting named `role` or
    /// `session_authorization`, which would undo the role. Refuses too the settings Relate's
    /// values are sent and read by (``sessionFormats``): under another time zone a `Date`
    /// written to a `timestamp` column would be stored hours off, under another encoding
    /// text would be stored mangled, and both would commit without an error.
    ///
    /// - Throws: ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidRequest``.
    func validate() throws {
        if let role, role.lowercased() == "none" || role.isEmpty {
            throw RelateError(
                kind: .invalidRequest, message: "a principal's role cannot be \"\(role)\": give nil for the pool's own role",
                key: "role")
        }
        for name in settings.keys {
            if ["role", "session_authorization"].contains(name.lowercased()) {
                throw RelateError(
                    kind: .invalidRequest, message: "a principal's settings cannot set \(name): give the role as Principal(role:)", key: name)
            }
            if Self.sessionFormats.contains(name.lowercased()) {
                throw RelateError(
                    kind: .invalidRequest,
                    message: "a principal's settings cannot set \(name): Relate sends and reads values in the session's own (UTF8, UTC, ISO dates)",
                    key: name)
            }
        }
    }

    /// The settings (lowercased: the server's names are not case-sensitive) by which the
    /// server reads what Relate sends and writes what it reads.
    static let sessionFormats: Set<String> = ["client_encoding", "timezone", "datestyle", "intervalstyle"]
}
