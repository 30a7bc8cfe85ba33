import RelatePostgres

/// Writes of an entity's own rows. Each answers the rows it wrote (`RETURNING` the columns
/// in attribute order, as a fetch reads them), so memory takes them as stored; a `save()`'s
/// update where the table stores what it sends answers its count alone.
extension Statements {
    /// `INSERT INTO <table> (<columns>) VALUES (…) RETURNING …` (`DEFAULT VALUES` without
    /// columns): every column not given takes its default.
    static func insert(into table: EntityLayout, columns: [Int], values: [(any PostgresEncodable)?]) -> Statement {
        guard !columns.isEmpty else {
            return Statement(sql: "INSERT INTO \(table.table) DEFAULT VALUES RETURNING \(table.selectList())", parameters: [])
        }
        var sql = SQLBuilder("INSERT INTO \(table.table) (\(columns.map { table.columns[$0] }.joined(separator: ", "))) VALUES (")
        let placeholders = sql.bind(values)
        sql += placeholders.joined(separator: ", ") + ") RETURNING \(table.selectList())"
        return sql.statement
    }

    /// `UPDATE … SET <columns> = … WHERE <primary key> [AND <expected>] RETURNING …` for the
    /// row whose primary key memory holds as `key`. `expected` are values memory believes
    /// the row holds and the write depends on: a row that no longer holds them is not
    /// written (and answers no row).
    /// `nullSafe`: each expected value is compared `IS NOT DISTINCT FROM` (a NULL held is
    /// expected too: `save()`'s check), else with `=`. Without `returning`, the count of
    /// rows written (one or none) is the whole answer.
    static func update(
        _ table: EntityLayout, setting columns: [Int], to values: [(any PostgresEncodable)?], key: [(any PostgresEncodable)?],
        expecting expected: [(column: Int, value: StoredValue)] = [], nullSafe: Bool = false, returning: Bool = true
    ) -> Statement {
        var sql = SQLBuilder("UPDATE \(table.source) SET ")
        // Values first, then the key: the order `update(sql:values:key:)` binds them in.
        let assignments = zip(columns, sql.bind(values)).map { "\(table.columns[$0]) = \($1)" }.joined(separator: ", ")
        let row = sql.equal(table.primaryKey.map { table.columns[$0] }, key)
        sql += "\(assignments) WHERE \(row)"
        for (column, value) in expected {
            // A NULL parameter takes the column's type, as it does in `=`.
            var parameter = value.parameter
            // An array of records held in memory goes as one, its header naming the composite type.
            if parameter == nil, let composite = table.entity.attributes[column].composite, case .other(let box) = value,
                let records = box.value as? [PostgresRecord?]
            {
                parameter = PostgresRecordArray(records, elementType: PostgresType(composite.oid))
            }
            let placeholder = sql.bind(parameter)
            // json has no `=` (compared as jsonb), xml, point or box none of their own (compared
            // as text); a composite's parameter names its type.
            let isJSON = table.types[column] == .json
            let asText = !isJSON && table.comparedAsText[column]
            let compared = isJSON ? "(\(table.columns[column]))::jsonb" : asText ? "(\(table.columns[column]))::text" : table.columns[column]
            let cast = isJSON ? "::jsonb" : asText ? "::text" : table.parameterCasts[column].map { "::" + $0 } ?? ""
            sql += " AND \(compared) \(nullSafe ? "IS NOT DISTINCT FROM" : "=") \(placeholder)\(cast)"
        }
        if returning { sql += " RETURNING \(table.selectList())" }
        var statement = sql.statement
        // Without `expected`, the text depends on the entity and the columns alone.
        statement.isRepeated = expected.isEmpty
        return statement
    }

    /// An update whose text ``update(_:setting:to:key:expecting:)`` made before (without
    /// `expected`): its parameters in the order that one binds them, values then key.
    static func update(sql: String, values: [(any PostgresEncodable)?], key: [(any PostgresEncodable)?]) -> Statement {
        Statement(sql: sql, parameters: values + key, isRepeated: true)
    }

    /// `UPDATE … SET <columns> = NULL WHERE <columns> = <values> [AND NOT (<key of except>)]
    /// RETURNING …`: whoever refers to `values` through `columns` lets go (but `except`).
    static func nullify(
        _ table: EntityLayout, columns: [Int], matching values: [(any PostgresEncodable)?], exceptKey: [StoredValue]?
    ) -> Statement {
        var sql = SQLBuilder("UPDATE \(table.source) SET " + columns.map { "\(table.columns[$0]) = NULL" }.joined(separator: ", "))
        let referring = sql.equal(columns.map { table.columns[$0] }, values)
        sql += " WHERE \(referring)"
        if let exceptKey {
            let except = sql.equal(table.primaryKey.map { table.columns[$0] }, exceptKey.map(\.parameter))
            sql += " AND NOT (\(except))"
        }
        sql += " RETURNING \(table.selectList())"
        return sql.statement
    }

    /// `DELETE FROM <table> WHERE <primary key> [RETURNING …]`: how many rows it deleted
    /// says whether the row was still there; the database applies the foreign keys' rules,
    /// memory mirrors them. `returning`: the row deleted comes back (a delete by key, for a
    /// row memory may not hold).
    static func delete(from table: EntityLayout, key: [(any PostgresEncodable)?], returning: Bool = false) -> Statement {
        var sql = SQLBuilder()
        let row = sql.equal(table.primaryKey.map { table.columns[$0] }, key)
        sql += "DELETE FROM \(table.source) WHERE \(row)"
        if returning { sql += " RETURNING \(table.selectList())" }
        var statement = sql.statement
        statement.isRepeated = true
        return statement
    }

    // MARK: - One-to-many collections

    /// The children (rows of `table`) whose foreign key `columns` holds `owner`, but those
    /// whose primary keys are `kept`, let go of it: `UPDATE … SET <fk> = NULL WHERE <fk> =
    /// <owner> [AND NOT (<key> = ANY(…))] RETURNING …`. What leaves is what the database
    /// links to the owner, whatever memory believes.
    static func release(
        _ table: EntityLayout, foreignKey columns: [Int], owner: [(any PostgresEncodable)?], keeping kept: [[StoredValue]]
    ) -> Statement {
        var sql = SQLBuilder("UPDATE \(table.source) SET " + columns.map { "\(table.columns[$0]) = NULL" }.joined(separator: ", "))
        let belongs = sql.equal(columns.map { table.columns[$0] }, owner)
        sql += " WHERE \(belongs)"
        if !kept.isEmpty {
            let others = primaryKeyCondition(table, kept, in: &sql)
            sql += " AND NOT (\(others))"
        }
        sql += " RETURNING \(table.selectList())"
        return sql.statement
    }

    /// The children whose primary keys are `members` come to `owner`, those that held it
    /// already untouched: `UPDATE … SET <fk> = <owner> WHERE <key> = ANY(…) AND (<fk>) IS
    /// DISTINCT FROM (<owner>) RETURNING …`.
    static func claim(
        _ table: EntityLayout, foreignKey columns: [Int], owner: [(any PostgresEncodable)?], members: [[StoredValue]]
    ) -> Statement {
        var sql = SQLBuilder("UPDATE \(table.source) SET ")
        let ownerPlaceholders = sql.bind(owner)
        sql += zip(columns, ownerPlaceholders).map { "\(table.columns[$0]) = \($1)" }.joined(separator: ", ")
        let chosen = primaryKeyCondition(table, members, in: &sql)
        sql += " WHERE \(chosen)"
        sql += " AND (\(columns.map { table.columns[$0] }.joined(separator: ", "))) IS DISTINCT FROM "
            + "(\(ownerPlaceholders.joined(separator: ", "))) RETURNING \(table.selectList())"
        return sql.statement
    }

    /// The rows whose primary keys are `keys`, as a condition bound in `sql`.
    static func primaryKeyCondition(_ table: EntityLayout, _ keys: [[StoredValue]], in sql: inout SQLBuilder) -> String {
        sql.keyCondition(table.primaryKey.map { table.columns[$0] }, types: table.primaryKey.map { table.types[$0] }, keys)
    }
}
