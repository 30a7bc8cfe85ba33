import RelatePostgres

/// The statements of a bulk insert (``DatabaseContext/insert(_:rows:)``).
extension Statements {
    /// The most parameters one statement may bind (the protocol counts them in 16 bits).
    static let parameterLimit = 65_535

    /// Rows that give the same `columns` (`rows[r][c]` the value of column `c` of row `r`),
    /// inserted with `RETURNING` their columns, in the rows' order. Each column goes as one
    /// typed array, `INSERT … SELECT * FROM (SELECT unnest($1) AS c0, unnest($2) AS c1, …)
    /// AS v` (``arrayRows(_:as:numbered:)``): one statement, as many
    /// parameters as columns, whatever the number of rows. A column whose type has no Swift
    /// array (an enum, a date: ``columnArray(_:type:)``) makes it a multi-row `VALUES`, as
    /// many statements as the parameter limit needs. No column at all: every row takes
    /// its defaults, one `SELECT FROM generate_series` of them.
    static func insertRows(
        into table: EntityLayout, columns: [Int], rows: [[(any PostgresEncodable)?]], returning: Bool = true
    ) -> [Statement] {
        let returning = returning ? " RETURNING \(table.selectList())" : ""
        guard !columns.isEmpty else {
            var sql = SQLBuilder("INSERT INTO \(table.table) SELECT FROM generate_series(1, ")
            let count = sql.bind(rows.count)
            sql += count + ")" + returning
            return [sql.statement]
        }
        let names = columns.map { table.columns[$0] }.joined(separator: ", ")
        var arrays: [any PostgresEncodable] = []
        for (position, column) in columns.enumerated() {
            guard let array = columnArray(rows.map { StoredValue(encoded: $0[position]) }, type: table.types[column]) else { break }
            arrays.append(array)
        }
        if arrays.count == columns.count {
            var sql = SQLBuilder("INSERT INTO \(table.table) (\(names)) SELECT * FROM ")
            let placeholders = sql.bind(arrays)
            sql += arrayRows(placeholders, as: placeholders.indices.map { "c\($0)" }, numbered: false) + returning
            return [sql.statement]
        }
        let perStatement = max(1, parameterLimit / columns.count)
        return stride(from: 0, to: rows.count, by: perStatement).map { start in
            var sql = SQLBuilder("INSERT INTO \(table.table) (\(names)) VALUES ")
            let chunk = rows[start..<min(start + perStatement, rows.count)]
            var tuples: [String] = []
            for row in chunk { tuples.append("(" + sql.bind(row).joined(separator: ", ") + ")") }
            sql += tuples.joined(separator: ", ") + returning
            return sql.statement
        }
    }
}
