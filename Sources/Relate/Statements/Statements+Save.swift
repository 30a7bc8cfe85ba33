import RelatePostgres

/// The statements `save()` sends for a context's pending changes.
extension Statements {
    /// Many rows' updates of the same columns in one statement: `UPDATE … AS t SET <column>
    /// = v.n0 … FROM (SELECT unnest(<keys>) AS k0, unnest(<new values>) AS n0,
    /// unnest(<held values>) AS o0) AS v WHERE <key> = v.k0 AND <column> IS NOT DISTINCT
    /// FROM v.o0 …` (``arrayRows(_:as:numbered:)``). Each list is an array a column, each
    /// row's held values what memory held before the change; a row another client changed
    /// in one of the columns is not written.
    ///
    /// With `returning`, the arrays' rows are numbered and each row comes back as stored,
    /// then the position of its update in the arrays (from 1): its object is found by that,
    /// not looked up by its key. Without it, the count of rows written is the whole answer
    /// (``EntityLayout/storesAsSent``: returning 1,000 rows cost the server more than the
    /// update, Benchmarks/README.md).
    static func savedUpdates(
        _ table: EntityLayout, setting columns: [Int], keys: [(any PostgresEncodable)?], values: [(any PostgresEncodable)?],
        held: [(any PostgresEncodable)?], returning: Bool
    ) -> Statement {
        var sql = SQLBuilder()
        let keyNames = table.primaryKey.indices.map { "k\($0)" }
        let newNames = columns.indices.map { "n\($0)" }
        let heldNames = columns.indices.map { "o\($0)" }
        let arrays = sql.bind(keys + values + held)
        let assignments = zip(columns, newNames).map { "\(table.columns[$0]) = v.\($1)" }.joined(separator: ", ")
        let row = zip(table.primaryKey, keyNames).map { "t.\(table.columns[$0]) = v.\($1)" }
        let unchanged = zip(columns, heldNames).map { column, held in
            table.comparedAsText[column]
                ? "t.\(table.columns[column])::text IS NOT DISTINCT FROM v.\(held)::text" : "t.\(table.columns[column]) IS NOT DISTINCT FROM v.\(held)"
        }
        sql += "UPDATE \(table.source) AS t SET \(assignments) FROM \(arrayRows(arrays, as: keyNames + newNames + heldNames, numbered: returning)) WHERE "
            + (row + unchanged).joined(separator: " AND ")
        if returning { sql += " RETURNING \(table.selectList(alias: "t")), v.i" }
        return sql.statement
    }

    /// After a ``savedUpdates(_:setting:keys:values:held:returning:)`` without `returning`
    /// wrote fewer rows than it was sent, in the same transaction: the position (from 1) of
    /// the first of its updates whose row is gone or does not hold what the update sent,
    /// the one another client changed (the others hold what was sent, which is what the
    /// table stores). No row when each holds what was sent (another client wrote the same).
    static func firstUpdateNotWritten(
        _ table: EntityLayout, setting columns: [Int], keys: [(any PostgresEncodable)?], values: [(any PostgresEncodable)?]
    ) -> Statement {
        var sql = SQLBuilder()
        let keyNames = table.primaryKey.indices.map { "k\($0)" }
        let newNames = columns.indices.map { "n\($0)" }
        let arrays = sql.bind(keys + values)
        let row = zip(table.primaryKey, keyNames).map { "t.\(table.columns[$0]) = v.\($1)" }
        let differs = zip(columns, newNames).map { column, new in
            table.comparedAsText[column]
                ? "t.\(table.columns[column])::text IS DISTINCT FROM v.\(new)::text" : "t.\(table.columns[column]) IS DISTINCT FROM v.\(new)"
        }
        sql += "SELECT v.i FROM \(arrayRows(arrays, as: keyNames + newNames, numbered: true)) "
            + "LEFT JOIN \(table.source) AS t ON \(row.joined(separator: " AND ")) "
            + "WHERE t.\(table.columns[table.primaryKey[0]]) IS NULL OR \(differs.joined(separator: " OR ")) ORDER BY v.i LIMIT 1"
        return sql.statement
    }

    /// A column's values as one typed array (NULLs included) a statement can `unnest` into
    /// the column and compare with it; `nil` for a type whose Swift array would not go in as
    /// it is (an enum, a `date`, a `timestamp` without time zone, a `char(n)`).
    static func columnArray(_ values: [StoredValue], type: PostgresType) -> (any PostgresEncodable)? {
        columnArray(count: values.count, type: type) { values[$0] }
    }

    /// ``columnArray(_:type:)`` of `count` values, the `i`th `value(i)`: a save reads its
    /// updates' values straight into the typed array, without an array of them first (three
    /// arrays of 1,000 values made and freed a save). A closure, not a generic collection:
    /// that was not specialized, and cost more than the arrays (Benchmarks/README.md).
    static func columnArray(count: Int, type: PostgresType, value: (Int) -> StoredValue) -> (any PostgresEncodable)? {
        func array<T>(_ read: (StoredValue) -> T?) -> [T?]? {
            var array: [T?] = []
            array.reserveCapacity(count)
            for index in 0..<count {
                let value = value(index)
                if value.isNull {
                    array.append(nil)
                } else if let element = read(value) {
                    array.append(element)
                } else {
                    return nil
                }
            }
            return array
        }
        switch type {
        case .int2: return array { if case .integer(let x) = $0 { Int16(exactly: x) } else { nil } }
        case .int4: return array { if case .integer(let x) = $0 { Int32(exactly: x) } else { nil } }
        case .int8: return array { if case .integer(let x) = $0 { x } else { nil } }
        case .float4: return array { if case .float(let x) = $0 { x } else { nil } }
        case .float8: return array { if case .double(let x) = $0 { x } else { nil } }
        case .numeric: return array { if case .decimal(let x) = $0 { x } else { nil } }
        case .bool: return array { if case .bool(let x) = $0 { x } else { nil } }
        case .text, .varchar: return array { if case .string(let x) = $0 { x } else { nil } }
        case .uuid: return array { if case .uuid(let x) = $0 { x } else { nil } }
        case .timestamptz: return array { if case .date(let x) = $0 { x } else { nil } }
        case .bytea: return array { if case .data(let x) = $0 { x } else { nil } }
        default: return nil
        }
    }
}
