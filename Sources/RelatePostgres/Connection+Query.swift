import CLibPQ
import Foundation

extension Connection {
    /// Runs one statement with bound parameters (`$1`, `$2`, …) and returns its rows.
    ///
    /// `format` chooses how the server sends every column: `.text` reads any type
    /// (a type this library does not know reads as its text form); `.binary` is faster
    /// for numbers, dates and UUIDs when the columns' types are ones ``PostgresValue`` lists.
    ///
    /// ```swift
    /// let result = try connection.query("SELECT id, name FROM person WHERE name = $1", ["Ada"], format: .binary)
    /// let id = try result[0].decode(Int.self, at: 0)
    /// ```
    ///
    /// - Parameters:
    ///   - sql: One statement, with `$1`, `$2`… where its parameters go.
    ///   - parameters: The values bound to the placeholders, in order; `nil` binds NULL.
    ///   - format: The form every column comes back in: `.text` (the default) or `.binary`.
    /// - Returns: The statement's rows.
    /// - Throws: A ``PostgresError``: the server's error with its ``PostgresError/sqlState``, a
    ///   lost connection (``PostgresError/Kind-swift.struct/connectionClosed``), or a parameter
    ///   that cannot be sent (``PostgresError/Kind-swift.struct/invalidInput``).
    @discardableResult
    public func query(
        _ sql: String, _ parameters: [(any PostgresEncodable)?] = [], format: PostgresFormat = .text
    ) throws -> PostgresResult {
        if deferredOpening != nil || (learnsTransactionIDNow && !Self.isTransactionControl(sql)) {
            // The transaction's `BEGIN` or id rides along, in one pipeline: no round trip more.
            do {
                return try pipeline([PostgresStatement(sql, parameters, format: format)])[0]
            } catch var error as PostgresError {
                error.statementIndex = nil
                throw error
            }
        }
        let handle = try openHandle()
        try Self.checkSQL(sql)
        let bound = try BoundParameters(parameters)
        return try roundTrip(.query, .one(sql, bound)) {
            // withCString, explicitly: passing the String itself made a copy of its text.
            let result = sql.withCString { sql in
                bound.withPointers { types, values, lengths, formats in
                    PQexecParams(handle, sql, Int32(bound.count), types, values, lengths, formats, format.rawValue)
                }
            }
            return try checked(result, sql: sql, parameters: bound)
        }
    }

    /// `COMMIT`, `ROLLBACK`, savepoints: statements after which the transaction's id means
    /// nothing more (or nothing new), so none rides along with them.
    static func isTransactionControl(_ sql: String) -> Bool {
        ["COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE"].contains { sql.hasPrefix($0) }
    }

    /// Runs one statement and returns the number of rows it changed.
    ///
    /// ```swift
    /// let changed = try connection.execute("UPDATE person SET name = $1 WHERE id = $2", ["Ada", 1])
    /// ```
    ///
    /// - Parameters:
    ///   - sql: One statement, with `$1`, `$2`… where its parameters go.
    ///   - parameters: The values bound to the placeholders, in order; `nil` binds NULL.
    /// - Returns: The number of rows the statement inserted, updated or deleted; 0 for a
    ///   statement that reports none.
    /// - Throws: A ``PostgresError``, as ``query(_:_:format:)`` throws.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> Int {
        try query(sql, parameters).affectedRows ?? 0
    }

    /// Runs a script of several statements with no parameters (a schema file, say), in
    /// one round trip. Outside a transaction, the server runs the script as one.
    ///
    /// - Parameter sql: Statements separated by semicolons, without parameters.
    /// - Throws: A ``PostgresError`` for the first statement that fails (its ``PostgresError/position``
    ///   in the script; not the script's text, whose literals may be values); outside a
    ///   transaction, none of the script takes effect then.
    public func executeScript(_ sql: String) throws {
        let handle = try openHandle()
        try Self.checkSQL(sql)
        noteSessionChange(script: sql)
        try roundTrip(.script, .one(sql, nil)) {
            _ = try checked(PQexec(handle, sql), sql: sql, parameters: nil, isScript: true)
        }
    }

    /// `name` as a quoted SQL identifier, by libpq's `PQescapeIdentifier`. Names the
    /// server would cut short (over 63 bytes), empty names and NUL bytes are errors.
    ///
    /// - Parameter name: The identifier, as it is (case kept).
    /// - Returns: The name in double quotes, with any double quote doubled.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/invalidInput``.
    public func quoteIdentifier(_ name: String) throws -> String {
        let handle = try openHandle()
        try Self.checkIdentifier(name)
        guard let quoted = PQescapeIdentifier(handle, name, name.utf8.count) else {
            throw PostgresError(kind: .invalidInput, message: "cannot quote identifier: \(libpqMessage)")
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// `"schema"."name"`, each part quoted by ``quoteIdentifier(_:)``.
    ///
    /// - Parameters:
    ///   - schema: The schema's name.
    ///   - name: The table's (or other object's) name.
    /// - Returns: `"schema"."name"`.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/invalidInput``.
    public func quoteQualifiedName(schema: String, _ name: String) throws -> String {
        try quoteIdentifier(schema) + "." + quoteIdentifier(name)
    }

    static func checkIdentifier(_ name: String) throws {
        if name.isEmpty {
            throw PostgresError(kind: .invalidInput, message: "an identifier cannot be empty")
        }
        if name.utf8.contains(0) {
            throw PostgresError(kind: .invalidInput, message: "an identifier cannot contain a NUL byte")
        }
        if name.utf8.count > 63 {
            throw PostgresError(
                kind: .invalidInput,
                message: "identifier \"\(name.prefix(20))…\" is \(name.utf8.count) bytes long; PostgreSQL keeps only 63 and would silently cut it short")
        }
    }

    static func checkSQL(_ sql: String) throws {
        let hasNUL = sql.utf8.withContiguousStorageIfAvailable { $0.isEmpty ? false : memchr($0.baseAddress!, 0, $0.count) != nil } ?? sql.utf8.contains(0)
        if hasNUL {
            throw PostgresError(kind: .invalidInput, message: "the SQL text contains a NUL byte", sql: sql)
        }
    }

    /// Turns a `PGresult` into a result or the error it reports, freeing it on error.
    /// `result`, or the error it holds. `isScript`: `sql` is a script, whose literals may be
    /// values: the error and the log name none of its text (as its span shows none).
    func checked(_ result: OpaquePointer?, sql: String, parameters: BoundParameters?, isScript: Bool = false) throws -> PostgresResult {
        guard let result else {
            throw connectionError(sql: isScript ? nil : sql)
        }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            noteSessionChange(tag: PQcmdStatus(result), sql: sql)
            return PostgresResult(handle: result, sql: sql)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            PQclear(result)
            abandonCopy()
            throw PostgresError(kind: .invalidInput, message: "COPY FROM STDIN and COPY TO STDOUT are not supported here", sql: sql)
        default:
            var error = Self.error(from: result, sql: sql, parameters: parameters, connectionLost: !isOpen, libpqMessage: libpqMessage)
            PQclear(result)
            if isScript { error.sql = nil }
            if error.kind == .connectionClosed {
                logger.error("connection lost", metadata: isScript ? [:] : ["relate.sql": "\(sql)"])
            }
            throw error
        }
    }

    func connectionError(sql: String?) -> PostgresError {
        PostgresError(kind: isOpen ? .client : .connectionClosed, message: libpqMessage, sql: sql)
    }

    static func error(
        from result: OpaquePointer, sql: String, parameters: BoundParameters?, connectionLost: Bool,
        libpqMessage: @autoclosure () -> String
    ) -> PostgresError {
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        let sqlState = field("C").map(SQLState.init(rawValue:))
        var message = field("M")
            ?? String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
        if message.isEmpty { message = libpqMessage() }
        if let parameters { message = parameters.redacting(message) }
        // A data exception's message quotes the value it refused, which a statement's own
        // parameters do not always hold: a setting made before (a policy's cast of
        // `current_setting`), a row the statement read (another tenant's, under row-level
        // security). `description` holds no row data.
        if sqlState?.errorClass == "22" { message = Self.withoutQuotedValues(message) }
        let kind: PostgresError.Kind
        if connectionLost || sqlState?.errorClass == "08" || sqlState == .adminShutdown {
            kind = .connectionClosed
        } else {
            kind = sqlState == nil ? .client : .server
        }
        return PostgresError(
            kind: kind, message: message, sqlState: sqlState, detail: field("D"), hint: field("H"),
            position: field("P").flatMap { Int($0) }, schema: field("s"), table: field("t"),
            column: field("c"), dataType: field("d"), constraint: field("n"), sql: sql)
    }

    /// `message` with each double-quoted text replaced by `"…"`, but for the name after a
    /// word that names what it is (`parameter "TimeZone"`, `type "mood"`).
    package static func withoutQuotedValues(_ message: String) -> String {
        let names: Set<Substring> = ["parameter", "encoding", "type", "column", "function", "relation", "table", "constraint", "schema", "role"]
        var result = ""
        var rest = Substring(message)
        while let open = rest.firstIndex(of: "\"") {
            let before = rest[..<open]
            result += before
            guard let close = rest[rest.index(after: open)...].firstIndex(of: "\"") else {
                result += "\"…"
                return result
            }
            let word = before.hasSuffix(" ") ? before.dropLast().split(separator: " ").last ?? "" : ""
            result += names.contains(word) ? rest[open...close] : "\"…\""
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// A statement that started a COPY leaves the connection in copy mode; end it so the
    /// connection stays usable.
    private func abandonCopy() {
        guard let handle else { return }
        while let result = PQgetResult(handle) {
            let status = PQresultStatus(result)
            PQclear(result)
            endCopy(handle, status: status)
        }
    }

    /// Ends a copy the server started (`status` says which way), refusing its data.
    func endCopy(_ handle: OpaquePointer, status: ExecStatusType) {
        if status == PGRES_COPY_IN {
            _ = PQputCopyEnd(handle, "COPY is not supported by this client")
        } else if status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
            var buffer: UnsafeMutablePointer<CChar>?
            while PQgetCopyData(handle, &buffer, 0) > 0 {
                PQfreemem(buffer)
            }
        }
    }
}
