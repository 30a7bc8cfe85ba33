import RelatePostgres

/// A request as one statement for one model.
struct RequestStatement {
    var statement: Statement
    /// No join that could repeat a row: a to-one is joined on a key or a unique
    /// constraint, but one an override declares may have neither.
    var rowsAreDistinct = true
    /// The entities whose rows the last column marks (``Statements/descendantMarker(_:of:bind:)``):
    /// empty when there is no such column.
    var descendants: [Int] = []

    var sql: String { statement.sql }
}

/// What a statement does with the rows of the tables that inherit from the entity's.
enum DescendantRows {
    /// Reads them as rows of the entity's table, as PostgreSQL does (values, not objects).
    case included
    /// Reads them, a last column telling whose each row is (``RequestStatement/descendants``).
    case marked
    /// Leaves them out (`FROM ONLY`).
    case excluded
}

extension FetchRequest {
    /// `SELECT` of the entity's columns (in attribute order, as a fetch reads them); with
    /// `descendants` `.marked` and an entity others inherit from, a last column that says
    /// whose each row is. The request's ``only`` leaves their rows out whatever `descendants` says.
    func selectStatement(
        _ layout: ModelLayout, descendants: DescendantRows = .included
    ) throws(RelateError) -> (entity: Int, statement: RequestStatement) {
        var (builder, entity, scope, condition) = try filtered(layout, descendants: descendants)
        let root = scope.alias
        let order = try orderBy.map { ordering throws(RelateError) in try builder.sql(ordering, in: &scope) }
        var sql = "SELECT \(layout.entities[entity].selectList(alias: root))"
        let marked = only || descendants != .marked ? [] : layout.descendants[entity] ?? []
        if !marked.isEmpty {
            sql += ", " + Statements.descendantMarker("\(root).tableoid", of: marked.map { layout.entities[$0] }) { builder.bind($0) }
        }
        sql += " FROM " + builder.from(scope)
        if let condition { sql += " WHERE \(condition)" }
        if !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        sql += try builder.page(limit: limit, offset: offset)
        return (entity, RequestStatement(statement: builder.statement(sql), rowsAreDistinct: scope.joins.isEmpty, descendants: marked))
    }

    /// `SELECT count(*)` of the objects the request fetches; the order does not change how
    /// many, so it is not sent.
    func countStatement(_ layout: ModelLayout) throws(RelateError) -> (entity: Int, statement: RequestStatement) {
        var (builder, entity, scope, condition) = try filtered(layout, descendants: .included)
        for ordering in orderBy { _ = try builder.resolveOrdering(ordering, from: entity) }
        let filtered = builder.from(scope) + (condition.map { " WHERE \($0)" } ?? "")
        let page = try builder.page(limit: limit, offset: offset)
        let sql = page.isEmpty ? "SELECT count(*) FROM \(filtered)" : "SELECT count(*) FROM (SELECT 1 FROM \(filtered)\(page)) page"
        return (entity, RequestStatement(statement: builder.statement(sql)))
    }

    /// What both statements start from: the entity, its scope (alias `t0`; `FROM ONLY` for
    /// ``only`` or descendants `.excluded`) and the condition as SQL, its values bound in
    /// `builder`; for an entity with tables under it the model does not have, the condition
    /// keeps to the rows of its own tables (`t0.tableoid = ANY(…)`, see `EntityLayout.ownTables`).
    func filtered(
        _ layout: ModelLayout, descendants: DescendantRows
    ) throws(RelateError) -> (builder: RequestSQL, entity: Int, scope: RequestSQL.Scope, condition: String?) {
        var builder = RequestSQL(layout: layout)
        let entity = try layout.entityIndex(named: self.entity)
        var scope = RequestSQL.Scope(entity: entity, alias: builder.newAlias())
        var own: String?
        if only || (descendants == .excluded && layout.entities[entity].hasChildren) {
            scope.head = "ONLY \(layout.entities[entity].table) \(scope.alias)"
        } else {
            // Rows of tables under it that the model has no descendant for are no objects of it.
            own = layout.entities[entity].ownRows(alias: scope.alias) { builder.bind($0) }
        }
        var condition = try self.condition.map { condition throws(RelateError) in try builder.sql(condition.node, in: &scope) }
        if let own { condition = condition.map { "(\($0)) AND \(own)" } ?? own }
        return (builder, entity, scope, condition)
    }
}

/// Builds the SQL of a request against a model: key paths resolved to quoted columns,
/// to-one relationships joined once per path, to-many ones tested by `EXISTS`, every value
/// bound. Each key path is checked before anything is sent; an error names the key path,
/// the entity and the keys it has. Pieces are made out of order (a condition's joins before
/// the `FROM` that holds them), so the pieces are strings and only the values go through
/// one ``SQLBuilder``, in the order they are bound.
struct RequestSQL {
    let layout: ModelLayout
    private var values: SQLBuilder
    private var aliasCount = 0

    /// `placeholder`: what each bound value's number follows in the SQL (``SQLBuilder``).
    init(layout: ModelLayout, placeholder: String = "$") {
        self.layout = layout
        values = SQLBuilder(placeholder: placeholder)
    }

    /// One `FROM` level: the statement's own, or an `EXISTS` subquery's.
    struct Scope {
        let entity: Int
        let alias: String
        /// The alias and entity of each to-one path joined so far, by its relationship indexes.
        var joined: [[Int]: (alias: String, entity: Int)] = [:]
        var joins: [String] = []
        /// What comes before the joins; the entity's table when empty.
        var head: String?
    }

    /// Where a key path ends, from a scope's entity: the to-one relationships it crosses,
    /// the entity it ends in and what its last key names there.
    struct ResolvedPath {
        var hops: [Int]
        var entity: Int
        var last: Last

        enum Last {
            case attribute(Int)
            case relationship(Int)
        }
    }

    mutating func newAlias() -> String {
        defer { aliasCount += 1 }
        return "t\(aliasCount)"
    }

    mutating func bind(_ value: (any PostgresEncodable)?) -> String {
        bind(value, comparedWith: nil)
    }

    /// Binds a value compared with a column of `type` (``comparedTypes``); `isList`: a
    /// list the column is compared with (`= ANY(…)`), in any form (``listed``).
    private mutating func bind(_ value: (any PostgresEncodable)?, comparedWith type: PostgresType?, isList: Bool = false) -> String {
        if isList { listed.insert(comparedTypes.count) }
        comparedTypes.append(type)
        return values.bind(value)
    }

    /// The positions (from 0) of the values bound as lists: an array, or the text of one
    /// that the server reads as the column's array type. They go in no array of values
    /// (``MatchTests``), which would hold them as plain `text`.
    private(set) var listed: Set<Int> = []

    /// For each value bound so far, the type of the column a comparison compares it with;
    /// `nil` for a value bound otherwise. A `String` goes untyped, so the server takes it
    /// as that column's type; where values go in a `text[]` instead (``MatchTests``), this
    /// says whether `text` compares with the column as the column's own type would.
    private(set) var comparedTypes: [PostgresType?] = []

    /// `sql`, put together from the pieces made, with the values bound for them.
    func statement(_ sql: String) -> Statement {
        Statement(sql: sql, parameters: values.parameters)
    }

    /// The values bound so far, in order.
    var parameters: [(any PostgresEncodable)?] { values.parameters }

    /// The rows whose one-column key is one of `keys` (``SQLBuilder/keyCondition(_:type:_:)``).
    mutating func keyCondition(_ column: String, type: PostgresType, _ keys: [StoredValue]) -> String {
        values.keyCondition(column, type: type, keys)
    }

    func from(_ scope: Scope) -> String {
        let head = scope.head ?? "\(layout.entities[scope.entity].table) \(scope.alias)"
        return ([head] + scope.joins).joined(separator: " ")
    }

    mutating func page(limit: Int?, offset: Int?) throws(RelateError) -> String {
        var sql = ""
        for (name, value) in [("limit", limit), ("offset", offset)] {
            guard let value else { continue }
            guard value >= 0 else {
                throw RelateError(kind: .invalidRequest, message: "a fetch request's \(name) is \(value); it must be 0 or more", key: name)
            }
            sql += " \(name.uppercased()) \(bind(value))"
        }
        return sql
    }

    // MARK: - Key paths

    /// Resolves `keyPath` from `entity` (``ModelLayout/steps(of:from:use:)``): every key but
    /// the last must be a to-one relationship.
    func resolve(_ keyPath: String, from entity: Int, use: String) throws(RelateError) -> ResolvedPath {
        let steps = try layout.steps(of: keyPath, from: entity, use: use)
        var hops: [Int] = []
        for (position, step) in steps.enumerated() {
            switch step {
            case .attribute(let entity, let index):
                return ResolvedPath(hops: hops, entity: entity, last: .attribute(index))
            case .relationship(let entity, let index):
                if position == steps.count - 1 { return ResolvedPath(hops: hops, entity: entity, last: .relationship(index)) }
                let here = layout.entities[entity]
                guard !here.isToMany[index] else {
                    // The path up to here, by the keys as the model names them.
                    let prefix = steps[...position].map { step -> String in
                        switch step {
                        case .attribute(let entity, let index): layout.entities[entity].attributeKeys[index]
                        case .relationship(let entity, let index): layout.entities[entity].entity.relationships[index].key
                        }
                    }
                    throw layout.keyPathError(
                        keyPath, use: use,
                        RelateError(
                            kind: .unknownKey,
                            message: "\"\(prefix.last ?? "")\" of \"\(here.entity.name)\" is to-many, where one value is expected; "
                                + "say how many members must match: Key(\"\(prefix.joined(separator: "."))\").any(…), .all(…) or .none(…)",
                            entity: here.entity.name))
                }
                hops.append(index)
            }
        }
        // Only an empty key path gets here, and it has an empty key: steps(of:) threw.
        throw RelateError(kind: .unknownKey, message: "an empty key path (\(use))", key: keyPath)
    }

    /// The alias of the table that `hops` (to-one relationships from the scope's entity)
    /// lead to, joining what is not joined yet. A to-one join never repeats a row: its
    /// target columns are a key or under a unique constraint.
    private mutating func alias(for hops: [Int], in scope: inout Scope) -> String {
        var alias = scope.alias
        var entity = scope.entity
        for length in hops.indices {
            let path = Array(hops[...length])
            if let joined = scope.joined[path] {
                (alias, entity) = joined
                continue
            }
            let owner = layout.entities[entity]
            let relationship = hops[length]
            let target = owner.targets[relationship]
            let targetLayout = layout.entities[target]
            let joinedAlias = newAlias()
            let on = zip(owner.targetColumns[relationship], owner.fromColumns[relationship]).map { targetColumn, ownerColumn in
                "\(joinedAlias).\(targetLayout.columns[targetColumn]) = \(alias).\(owner.columns[ownerColumn])"
            }.joined(separator: " AND ")
            scope.joins.append("LEFT JOIN \(targetLayout.table) \(joinedAlias) ON \(on)")
            scope.joined[path] = (joinedAlias, target)
            (alias, entity) = (joinedAlias, target)
        }
        return alias
    }

    /// The column a resolved attribute is read from. An attribute that a single-column
    /// foreign key refers to is read from that foreign key, with no join (`person.id` is
    /// `person_id`); a composite key is not, since one NULL column leaves the relationship
    /// empty while the others still hold values.
    /// A `money` column is compared as `numeric`: the values it is compared with are
    /// `Decimal`s sent as `numeric` (the server has no `money = numeric`, and reading their
    /// text as money would depend on its `lc_monetary`).
    private mutating func column(_ path: ResolvedPath, attribute: Int, in scope: inout Scope) -> String {
        let column = uncastColumn(path, attribute: attribute, in: &scope)
        return layout.entities[path.entity].types[attribute] == .money ? "(\(column))::numeric" : column
    }

    private mutating func uncastColumn(_ path: ResolvedPath, attribute: Int, in scope: inout Scope) -> String {
        if let lastHop = path.hops.last {
            let ownerEntity = entity(after: path.hops.dropLast(), from: scope.entity)
            let owner = layout.entities[ownerEntity]
            if owner.entity.relationships[lastHop].foreignKeyIn == .from, owner.targetColumns[lastHop] == [attribute],
                let foreignKey = owner.fromColumns[lastHop].first, owner.fromColumns[lastHop].count == 1
            {
                return "\(alias(for: Array(path.hops.dropLast()), in: &scope)).\(owner.columns[foreignKey])"
            }
        }
        return "\(alias(for: path.hops, in: &scope)).\(layout.entities[path.entity].columns[attribute])"
    }

    private func entity(after hops: some Collection<Int>, from entity: Int) -> Int {
        hops.reduce(entity) { current, hop in layout.entities[current].targets[hop] }
    }

    // MARK: - Conditions

    mutating func sql(_ node: Condition.Node, in scope: inout Scope) throws(RelateError) -> String {
        switch node {
        case .constant(let value):
            return value ? "TRUE" : "FALSE"
        case .and(let nodes):
            return try joined(nodes, by: "AND", empty: "TRUE", in: &scope)
        case .or(let nodes):
            return try joined(nodes, by: "OR", empty: "FALSE", in: &scope)
        case .not(let node):
            // Wherever the condition is not true, NULL included: Swift's `!`.
            return "(\(try sql(node, in: &scope))) IS NOT TRUE"
        case .comparison(let keyPath, let comparison, let value):
            return try comparisonSQL(keyPath, comparison, value, in: &scope)
        case .isIn(let keyPath, let values):
            return try inSQL(keyPath, values, in: &scope)
        case .pattern(let keyPath, let pattern, let text, let caseInsensitive):
            return try patternSQL(keyPath, pattern, text, caseInsensitive: caseInsensitive, in: &scope)
        case .quantified(let keyPath, let quantifier, let condition):
            return try quantifiedSQL(keyPath, quantifier, condition, in: &scope)
        case .json(let keyPath, let test):
            return try jsonSQL(keyPath, test, in: &scope)
        }
    }

    /// `column @> $1` or `column #>> $1 = $2`, every value bound; a `json` column is
    /// compared as `jsonb` (json has no `@>`).
    private mutating func jsonSQL(_ keyPath: String, _ test: Condition.JSONTest, in scope: inout Scope) throws(RelateError) -> String {
        let (path, index) = try attribute(keyPath, in: scope, of: .json, use: "a JSON test", takenBy: "jsonContains and jsonText take a json or jsonb column")
        let owner = layout.entities[path.entity]
        var column = column(path, attribute: index, in: &scope)
        if owner.types[index] == .json { column = "(\(column))::jsonb" }
        switch test {
        case .contains(let value):
            return "\(column) @> \(bind(value))"
        case .text(let jsonPath, let text):
            let extracted = "(\(column) #>> \(bind(jsonPath)))"
            guard let text else { return "\(extracted) IS NULL" }
            return "\(extracted) = \(bind(text))"
        case .equals(let value, let negated):
            guard let value else { return "\(column) IS \(negated ? "NOT " : "")NULL" }
            return "\(column) \(negated ? "IS DISTINCT FROM" : "=") \(bind(value))"
        }
    }

    /// The attribute `keyPath` ends at, when its column's values map to `mapping`; else an
    /// error naming what the key path is and `takenBy`, what the test takes.
    private func attribute(
        _ keyPath: String, in scope: Scope, of mapping: PostgresValueMapping, use: String, takenBy: String
    ) throws(RelateError) -> (path: ResolvedPath, index: Int) {
        let path = try resolve(keyPath, from: scope.entity, use: use)
        let owner = layout.entities[path.entity]
        guard case .attribute(let index) = path.last, owner.types[index].mapping == mapping else {
            let what: String
            if case .attribute(let index) = path.last {
                what = "column \"\(owner.entity.attributes[index].name)\" of type \(owner.entity.attributes[index].type)"
            } else {
                what = "a relationship"
            }
            throw RelateError(
                kind: .typeMismatch, message: "key path \"\(keyPath)\" is \(what); \(takenBy)", entity: owner.entity.name, key: keyPath)
        }
        return (path, index)
    }

    /// `(a AND b …)`; one condition as it is; none as `empty`.
    private mutating func joined(
        _ nodes: [Condition.Node], by word: String, empty: String, in scope: inout Scope
    ) throws(RelateError) -> String {
        var parts: [String] = []
        for node in nodes { parts.append(try sql(node, in: &scope)) }
        switch parts.count {
        case 0: return empty
        case 1: return parts[0]
        default: return "(" + parts.joined(separator: " \(word) ") + ")"
        }
    }

    private mutating func comparisonSQL(
        _ keyPath: String, _ comparison: Condition.Comparison, _ value: (any Sendable)?, in scope: inout Scope
    ) throws(RelateError) -> String {
        let path = try resolve(keyPath, from: scope.entity, use: "compared with \(comparison.rawValue)")
        let owner = layout.entities[path.entity]
        switch path.last {
        case .attribute(let index):
            let column = column(path, attribute: index, in: &scope)
            let parameter = try encoded(value, keyPath: keyPath, path: path, attribute: index)
            guard let parameter else {
                switch comparison {
                case .equal: return Self.nullTest(column, of: owner, index, isNull: true)
                case .notEqual: return Self.nullTest(column, of: owner, index, isNull: false)
                default:
                    throw RelateError(
                        kind: .typeMismatch, message: "key path \"\(keyPath)\": nil cannot be compared with \(comparison.rawValue); use == nil or != nil",
                        entity: owner.entity.name, key: keyPath)
                }
            }
            return "\(column) \(comparison.rawValue) \(bind(parameter, comparedWith: owner.types[index]))" + (owner.parameterCasts[index].map { "::" + $0 } ?? "")
        case .relationship(let index):
            let relationship = owner.entity.relationships[index]
            guard !owner.isToMany[index], value == nil, comparison == .equal || comparison == .notEqual else {
                let advice =
                    owner.isToMany[index]
                    ? "it is to-many: use Key(\"\(keyPath)\").isEmpty, .any(…), .all(…) or .none(…)"
                    : "it is a relationship: compare it with == nil or != nil, or compare an attribute of it (\"\(keyPath).\(layout.entities[owner.targets[index]].attributeKeys.first ?? "id")\")"
                throw RelateError(
                    kind: .typeMismatch, message: "key path \"\(keyPath)\" cannot be compared with a value; " + advice,
                    entity: owner.entity.name, key: keyPath)
            }
            let isNil = comparison == .equal
            if relationship.foreignKeyIn == .from {
                // A foreign key with a NULL column refers to nothing (MATCH SIMPLE).
                let alias = alias(for: path.hops, in: &scope)
                let columns = owner.fromColumns[index].map { "\(alias).\(owner.columns[$0])" }
                let tests = columns.map { isNil ? "\($0) IS NULL" : "\($0) IS NOT NULL" }
                return tests.count == 1 ? tests[0] : "(" + tests.joined(separator: isNil ? " OR " : " AND ") + ")"
            }
            // The other side holds the foreign key: the joined row is there or not.
            let alias = alias(for: path.hops + [index], in: &scope)
            let target = layout.entities[owner.targets[index]]
            let column = "\(alias).\(target.columns[owner.targetColumns[index][0]])"
            return isNil ? "\(column) IS NULL" : "\(column) IS NOT NULL"
        }
    }

    /// Whether `column`, attribute `index` of `table`, is NULL (`isNull`) or not. A
    /// composite is not a row of its fields here: `IS NULL` holds for a record whose fields
    /// are all NULL too, and neither `IS NULL` nor `IS NOT NULL` for one with some; `IS NOT
    /// DISTINCT FROM NULL` holds for NULL alone, as `== nil` does in Swift.
    private static func nullTest(_ column: String, of table: EntityLayout, _ index: Int, isNull: Bool) -> String {
        let attribute = table.entity.attributes[index]
        guard attribute.composite != nil, !attribute.type.hasSuffix("[]") else { return isNull ? "\(column) IS NULL" : "\(column) IS NOT NULL" }
        return isNull ? "(\(column) IS NOT DISTINCT FROM NULL)" : "(\(column) IS DISTINCT FROM NULL)"
    }

    private mutating func inSQL(_ keyPath: String, _ values: [(any Sendable)?], in scope: inout Scope) throws(RelateError) -> String {
        let path = try resolve(keyPath, from: scope.entity, use: "in(…)")
        guard case .attribute(let index) = path.last else {
            throw RelateError(
                kind: .typeMismatch, message: "key path \"\(keyPath)\" names a relationship; in(…) takes an attribute",
                entity: layout.entities[path.entity].entity.name, key: keyPath)
        }
        var stored: [StoredValue] = []
        var includesNil = false
        for value in values {
            guard let parameter = try encoded(value, keyPath: keyPath, path: path, attribute: index) else {
                includesNil = true
                continue
            }
            guard let value = StoredValue(scalar: parameter) else {
                throw RelateError(
                    kind: .typeMismatch, message: "key path \"\(keyPath)\" is an array column; in(…) takes a column of single values",
                    entity: layout.entities[path.entity].entity.name, key: keyPath)
            }
            stored.append(value)
        }
        let column = column(path, attribute: index, in: &scope)
        var tests: [String] = []
        if !stored.isEmpty {
            let list = AttributeValue.keyList(stored, columnType: layout.entities[path.entity].types[index])
            tests.append("\(column) = ANY(\(bind(list.parameter, comparedWith: layout.entities[path.entity].types[index], isList: true)))")
        }
        if includesNil { tests.append(Self.nullTest(column, of: layout.entities[path.entity], index, isNull: true)) }
        switch tests.count {
        case 0: return "FALSE"
        case 1: return tests[0]
        default: return "(" + tests.joined(separator: " OR ") + ")"
        }
    }

    private mutating func patternSQL(
        _ keyPath: String, _ pattern: Condition.Pattern, _ text: String, caseInsensitive: Bool, in scope: inout Scope
    ) throws(RelateError) -> String {
        let (path, index) = try attribute(
            keyPath, in: scope, of: .string, use: "a text match", takenBy: "prefix, suffix, contains and like take a text column")
        // In a bound LIKE pattern the backslash escapes, whatever standard_conforming_strings says.
        let literal = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
        let likePattern =
            switch pattern {
            case .prefix: literal + "%"
            case .suffix: "%" + literal
            case .contains: "%" + literal + "%"
            case .like: text
            }
        let column = column(path, attribute: index, in: &scope)
        return "\(column) \(caseInsensitive ? "ILIKE" : "LIKE") \(bind(likePattern))"
    }

    private mutating func quantifiedSQL(
        _ keyPath: String, _ quantifier: Condition.Quantifier, _ condition: Condition.Node?, in scope: inout Scope
    ) throws(RelateError) -> String {
        let use = switch quantifier {
            case .any: "any(…)"
            case .all: "all(…)"
            case .none: "none(…)"
            }
        let path = try resolve(keyPath, from: scope.entity, use: use)
        let owner = layout.entities[path.entity]
        guard case .relationship(let index) = path.last, owner.isToMany[index] else {
            throw RelateError(
                kind: .typeMismatch,
                message: "key path \"\(keyPath)\" (\(use)) must end in a to-many relationship; compare a to-one or an attribute with == and the like",
                entity: owner.entity.name, key: keyPath)
        }
        let ownerAlias = alias(for: path.hops, in: &scope)
        let target = layout.entities[owner.targets[index]]
        let link: String
        var inner: Scope
        if let helperIndex = owner.helpers[index] {
            let helper = layout.entities[helperIndex]
            let (helperFrom, helperTo) = owner.helperColumns[index]
            let helperAlias = newAlias()
            link = zip(helperFrom, owner.fromColumns[index]).map { helperColumn, ownerColumn in
                "\(helperAlias).\(helper.columns[helperColumn]) = \(ownerAlias).\(owner.columns[ownerColumn])"
            }.joined(separator: " AND ")
            if condition == nil {
                inner = Scope(entity: helperIndex, alias: helperAlias)
            } else {
                let targetAlias = newAlias()
                let on = zip(owner.targetColumns[index], helperTo).map { targetColumn, helperColumn in
                    "\(targetAlias).\(target.columns[targetColumn]) = \(helperAlias).\(helper.columns[helperColumn])"
                }.joined(separator: " AND ")
                inner = Scope(entity: owner.targets[index], alias: targetAlias)
                inner.head = "\(helper.table) \(helperAlias) JOIN \(target.table) \(targetAlias) ON \(on)"
            }
        } else {
            let targetAlias = newAlias()
            link = zip(owner.targetColumns[index], owner.fromColumns[index]).map { targetColumn, ownerColumn in
                "\(targetAlias).\(target.columns[targetColumn]) = \(ownerAlias).\(owner.columns[ownerColumn])"
            }.joined(separator: " AND ")
            inner = Scope(entity: owner.targets[index], alias: targetAlias)
        }
        var filter = link
        if let condition {
            let test = try sql(condition, in: &inner)
            filter += quantifier == .all ? " AND (\(test)) IS NOT TRUE" : " AND \(test)"
        }
        let subquery = "EXISTS (SELECT 1 FROM \(from(inner)) WHERE \(filter))"
        return quantifier == .any ? subquery : "NOT " + subquery
    }

    /// `value` as a parameter for the attribute: refused, naming the key path and the
    /// column, when the column cannot take it.
    private func encoded(
        _ value: (any Sendable)?, keyPath: String, path: ResolvedPath, attribute: Int
    ) throws(RelateError) -> (any PostgresEncodable)? {
        let entity = layout.entities[path.entity].entity
        do {
            return try AttributeValue.encodable(value, for: entity.attributes[attribute], entity: entity, use: .compared)
        } catch {
            var error = error
            error.message = "key path \"\(keyPath)\": " + error.message
            error.key = keyPath
            throw error
        }
    }

    // MARK: - Sorting

    func resolveOrdering(_ ordering: Ordering, from entity: Int) throws(RelateError) -> (ResolvedPath, Int) {
        let path = try resolve(ordering.keyPath, from: entity, use: "sorted by")
        guard case .attribute(let index) = path.last else {
            let owner = layout.entities[path.entity]
            throw RelateError(
                kind: .typeMismatch,
                message: "key path \"\(ordering.keyPath)\" (sorted by) names a relationship; sort by an attribute of it",
                entity: owner.entity.name, key: ordering.keyPath)
        }
        return (path, index)
    }

    mutating func sql(_ ordering: Ordering, in scope: inout Scope) throws(RelateError) -> String {
        let (path, index) = try resolveOrdering(ordering, from: scope.entity)
        var sql = column(path, attribute: index, in: &scope) + (ordering.isAscending ? " ASC" : " DESC")
        switch ordering.nulls {
        case .default: break
        case .first: sql += " NULLS FIRST"
        case .last: sql += " NULLS LAST"
        }
        return sql
    }
}
