import RelatePostgres

/// What row-level security says about the model's tables now, as the live queries need to
/// know it: a fingerprint of each table's policies and privileges (a change of one makes
/// the answers that read the table read again), and the tables each table's policies read
/// (a change of one of those changes what the policies let through).
struct SecurityState: Equatable, Sendable {
    /// Per entity: row-level security on or forced, the owner, the table's and columns'
    /// privileges, and every policy (name, command, roles, expressions).
    var fingerprints: [Int: String] = [:]
    /// Who is a member of which role, and who bypasses row-level security.
    var roles = ""
    /// Per entity: the entities its policies' expressions read (`pg_depend` of
    /// `pg_policy`), followed through those entities' own policies.
    var policyReads: [Int: Set<Int>] = [:]

    /// The entities with row-level security enabled.
    var protected: Set<Int> = []

    /// The entities whose fingerprint differs between `self` and `other`.
    func changed(from other: SecurityState) -> Set<Int> {
        Set(fingerprints.keys).union(other.fingerprints.keys).filter { fingerprints[$0] != other.fingerprints[$0] }
    }

    /// The entities whose changes can change what `region`'s policies let through.
    func policyRegion(of region: Set<Int>) -> Set<Int> {
        var found = Set<Int>()
        var next = Array(region)
        while let entity = next.popLast() {
            for read in policyReads[entity] ?? [] where found.insert(read).inserted { next.append(read) }
        }
        return found
    }
}

extension Database {
    /// Reads ``SecurityState`` from the catalog, on the primary as the pool's role (the
    /// catalog's policies and privileges are readable by every role). One statement, two
    /// when `knownFingerprints` differ from what it finds (the tables policies read are
    /// read again then).
    func securityState(after known: SecurityState?) async throws -> SecurityState {
        try await run(UnitOfWork(.read, replicas: .primaryOnly)) { context in
            let layout = context.layout
            let schemas = Array(Set(layout.model.entities.map(\.schema))).sorted()
            var state = SecurityState()
            try context.read(entity: nil) {
                for row in try context.connection.query(Self.fingerprintSQL, [schemas]) {
                    let schema = try row.decode(String.self, at: 0)
                    let table = try row.decode(String.self, at: 1)
                    if schema.isEmpty {
                        state.roles = try row.decode(String.self, at: 2)
                        continue
                    }
                    guard let entity = layout.entityIndex(schema: schema, table: table) else { continue }
                    state.fingerprints[entity] = try row.decode(String.self, at: 2)
                    if try row.decode(Bool.self, at: 3) { state.protected.insert(entity) }
                }
                if let known, known.fingerprints == state.fingerprints {
                    state.policyReads = known.policyReads
                    return
                }
                for row in try context.connection.query(Self.policyReadsSQL, [schemas]) {
                    guard let entity = layout.entityIndex(schema: try row.decode(String.self, at: 0), table: try row.decode(String.self, at: 1)),
                        let read = layout.entityIndex(schema: try row.decode(String.self, at: 2), table: try row.decode(String.self, at: 3))
                    else { continue }
                    state.policyReads[entity, default: []].insert(read)
                }
            }
            return state
        }
    }

    /// Per relation of the schemas in `$1`: schema, name, fingerprint, whether row-level
    /// security is on; then one row with an empty schema whose fingerprint is the roles'.
    private static let fingerprintSQL = """
        SELECT n.nspname::text, c.relname::text,
               concat_ws('|', c.relrowsecurity, c.relforcerowsecurity, c.relowner, c.relacl::text,
                   (SELECT string_agg(a.attname || '=' || a.attacl::text, ',' ORDER BY a.attnum)
                      FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attacl IS NOT NULL),
                   (SELECT string_agg(concat_ws(':', p.polname, p.polcmd, p.polpermissive, p.polroles::text,
                                                pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid)),
                                      ',' ORDER BY p.polname)
                      FROM pg_policy p WHERE p.polrelid = c.oid)),
               c.relrowsecurity
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
        UNION ALL
        SELECT '', '', concat_ws('|',
                   (SELECT string_agg(m.roleid || '>' || m.member, ',' ORDER BY m.roleid, m.member) FROM pg_auth_members m),
                   (SELECT string_agg(r.oid::text, ',' ORDER BY r.oid) FROM pg_roles r WHERE r.rolbypassrls OR r.rolsuper)),
               false
        """

    /// Per policy of a table of the schemas in `$1`, each other table its expressions read:
    /// the policy's table (schema, name), then the table read.
    private static let policyReadsSQL = """
        SELECT DISTINCT pn.nspname::text, pc.relname::text, dn.nspname::text, dc.relname::text
          FROM pg_policy p
          JOIN pg_class pc ON pc.oid = p.polrelid
          JOIN pg_namespace pn ON pn.oid = pc.relnamespace
          JOIN pg_depend d ON d.classid = 'pg_policy'::regclass AND d.objid = p.oid
                          AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> p.polrelid
          JOIN pg_class dc ON dc.oid = d.refobjid
          JOIN pg_namespace dn ON dn.oid = dc.relnamespace
         WHERE pn.nspname = ANY($1)
        """
}
