import CLibPQ

/// The rows a statement returned, over libpq's `PGresult` without copying.
///
/// ```swift
/// for row in try connection.query("SELECT id, name FROM person", format: .binary) {
///     let id = try row.decode(Int.self, at: 0)
///     let name = try row.decode(String?.self, at: 1)
/// }
/// ```
///
/// A `PGresult` is read-only once made and libpq allows reading it from any thread, so a
/// result is `Sendable`.
public final class PostgresResult: @unchecked Sendable {
    @usableFromInline let handle: OpaquePointer
    /// The number of rows; `0` for a statement that returns none (an `UPDATE` without `RETURNING`).
    public let rowCount: Int
    /// The result's columns in select-list order: name, type and form of each.
    public let columns: [PostgresColumn]
    /// Each column's type and form, apart from `columns` so that decoding a cell reads
    /// 5 bytes and no `String`.
    @usableFromInline let cellKinds: [CellKind]
    /// The statement that made this result.
    public let sql: String

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
        self.rowCount = Int(PQntuples(handle))
        self.columns = (0..<PQnfields(handle)).map { index in
            PostgresColumn(
                name: String(cString: PQfname(handle, index)),
                type: PostgresType(PQftype(handle, index)),
                format: PQfformat(handle, index) == 1 ? .binary : .text,
                tableOID: PQftable(handle, index),
                tableColumn: Int(PQftablecol(handle, index)))
        }
        self.cellKinds = columns.map { CellKind(type: $0.type, format: $0.format) }
    }

    deinit { PQclear(handle) }

    /// The command tag's row count (`UPDATE 3` → 3); `nil` for statements without one.
    public var affectedRows: Int? {
        Int(String(cString: PQcmdTuples(handle)))
    }

    /// The command tag, `INSERT 0 1` or `SELECT 10`.
    public var commandTag: String { String(cString: PQcmdStatus(handle)) }

    /// The bytes of the cell at `row` and `column`, `nil` for NULL; valid only while the
    /// result lives, so kept to this package (others read cells through
    /// ``PostgresRow/withCell(at:_:)``). For loops over many cells: no ``PostgresRow`` (and
    /// no reference to the result) per row.
    @inlinable @inline(__always)
    package func cell(row: Int, column: Int) throws -> UnsafeRawBufferPointer? {
        guard column >= 0, column < cellKinds.count, row >= 0, row < rowCount else {
            try throwOutOfRange(row: row, column: column)
        }
        let rowNumber = Int32(truncatingIfNeeded: row)
        let field = Int32(truncatingIfNeeded: column)
        // libpq gives a NULL length 0, so only an empty value needs the NULL check.
        let length = PQgetlength(handle, rowNumber, field)
        if length == 0, PQgetisnull(handle, rowNumber, field) == 1 { return nil }
        return UnsafeRawBufferPointer(start: PQgetvalue(handle, rowNumber, field), count: Int(length))
    }

    /// About how many bytes of memory a row of this result takes, judged by its first,
    /// middle and last rows: their values, and the length and pointer libpq keeps per cell.
    /// Zero for a result without rows.
    package var estimatedRowBytes: Int {
        guard rowCount > 0 else { return 0 }
        let sampled = Set([0, rowCount / 2, rowCount - 1])
        var bytes = 0
        for row in sampled {
            for column in 0..<columns.count {
                bytes += Int(PQgetlength(handle, Int32(truncatingIfNeeded: row), Int32(truncatingIfNeeded: column))) + 16
            }
        }
        return bytes / sampled.count
    }

    @usableFromInline @inline(never)
    func throwOutOfRange(row: Int, column: Int) throws -> Never {
        throw PostgresError(
            kind: .decoding,
            message: "no cell at row \(row), column \(column): the result has \(rowCount) rows and \(columns.count) columns",
            sql: sql)
    }

    /// The index of the column with this exact name (no case folding), or `nil`.
    ///
    /// - Parameter name: The column's name in the select list.
    /// - Returns: Its 0-based index, or `nil`.
    public func columnIndex(named name: String) -> Int? {
        columns.firstIndex { $0.name == name }
    }
}

extension PostgresResult: RandomAccessCollection {
    /// The index of the first row, always `0`.
    public var startIndex: Int { 0 }
    /// The index past the last row: ``rowCount``.
    public var endIndex: Int { rowCount }
    /// The row at `position`, which must be in `0..<rowCount`.
    ///
    /// - Parameter position: The row's 0-based index.
    /// - Returns: The row.
    public subscript(position: Int) -> PostgresRow { PostgresRow(result: self, index: position) }
}

@usableFromInline
struct CellKind: Sendable {
    @usableFromInline var type: PostgresType
    @usableFromInline var format: PostgresFormat
    @usableFromInline init(type: PostgresType, format: PostgresFormat) {
        self.type = type
        self.format = format
    }
}

/// A column of a ``PostgresResult``: its name, PostgreSQL type and the form its values came in.
public struct PostgresColumn: Sendable, Hashable {
    /// The column's name in the select list (its alias when it has one).
    public var name: String
    /// The column's PostgreSQL type.
    public var type: PostgresType
    /// The form the server sent the column's values in: the one the statement asked for.
    public var format: PostgresFormat
    /// The table the column comes from, when it is a plain table column (0 otherwise).
    public var tableOID: UInt32
    /// The column's number in that table (0 when not a table column).
    public var tableColumn: Int
}

/// One row of a ``PostgresResult``.
public struct PostgresRow: Sendable {
    /// The result the row belongs to; the row keeps it alive.
    public let result: PostgresResult
    /// The row's 0-based index in ``result``.
    public let index: Int

    /// Reads a non-NULL cell as `T`; a NULL, a column out of range, or a type that does not
    /// match throws an error naming the column and both types.
    ///
    /// `column` is the 0-based column index.
    ///
    /// - Returns: The cell's value.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/decoding``.
    @inlinable @inline(__always)
    public func decode<T: PostgresDecodable>(_: T.Type, at column: Int) throws -> T {
        guard let bytes = try cell(at: column) else {
            try throwNull(column: column, as: T.self)
        }
        let kind = result.cellKinds[column]
        do {
            return try T.decode(from: bytes, type: kind.type, format: kind.format)
        } catch {
            try throwDecoding(error, column: column)
        }
    }

    /// Reads a cell as `T`, NULL as `nil`.
    ///
    /// `column` is the 0-based column index.
    ///
    /// - Returns: The cell's value, or `nil` when it is NULL.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/decoding`` when
    ///   the column is out of range or its type cannot be read as `T`.
    @inlinable
    public func decode<T: PostgresDecodable>(_: T?.Type, at column: Int) throws -> T? {
        guard let bytes = try cell(at: column) else { return nil }
        let kind = result.cellKinds[column]
        do {
            return try T.decode(from: bytes, type: kind.type, format: kind.format)
        } catch {
            try throwDecoding(error, column: column)
        }
    }

    /// Reads the non-NULL cell of the column named `name` as `T`.
    ///
    /// ```swift
    /// let email = try row.decode(String.self, column: "email")
    /// ```
    ///
    /// - Parameters:
    ///   - type: The Swift type to read the cell as.
    ///   - name: The column's name in the select list.
    /// - Returns: The cell's value.
    /// - Throws: A `PostgresError` of kind ``PostgresError/Kind-swift.struct/decoding`` when there is no
    ///   such column, the cell is NULL, or its type cannot be read as `T`.
    public func decode<T: PostgresDecodable>(_ type: T.Type, column name: String) throws -> T {
        try decode(type, at: columnIndex(name))
    }

    /// Reads the cell of the column named `name` as `T`, NULL as `nil`.
    ///
    /// - Parameters:
    ///   - type: The optional Swift type to read the cell as (`String?.self`).
    ///   - name: The column's name in the select list.
    /// - Returns: The cell's value, or `nil` when it is NULL.
    /// - Throws: A `PostgresError` of kind ``PostgresError/Kind-swift.struct/decoding`` when there is no
    ///   such column or the cell's type cannot be read as `T`.
    public func decode<T: PostgresDecodable>(_ type: T?.Type, column name: String) throws -> T? {
        try decode(type, at: columnIndex(name))
    }

    /// The cell as the Swift value its PostgreSQL type maps to (see ``PostgresValue``), NULL as `nil`.
    ///
    /// - Parameter column: The 0-based column index.
    /// - Returns: An `Int`, `String`, `Date`… or an array of them; `nil` for NULL.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/decoding`` when
    ///   the column is out of range or the cell's bytes are malformed.
    public func value(at column: Int) throws -> (any Sendable)? {
        guard let bytes = try cell(at: column) else { return nil }
        do {
            let kind = result.cellKinds[column]
            return try PostgresValue.decode(from: bytes, type: kind.type, format: kind.format)
        } catch {
            throw decodingError(error, column: column)
        }
    }

    /// The cell of the column named `name` as the Swift value its PostgreSQL type maps to (see
    /// ``PostgresValueMapping``), NULL as `nil`.
    ///
    /// - Parameter name: The column's name in the select list.
    /// - Returns: An `Int`, `String`, `Date`… or an array of them; `nil` for NULL.
    /// - Throws: A `PostgresError` of kind ``PostgresError/Kind-swift.struct/decoding`` when there is no
    ///   such column or the cell's bytes are malformed.
    public func value(column name: String) throws -> (any Sendable)? {
        try value(at: columnIndex(name))
    }

    /// Whether the cell at `column` is NULL.
    ///
    /// - Parameter column: The 0-based column index.
    /// - Returns: `true` when the cell is NULL.
    /// - Throws: A `PostgresError` when `column` is out of range.
    public func isNull(at column: Int) throws -> Bool {
        try cell(at: column) == nil
    }

    /// Calls `body` with the cell's bytes as the server sent them (`nil` for NULL). The
    /// bytes belong to the result: they are valid only inside `body`, so copy what must
    /// outlive it.
    ///
    /// ```swift
    /// let length = try row.withCell(at: 0) { $0?.count ?? 0 }
    /// ```
    ///
    /// - Parameters:
    ///   - column: The 0-based column index.
    ///   - body: Code that reads the bytes; they are valid only inside it.
    /// - Returns: What `body` returns.
    /// - Throws: A ``PostgresError`` when the column is out of range, or what `body` throws.
    public func withCell<Result>(at column: Int, _ body: (UnsafeRawBufferPointer?) throws -> Result) throws -> Result {
        try withExtendedLifetime(result) { try body(cell(at: column)) }
    }

    /// The cell's bytes, `nil` for NULL: valid while `result` lives, which the caller sees to.
    @inlinable @inline(__always)
    func cell(at column: Int) throws -> UnsafeRawBufferPointer? {
        try result.cell(row: index, column: column)
    }

    // The errors are made out of line, so that the inlined fast paths stay small.
    @usableFromInline @inline(never)
    func throwNull(column: Int, as type: Any.Type) throws -> Never {
        throw nullError(column: column, as: type)
    }

    @usableFromInline @inline(never)
    func throwDecoding(_ error: PostgresDecodingError, column: Int) throws -> Never {
        throw decodingError(error, column: column)
    }

    private func columnIndex(_ name: String) throws -> Int {
        guard let index = result.columnIndex(named: name) else {
            throw PostgresError(
                kind: .decoding,
                message: "the result has no column \"\(name)\"; its columns are \(result.columns.map(\.name))",
                sql: result.sql)
        }
        return index
    }

    @usableFromInline
    func nullError(column: Int, as type: Any.Type) -> PostgresError {
        let info = result.columns[column]
        return PostgresError(
            kind: .decoding,
            message: "column \"\(info.name)\" is NULL in row \(index); read it as \(type)? to accept NULL",
            column: info.name, dataType: info.type.description, sql: result.sql)
    }

    @usableFromInline
    func decodingError(_ error: PostgresDecodingError, column: Int) -> PostgresError {
        let info = result.columns[column]
        return PostgresError(
            kind: .decoding, message: "column \"\(info.name)\" in row \(index): \(error.reason)",
            column: info.name, dataType: info.type.description, sql: result.sql)
    }
}
