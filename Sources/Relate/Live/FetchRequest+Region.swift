import RelatePostgres

/// The entities a request's answer depends on (its region): its own, every entity its
/// condition and sort order reach through to-one joins, and for a test through a to-many
/// (`any`, `all`, `none`) the members' entity and the helper table it goes through; for a
/// view among them, the entities it reads. A change to rows outside the region cannot
/// change the answer.
extension FetchRequest {
    func region(in layout: ModelLayout) throws(RelateError) -> Set<Int> {
        let root = try layout.entityIndex(named: entity)
        var region: Set<Int> = [root]
        if let condition { try Self.collect(condition.node, from: root, in: layout, into: &region) }
        for ordering in orderBy { try Self.collect(ordering.keyPath, from: root, in: layout, into: &region) }
        // A view's rows change when the rows it reads do: no change is ever the view's own.
        for entity in region { region.formUnion(layout.viewBases[entity] ?? []) }
        return region
    }

    private static func collect(_ node: Condition.Node, from entity: Int, in layout: ModelLayout, into region: inout Set<Int>) throws(RelateError) {
        switch node {
        case .constant:
            break
        case .and(let nodes), .or(let nodes):
            for node in nodes { try collect(node, from: entity, in: layout, into: &region) }
        case .not(let node):
            try collect(node, from: entity, in: layout, into: &region)
        case .comparison(let keyPath, _, _), .isIn(let keyPath, _), .pattern(let keyPath, _, _, _), .json(let keyPath, _):
            try collect(keyPath, from: entity, in: layout, into: &region)
        case .quantified(let keyPath, _, let inner):
            guard let end = try collect(keyPath, from: entity, in: layout, into: &region) else { return }
            if let inner { try collect(inner, from: end, in: layout, into: &region) }
        }
    }

    /// Adds what `keyPath` reaches; answers the entity a relationship at its end leads to.
    @discardableResult
    private static func collect(_ keyPath: String, from entity: Int, in layout: ModelLayout, into region: inout Set<Int>) throws(RelateError) -> Int? {
        var end: Int?
        for step in try layout.steps(of: keyPath, from: entity) {
            region.insert(step.entity)
            end = nil
            if case .relationship(let owner, let index) = step {
                let here = layout.entities[owner]
                region.insert(here.targets[index])
                if let helper = here.helpers[index] { region.insert(helper) }
                end = here.targets[index]
            }
        }
        return end
    }
}

/// Deciding from the changed rows alone whether a commit changed an answer.
extension FetchRequest {
    /// Whether a commit's changed rows alone say if this answer changed: the condition and
    /// the order read the entity's own columns only (its region is the entity), no offset
    /// can move the window, and the key is one column whose text form the feed sends as
    /// the answer's rows hold it (an integer, a string or a UUID). Then the answer changed
    /// only if a changed row is in it, or meets the condition now; otherwise it is read
    /// again whenever its region changes.
    func decidesFromChangedRows(in layout: ModelLayout) throws(RelateError) -> Bool {
        let root = try layout.entityIndex(named: entity)
        let entity = layout.entities[root]
        guard (offset ?? 0) == 0, try region(in: layout) == [root], entity.primaryKey.count == 1 else { return false }
        switch entity.types[entity.primaryKey[0]].mapping {
        case .integer, .string, .uuid: return true
        default: return false
        }
    }

    /// One statement that tells which of `requests`' conditions a row of `entity` with one
    /// of `keys` meets now: a row for each such request's index. The requests must
    /// ``decidesFromChangedRows(in:)``.
    ///
    /// ```sql
    /// SELECT DISTINCT m.i FROM "item" t0
    ///   CROSS JOIN LATERAL (VALUES (0, t0."id" >= $1 AND t0."id" < $2), (1, …)) m(i, ok)
    /// WHERE t0."id" = ANY($9) AND m.ok
    /// ```
    static func matchStatement(
        _ requests: [FetchRequest], entity: Int, keys: [StoredValue], layout: ModelLayout
    ) throws(RelateError) -> Statement {
        try matchTests(requests, entity: entity, layout: layout).statement(keys: keys)
    }

    /// ``matchStatement(_:entity:keys:layout:)`` without the keys: made once for a set of
    /// groups and kept, since making the conditions' SQL is most of its cost.
    static func matchTests(_ requests: [FetchRequest], entity: Int, layout: ModelLayout) throws(RelateError) -> MatchTests {
        var builder = RequestSQL(layout: layout)
        var scope = RequestSQL.Scope(entity: entity, alias: builder.newAlias())
        var tests: [String] = []
        for (index, request) in requests.enumerated() {
            let condition = try request.condition.map { condition throws(RelateError) in try builder.sql(condition.node, in: &scope) }
            tests.append("(\(index), \(condition ?? "TRUE"))")
        }
        let table = layout.entities[entity]
        let key = table.primaryKey[0]
        let head = builder.statement(
            "SELECT DISTINCT m.i FROM \(builder.from(scope)) CROSS JOIN LATERAL (VALUES \(tests.joined(separator: ", "))) m(i, ok) WHERE ")
        return MatchTests(
            head: head.sql, parameters: head.parameters, keyColumn: "\(scope.alias).\(table.columns[key])", keyType: table.types[key],
            count: requests.count)
    }
}

/// The tests of a set of live groups' conditions, without the changed rows' keys
/// (``FetchRequest/matchTests(_:entity:layout:)``): each round binds the keys alone.
///
/// `@unchecked Sendable`: `parameters` are the values the conditions bound, values of the
/// library's own encodable types, never mutated; `PostgresEncodable` cannot say so.
struct MatchTests: @unchecked Sendable {
    /// The statement up to its `WHERE`, placeholders for the conditions' values.
    let head: String
    let parameters: [(any PostgresEncodable)?]
    /// The primary-key column the keys are of, and its type.
    let keyColumn: String
    let keyType: PostgresType

    /// How many groups' conditions it tests.
    let count: Int

    /// The statement for the rows whose keys are `keys`.
    func statement(keys: [StoredValue]) -> Statement {
        var sql = SQLBuilder(head, parameters: parameters)
        let found = sql.keyCondition(keyColumn, type: keyType, keys)
        sql += "\(found) AND m.ok"
        return sql.statement
    }

    /// From this many tests up, a round runs them on a generic plan.
    static let genericPlanFrom = 16

    /// ``statement(keys:)`` run as `principal` (`nil`: the pool's own role) among a round's
    /// decisions (``Connection/pipeline(groups:)``). The same tests come back round after
    /// round with other keys: the statement is prepared once a connection, and from
    /// ``genericPlanFrom`` tests up planned once too, in a transaction that asks for a
    /// generic plan (`plan_cache_mode`, a setting of the transaction's, as a principal's are):
    /// planning 500 tests' `VALUES` took the server 2–4 ms a round, their generic plan 0.3 ms
    /// (Benchmarks/README.md, "Live queries under row-level security at scale").
    func pipelined(keys: [StoredValue], as principal: Principal?) -> [[PostgresStatement]] {
        var statement = statement(keys: keys).postgres
        statement.prepares = true
        var principal = principal
        if count >= Self.genericPlanFrom {
            principal = Principal(role: principal?.role, settings: (principal?.settings ?? [:]).merging(["plan_cache_mode": "force_generic_plan"]) { $1 })
        }
        return Statements.pipelined(statement, as: UnitOfWork(.read, as: principal, replicas: .primaryOnly))
    }
}
