import Foundation
import RelatePostgres

/// Roles a test makes for itself (roles are the cluster's, not a database's): named with a
/// prefix of its own, dropped when the test ends. The throwaway server's user is a superuser.
struct PolicyRoles {
    let prefix = "r" + UUID().uuidString.prefix(8).lowercased()
    /// The password of the login roles made here.
    let password = "pw" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")

    /// The role called `name` in this test.
    func name(_ name: String) -> String { "\(prefix)_\(name)" }

    /// Runs `body` with the roles, then drops them (once the test's database is gone, or
    /// after `DROP OWNED` where they own something).
    static func with<Result>(_ body: (PolicyRoles) async throws -> Result) async throws -> Result {
        let roles = PolicyRoles()
        defer { roles.dropAll() }
        return try await body(roles)
    }

    /// Drops every role of this test, wherever it is left.
    func dropAll() {
        guard let admin = try? TestDatabase.connect(),
            let names = try? admin.query("SELECT rolname FROM pg_roles WHERE rolname LIKE $1", [prefix + "\\_%"])
        else { return }
        for row in names {
            guard let role = try? row.decode(String.self, at: 0), let quoted = try? admin.quoteIdentifier(role) else { continue }
            _ = try? admin.execute("DROP ROLE IF EXISTS \(quoted)")
        }
    }

    /// `url` with the login role `role` (made with ``password``) as its user.
    func url(_ url: String, as role: String) -> String {
        guard var components = URLComponents(string: url) else { return url + " user=\(role) password=\(password)" }
        components.user = role
        components.password = password
        return components.string ?? url
    }
}
