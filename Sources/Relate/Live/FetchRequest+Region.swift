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
    /// the order read the row's own columns only (no relationship: through one to the
    /// entity itself, a changed row would change whether another row meets the condition),
    /// no offset can move the window, and the key is one column whose text form the feed
    /// sends as the answer's rows hold it (an integer, a string or a UUID). Then the answer
    /// changed only if a changed row is in it, or meets the condition now; otherwise it is
    /// read again whenever its region changes.
    func decidesFromChangedRows(in layout: ModelLayout) throws(RelateError) -> Bool {
        let root = try layout.entityIndex(named: entity)
        let entity = layout.entities[root]
        guard (offset ?? 0) == 0, try region(in: layout) == [root], entity.primaryKey.count == 1 else { return false }
        for ordering in orderBy where try !Self.isOwnColumn(ordering.keyPath, of: root, in: layout) { return false }
        if let condition, try !Self.readsOwnColumnsOnly(condition.node, of: root, in: layout) { return false }
        switch entity.types[entity.primaryKey[0]].mapping {
        case .integer, .string, .uuid: return true
        default: return false
        }
    }

    /// The columns of its entity's rows that the condition and the order read (for a
    /// request that ``decidesFromChangedRows(in:)``): an update that changed none of them
    /// left each row in or out of the answer as it was, as far as the request goes. `nil`
    /// when one is generated, which the feeds do not compare.
    func decidingColumns(in layout: ModelLayout) throws(RelateError) -> Set<String>? {
        let root = try layout.entityIndex(named: entity)
        var keyPaths = orderBy.map(\.keyPath)
        if let condition { Self.collectKeyPaths(condition.node, into: &keyPaths) }
        var columns = Set<String>()
        for keyPath in keyPaths {
            for step in try layout.steps(of: keyPath, from: root) {
                guard case .attribute(let owner, let index) = step, owner == root else { return nil }
                let attribute = layout.model.entities[root].attributes[index]
                if attribute.isGenerated { return nil }
                columns.insert(attribute.name)
            }
        }
        return columns
    }

    private static func collectKeyPaths(_ node: Condition.Node, into keyPaths: inout [String]) {
        switch node {
        case .constant:
            break
        case .and(let nodes), .or(let nodes):
            for node in nodes { collectKeyPaths(node, into: &keyPaths) }
        case .not(let node):
            collectKeyPaths(node, into: &keyPaths)
        case .comparison(let keyPath, _, _), .isIn(let keyPath, _), .pattern(let keyPath, _, _, _), .json(let keyPath, _), .quantified(let keyPath, _, _):
            keyPaths.append(keyPath)
        }
    }

    private static func readsOwnColumnsOnly(_ node: Condition.Node, of entity: Int, in layout: ModelLayout) throws(RelateError) -> Bool {
        switch node {
        case .constant:
            return true
        case .and(let nodes), .or(let nodes):
            for node in nodes where try !readsOwnColumnsOnly(node, of: entity, in: layout) { return false }
            return true
        case .not(let node):
            return try readsOwnColumnsOnly(node, of: entity, in: layout)
        case .comparison(let keyPath, _, _), .isIn(let keyPath, _), .pattern(let keyPath, _, _, _), .json(let keyPath, _):
            return try isOwnColumn(keyPath, of: entity, in: layout)
        case .quantified:
            return false
        }
    }

    private static func isOwnColumn(_ keyPath: String, of entity: Int, in layout: ModelLayout) throws(RelateError) -> Bool {
        for step in try layout.steps(of: keyPath, from: entity) {
            if case .relationship = step { return false }
        }
        return true
    }

    /// One statement that tells which of `requests`' conditions a row of `entity` with one
    /// of `keys` meets now: a row for each such request's index. The requests must
    /// ``decidesFromChangedRows(in:)``.
    ///
    /// ```sql
    /// SELECT DISTINCT i FROM (
    ///   SELECT v.i FROM "item" t0 JOIN unnest($1, $2, $3) v(i, p1, p2) ON t0."id" >= v.p1 AND t0."id" < v.p2
    ///   WHERE t0."id" = ANY($5)
    ///   UNION ALL
    ///   SELECT m.i FROM "item" t0 CROSS JOIN LATERAL (VALUES (7, t0."name" = $4), …) m(i, ok)
    ///   WHERE t0."id" = ANY($5) AND m.ok
    /// ) found
    /// ```
    ///
    /// (the first `SELECT` for conditions of one shape, see ``matchTests(_:entity:layout:)``;
    /// the second for the others).
    static func matchStatement(
        _ requests: [FetchRequest], entity: Int, keys: [StoredValue], layout: ModelLayout
    ) throws(RelateError) -> Statement {
        try matchTests(requests, entity: entity, layout: layout).statement(keys: keys)
    }

    /// ``matchStatement(_:entity:keys:layout:)`` without the keys: made once for a set of
    /// groups and kept, since making the conditions' SQL is most of its cost.
    ///
    /// Conditions that differ only in their values (`rank >= 10 AND rank < 20` and `rank >=
    /// 20 AND rank < 30` have one shape) are tested as one: their values go in arrays, a
    /// row of them a request, joined to the changed rows (`JOIN unnest($1, $2, $3) v(i, p1,
    /// p2) ON t0."rank" >= v.p1 AND t0."rank" < v.p2`). The server then evaluates one
    /// condition for each pair of a changed row and a request, and may hash on an equality,
    /// where a `VALUES` list of the conditions evaluates every request's expression for every
    /// row (500 of them on 300 changed rows took 100–160 ms a statement). A shape of one
    /// request, and values that go in no array of one type, stay in the `VALUES` list.
    static func matchTests(_ requests: [FetchRequest], entity: Int, layout: ModelLayout) throws(RelateError) -> MatchTests {
        let table = layout.entities[entity]
        // Each condition alone, its values named as the columns of a row (`v.p1`, …).
        var shapes: [String: [Int]] = [:]
        var shapeOrder: [String] = []
        var rows: [[(any PostgresEncodable)?]] = []
        var comparedTypes: [[PostgresType?]] = []
        var alone: [Int] = []
        for (index, request) in requests.enumerated() {
            var builder = RequestSQL(layout: layout, placeholder: "v.p")
            // `t0`, the builder's first alias: a subquery's alias is never the same.
            var scope = RequestSQL.Scope(entity: entity, alias: builder.newAlias())
            let condition = try request.condition.map { condition throws(RelateError) in try builder.sql(condition.node, in: &scope) } ?? "TRUE"
            rows.append(builder.parameters)
            comparedTypes.append(builder.comparedTypes)
            guard scope.joins.isEmpty, builder.listed.isEmpty else {
                alone.append(index)
                continue
            }
            if shapes[condition] == nil { shapeOrder.append(condition) }
            shapes[condition, default: []].append(index)
        }
        var builder = RequestSQL(layout: layout)
        var parts: [MatchTests.Part] = []
        for shape in shapeOrder {
            let members = shapes[shape]!
            var arrays: [(any PostgresEncodable)?] = [members.map(Int32.init)]
            for column in rows[members[0]].indices where members.count > 1 {
                guard let array = Self.array(members.map { rows[$0][column] }, comparedWith: comparedTypes[members[0]][column]) else { break }
                arrays.append(array)
            }
            guard members.count > 1, arrays.count == rows[members[0]].count + 1 else {
                alone += members
                continue
            }
            let columns = ["i"] + rows[members[0]].indices.map { "p\($0 + 1)" }
            let unnest = "unnest(\(arrays.map { builder.bind($0) }.joined(separator: ", "))) v(\(columns.joined(separator: ", ")))"
            parts.append(MatchTests.Part(head: "v.i FROM \(table.table) t0 JOIN \(unnest) ON \(shape) WHERE ", tail: ""))
        }
        if !alone.isEmpty {
            // Its own alias is `t0` too (the builder's first), which the key condition names.
            var scope = RequestSQL.Scope(entity: entity, alias: builder.newAlias())
            var tests: [String] = []
            for index in alone.sorted() {
                let condition = try requests[index].condition.map { condition throws(RelateError) in try builder.sql(condition.node, in: &scope) }
                tests.append("(\(index), \(condition ?? "TRUE"))")
            }
            parts.append(MatchTests.Part(
                head: "m.i FROM \(builder.from(scope)) CROSS JOIN LATERAL (VALUES \(tests.joined(separator: ", "))) m(i, ok) WHERE ",
                tail: " AND m.ok"))
        }
        let key = table.primaryKey[0]
        return MatchTests(
            parts: parts, parameters: builder.parameters, table: table.table, keyColumn: "\(table.columns[key])", keyType: table.types[key],
            count: requests.count, listed: alone.count)
    }

    /// The values one placeholder takes in conditions of one shape, one a request, as one
    /// array parameter: when all are of one type that goes in arrays; `nil` otherwise.
    /// Strings compared with a column go untyped, as the column's type; in a `text[]` they
    /// are `text`, which compares as the column's type would only for `text` and `varchar`
    /// (not a `uuid`, an enum, or `character(n)`, whose padding `text` keeps).
    private static func array(_ values: [(any PostgresEncodable)?], comparedWith column: PostgresType?) -> (any PostgresEncodable)? {
        guard let first = values.first, let first else { return nil }
        if first is String, let column, column != .text, column != .varchar { return nil }
        func collect<Value: PostgresEncodable>(_: Value) -> (any PostgresEncodable)? {
            var typed: [Value] = []
            typed.reserveCapacity(values.count)
            for value in values {
                guard let value = value as? Value else { return nil }
                typed.append(value)
            }
            return typed as? any PostgresEncodable
        }
        return collect(first)
    }
}

/// The tests of a set of live groups' conditions, without the changed rows' keys
/// (``FetchRequest/matchTests(_:entity:layout:)``): each round binds the keys alone.
///
/// `@unchecked Sendable`: `parameters` are the values the conditions bound, values of the
/// library's own encodable types, never mutated; `PostgresEncodable` cannot say so.
struct MatchTests: @unchecked Sendable {
    /// One `SELECT` of the statement, without its `SELECT`: up to its `WHERE`, and what
    /// follows the changed rows' key condition.
    struct Part {
        let head: String
        let tail: String
    }

    /// The conditions of one shape each, then those tested one by one (`VALUES`).
    let parts: [Part]
    let parameters: [(any PostgresEncodable)?]
    /// The primary-key column the keys are of (of the changed rows, `t0` in every part), and its type.
    let keyColumn: String
    let keyType: PostgresType

    /// How many groups' conditions it tests.
    let count: Int
    /// How many of them are tested one by one, in the `VALUES` list.
    let listed: Int

    /// ``statement(keys:)``'s texts, made once: for one key (`= $n`, without `DISTINCT`),
    /// and for a list of them (`= ANY($n)`). A live round under a hundred principals asks
    /// for one of them a hundred times.
    private let oneKeySQL: String
    private let keyListSQL: String
    /// The same, also telling which of the keys' rows the principal sees: each such row
    /// answers `-n`, `n` its key's position in the list (`-1` for one key).
    private let oneKeySightSQL: String
    private let keyListSightSQL: String
    /// The table's name (``sweep(most:table:values:)`` binds it, for the catalog's estimate).
    private let table: String

    /// The changed rows' keys, as ``statement(keys:sight:)`` binds them (``keys(_:)``).
    struct Keys {
        let count: Int
        /// The key, or the list of them (encoded once): a deciding entity's keys are
        /// integers, strings or UUIDs (``FetchRequest/decidesFromChangedRows(in:)``), whose
        /// lists go as arrays of their type, which `array_position` takes.
        let parameter: (any PostgresEncodable)?
    }

    init(parts: [Part], parameters: [(any PostgresEncodable)?], table: String, keyColumn: String, keyType: PostgresType, count: Int, listed: Int) {
        self.parts = parts
        // Bound every round, for every principal: encoded once.
        self.parameters = parameters.map(EncodedParameter.once)
        self.keyColumn = keyColumn
        self.keyType = keyType
        self.count = count
        self.listed = listed
        // The keys' placeholder; their value is bound each round (``keys(_:)``).
        var one = SQLBuilder("", parameters: parameters)
        let key = one.bind(nil)
        oneKeySQL = Self.sql(parts, found: "t0.\(keyColumn) = \(key)", distinct: false)
        oneKeySightSQL = oneKeySQL + " UNION ALL SELECT -1 FROM \(table) t0 WHERE t0.\(keyColumn) = \(key)"
        var list = SQLBuilder("", parameters: parameters)
        let keys = list.bind(nil)
        let found = "t0.\(keyColumn) = ANY(\(keys))"
        keyListSQL = Self.sql(parts, found: found, distinct: true)
        keyListSightSQL = keyListSQL + " UNION ALL SELECT -array_position(\(keys), t0.\(keyColumn)) FROM \(table) t0 WHERE \(found)"
        self.table = table
    }

    /// The key (text form) of every row of the table that the principal sees, the row's
    /// `values` (quoted columns) as text, and the log's insert position when the statement
    /// ran (after its snapshot was taken), when the planner's estimate of the table's rows
    /// (`pg_class.reltuples`) is at most `table`: else one row of `NULL`s, as for a table
    /// never analyzed (`-1`), where each principal's statement could read the whole of a big
    /// table. At most `most + 1` rows (more: too many for the principal). A live round asks
    /// it once of each principal (``LiveDecision/sweepsSight``), and then knows for each
    /// row of the table whether it sees it, where a row not tested before cost a test for
    /// each principal.
    func sweep(most: Int, table rows: Int, values: [String]) -> Statement {
        let columns = ([keyColumn] + values).map { "t0.\($0)::text" }.joined(separator: ", ")
        let nulls = Array(repeating: "NULL", count: 2 + values.count).joined(separator: ", ")
        return Statement(
            sql: "WITH e AS (SELECT c.reltuples BETWEEN 0 AND $3::int8 AS small, pg_catalog.pg_current_wal_insert_lsn()::text AS at "
                + "FROM pg_catalog.pg_class c WHERE c.oid = $1::regclass) "
                + "SELECT \(columns), e.at FROM \(table) t0, e WHERE e.small UNION ALL SELECT \(nulls) FROM e WHERE NOT e.small LIMIT $2::int8 + 1",
            parameters: [table, most, rows])
    }

    /// The changed rows' keys as the one parameter ``statement(keys:sight:)`` binds. Made
    /// once a round for an entity's decisions, which all bind the same keys.
    func keys(_ keys: [StoredValue]) -> Keys {
        Keys(count: keys.count, parameter: keys.count == 1 ? keys[0].parameter : EncodedParameter.once(AttributeValue.keyList(keys, columnType: keyType).parameter))
    }

    /// The statement for the rows whose keys are `keys`. For one key without `DISTINCT`:
    /// each test then answers a request once at most, and the server's `Sort` and `Unique`
    /// for nothing were a tenth of its work a decision (the answers go in a set anyway).
    func statement(keys: [StoredValue]) -> Statement {
        statement(keys: self.keys(keys))
    }

    /// ``statement(keys:)`` for keys made by ``keys(_:)``; with `sight`, it also answers
    /// `-n` for each row of the keys that the principal sees, `n` its key's position (from
    /// 1): one probe of the key's index more, in the same statement.
    func statement(keys: Keys, sight: Bool = false) -> Statement {
        let sql = switch (keys.count == 1, sight) {
        case (true, false): oneKeySQL
        case (true, true): oneKeySightSQL
        case (false, false): keyListSQL
        case (false, true): keyListSightSQL
        }
        return Statement(sql: sql, parameters: parameters + [keys.parameter])
    }

    private static func sql(_ parts: [Part], found: String, distinct: Bool) -> String {
        let select = distinct ? "SELECT DISTINCT" : "SELECT"
        if parts.count == 1 { return "\(select) \(parts[0].head)\(found)\(parts[0].tail)" }
        let all = parts.map { "SELECT \($0.head)\(found)\($0.tail)" }.joined(separator: " UNION ALL ")
        return distinct ? "\(select) i FROM (\(all)) found" : all
    }

    /// From this many tests in the `VALUES` list up, a round runs them on a generic plan
    /// (under a principal, whatever their number).
    static let genericPlanFrom = 16

    /// Who runs the tests for `principal` (`nil`: the pool's own role) in a round's
    /// decisions (``Database/requestsMet(_:changedKeys:confirming:)``): the same tests come back round after
    /// round with other keys, so the statement is prepared once a connection, and from
    /// ``genericPlanFrom`` tests in the `VALUES` list up planned once too, asking for a
    /// generic plan in the principal's settings (`plan_cache_mode`, a setting of the
    /// transaction's, as a principal's are): planning 500 tests' `VALUES` took the server
    /// 2–4 ms a round, their generic plan 0.3 ms (Benchmarks/README.md, "Live queries under
    /// row-level security at scale"). Tests of one shape do not count: their part of the
    /// statement is short to plan whatever their number.
    ///
    /// Under a principal the plan is generic whatever the number of tests: the principal's
    /// settings are a statement already, so asking costs nothing more, and a hundred
    /// principals' few tests each were planned afresh every round — over a third of the
    /// server's time for live queries under 100 tenants, the generic plans halving its work
    /// a statement (Benchmarks/README.md, "Decisions under a principal on a generic plan").
    /// Without one, the server chooses between custom and generic plans as it does for any
    /// prepared statement: one more statement each decision cost more than it saved there.
    func decidingPrincipal(for principal: Principal?) -> Principal? {
        guard principal != nil || listed >= Self.genericPlanFrom else { return nil }
        return Principal(role: principal?.role, settings: (principal?.settings ?? [:]).merging(["plan_cache_mode": "force_generic_plan"]) { $1 })
    }
}
