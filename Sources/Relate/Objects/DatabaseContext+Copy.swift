import Foundation
import RelatePostgres

/// `COPY`: rows loaded with no object made (``copy(into:rows:)``), and a request's rows
/// streamed out (``copy(_:format:to:)``).
extension DatabaseContext {
    /// Loads `rows` into `entity`'s table and answers how many, making no object: binary
    /// `COPY … FROM STDIN`, the fastest way PostgreSQL takes rows, all or nothing.
    ///
    /// ```swift
    /// let loaded = try context.copy(into: "reading", rows: samples.map { ["sensor": $0.sensor, "value": $0.value] })
    /// ```
    ///
    /// Rows that give the same keys go in one `COPY`, in one transaction; rows that leave a
    /// key out take its default. Values are encoded as the copy streams, a megabyte at a
    /// time, so that the client encodes while the server stores. A column whose values have no binary form the copy can
    /// send as they are (`numeric`, a `date`, a `timestamp` without time zone, an enum)
    /// makes its rows go as ``insert(_:rows:)->[DatabaseObject]``'s statements instead. Memory stays right:
    /// live results are told, and rows that may refer to an object whose set of them is
    /// loaded (by a foreign key they give, or one left to its default) go through
    /// ``insert(_:rows:)->[DatabaseObject]`` so that the set takes them.
    ///
    /// - Parameters:
    ///   - entityName: The entity (`person`, or `schema.table`).
    ///   - rows: The rows' values by key, as ``insert(_:values:)`` takes them.
    /// - Returns: How many rows were copied.
    /// - Throws: ``RelateError``: an unknown key, a value that does not fit (the copy ends
    ///   there and nothing of it is written), a context that does not autocommit (``RelateError/Kind-swift.struct/invalidWrite``:
    ///   use ``insert(_:rows:)->[DatabaseObject]``), or what the database refuses (nothing is written then).
    @discardableResult
    public func copy(into entityName: String, rows: [[String: Any?]]) throws -> Int {
        let entity = try copyTarget(entityName)
        let table = graph.tables[entity]
        guard !rows.isEmpty else { return 0 }
        graph.membershipsMayChange()
        let groups = try rowsByKeys(rows, of: entity)
        // A transaction of the context's, not only the connection's: the rows that join a
        // loaded set do so in memory, and a later group that fails takes them back out.
        let copied = try transaction {
            var copied = 0
            for group in groups {
                if joinsLoadedSets(group.columns, of: entity, inserting: true) {
                    // The sets must take the new rows as objects: the statements that read them back.
                    let objects = try insertRows(entity, columns: group.columns, values: try parameters(of: group, in: rows, entity: entity))
                    for object in objects { graph.apply(.insert(object, columns: group.columns)) }
                    copied += objects.count
                } else if group.columns.allSatisfy({ Self.copiesInBinary(table.layout.types[$0]) }) {
                    copied += try copyInBinary(group, of: rows, entity: entity)
                } else {
                    let values = try parameters(of: group, in: rows, entity: entity)
                    let statements = Statements.insertRows(into: table.layout, columns: group.columns, rows: values, returning: false)
                    for statement in statements { copied += try send(statement, entity: entity).affectedRows ?? 0 }
                }
            }
            return copied
        }
        if copied > 0 { graph.noteChange(of: entity) }
        settleLinks()
        return copied
    }

    /// The entity a copy loads into: one whose rows this context may insert, in a context
    /// that autocommits (a copy writes at once).
    func copyTarget(_ entityName: String) throws -> Int {
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
        try require(.insert, on: table)
        if try writesPending() {
            throw RelateError(
                kind: .invalidWrite,
                message: "copy(into:) writes at once, and this context does not autocommit; use insert(_:rows:), which waits for save()",
                entity: table.entity.name)
        }
        return entity
    }

    /// Rows that give the same keys, and how each key is written: the columns, in order.
    private struct KeyGroup {
        var keys: [(key: String, target: ResolvedKey)]
        var columns: [Int]
        var rows: [Int]
    }

    /// `rows` grouped by the keys they give, in the order each set of keys first comes: a
    /// pass that looks at keys only (a row with the keys of the one before costs a lookup
    /// a key), the values being encoded as the copy streams. A row that may refer to
    /// another is grouped only with the rows next to it (``selfReferences(_:)``).
    private func rowsByKeys(_ rows: [[String: Any?]], of entity: Int) throws -> [KeyGroup] {
        let table = graph.tables[entity]
        let referringKeys = selfReferences(entity).keys
        var groups: [KeyGroup] = []
        var groupOfKeys: [[String]: Int] = [:]
        var last = -1
        for (position, row) in rows.enumerated() {
            let refers = !referringKeys.isEmpty && row.keys.contains(where: referringKeys.contains)
            if last >= 0, !refers || last == groups.count - 1, groups[last].keys.count == row.count,
                groups[last].keys.allSatisfy({ row.index(forKey: $0.key) != nil })
            {
                groups[last].rows.append(position)
                continue
            }
            let keys = row.keys.sorted()
            if !refers, let index = groupOfKeys[keys] {
                groups[index].rows.append(position)
                last = index
                continue
            }
            var group = KeyGroup(keys: [], columns: [], rows: [position])
            for key in keys {
                let target = try resolve(key, in: entity)
                group.keys.append((key, target))
                switch target {
                case .attribute(let index): group.columns.append(index)
                case .relationship(let index):
                    // Checked as a write checks it: a to-one whose key this table holds.
                    _ = try heldToOne(key, nil, of: entity, index, for: "give the foreign key's columns")
                    group.columns += table.fromColumns[index]
                }
            }
            groupOfKeys[keys] = groups.count
            last = groups.count
            groups.append(group)
        }
        return groups
    }

    /// The group's rows as the parameters of statements, in the group's columns.
    private func parameters(of group: KeyGroup, in rows: [[String: Any?]], entity: Int) throws -> [[(any PostgresEncodable)?]] {
        try group.rows.map { position in try columnValues(rows[position], of: entity, for: "give the foreign key's columns").parameters }
    }

    /// Whether a column of `type` takes the binary field ``binaryField(_:for:type:entity:into:)`` writes.
    static func copiesInBinary(_ type: PostgresType) -> Bool {
        [.int2, .int4, .int8, .float4, .float8, .bool, .text, .varchar, .bpchar, .timestamptz, .uuid, .bytea].contains(type)
    }

    /// One binary `COPY` of the group's rows, encoded as it streams: a megabyte is
    /// encoded while the server takes the one before. A value that does not fit ends the
    /// copy with its error (the transaction leaves nothing of it).
    private func copyInBinary(_ group: KeyGroup, of rows: [[String: Any?]], entity: Int) throws -> Int {
        let table = graph.tables[entity]
        let names = group.columns.map { table.layout.columns[$0] }.joined(separator: ", ")
        let types = group.columns.map { table.layout.types[$0] }
        return try read(entity: entity) {
            try connection.copyIn("COPY \(table.layout.table) (\(names)) FROM STDIN (FORMAT binary)") { send in
                var data: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]
                data.reserveCapacity(1 << 20 + 4096)
                var field: [UInt8] = []
                for position in group.rows {
                    let row = rows[position]
                    Self.append(Int16(types.count), to: &data)
                    var column = 0
                    for (key, target) in group.keys {
                        // Unwrapped only where the usual types' casts miss: `as? Int` sees
                        // through an optional already, and the unwrapping's casts cost a row more.
                        let value = row[key] ?? nil
                        switch target {
                        case .attribute(let index):
                            try Self.appendField(value, for: table.entity.attributes[index], type: types[column], entity: table.entity, to: &data, using: &field)
                            column += 1
                        case .relationship(let index):
                            for (_, held) in try heldToOne(key, AttributeValue.unwrap(value), of: entity, index, for: "give the foreign key's columns") {
                                try Self.appendField(held.parameter, for: table.entity.attributes[group.columns[column]], type: types[column], entity: table.entity, to: &data, using: &field)
                                column += 1
                            }
                        }
                    }
                    if data.count >= 1 << 20 {
                        try send(data)
                        data.removeAll(keepingCapacity: true)
                    }
                }
                Self.append(Int16(-1), to: &data)
                try send(data)
            }
        }
    }

    private static func append<Integer: FixedWidthInteger>(_ value: Integer, to data: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }

    /// `value` given for `attribute` (a column of `type`) as a binary `COPY` field: its
    /// length, then its bytes; NULL as length -1. The usual Swift types go straight in;
    /// others through the check every write makes (``AttributeValue/encodable(_:for:entity:use:)``).
    static func appendField(
        _ value: Any?, for attribute: Attribute, type: PostgresType, entity: Entity, to data: inout [UInt8], using field: inout [UInt8]
    ) throws {
        switch (value, type) {
        case (nil, _):
            append(Int32(-1), to: &data)
            return
        case (let integer as Int, .int8):
            append(Int32(8), to: &data)
            append(Int64(integer), to: &data)
            return
        case (let integer as Int, .int4):
            if let narrow = Int32(exactly: integer) {
                append(Int32(4), to: &data)
                append(narrow, to: &data)
                return
            }
        case (let text as String, .text), (let text as String, .varchar):
            let count = text.utf8.count
            append(Int32(count), to: &data)
            data += text.utf8
            return
        case (let number as Double, .float8):
            append(Int32(8), to: &data)
            append(number.bitPattern, to: &data)
            return
        case (let flag as Bool, .bool):
            append(Int32(1), to: &data)
            data.append(flag ? 1 : 0)
            return
        default:
            break
        }
        guard let parameter = try AttributeValue.encodable(value, for: attribute, entity: entity) else {
            append(Int32(-1), to: &data)
            return
        }
        field.removeAll(keepingCapacity: true)
        guard binaryField(parameter, type: type, into: &field) else {
            throw RelateError(
                kind: .typeMismatch,
                message: "key \"\(attribute.key)\" of \"\(entity.name)\" is column \"\(attribute.name)\" of type \(attribute.type); a \(Swift.type(of: parameter)) cannot be copied into it in binary",
                entity: entity.name, key: attribute.key)
        }
        append(Int32(field.count), to: &data)
        data += field
    }

    /// The columns of `entity`'s foreign keys to itself, and the keys that write them (the
    /// columns' attributes, the to-ones'). A new row that gives one may refer to another new
    /// row: grouped by the keys they give, it could go in a statement before the row it
    /// refers to, so a bulk write groups it only with the rows next to it, and a list in the
    /// order of its references is stored in it. A row that gives none refers to no row: it
    /// may go with rows before it.
    func selfReferences(_ entity: Int) -> (columns: Set<Int>, keys: Set<String>) {
        var columns: Set<Int> = []
        var keys: Set<String> = []
        let table = graph.tables[entity]
        for (relationship, foreignKey) in table.foreignKeys where graph.target(of: entity, relationship) == entity {
            columns.formUnion(foreignKey)
            keys.insert(table.entity.relationships[relationship].key)
            for column in foreignKey { keys.insert(table.entity.attributes[column].key) }
        }
        return (columns, keys)
    }

    /// Whether rows writing `columns` of `entity` may join a loaded set: a foreign key among
    /// them whose inverse is loaded on an object memory holds. New rows (`inserting`) write
    /// the columns they leave out too, where those take a default.
    func joinsLoadedSets(_ columns: [Int], of entity: Int, inserting: Bool = false) -> Bool {
        let attributes = graph.tables[entity].entity.attributes
        return graph.tables[entity].foreignKeys.contains { index, foreignKey in
            let inverse = graph.inverse(of: entity, index)
            return foreignKey.contains { columns.contains($0) || (inserting && attributes[$0].hasDefault) }
                && graph.loadedRelationships.contains(inverse) && !graph.registries[inverse.entity].isEmpty
        }
    }

    func insertRows(_ entity: Int, columns: [Int], values: [[(any PostgresEncodable)?]]) throws -> [DatabaseObject] {
        var objects: [DatabaseObject] = []
        for statement in Statements.insertRows(into: graph.tables[entity].layout, columns: columns, rows: values) {
            objects += try graph.materialize(entity: entity, result: try send(statement, entity: entity), rowsAreDistinct: true)
        }
        return objects
    }

    /// `value` as a field of a column of `type` in binary: integers at the column's width,
    /// text as its bytes, and any value whose own binary form is of the column's type.
    private static func binaryField(_ value: any PostgresEncodable, type columnType: PostgresType, into field: inout [UInt8]) -> Bool {
        func append<Integer: FixedWidthInteger>(_ value: Integer) {
            withUnsafeBytes(of: value.bigEndian) { field.append(contentsOf: $0) }
        }
        switch (value, columnType) {
        case (let integer as Int, .int2):
            guard let narrow = Int16(exactly: integer) else { return false }
            append(narrow)
        case (let integer as Int, .int4):
            guard let narrow = Int32(exactly: integer) else { return false }
            append(narrow)
        case (let integer as Int, .int8):
            append(Int64(integer))
        case (let number as Double, .float4):
            append(Float(number).bitPattern)
        case (let text as String, .text), (let text as String, .varchar), (let text as String, .bpchar):
            field += text.utf8
        default:
            guard type(of: value).postgresFormat == .binary, value.postgresValueType == columnType else { return false }
            do { try value.encode(into: &field) } catch { return false }
        }
        return true
    }

    // MARK: - Out

    /// Streams the rows `request` fetches out of the database with `COPY (SELECT …) TO
    /// STDOUT`, each row handed to `receive` as it arrives: memory holds one row, however
    /// many there are. Answers how many rows were copied. The columns are the entity's
    /// attributes, in the model's order; the request's order, limit and offset apply.
    ///
    /// ```swift
    /// var csv = Data()
    /// try context.copy(FetchRequest("person", orderBy: [.ascending("id")]), format: .csv(header: true)) { csv.append(contentsOf: $0) }
    /// ```
    ///
    /// `COPY` takes no parameters: the request's values are first turned into their text by
    /// the server (one round trip), then quoted by libpq (`PQescapeLiteral`) and typed, never
    /// pasted as they came; logs, traces and errors show the statement with its placeholders,
    /// not the values. Pending changes of a context that does not autocommit are not
    /// in the copy: it reads what the database holds.
    ///
    /// - Parameters:
    ///   - request: The rows, as a fetch reads them.
    ///   - format: CSV (with or without a header line), PostgreSQL's text format, or binary.
    ///   - receive: Takes each row's bytes (valid only during the call); with `.binary`, the
    ///     format's header comes with the first row and its trailer last.
    /// - Returns: How many rows were copied.
    /// - Throws: ``RelateError`` for a request that cannot be made, or the database's error;
    ///   or what `receive` threw (the rest of the copy is read and dropped).
    @discardableResult
    public func copy(_ request: FetchRequest, format: CopyFormat = .csv(header: true), to receive: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        let (entity, select) = try request.selectStatement(layout)
        let sql = try withLiterals(select.statement, entity: entity)
        // Logs, traces and errors show the statement with its placeholders, not the values.
        let shown = "COPY (\(select.statement.sql)) TO STDOUT \(format.options)"
        return try read(entity: entity) { try connection.copyOut("COPY (\(sql)) TO STDOUT \(format.options)", shown: shown, receive) }
    }

    /// `statement`'s SQL with each `$n` replaced by its value as a quoted literal: typed as
    /// the parameter is sent (`'42'::bigint`), untyped where the server infers the type of
    /// a parameter (a `String`'s, which then reads as the column it meets).
    private func withLiterals(_ statement: Statement, entity: Int) throws -> String {
        guard !statement.parameters.isEmpty else { return statement.sql }
        let asked = statement.parameters.indices.map { "$\($0 + 1)::text, pg_typeof($\($0 + 1))::text" }.joined(separator: ", ")
        let texts = try send(Statement(sql: "SELECT \(asked)", parameters: statement.parameters, format: .text), entity: entity)[0]
        var literals: [String] = []
        for (position, parameter) in statement.parameters.enumerated() {
            guard let parameter, let text = try texts.decode(String?.self, at: 2 * position) else {
                literals.append("NULL")
                continue
            }
            let literal = try read(entity: entity) { try connection.quoteLiteral(text) }
            if parameter.postgresValueType == .unspecified {
                literals.append(literal)
            } else {
                literals.append("\(literal)::\(try texts.decode(String.self, at: 2 * position + 1))")
            }
        }
        return Self.replacingPlaceholders(in: statement.sql, with: literals)
    }

    /// `sql` with `$1`, `$2`… outside quoted identifiers and strings replaced by `literals`.
    static func replacingPlaceholders(in sql: String, with literals: [String]) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count)
        var quote: Character?
        var characters = sql[...]
        while let character = characters.popFirst() {
            if let open = quote {
                if character == open { quote = nil }
                result.append(character)
            } else if character == "\"" || character == "'" {
                quote = character
                result.append(character)
            } else if character == "$", let first = characters.first, first.isASCII, first.isNumber {
                let digits = characters.prefix { $0.isASCII && $0.isNumber }
                characters = characters.dropFirst(digits.count)
                result += Int(digits).map { literals[$0 - 1] } ?? "$\(digits)"
            } else {
                result.append(character)
            }
        }
        return result
    }
}

/// The format of a request's rows copied out (``DatabaseContext/copy(_:format:to:)``).
public enum CopyFormat: Sendable, Hashable {
    /// Comma-separated values (RFC 4180 quoting); `header`: a first line of column names.
    case csv(header: Bool)
    /// PostgreSQL's text format: tab-separated, `\N` for NULL, backslash escapes.
    case text
    /// PostgreSQL's binary format: each value as the server sends it in binary.
    case binary

    var options: String {
        switch self {
        case .csv(let header): "(FORMAT csv, HEADER \(header))"
        case .text: "(FORMAT text)"
        case .binary: "(FORMAT binary)"
        }
    }
}
