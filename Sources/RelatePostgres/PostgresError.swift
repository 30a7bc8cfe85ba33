/// The one error type of `RelatePostgres`.
///
/// `description` names the cause — what kind of failure, the SQLSTATE, the server's message,
/// the constraint, table and column, the statement and the error position — and never holds
/// a password or a bound parameter value. The server's `detail` can quote row values
/// (`Key (email)=(ada@example.com) already exists.`), so it is kept in ``detail`` and
/// ``debugDescription`` only.
public struct PostgresError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, as an open set: new kinds never break a `switch` with a `default`.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        private init(_ description: String) { self.description = description }

        /// The connection could not be opened (bad conninfo, unreachable host, authentication).
        public static let connectionFailed = Kind("connection failed")
        /// The connection was closed, by this side or by the server, or dropped.
        public static let connectionClosed = Kind("connection closed")
        /// The server rejected a statement; ``PostgresError/sqlState`` says why.
        public static let server = Kind("server error")
        /// A parameter or identifier cannot be sent as it is (a NUL byte, an over-long name).
        public static let invalidInput = Kind("invalid input")
        /// A value in a result cannot be read as the Swift type asked for.
        public static let decoding = Kind("decoding error")
        /// libpq reported a failure that is not a server error (out of memory, protocol).
        public static let client = Kind("client error")
    }

    public var kind: Kind
    /// The primary message: the server's, or this library's.
    public var message: String
    public var sqlState: SQLState?
    public var detail: String?
    public var hint: String?
    /// 1-based character position of the error in ``sql``, for syntax errors.
    public var position: Int?
    public var schema: String?
    public var table: String?
    public var column: String?
    public var dataType: String?
    public var constraint: String?
    /// The statement that failed, as sent (values are bound, so it holds none).
    public var sql: String?
    /// For a failure in a pipeline: the 0-based index of the statement that failed.
    public var statementIndex: Int?

    public init(
        kind: Kind, message: String, sqlState: SQLState? = nil, detail: String? = nil,
        hint: String? = nil, position: Int? = nil, schema: String? = nil, table: String? = nil,
        column: String? = nil, dataType: String? = nil, constraint: String? = nil,
        sql: String? = nil, statementIndex: Int? = nil
    ) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.position = position
        self.schema = schema
        self.table = table
        self.column = column
        self.dataType = dataType
        self.constraint = constraint
        self.sql = sql
        self.statementIndex = statementIndex
    }

    public var description: String { render(includingDetail: false) }
    public var debugDescription: String { render(includingDetail: true) }

    private func render(includingDetail: Bool) -> String {
        var text = kind.description
        if let sqlState { text += " \(sqlState.rawValue)" }
        if let statementIndex { text += " in statement #\(statementIndex) of the pipeline" }
        text += ": \(message)"
        var facts: [String] = []
        if let constraint { facts.append("constraint \"\(constraint)\"") }
        if let table { facts.append(schema.map { "table \"\($0)\".\"\(table)\"" } ?? "table \"\(table)\"") }
        if let column { facts.append("column \"\(column)\"") }
        if let dataType { facts.append("type \(dataType)") }
        if !facts.isEmpty { text += " (" + facts.joined(separator: ", ") + ")" }
        if includingDetail, let detail { text += "\nDETAIL: \(detail)" }
        if let hint { text += "\nHINT: \(hint)" }
        if let sql {
            text += "\nSQL: \(sql)"
            if let position { text += "\n     " + String(repeating: " ", count: max(0, position - 1)) + "^ (position \(position))" }
        }
        return text
    }
}

/// A five-character SQLSTATE code. Static members name the ones callers most often test;
/// any code the server sends is representable.
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ code: String) { self.rawValue = code }
    public var description: String { rawValue }

    /// The two-character class (`"23"` for integrity constraint violations).
    public var errorClass: String { String(rawValue.prefix(2)) }

    public static let notNullViolation = SQLState("23502")
    public static let foreignKeyViolation = SQLState("23503")
    public static let uniqueViolation = SQLState("23505")
    public static let checkViolation = SQLState("23514")
    public static let restrictViolation = SQLState("23001")
    public static let syntaxError = SQLState("42601")
    public static let undefinedTable = SQLState("42P01")
    public static let undefinedColumn = SQLState("42703")
    public static let invalidTextRepresentation = SQLState("22P02")
    public static let numericValueOutOfRange = SQLState("22003")
    public static let characterNotInRepertoire = SQLState("22021")
    public static let invalidPassword = SQLState("28P01")
    public static let adminShutdown = SQLState("57P01")
    public static let inFailedTransaction = SQLState("25P02")
    public static let serializationFailure = SQLState("40001")
    public static let deadlockDetected = SQLState("40P01")
}
