import RelatePostgres

/// What row-level security says about the model's tables now, as the live queries need to
/// know it: a fingerprint of each table's policies and privileges (a change of one makes
/// the answers that read the table read again), and the tables each table's policies read
/// (a change of one of those changes what the policies let through).
struct SecurityState: Equatable, Sendable {
    /// Per entity: row-level security on or forced, the owner, the table's and columns'
    /// privileges, and every policy (name, command, roles, expressions). Their bytes, not
    /// `String`s: a policy's literal rewritten from a composed `é` to a decomposed one is a
    /// change to the server, and none to Swift's `==`.
    var fingerprints: [Int: [UInt8]] = [:]
    /// Who is a member of which role, and who bypasses row-level security (bytes, as above).
    var roles: [UInt8] = []
    /// Per entity: the entities its policies' expressions read (`pg_depend` of
    /// `pg_policy`), followed through those entities' own policies.
    var policyReads: [Int: Set<Int>] = [:]

    /// The entities with row-level security enabled.
    var protected: Set<Int> = []

    /// Per protected entity: the columns of its own rows that its `SELECT` policies'
    /// expressions read, when the catalog's expressions tell (``PolicyColumns``). An update
    /// that changed none of them left the row as visible to every principal as it was.
    var policyColumns: [Int: PolicyColumns] = [:]

    /// What a table's policies read of its rows.
    enum PolicyColumns: Equatable, Sendable {
        /// These columns, and nothing else of the row.
        case only(Set<String>)
        /// Cannot be told: the whole row (`f(document)`), a subquery (which may read other
        /// rows of the table), or a function or operator someone defined (whose body may).
        case unknown
    }

    /// The columns of `entity` whose change can change whether a row is in an answer whose
    /// request reads `requestColumns` of it: those and what the entity's policies read;
    /// `nil` when either cannot be told.
    func decidingColumns(_ requestColumns: Set<String>?, of entity: Int) -> Set<String>? {
        guard let requestColumns, protected.contains(entity) else { return requestColumns }
        switch policyColumns[entity] ?? .only([]) {
        case .only(let columns): return requestColumns.union(columns)
        case .unknown: return nil
        }
    }

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
                        state.roles = Array(try row.decode(String.self, at: 2).utf8)
                        continue
                    }
                    guard let entity = layout.entityIndex(schema: schema, table: table) else { continue }
                    state.fingerprints[entity] = Array(try row.decode(String.self, at: 2).utf8)
                    if try row.decode(Bool.self, at: 3) { state.protected.insert(entity) }
                }
                if let known, known.fingerprints == state.fingerprints {
                    state.policyReads = known.policyReads
                    state.policyColumns = known.policyColumns
                    return
                }
                for row in try context.connection.query(Self.policyReadsSQL, [schemas]) {
                    guard let entity = layout.entityIndex(schema: try row.decode(String.self, at: 0), table: try row.decode(String.self, at: 1)),
                        let read = layout.entityIndex(schema: try row.decode(String.self, at: 2), table: try row.decode(String.self, at: 3))
                    else { continue }
                    state.policyReads[entity, default: []].insert(read)
                }
                for row in try context.connection.query(Self.policyExpressionsSQL, [schemas]) {
                    guard let entity = layout.entityIndex(schema: try row.decode(String.self, at: 0), table: try row.decode(String.self, at: 1)),
                        state.protected.contains(entity)
                    else { continue }
                    let read = try row.decode(String?.self, at: 2).map(Self.columnsRead) ?? []
                    let numbers = try row.decode([Int].self, at: 3)
                    let names = try row.decode([String].self, at: 4)
                    guard let read, case .only(let known) = state.policyColumns[entity] ?? .only([]) else {
                        state.policyColumns[entity] = .unknown
                        continue
                    }
                    let columns = read.compactMap { number in numbers.firstIndex(of: number).map { names[$0] } }
                    state.policyColumns[entity] = .only(known.union(columns))
                }
            }
            return state
        }
    }

    /// The column numbers of the policy's table that a policy expression (a `pg_node_tree`)
    /// reads; `nil` when it may read more than its columns: a whole-row reference, a
    /// subquery, a function or operator that is not built in (an object id from 16,384 up,
    /// PostgreSQL's first for objects made after `initdb`), or a tree that does not read.
    static func columnsRead(_ expression: String) -> Set<Int>? {
        guard let tree = NodeTree.parse(expression) else { return nil }
        var columns = Set<Int>()
        func walk(_ node: NodeTree, depth: Int) -> Bool {
            guard depth < NodeTree.depthLimit else { return false }
            switch node {
            case .node(let name, let fields):
                switch name {
                case "SUBLINK", "SUBPLAN", "QUERY", "RANGETBLENTRY":
                    return false
                case "VAR":
                    // The policy's table is the expression's only relation: number 1.
                    guard let number = fields["varattno"]?.int, number > 0, fields["varno"]?.int == 1, fields["varlevelsup"]?.int == 0 else { return false }
                    columns.insert(number)
                    return true
                default:
                    for (field, value) in fields {
                        if Self.objectFields.contains(field), let id = value.int, id >= 16_384 { return false }
                        if field == "opnos", value.items.contains(where: { ($0.int ?? 0) >= 16_384 }) { return false }
                        guard walk(value, depth: depth + 1) else { return false }
                    }
                    return true
                }
            case .list(let items):
                return items.allSatisfy { walk($0, depth: depth + 1) }
            case .token, .null:
                return true
            }
        }
        return walk(tree, depth: 0) ? columns : nil
    }

    /// The fields of an expression's nodes that name a function or an operator.
    private static let objectFields: Set<String> = ["funcid", "opfuncid", "opno", "hashfuncid", "negfuncid", "aggfnoid", "winfnoid"]

    /// Per `SELECT` (or `ALL`) policy of a protected table of the schemas in `$1`: the
    /// table (schema, name), its `USING` expression as the catalog keeps it, and the table's
    /// column numbers and names.
    private static let policyExpressionsSQL = """
        SELECT n.nspname::text, c.relname::text, p.polqual::text,
               array(SELECT a.attnum::int8 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum),
               array(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum)
          FROM pg_policy p
          JOIN pg_class c ON c.oid = p.polrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ANY($1) AND c.relrowsecurity AND p.polcmd IN ('r', '*')
        """

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
