import RelatePostgres

/// A statement the object layer sends: its SQL and its bound values. A plain value, built
/// by ``Statements`` from the model's layouts and the values memory holds, so that every
/// statement can be read and tested without a server; ``DatabaseContext`` sends it.
struct Statement {
    var sql: String
    var parameters: [(any PostgresEncodable)?]
    /// Rows come back in binary wherever a type has a binary decoder (every statement whose
    /// rows become objects); text for the rest.
    var format: PostgresFormat = .binary
    /// Whether it is one of the statements sent again and again, whose text depends on the
    /// entity (and the columns written) alone: prepared on the server once per connection
    /// (`Connection.queryPrepared(_:_:format:)`). Never in a pipeline. Set by the
    /// ``Statements`` builder that makes it: a row by key, an update without expected
    /// values, a delete by key.
    var isRepeated = false

    /// The form libpq's pipeline takes.
    var postgres: PostgresStatement { PostgresStatement(sql, parameters, format: format) }
}

/// Writes one statement: text appended in order, every value bound through ``bind(_:)``,
/// which answers its placeholder. The only place the object layer numbers a `$n`, for
/// reads (``RequestSQL``) and writes (``Statements``) alike.
struct SQLBuilder {
    private(set) var sql: String
    private(set) var parameters: [(any PostgresEncodable)?]
    /// What a placeholder is before its number: `$`, or a row's columns (`v.p`) where the
    /// values go in arrays, one row of them a statement's (see ``MatchTests``).
    private let placeholder: String

    /// `parameters` are values the SQL already refers to (`$1`… of a caller's condition):
    /// what is bound next is numbered after them.
    init(_ sql: String = "", parameters: [(any PostgresEncodable)?] = [], placeholder: String = "$") {
        self.sql = sql
        self.parameters = parameters
        self.placeholder = placeholder
    }

    static func += (builder: inout SQLBuilder, text: String) {
        builder.sql += text
    }

    /// Binds `value`; answers its placeholder.
    mutating func bind(_ value: (any PostgresEncodable)?) -> String {
        parameters.append(value)
        return "\(placeholder)\(parameters.count)"
    }

    /// Binds each of `values`; answers their placeholders, in order.
    mutating func bind(_ values: [(any PostgresEncodable)?]) -> [String] {
        values.map { bind($0) }
    }

    /// `"a" = $n AND "b" = $n+1`: each column equal to its value.
    mutating func equal(_ columns: [String], _ values: [(any PostgresEncodable)?]) -> String {
        zip(columns, values).map { column, value in "\(column) = \(bind(value))" }.joined(separator: " AND ")
    }

    /// The rows whose `columns` hold one of `keys`: `"c" = $1` for one key, `"c" = ANY($1)`
    /// for several, and for composite keys `("a", "b") IN (SELECT * FROM unnest($1, $2))`.
    /// Each list goes typed as its column (or as an untyped literal the server reads as the
    /// column's type), so that the column's index serves the lookup.
    mutating func keyCondition(_ columns: [String], types: [PostgresType], _ keys: [[StoredValue]]) -> String {
        if keys.count == 1 {
            return equal(columns, keys[0].map(\.parameter))
        }
        return keyCondition(columns, types: types, byColumn: columns.indices.map { position in keys.map { $0[position] } })
    }

    /// ``keyCondition(_:types:_:)`` for keys given by column: `values[c][k]` is column `c`
    /// of key `k` (no array a key: for 10,000 keys of a many-to-many's replace).
    mutating func keyCondition(_ columns: [String], types: [PostgresType], byColumn values: [[StoredValue]]) -> String {
        if values[0].count == 1 {
            return equal(columns, values.map { $0[0].parameter })
        }
        if columns.count == 1 {
            return keyCondition(columns[0], type: types[0], values[0])
        }
        let lists = columns.indices.map { position in AttributeValue.keyList(values[position], columnType: types[position]) }
        let arrays = lists.map { bind($0.parameter) }
        // unnest() cannot take an untyped literal: such a column is paired by its text
        // form, and its own `= ANY` lets its index narrow the rows first.
        var paired: [String] = []
        var narrowing = ""
        var unnested: [String] = []
        for (position, column) in columns.enumerated() {
            if case .literal = lists[position] {
                paired.append("\(column)::text")
                unnested.append("\(arrays[position])::text[]")
                narrowing += " AND \(column) = ANY(\(bind(lists[position].parameter)))"
            } else {
                paired.append(column)
                unnested.append(arrays[position])
            }
        }
        return "(\(paired.joined(separator: ", "))) IN (SELECT * FROM unnest(\(unnested.joined(separator: ", "))))" + narrowing
    }

    /// ``keyCondition(_:types:_:)`` for a one-column key, its values in one list.
    mutating func keyCondition(_ column: String, type: PostgresType, _ values: [StoredValue]) -> String {
        if values.count == 1 { return "\(column) = \(bind(values[0].parameter))" }
        return keyCondition(column, list: AttributeValue.keyList(values, columnType: type).parameter)
    }

    /// `"c" = ANY($n)`: the rows whose `column` holds one of the keys in `list` (a list made
    /// as ``keyCondition(_:type:_:)`` makes it).
    mutating func keyCondition(_ column: String, list: (any PostgresEncodable)?) -> String {
        "\(column) = ANY(\(bind(list)))"
    }

    var statement: Statement { Statement(sql: sql, parameters: parameters) }
}
