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

    /// The protected entities whose rows' visibility to a principal follows from the
    /// columns ``policyColumns`` names alone: no policy reads another table, and each calls
    /// only built-in functions whose answer follows from their arguments (immutable ones),
    /// the principal's role, or a setting (``PolicyRead/followsItsInputs``). A decision
    /// that found a row hidden from a principal holds, for such an entity, until one of
    /// those columns of the row changes or ``fingerprints`` or ``roles`` do
    /// (``ObservationHub``'s `RowSight`): a clock (`now()`, `CURRENT_DATE`) or a role's
    /// membership asked in an expression (`pg_has_role`) rules it out.
    var visibilityFollowsColumns: Set<Int> = []

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
            // Plain tables that inherit from none and that none inherit from: a read of one
            // reads its own rows alone, and the feed names their changes by it.
            var standingAlone = Set<Int>()
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
                    if try row.decode(Bool.self, at: 4) { standingAlone.insert(entity) }
                }
                if let known, known.fingerprints == state.fingerprints {
                    state.policyReads = known.policyReads
                    state.policyColumns = known.policyColumns
                    state.visibilityFollowsColumns = known.visibilityFollowsColumns
                    return
                }
                for row in try context.connection.query(Self.policyReadsSQL, [schemas]) {
                    guard let entity = layout.entityIndex(schema: try row.decode(String.self, at: 0), table: try row.decode(String.self, at: 1)),
                        let read = layout.entityIndex(schema: try row.decode(String.self, at: 2), table: try row.decode(String.self, at: 3))
                    else { continue }
                    state.policyReads[entity, default: []].insert(read)
                }
                // What each protected entity's policies read, together; an entity one of whose
                // policies may read more than its columns is left out (its columns unknown).
                var reads: [Int: PolicyRead] = [:]
                for row in try context.connection.query(Self.policyExpressionsSQL, [schemas]) {
                    guard let entity = layout.entityIndex(schema: try row.decode(String.self, at: 0), table: try row.decode(String.self, at: 1)),
                        state.protected.contains(entity), state.policyColumns[entity] != .unknown
                    else { continue }
                    guard let read = try row.decode(String?.self, at: 2).map(Self.policyRead) ?? PolicyRead() else {
                        state.policyColumns[entity] = .unknown
                        reads[entity] = nil
                        continue
                    }
                    reads[entity, default: PolicyRead()].formUnion(read)
                    let names = Dictionary(zip(try row.decode([Int].self, at: 3), try row.decode([String].self, at: 4))) { first, _ in first }
                    // A generated column the policy reads is none the feeds name as changed
                    // (the triggers compare none, pgoutput sends none): an update of the
                    // columns it is made of must not read as one the policy does not read.
                    guard reads[entity]!.columns.allSatisfy({ names[$0] != nil }) else {
                        state.policyColumns[entity] = .unknown
                        reads[entity] = nil
                        continue
                    }
                    state.policyColumns[entity] = .only(Set(reads[entity]!.columns.compactMap { names[$0] }))
                }
                // A protected entity without a `SELECT` policy shows no row to anyone but
                // those who bypass row-level security: it follows its columns too.
                var following = state.protected.filter { entity in
                    state.policyColumns[entity] != .unknown && state.policyReads[entity] == nil && standingAlone.contains(entity)
                        && reads[entity]?.followsItsInputs != false
                }
                let calls = following.reduce(into: PolicyRead()) { $0.formUnion(reads[$1] ?? PolicyRead()) }
                if !calls.functions.isEmpty || !calls.operators.isEmpty || !calls.inputTypes.isEmpty {
                    let row = try context.connection.query(Self.volatileCallsSQL, [Array(calls.functions), Array(calls.operators), Array(calls.inputTypes)])[0]
                    var volatile = PolicyRead()
                    (volatile.functions, volatile.operators, volatile.inputTypes) = (
                        Set(try row.decode([Int].self, at: 0)), Set(try row.decode([Int].self, at: 1)), Set(try row.decode([Int].self, at: 2))
                    )
                    following = following.filter { reads[$0]?.calls(anyOf: volatile) != true }
                }
                state.visibilityFollowsColumns = following
            }
            return state
        }
    }

    /// What a policy expression reads (``policyRead(_:)``).
    struct PolicyRead {
        /// The column numbers of the policy's table it reads.
        var columns: Set<Int> = []
        /// The built-in functions it calls (by object id), and the operators it names:
        /// whether their answers can change while their arguments do not is the catalog's
        /// to say (`provolatile`).
        var functions: Set<Int> = []
        var operators: Set<Int> = []
        /// The types it casts text to by their input function (`COERCEVIAIO`), which the
        /// node does not name: `'today'::text::date` reads the clock.
        var inputTypes: Set<Int> = []
        /// Whether each of its nodes answers from its inputs alone (a column, a constant, a
        /// call, an operator, a cast, a `CASE`) or names the principal (`current_user`,
        /// which is a `SQLVALUEFUNCTION` of type `name` before PostgreSQL 16, a function
        /// after): no `CURRENT_DATE`, no sequence's next value, no domain's check.
        var followsItsInputs = true

        /// Adds what `other` reads: both expressions of one table's policies.
        mutating func formUnion(_ other: PolicyRead) {
            columns.formUnion(other.columns)
            functions.formUnion(other.functions)
            operators.formUnion(other.operators)
            inputTypes.formUnion(other.inputTypes)
            followsItsInputs = followsItsInputs && other.followsItsInputs
        }

        /// Whether it calls one of `other`'s functions or operators, or casts to one of its types.
        func calls(anyOf other: PolicyRead) -> Bool {
            !functions.isDisjoint(with: other.functions) || !operators.isDisjoint(with: other.operators)
                || !inputTypes.isDisjoint(with: other.inputTypes)
        }
    }

    /// What a policy expression (a `pg_node_tree`) reads of the policy's table; `nil` when
    /// it may read more than its columns: a whole-row reference, a subquery, a function or
    /// operator that is not built in (an object id from 16,384 up, PostgreSQL's first for
    /// objects made after `initdb`), or a tree that does not read.
    static func policyRead(_ expression: String) -> PolicyRead? {
        guard let tree = NodeTree.parse(expression) else { return nil }
        var read = PolicyRead()
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
                    read.columns.insert(number)
                    return true
                default:
                    if name == "SQLVALUEFUNCTION" {
                        // 19: `name`, the type of `current_user` and its kin; a date or a time otherwise.
                        if fields["type"]?.int != 19 { read.followsItsInputs = false }
                    } else if !Self.nodesFollowingInputs.contains(name) {
                        read.followsItsInputs = false
                    }
                    if name == "COERCEVIAIO" {
                        if let type = fields["resulttype"]?.int { read.inputTypes.insert(type) } else { read.followsItsInputs = false }
                    }
                    for (field, value) in fields {
                        if Self.objectFields.contains(field), let id = value.int {
                            if id >= 16_384 { return false }
                            if id > 0, field == "opno" {
                                read.operators.insert(id)
                            } else if id > 0 {
                                read.functions.insert(id)
                            }
                        }
                        if field == "opnos" {
                            let ids = value.items.compactMap(\.int)
                            if ids.contains(where: { $0 >= 16_384 }) { return false }
                            read.operators.formUnion(ids)
                        }
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
        return walk(tree, depth: 0) ? read : nil
    }

    /// The nodes of an expression whose answer follows from their inputs (their functions'
    /// volatility aside, which ``volatileCallsSQL`` asks).
    private static let nodesFollowingInputs: Set<String> = [
        "VAR", "CONST", "FUNCEXPR", "OPEXPR", "DISTINCTEXPR", "NULLIFEXPR", "SCALARARRAYOPEXPR", "BOOLEXPR", "RELABELTYPE",
        "COERCEVIAIO", "ARRAYCOERCEEXPR", "CONVERTROWTYPEEXPR", "COLLATEEXPR", "CASEEXPR", "CASEWHEN", "CASETESTEXPR", "ARRAYEXPR",
        "ROWEXPR", "ROWCOMPAREEXPR", "COALESCEEXPR", "MINMAXEXPR", "NULLTEST", "BOOLEANTEST", "FIELDSELECT",
    ]

    /// Of the functions in `$1`, the operators in `$2` and the types in `$3` (object ids),
    /// those whose function (the operator's, the type's input function) may answer
    /// otherwise while its arguments do not (not immutable), but for the principal's own:
    /// its role, its settings.
    private static let volatileCallsSQL = """
        SELECT array(SELECT p.oid::int8 FROM pg_proc p
                      WHERE p.oid::int8 = ANY($1) AND p.provolatile <> 'i'
                        AND NOT (p.pronamespace = 'pg_catalog'::regnamespace
                                 AND p.proname IN ('current_setting', 'current_user', 'session_user', 'current_role', 'current_schema', 'current_database'))),
               array(SELECT o.oid::int8 FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode
                      WHERE o.oid::int8 = ANY($2) AND p.provolatile <> 'i'),
               array(SELECT t.oid::int8 FROM pg_type t JOIN pg_proc p ON p.oid = t.typinput
                      WHERE t.oid::int8 = ANY($3) AND p.provolatile <> 'i')
        """

    /// The fields of an expression's nodes that name a function or an operator.
    private static let objectFields: Set<String> = ["funcid", "opfuncid", "opno", "hashfuncid", "negfuncid", "aggfnoid", "winfnoid"]

    /// Per `SELECT` (or `ALL`) policy of a protected table of the schemas in `$1`: the
    /// table (schema, name), its `USING` expression as the catalog keeps it, and the
    /// numbers and names of the table's columns that are not generated.
    private static let policyExpressionsSQL = """
        SELECT n.nspname::text, c.relname::text, p.polqual::text,
               array(SELECT a.attnum::int8 FROM pg_attribute a
                      WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum),
               array(SELECT a.attname::text FROM pg_attribute a
                      WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum)
          FROM pg_policy p
          JOIN pg_class c ON c.oid = p.polrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ANY($1) AND c.relrowsecurity AND p.polcmd IN ('r', '*')
        """

    /// Per relation of the schemas in `$1`: schema, name, fingerprint (its row-level
    /// security, owner, privileges, inheritance, policies and the views they read), whether row-level
    /// security is on, whether it is a plain table in no inheritance (a parent's or a
    /// child's, a partition's); then one row with an empty schema whose fingerprint is the
    /// roles'.
    private static let fingerprintSQL = """
        SELECT n.nspname::text, c.relname::text,
               concat_ws('|', c.relrowsecurity, c.relforcerowsecurity, c.relowner, c.relacl::text, c.relhassubclass, c.relispartition,
                   inherited.parents,
                   (SELECT string_agg(a.attname || '=' || a.attacl::text, ',' ORDER BY a.attnum)
                      FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attacl IS NOT NULL),
                   (SELECT string_agg(concat_ws(':', p.polname, p.polcmd, p.polpermissive, p.polroles::text,
                                                pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid)),
                                      ',' ORDER BY p.polname)
                      FROM pg_policy p WHERE p.polrelid = c.oid),
                   -- The views its policies read, and the views under them, as defined now:
                   -- a view redefined to read another table changes what they let through.
                   (WITH RECURSIVE under(oid) AS (
                        SELECT d.refobjid FROM pg_policy p
                          JOIN pg_depend d ON d.classid = 'pg_policy'::regclass AND d.objid = p.oid
                                          AND d.refclassid = 'pg_class'::regclass
                         WHERE p.polrelid = c.oid
                      UNION
                        SELECT d.refobjid FROM under u
                          JOIN pg_rewrite w ON w.ev_class = u.oid
                          JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
                                          AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> u.oid)
                    SELECT string_agg(pg_get_viewdef(v.oid), ',' ORDER BY v.oid)
                      FROM under u JOIN pg_class v ON v.oid = u.oid AND v.relkind = 'v')),
               c.relrowsecurity,
               c.relkind = 'r' AND NOT c.relhassubclass AND NOT c.relispartition AND inherited.parents IS NULL
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          CROSS JOIN LATERAL (SELECT string_agg(i.inhparent::text, ',' ORDER BY i.inhparent) AS parents
                                FROM pg_inherits i WHERE i.inhrelid = c.oid) inherited
         WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
        UNION ALL
        SELECT '', '', concat_ws('|',
                   (SELECT string_agg(m.roleid || '>' || m.member, ',' ORDER BY m.roleid, m.member) FROM pg_auth_members m),
                   (SELECT string_agg(r.oid::text, ',' ORDER BY r.oid) FROM pg_roles r WHERE r.rolbypassrls OR r.rolsuper)),
               false, false
        """

    /// Per policy of a table of the schemas in `$1`, each other relation its expressions
    /// read: the policy's table (schema, name), then the relation read. A view read is
    /// followed to the relations its query reads (its rule's dependencies), in turn: it has
    /// no changes of its own, and a change of a table under it changes what it shows.
    private static let policyReadsSQL = """
        WITH RECURSIVE reads(policy_table, read) AS (
            SELECT p.polrelid, d.refobjid
              FROM pg_policy p
              JOIN pg_class pc ON pc.oid = p.polrelid
              JOIN pg_namespace pn ON pn.oid = pc.relnamespace
              JOIN pg_depend d ON d.classid = 'pg_policy'::regclass AND d.objid = p.oid
                              AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> p.polrelid
             WHERE pn.nspname = ANY($1)
          UNION
            SELECT r.policy_table, d.refobjid
              FROM reads r
              JOIN pg_class v ON v.oid = r.read AND v.relkind = 'v'
              JOIN pg_rewrite w ON w.ev_class = v.oid
              JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
                              AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> v.oid
        )
        SELECT DISTINCT pn.nspname::text, pc.relname::text, dn.nspname::text, dc.relname::text
          FROM reads r
          JOIN pg_class pc ON pc.oid = r.policy_table
          JOIN pg_namespace pn ON pn.oid = pc.relnamespace
          JOIN pg_class dc ON dc.oid = r.read
          JOIN pg_namespace dn ON dn.oid = dc.relnamespace
        """
}
