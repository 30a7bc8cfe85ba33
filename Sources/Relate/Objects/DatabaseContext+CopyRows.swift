import RelatePostgres

/// `copy(into:columns:rows:)`: rows given by position, typed, for the largest loads — no
/// dictionary a row, no `Any` a value.
extension DatabaseContext {
    /// Loads rows into `columns` of `entity`'s table, each given by position to the
    /// writer's ``CopyRowWriter/append(_:)``, and answers how many, making no object: binary
    /// `COPY … FROM STDIN`, encoded as it streams (a megabyte at a time, so that the server
    /// stores while the client encodes), all or nothing.
    ///
    /// ```swift
    /// let loaded = try context.copy(into: "reading", columns: ["sensor", "value", "taken"]) { rows in
    ///     for sample in samples { try rows.append(sample.sensor, sample.value, sample.taken) }
    /// }
    /// ```
    ///
    /// The faster form of ``copy(into:rows:)``: the columns are resolved once, and each value
    /// goes into the copy as its own type's binary form (an `Int` at the column's width, a
    /// `String` as its bytes, a `Date`, a `UUID`, `Data`…), with no dictionary made or
    /// looked up a row. Columns left out take their defaults. As with ``copy(into:rows:)``,
    /// columns whose values have no binary form the copy sends as they are (`numeric`, a
    /// `date`, an enum), and rows that may join a set memory holds loaded, go as
    /// ``insert(_:rows:)->[DatabaseObject]``'s statements instead, so that memory stays right.
    ///
    /// - Parameters:
    ///   - entityName: The entity (`person`, or `schema.table`).
    ///   - columns: The attributes' keys, in the order each row gives its values (a to-one's
    ///     foreign key by its attribute's key).
    ///   - rows: Appends each row to the writer it is given.
    /// - Returns: How many rows were copied.
    /// - Throws: ``RelateError``: an unknown key or a relationship's (give its foreign key's
    ///   attribute), a row of another length or a value that does not fit its column (the
    ///   copy ends there and nothing of it is written), a context that does not autocommit
    ///   (``RelateError/Kind-swift.struct/invalidWrite``), what the database refuses (nothing
    ///   is written then), or what `rows` threw (nothing is written either).
    @discardableResult
    public func copy(into entityName: String, columns: [String], rows: (inout CopyRowWriter) throws -> Void) throws -> Int {
        let entity = try copyTarget(entityName)
        let table = graph.tables[entity]
        let indexes = try columns.map { key in
            switch try resolve(key, in: entity) {
            case .attribute(let index): return index
            case .relationship:
                throw RelateError(
                    kind: .invalidWrite,
                    message: "key \"\(key)\" of \"\(table.entity.name)\" is a relationship; copy(into:columns:rows:) takes its foreign key's attribute",
                    entity: table.entity.name, key: key)
            }
        }
        graph.membershipsMayChange()
        var writer = CopyRowWriter(columns: indexes, table: table)
        // A transaction of the context's: the rows that join a loaded set do so in memory,
        // and a `COMMIT` that fails takes them back out.
        let copied = try transaction {
            if joinsLoadedSets(indexes, of: entity, inserting: true) || !indexes.allSatisfy({ Self.copiesInBinary(table.layout.types[$0]) }) {
                // Statements: the sets take the new rows as objects, and a value without a
                // binary form the copy can send is bound as a parameter.
                try rows(&writer)
                let objects = try insertRows(entity, columns: indexes, values: writer.collected)
                for object in objects { graph.apply(.insert(object, columns: indexes)) }
                return objects.count
            }
            let names = indexes.map { table.layout.columns[$0] }.joined(separator: ", ")
            return try read(entity: entity) {
                try connection.copyIn("COPY \(table.layout.table) (\(names)) FROM STDIN (FORMAT binary)") { send in
                    try withoutActuallyEscaping(send) { send in
                        writer.start(sending: send)
                        // The writer must not keep `send` past this call.
                        defer { writer.stop() }
                        try rows(&writer)
                        try writer.finish()
                    }
                }
            }
        }
        if copied > 0 { graph.noteChange(of: entity) }
        settleLinks()
        return copied
    }
}

/// The rows of a ``DatabaseContext/copy(into:columns:rows:)``: each ``append(_:)`` gives one
/// row's values, in the columns' order.
public struct CopyRowWriter {
    private let columns: [Int]
    private let table: EntityTable
    /// Binary `COPY`: where full chunks go. `nil` while rows are collected for statements.
    private var send: (([UInt8]) throws -> Void)?
    private var data: [UInt8] = []
    /// A field's bytes, for the values written through their own encoder.
    private var field: [UInt8] = []
    /// The rows' values, when they go as statements.
    private(set) var collected: [[(any PostgresEncodable)?]] = []

    init(columns: [Int], table: EntityTable) {
        self.columns = columns
        self.table = table
    }

    /// Starts the binary copy's data: its header, then rows as they come.
    mutating func start(sending send: @escaping ([UInt8]) throws -> Void) {
        self.send = send
        data = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]
        data.reserveCapacity(1 << 20 + 4096)
    }

    /// Lets go of the copy's `send`, which lives only as long as the copy.
    mutating func stop() {
        send = nil
    }

    /// Ends the binary copy's data: its trailer, and what is left sent.
    mutating func finish() throws {
        Self.put(Int16(-1), into: &data)
        try send?(data)
    }

    /// Appends one row: a value for each of the copy's columns, in their order; `nil`
    /// writes NULL.
    ///
    /// ```swift
    /// try rows.append(42, "Ada", 3.5, true, Date())
    /// ```
    ///
    /// - Parameter value: The row's values, one per column.
    /// - Throws: ``RelateError``: a row with more or fewer values than columns, or a value
    ///   that does not fit its column (``RelateError/Kind-swift.struct/typeMismatch`` naming the key).
    public mutating func append<each Value: PostgresEncodable>(_ value: repeat (each Value)?) throws {
        var given = 0
        for _ in repeat each value { given += 1 }
        guard given == columns.count else {
            throw RelateError(
                kind: .invalidWrite,
                message: "a row of \(given) values for a copy into \(columns.count) columns of \"\(table.entity.name)\"",
                entity: table.entity.name)
        }
        guard send != nil else {
            var row: [(any PostgresEncodable)?] = []
            row.reserveCapacity(given)
            var position = 0
            for value in repeat each value {
                let attribute = table.entity.attributes[columns[position]]
                row.append(try AttributeValue.encodable(value.map { $0 as Any }, for: attribute, entity: table.entity))
                position += 1
            }
            collected.append(row)
            return
        }
        Self.put(Int16(given), into: &data)
        var position = 0
        for value in repeat each value {
            try put(value, column: columns[position])
            position += 1
        }
        if data.count >= 1 << 20 {
            try send?(data)
            data.removeAll(keepingCapacity: true)
        }
    }

    /// One binary field: length, then bytes; NULL as length -1. The usual pairings are
    /// written in place (a metatype compared, no failed cast); a value whose own binary
    /// form is of the column's type through its encoder; the rest as ``copy(into:rows:)``
    /// checks and encodes it.
    private mutating func put<Value: PostgresEncodable>(_ value: Value?, column: Int) throws {
        guard let value else {
            Self.put(Int32(-1), into: &data)
            return
        }
        let type = table.layout.types[column]
        if Value.self == Int.self, let integer = value as? Int {
            switch type {
            case .int8:
                Self.put(Int32(8), into: &data)
                Self.put(Int64(integer), into: &data)
                return
            case .int4:
                if let narrow = Int32(exactly: integer) {
                    Self.put(Int32(4), into: &data)
                    Self.put(narrow, into: &data)
                    return
                }
            case .int2:
                if let narrow = Int16(exactly: integer) {
                    Self.put(Int32(2), into: &data)
                    Self.put(narrow, into: &data)
                    return
                }
            default: break
            }
        } else if Value.self == String.self, type == .text || type == .varchar || type == .bpchar, let text = value as? String {
            Self.put(Int32(text.utf8.count), into: &data)
            data += text.utf8
            return
        } else if Value.postgresFormat == .binary, value.postgresValueType == type {
            field.removeAll(keepingCapacity: true)
            try value.encode(into: &field)
            Self.put(Int32(field.count), into: &data)
            data += field
            return
        }
        try DatabaseContext.appendField(
            value, for: table.entity.attributes[column], type: type, entity: table.entity, to: &data, using: &field)
    }

    private static func put<Integer: FixedWidthInteger>(_ value: Integer, into data: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }
}
