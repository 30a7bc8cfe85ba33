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
        /// The kind's name as `description` prints it first: `"server error"`, `"connection closed"`.
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
        /// libpq reported a failure that is not a server error (out of memory, protocol), or
        /// this library refused a call that would run outside what it promised (a statement
        /// after the body of ``Connection/transaction(_:_:)`` ended its transaction itself).
        public static let client = Kind("client error")
    }

    /// What went wrong: a failed or closed connection, a server error, bad input, a value
    /// that cannot be decoded, or a libpq failure.
    public var kind: Kind
    /// The primary message: the server's, or this library's.
    public var message: String
    /// The server's SQLSTATE for a ``Kind/server`` error (`23505` for a unique violation);
    /// `nil` for failures that did not come from the server.
    ///
    /// ```swift
    /// do {
    ///     try connection.execute("INSERT INTO person (email) VALUES ($1)", ["ada@example.com"])
    /// } catch let error as PostgresError where error.sqlState == .uniqueViolation {
    ///     print("taken:", error.constraint ?? "?")
    /// }
    /// ```
    public var sqlState: SQLState?
    /// The server's `DETAIL` field. It can quote row values, so ``description`` leaves it
    /// out and ``debugDescription`` shows it.
    public var detail: String?
    /// The server's `HINT` field: a suggestion on how to fix the problem.
    public var hint: String?
    /// 1-based character position of the error in ``sql``, for syntax errors.
    public var position: Int?
    /// The schema of the table the error is about, when the server names one.
    public var schema: String?
    /// The table the error is about (a constraint violation's table), when the server names one.
    public var table: String?
    /// The column the error is about (a not-null violation's column), when the server names one.
    public var column: String?
    /// The data type the error is about, when the server names one.
    public var dataType: String?
    /// The constraint that was violated (`person_email_key`), when the server names one.
    public var constraint: String?
    /// The statement that failed, as sent (values are bound, so it holds none).
    public var sql: String?
    /// For a failure in a pipeline: the 0-based index of the statement that failed.
    public var statementIndex: Int?

    /// Creates an error; the library makes these, tests and wrappers may too.
    ///
    /// - Parameters:
    ///   - kind: What went wrong.
    ///   - message: The primary message.
    ///   - sqlState: The server's SQLSTATE, if any.
    ///   - detail: The server's `DETAIL` field, which may quote row values.
    ///   - hint: The server's `HINT` field.
    ///   - position: The 1-based character position of the error in `sql`.
    ///   - schema: The schema the error is about.
    ///   - table: The table the error is about.
    ///   - column: The column the error is about.
    ///   - dataType: The data type the error is about.
    ///   - constraint: The constraint that was violated.
    ///   - sql: The statement that failed, as sent.
    ///   - statementIndex: For a failure in a pipeline, the 0-based index of the statement.
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

    /// The kind, the SQLSTATE, the message, the constraint, table and column, the hint and the
    /// statement with a caret under the error position; never the server's ``detail``.
    public var description: String { render(includingDetail: false) }
    /// Everything ``description`` holds and the server's ``detail``, which may quote row values:
    /// for logs that may hold data.
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
    /// The five characters of the code, as the server sent them.
    public var rawValue: String
    /// Creates the code from its five characters.
    ///
    /// - Parameter rawValue: The five characters of the code.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates the code from its five characters: `SQLState("23505")` is ``uniqueViolation``.
    ///
    /// - Parameter code: The five characters of the code.
    public init(_ code: String) { self.rawValue = code }
    /// The five characters of the code.
    public var description: String { rawValue }

    /// The two-character class (`"23"` for integrity constraint violations).
    public var errorClass: String { String(rawValue.prefix(2)) }

    /// `23502`: a NULL in a `NOT NULL` column.
    public static let notNullViolation = SQLState("23502")
    /// `23503`: a row refers to a missing row, or a deleted row is still referred to.
    public static let foreignKeyViolation = SQLState("23503")
    /// `23505`: a duplicate value in a unique index or primary key.
    public static let uniqueViolation = SQLState("23505")
    /// `23514`: a row fails a `CHECK` constraint.
    public static let checkViolation = SQLState("23514")
    /// `23001`: a delete or update blocked by an `ON DELETE RESTRICT` foreign key.
    public static let restrictViolation = SQLState("23001")
    /// `42601`: the statement does not parse.
    public static let syntaxError = SQLState("42601")
    /// `42P01`: the table (or view) does not exist.
    public static let undefinedTable = SQLState("42P01")
    /// `42703`: the column does not exist.
    public static let undefinedColumn = SQLState("42703")
    /// `22P02`: a text value the type's input function rejects (`'abc'::int`).
    public static let invalidTextRepresentation = SQLState("22P02")
    /// `22003`: a number too large for its type.
    public static let numericValueOutOfRange = SQLState("22003")
    /// `22021`: bytes that are not valid in the database encoding.
    public static let characterNotInRepertoire = SQLState("22021")
    /// `28P01`: password authentication failed.
    public static let invalidPassword = SQLState("28P01")
    /// `57P01`: the server is shutting down, or an administrator terminated the backend.
    public static let adminShutdown = SQLState("57P01")
    /// `25P02`: a statement in a transaction that already failed, before its `ROLLBACK`.
    public static let inFailedTransaction = SQLState("25P02")
    /// `26000`: no prepared statement of that name in this session.
    public static let invalidSQLStatementName = SQLState("26000")
    /// `0A000`: a feature the server does not support (also "cached plan must not change
    /// result type", when a prepared statement's result changed under it).
    public static let featureNotSupported = SQLState("0A000")
    /// `40001`: a serializable or repeatable-read transaction must be retried.
    public static let serializationFailure = SQLState("40001")
    /// `40P01`: the server broke a deadlock by cancelling this transaction; retry it.
    public static let deadlockDetected = SQLState("40P01")
}
