import RelatePostgres

/// What a write by condition sets a column to: a bound value, or an expression of the row.
enum SetValue {
    case parameter((any PostgresEncodable)?)
    case expression(RowExpression.Node)
}

/// A request's condition as the `WHERE` of one `UPDATE` or `DELETE`: the rows a fetch with
/// that condition would read, written by one statement. The condition is the one builder's
/// (``RequestSQL``), so a write by condition can say all a fetch can.
extension FetchRequest {
    /// `UPDATE … SET … WHERE <condition>`, with `RETURNING` the entity's columns when
    /// `returning` (memory holds what the rows may become), and after them which of
    /// `descendants` each row is (``Statements/descendantMarker(_:of:bind:)``).
    func updateStatement(
        _ layout: ModelLayout, setting assignments: [(column: Int, value: SetValue)], returning: Bool, marking descendants: [Int]
    ) throws(RelateError) -> Statement {
        try setWrite(layout, returning: returning, marking: descendants) { builder, table, alias throws(RelateError) in
            var parts: [String] = []
            for (column, value) in assignments {
                let sql: String
                switch value {
                case .parameter(let parameter): sql = builder.bind(parameter)
                case .expression(let node): sql = try builder.expression(node, of: table.index, alias: alias, assignedTo: column)
                }
                parts.append("\(table.columns[column]) = \(sql)")
            }
            return (verb: "UPDATE", set: " SET " + parts.joined(separator: ", "), using: " FROM ")
        }
    }

    /// `DELETE FROM … WHERE <condition>`, with `RETURNING` the entity's columns when
    /// `returning` (memory holds objects the delete reaches), and after them which of
    /// `descendants` each row is.
    func deleteStatement(_ layout: ModelLayout, returning: Bool, marking descendants: [Int]) throws(RelateError) -> Statement {
        try setWrite(layout, returning: returning, marking: descendants) { _, _, _ throws(RelateError) in (verb: "DELETE FROM", set: "", using: " USING ") }
    }

    /// The statement both writes share. A condition without to-one joins is the statement's
    /// own `WHERE` (its `EXISTS` subqueries refer to the written row's alias); one that joins
    /// picks the rows by key in a subquery (an `UPDATE`'s `FROM` cannot `LEFT JOIN` the
    /// written table).
    private func setWrite(
        _ layout: ModelLayout, returning: Bool, marking descendants: [Int],
        _ clause: (inout RequestSQL, EntityLayout, String) throws(RelateError) -> (verb: String, set: String, using: String)
    ) throws(RelateError) -> Statement {
        var (builder, entity, scope, condition) = try filtered(layout, descendants: .included)
        let table = layout.entities[entity]
        let only = only ? "ONLY " : ""
        func returningList(_ alias: String) -> String {
            let marker = descendants.isEmpty
                ? "" : ", " + Statements.descendantMarker("\(alias).tableoid", of: descendants.map { layout.entities[$0] }) { builder.bind($0) }
            return " RETURNING \(table.selectList(alias: alias))\(marker)"
        }
        var sql: String
        if scope.joins.isEmpty {
            let (verb, set, _) = try clause(&builder, table, scope.alias)
            sql = "\(verb) \(only)\(table.table) \(scope.alias)\(set)"
            if let condition { sql += " WHERE \(condition)" }
            if returning { sql += returningList(scope.alias) }
        } else {
            let written = builder.newAlias()
            let picked = builder.newAlias()
            let (verb, set, using) = try clause(&builder, table, written)
            let keys = table.primaryKey.map { table.columns[$0] }
            // Tables under the entity's may hold a row under the same key: each row picked is
            // written in its own table alone.
            let select = keys.map { "\(scope.alias).\($0)" }.joined(separator: ", ") + (table.hasChildren ? ", \(scope.alias).tableoid AS relate_table" : "")
            let filter = condition.map { " WHERE \($0)" } ?? ""
            let match = keys.map { "\(written).\($0) = \(picked).\($0)" }.joined(separator: " AND ")
                + (table.hasChildren ? " AND \(written).tableoid = \(picked).relate_table" : "")
            sql = "\(verb) \(only)\(table.table) \(written)\(set)\(using)(SELECT \(select) FROM \(builder.from(scope))\(filter)) \(picked) WHERE \(match)"
            if returning { sql += returningList(written) }
        }
        return builder.statement(sql)
    }
}

extension RequestSQL {
    /// `node` as SQL of the row `alias` of `entity`, assigned to attribute `column`: keys
    /// are the row's columns, values bound typed as the expression's first key (else as
    /// `column`), `+` of text is `||`.
    mutating func expression(_ node: RowExpression.Node, of entity: Int, alias: String, assignedTo column: Int) throws(RelateError) -> String {
        let typing = try node.typingKey.map { key throws(RelateError) in try rowAttribute(key, of: entity) } ?? column
        return try render(node, of: entity, alias: alias, typedAs: typing)
    }

    private mutating func render(_ node: RowExpression.Node, of entity: Int, alias: String, typedAs typing: Int) throws(RelateError) -> String {
        let table = layout.entities[entity]
        switch node {
        case .key(let key):
            return "\(alias).\(table.columns[try rowAttribute(key, of: entity)])"
        case .now:
            return "now()"
        case .value(let value):
            do {
                return bind(try AttributeValue.encodable(value, for: table.entity.attributes[typing], entity: table.entity))
            } catch {
                // A value of another type than the column it is computed with (an interval
                // added to a date) goes as it is; the server checks the operator.
                guard let encodable = value as? any PostgresEncodable else { throw error }
                return bind(encodable)
            }
        case .arithmetic(let operation, let left, let right):
            let symbol = operation == .add && table.types[typing].mapping == .string ? "||" : operation.rawValue
            let leftSQL = try render(left, of: entity, alias: alias, typedAs: typing)
            let rightSQL = try render(right, of: entity, alias: alias, typedAs: typing)
            return "(\(leftSQL) \(symbol) \(rightSQL))"
        }
    }

    /// The attribute `key` names on the written row itself (an expression does not cross
    /// relationships).
    private func rowAttribute(_ key: String, of entity: Int) throws(RelateError) -> Int {
        let path = try resolve(key, from: entity, use: "an expression of the row written")
        guard path.hops.isEmpty, case .attribute(let index) = path.last else {
            let name = layout.entities[entity].entity.name
            throw RelateError(
                kind: .invalidRequest,
                message: "key \"\(key)\" of \"\(name)\" is not an attribute of the row written; an expression reads only the row's own columns",
                entity: name, key: key)
        }
        return index
    }
}
