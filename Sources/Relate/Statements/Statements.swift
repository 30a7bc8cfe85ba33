import RelatePostgres

/// Every statement the object layer sends, built as a ``Statement`` from the model's
/// layouts and the values memory holds: no connection, no object, no memory changed here.
/// Identifiers come quoted from the layouts; every value is bound by ``SQLBuilder``.
///
/// Reads of relationships, keys and counts are here; writes are in `Statements+Write.swift`,
/// helper-table rows in `Statements+Helper.swift`; fetch requests have their own builder
/// (``RequestSQL``) on the same ``SQLBuilder``.
enum Statements {
    // MARK: - Arrays as rows

    /// The rows of parameters `arrays` (bound arrays of one length) side by side, as `v`,
    /// their elements named `names`: `(SELECT unnest($1) AS k0, unnest($2) AS n0) AS v`;
    /// `numbered`, with each row's position from 1 as `v.i`.
    ///
    /// Unnested in a select list, the arrays run in lockstep (a ProjectSet) and each row goes
    /// on as it is made. `FROM unnest($1, $2)` gives the same rows in the same order, but a
    /// function scan first copies every array's elements into a tuplestore: a `save()` of
    /// 1,000 rows spent 0.17 ms more of the server's time so, an insert of 100,000 rows half
    /// as much again (Benchmarks/README.md). Every statement that writes rows from arrays
    /// reads them here.
    static func arrayRows(_ arrays: [String], as names: [String], numbered: Bool) -> String {
        var elements = zip(arrays, names).map { "unnest(\($0)) AS \($1)" }
        if numbered { elements.append("generate_series(1, cardinality(\(arrays[0]))) AS i") }
        return "(SELECT \(elements.joined(separator: ", "))) AS v"
    }

    // MARK: - Rows

    /// `SELECT <columns> FROM <table> WHERE <key>`: the rows whose primary keys are `keys`.
    static func rows(of table: EntityLayout, keys: [[StoredValue]]) -> Statement {
        var sql = SQLBuilder()
        let condition = primaryKeyCondition(table, keys, in: &sql)
        sql += "SELECT \(table.selectList()) FROM \(table.source) WHERE \(condition)"
        return sql.statement
    }

    /// The row whose primary key is `key`: ``EntityLayout/selectByPrimaryKey`` with the
    /// key bound, prepared on the server (its text depends on the entity alone).
    static func row(of table: EntityLayout, key: [(any PostgresEncodable)?]) -> Statement {
        Statement(sql: table.selectByPrimaryKey, parameters: key, isRepeated: true)
    }

    /// The SQL of ``rows(of:keys:)`` for one row, its key's values to be bound: made once per model
    /// (``EntityLayout/selectByPrimaryKey``), since it is the statement sent most often.
    static func rowByPrimaryKey(table: String, selectList: String, key columns: [String]) -> String {
        var sql = SQLBuilder()
        let row = sql.equal(columns, Array(repeating: nil, count: columns.count))
        sql += "SELECT \(selectList) FROM \(table) WHERE \(row)"
        return sql.sql
    }

    /// `SELECT <columns> FROM <table> [WHERE <condition>] [ORDER BY …] [LIMIT $n]`, where
    /// `condition` and `orderBy` are a caller's SQL whose placeholders refer to `arguments`;
    /// with `descendants`, a last column says which of them each row is (``descendantMarker(_:of:bind:)``).
    static func select(
        from table: EntityLayout, where condition: String?, _ arguments: [(any PostgresEncodable)?], orderBy: String?, limit: Int?,
        marking descendants: [EntityLayout] = []
    ) -> Statement {
        var sql = SQLBuilder(parameters: arguments)
        let marker = descendants.isEmpty ? "" : ", " + descendantMarker("tableoid", of: descendants) { sql.bind($0) }
        sql += "SELECT \(table.selectList())\(marker) FROM \(table.table)"
        let filter = ownRowsWhere(table, condition, &sql)
        sql += filter
        if let orderBy { sql += " ORDER BY \(orderBy)" }
        if let limit {
            let placeholder = sql.bind(limit)
            sql += " LIMIT \(placeholder)"
        }
        return sql.statement
    }

    /// `CASE <tableoid> WHEN $n::regclass THEN 1 … ELSE 0 END`: which of `descendants` (1,
    /// 2…) a row of their ancestor's table is, 0 for the ancestor's own; the tables' quoted
    /// names bound by `bind`.
    static func descendantMarker(_ tableoid: String, of descendants: [EntityLayout], bind: (String) -> String) -> String {
        let cases = descendants.enumerated().map { "WHEN \(bind($1.table))::regclass THEN \($0 + 1)" }
        return "CASE \(tableoid) \(cases.joined(separator: " ")) ELSE 0 END"
    }

    /// `SELECT count(*) FROM <table> [WHERE <condition>]`, the condition a caller's SQL.
    static func count(of table: EntityLayout, where condition: String?, _ arguments: [(any PostgresEncodable)?]) -> Statement {
        var sql = SQLBuilder("SELECT count(*) FROM \(table.table)", parameters: arguments)
        let filter = ownRowsWhere(table, condition, &sql)
        sql += filter
        return sql.statement
    }

    /// ` WHERE <condition>` (a caller's SQL), and for an entity with tables under it that
    /// the model has no descendant for, the rows of its own tables alone (``EntityLayout/ownTables``).
    private static func ownRowsWhere(_ table: EntityLayout, _ condition: String?, _ sql: inout SQLBuilder) -> String {
        guard let own = table.ownRows(alias: nil, bind: { sql.bind($0) }) else { return condition.map { " WHERE \($0)" } ?? "" }
        return " WHERE " + (condition.map { "(\($0)) AND \(own)" } ?? own)
    }

    // MARK: - Relationships

    /// The targets of relationship `index` of `owner` for the owners whose keys (the
    /// relationship's `from` columns) are `ownerKeys`. Straight to the target's table by its
    /// joined columns, or through the helper, whose columns that refer to the owner then
    /// follow the target's in each row (to tell the owners apart).
    ///
    /// A relationship the server links goes through the owners' rows
    /// (``loadThroughOwners(relationship:of:in:ownerKeys:)``), unless `byValues`: then the
    /// targets are those the server takes for `ownerKeys` (for one key a statement, to pair
    /// them: a pending owner's values, which its row does not hold yet).
    static func load(
        relationship index: Int, of owner: EntityLayout, in layout: ModelLayout, ownerKeys: [[StoredValue]], byValues: Bool = false
    ) -> Statement {
        let target = layout.entities[owner.targets[index]]
        let targetColumns = owner.targetColumns[index]
        guard !owner.linksByServer[index] || byValues else {
            return loadThroughOwners(relationship: index, of: owner, in: layout, ownerKeys: ownerKeys)
        }
        guard let helperIndex = owner.helpers[index] else {
            var sql = SQLBuilder()
            let belongs = sql.keyCondition(targetColumns.map { target.columns[$0] }, types: targetColumns.map { target.types[$0] }, ownerKeys)
            sql += "SELECT \(target.selectList()) FROM \(target.source) WHERE \(belongs)"
            return sql.statement
        }
        let helper = layout.entities[helperIndex]
        let (helperFrom, helperTo) = owner.helperColumns[index]
        let fromColumns = helperFrom.map { "h.\(helper.columns[$0])" }
        let join = zip(targetColumns, helperTo).map { "t.\(target.columns[$0]) = h.\(helper.columns[$1])" }.joined(separator: " AND ")
        var sql = SQLBuilder()
        let belongs = sql.keyCondition(fromColumns, types: helperFrom.map { helper.types[$0] }, ownerKeys)
        sql += "SELECT \(target.selectList(alias: "t")), \(fromColumns.joined(separator: ", ")) FROM \(helper.table) h "
            + "JOIN \(target.source) t ON \(join) WHERE \(belongs)"
        return sql.statement
    }

    /// ``load(relationship:of:in:ownerKeys:)`` for a relationship the server links
    /// (``EntityLayout/linksByServer``): through the owner's own rows, each target row
    /// followed by the owner's columns the relationship starts from as the owner's row
    /// stores them, so that memory pairs them by bytes with owners the server paired by its
    /// equality (`citext`'s `ADA@x` with `ada@x`). Owners are found by `ownerKeys` (their
    /// `from` columns), except for a to-one whose foreign key is the owner's: by
    /// `ownerKeys` then being the owners' primary keys, one row an owner.
    static func loadThroughOwners(
        relationship index: Int, of owner: EntityLayout, in layout: ModelLayout, ownerKeys: [[StoredValue]]
    ) -> Statement {
        let target = layout.entities[owner.targets[index]]
        let from = owner.fromColumns[index]
        let ownerColumns = from.map { column in owner.selectCasts[column].map { "o.\(owner.columns[column])::\($0)" } ?? "o.\(owner.columns[column])" }
        let targetColumns = owner.targetColumns[index]
        var joins = "\(owner.source) o"
        if let helperIndex = owner.helpers[index] {
            let helper = layout.entities[helperIndex]
            let (helperFrom, helperTo) = owner.helperColumns[index]
            joins += " JOIN \(helper.table) h ON " + zip(helperFrom, from).map { referencing, referenced in
                keyEqual("h.\(helper.columns[referencing])", "o.\(owner.columns[referenced])", owner.entity.attributes[referenced])
            }.joined(separator: " AND ")
            joins += " JOIN \(target.source) t ON " + zip(helperTo, targetColumns).map { referencing, referenced in
                keyEqual("h.\(helper.columns[referencing])", "t.\(target.columns[referenced])", target.entity.attributes[referenced])
            }.joined(separator: " AND ")
        } else if owner.entity.relationships[index].foreignKeyIn == .from {
            joins += " JOIN \(target.source) t ON " + zip(from, targetColumns).map { referencing, referenced in
                keyEqual("o.\(owner.columns[referencing])", "t.\(target.columns[referenced])", target.entity.attributes[referenced])
            }.joined(separator: " AND ")
        } else {
            joins += " JOIN \(target.source) t ON " + zip(targetColumns, from).map { referencing, referenced in
                keyEqual("t.\(target.columns[referencing])", "o.\(owner.columns[referenced])", owner.entity.attributes[referenced])
            }.joined(separator: " AND ")
        }
        var sql = SQLBuilder()
        let byPrimaryKey = ownersByPrimaryKey(relationship: index, of: owner)
        let keyColumns = byPrimaryKey ? owner.primaryKey : from
        let belongs = sql.keyCondition(keyColumns.map { "o.\(owner.columns[$0])" }, types: keyColumns.map { owner.types[$0] }, ownerKeys)
        sql += "SELECT \(target.selectList(alias: "t")), \(ownerColumns.joined(separator: ", ")) FROM \(joins) WHERE \(belongs)"
        return sql.statement
    }

    /// `referencing = referenced` under the referenced column's collation, as its foreign key
    /// compares them (two columns of other collations have none to compare by otherwise).
    static func keyEqual(_ referencing: String, _ referenced: String, _ attribute: Attribute) -> String {
        "\(referencing) = \(referenced)" + (attribute.collationName.map { " COLLATE \($0)" } ?? "")
    }

    /// Whether ``loadThroughOwners(relationship:of:in:ownerKeys:)`` finds the owners by
    /// their primary keys: a to-one whose foreign key the owner holds, which many owners may
    /// share (by their `from` columns, a target would come once for each of them).
    static func ownersByPrimaryKey(relationship index: Int, of owner: EntityLayout) -> Bool {
        owner.entity.relationships[index].foreignKeyIn == .from && !owner.primaryKey.isEmpty
    }

    /// How many members relationship `index` of `owner` has for each owner whose key is in
    /// `ownerKeys`, a list a key column (`ownerKeys[c][k]` is column `c` of key `k`):
    /// `SELECT <foreign key>, count(*) … GROUP BY <foreign key>` on the target's table, or
    /// on the helper's for a many-to-many. Owners without members have no row.
    static func counts(
        relationship index: Int, of owner: EntityLayout, in layout: ModelLayout, ownerKeysByColumn ownerKeys: [[StoredValue]]
    ) -> Statement {
        let counted: EntityLayout
        let columns: [Int]
        if let helper = owner.helpers[index] {
            counted = layout.entities[helper]
            columns = owner.helperColumns[index].from
        } else {
            counted = layout.entities[owner.targets[index]]
            columns = owner.targetColumns[index]
        }
        let names = columns.map { counted.columns[$0] }
        let list = names.joined(separator: ", ")
        var sql = SQLBuilder()
        if owner.linksByServer[index] {
            // Grouped by the owner's own columns, as its row stores them: the server takes
            // the members' other bytes for them (``EntityLayout/linksByServer``).
            let from = owner.fromColumns[index].map { "o.\(owner.columns[$0])" }
            let on = zip(names, zip(from, owner.fromColumns[index])).map { name, referenced in
                keyEqual("c.\(name)", referenced.0, owner.entity.attributes[referenced.1])
            }.joined(separator: " AND ")
            let belongs = sql.keyCondition(from, types: owner.fromColumns[index].map { owner.types[$0] }, byColumn: ownerKeys)
            let grouped = from.joined(separator: ", ")
            sql += "SELECT \(grouped), count(*) FROM \(owner.source) o JOIN \(counted.source) c ON \(on) WHERE \(belongs) GROUP BY \(grouped)"
            return sql.statement
        }
        let belongs = sql.keyCondition(names, types: columns.map { counted.types[$0] }, byColumn: ownerKeys)
        sql += "SELECT \(list), count(*) FROM \(counted.source) WHERE \(belongs) GROUP BY \(list)"
        return sql.statement
    }

    // MARK: - Cursors

    /// `DECLARE <cursor> NO SCROLL CURSOR FOR <query>`, the query's values bound as they were.
    static func declare(_ cursor: String, for query: Statement) -> Statement {
        Statement(sql: "DECLARE \(cursor) NO SCROLL CURSOR FOR \(query.sql)", parameters: query.parameters, format: .text)
    }

    /// `FETCH FORWARD <rows> FROM <cursor>`: a count in the SQL, since `FETCH` takes no parameter.
    static func fetch(_ rows: Int, from cursor: String) -> Statement {
        Statement(sql: "FETCH FORWARD \(rows) FROM \(cursor)", parameters: [])
    }

    static func close(_ cursor: String) -> Statement {
        Statement(sql: "CLOSE \(cursor)", parameters: [], format: .text)
    }
}
