import RelatePostgres

/// Rows of a many-to-many's helper table: one row a pair, the owner's key in `from`
/// columns, the member's in `to` columns (``EntityLayout/helperColumns``). `returning`: the
/// rows written come back, for loaded relationships that show the helper's own rows
/// (`person.person_title_rel`); otherwise nothing does, and 10,000 inserts cost no 10,000
/// result rows.
extension Statements {
    /// `INSERT INTO <helper> (<owner key>, <member key>, <more>) VALUES (…)`; with
    /// `skippingExisting` a pair the helper holds already is left as it is (`ON CONFLICT
    /// (<pair>) DO NOTHING`: the pair must be a unique key of the helper).
    static func insertPair(
        into helper: EntityLayout, pair: (from: [Int], to: [Int]), values: [(any PostgresEncodable)?],
        more: [(column: Int, value: (any PostgresEncodable)?)] = [], returning: Bool, skippingExisting: Bool = false
    ) -> Statement {
        let columns = pair.from + pair.to + more.map(\.column)
        var sql = SQLBuilder()
        let placeholders = sql.bind(values + more.map(\.value))
        sql += "INSERT INTO \(helper.table) (\(columns.map { helper.columns[$0] }.joined(separator: ", "))) VALUES ("
            + placeholders.joined(separator: ", ") + ")"
        if skippingExisting {
            sql += " ON CONFLICT (\((pair.from + pair.to).map { helper.columns[$0] }.joined(separator: ", "))) DO NOTHING"
        }
        if returning { sql += " RETURNING \(helper.selectList())" }
        return sql.statement
    }

    /// Many pairs of one owner in one `INSERT INTO <helper> (<pair>) SELECT <owner key>,
    /// v.<member key> FROM (SELECT unnest(<arrays>) AS <member key>) AS v`
    /// (``arrayRows(_:as:numbered:)``): the owner's key once, as
    /// scalars (`owner`, in the order of `pair.from`), and a typed array per column of the
    /// members' key (`arrays`, in the order of `pair.to`): one statement to plan and run
    /// instead of one a pair, and no array that repeats the owner's key for every row.
    /// `skippingExisting`: pairs the helper holds already are left as they are (`WHERE NOT
    /// EXISTS`, the owner's key bound a second time there). Not `ON CONFLICT DO NOTHING`: for 10,000 pairs its speculative inserts
    /// took 10–25% longer (`RelateProfile m2m-replace 20 --paired`).
    static func insertPairs(
        into helper: EntityLayout, pair: (from: [Int], to: [Int]), owner: [(any PostgresEncodable)?], arrays: [any PostgresEncodable],
        returning: Bool, skippingExisting: Bool = false
    ) -> Statement {
        let ownerColumns = pair.from.map { helper.columns[$0] }
        let memberColumns = pair.to.map { helper.columns[$0] }
        var sql = SQLBuilder()
        let ownerValues = sql.bind(owner)
        let memberArrays = sql.bind(arrays.map { $0 })
        let unnested = memberColumns.map { "v.\($0)" }
        sql += "INSERT INTO \(helper.table) (\((ownerColumns + memberColumns).joined(separator: ", "))) "
            + "SELECT \((ownerValues + unnested).joined(separator: ", ")) "
            + "FROM \(arrayRows(memberArrays, as: memberColumns, numbered: false))"
        if skippingExisting {
            // The owner's key bound again: a parameter sent untyped (text) takes its type from
            // its first use, and a varchar column is compared as text but assigned as varchar.
            let same = sql.equal(ownerColumns.map { "h.\($0)" }, owner) + memberColumns.map { " AND h.\($0) = v.\($0)" }.joined()
            sql += " WHERE NOT EXISTS (SELECT 1 FROM \(helper.table) h WHERE \(same))"
        }
        if returning { sql += " RETURNING \(helper.selectList())" }
        return sql.statement
    }

    /// Deletes one helper row of the pair whose keys are `values` (the owner's, then the
    /// member's), `RETURNING` it. `keyed`: the pair is a unique key of the helper; else the
    /// pair may repeat, and exactly one of its rows goes (by `tableoid, ctid`).
    static func deletePair(
        from helper: EntityLayout, pair: (from: [Int], to: [Int]), values: [(any PostgresEncodable)?], keyed: Bool
    ) -> Statement {
        var sql = SQLBuilder()
        let condition = sql.equal((pair.from + pair.to).map { helper.columns[$0] }, values)
        sql += keyed
            ? "DELETE FROM \(helper.table) WHERE \(condition) RETURNING \(helper.selectList())"
            : "DELETE FROM \(helper.table) WHERE (tableoid, ctid) = (SELECT tableoid, ctid FROM \(helper.table) WHERE \(condition) LIMIT 1) "
                + "RETURNING \(helper.selectList())"
        return sql.statement
    }

    /// Deletes the owner's pairs (`owner`: its key) with every member but those whose keys
    /// are `kept`, `RETURNING` them: what leaves is whatever the database links beyond
    /// them, seen or not by memory. `kept` is by column: `kept[c][m]` is the member key's
    /// column `c` of kept member `m` (no list, or empty lists: none kept).
    static func deletePairs(
        from helper: EntityLayout, pair: (from: [Int], to: [Int]), owner: [(any PostgresEncodable)?], keeping kept: [[StoredValue]]
    ) -> Statement {
        var sql = SQLBuilder()
        let belongs = sql.equal(pair.from.map { helper.columns[$0] }, owner)
        sql += "DELETE FROM \(helper.table) WHERE \(belongs)"
        if let first = kept.first, !first.isEmpty {
            let others = sql.keyCondition(pair.to.map { helper.columns[$0] }, types: pair.to.map { helper.types[$0] }, byColumn: kept)
            sql += " AND NOT (\(others))"
        }
        sql += " RETURNING \(helper.selectList())"
        return sql.statement
    }
}
