import CLibPQ
import Foundation
import Logging

/// One connection to a PostgreSQL server, over libpq.
///
/// ```swift
/// let connection = try Connection(url: "postgresql://me@localhost/app")
/// let result = try connection.query("SELECT id, name FROM person WHERE name = $1", ["Ada"])
/// for row in result { print(try row.decode(Int.self, at: 0)) }
/// ```
///
/// A libpq connection is not thread-safe, so `Connection` is not `Sendable`: keep it on one
/// task or thread. Values are always bound as parameters; no API splices a value into SQL.
public final class Connection {
    /// `PGconn *`; `nil` once closed.
    var handle: OpaquePointer?
    /// The logger the connection writes to: each round trip's SQL (never its parameter
    /// values) at ``queryLogLevel``, the opening at `debug` level, server notices (their
    /// severity and SQLSTATE; their text only with ``logsValuesForDebugging``), a lost
    /// connection and a failed rollback at `warning` or `error`.
    public let logger: Logger
    /// Statements and pipelines sent to the server since the connection opened: each
    /// `query`/`execute` counts one, each `pipeline` counts one however many statements it
    /// holds; ``queryPrepared(_:_:format:)`` counts one, its first use too (the prepare
    /// goes with the first run).
    public internal(set) var roundTrips = 0
    /// Called with the SQL of every statement sent, in order (pipelines: each statement),
    /// before it is sent. Never given parameter values.
    public var trace: ((String) -> Void)?
    /// Called after every statement, pipeline or script the server answered (or failed)
    /// (not those sent ahead),
    /// with how long it took from sending to the last result; `nil` (the default) reads
    /// no clock. `Database` sets it for its statement metrics.
    public var statementTimer: ((Duration) -> Void)?
    /// Sees every round trip, around it (see ``RoundTripObserver``); `nil` by default.
    /// Relate's `Database` sets one that makes each a span of swift-distributed-tracing.
    public var roundTripObserver: (any RoundTripObserver)?
    /// The level at which each round trip's SQL is logged (placeholders only; the bound
    /// values only with ``logsValuesForDebugging``). Default `.debug`.
    public var queryLogLevel: Logger.Level = .debug
    /// For debugging only, never in production: logs each statement's bound values beside
    /// its SQL, and the text of the server's notices (a trigger's `RAISE NOTICE` can quote
    /// a row). Default `false`: no log line or its metadata holds a bound or a row value.
    public var logsValuesForDebugging = false {
        didSet { noticeSink.logsText = logsValuesForDebugging }
    }
    /// Nesting depth of `transaction` calls; above 1, savepoints are in use.
    var transactionDepth = 0
    /// Whether a statement may have changed this session beyond its transaction since it
    /// was opened and set up (``noteSessionChange(tag:sql:)``): a `SET` or `RESET` other than
    /// `SET LOCAL`, a `set_config` not made local, a script that names one. A pool lends such
    /// a connection to no one again: the next unit would inherit its role or settings.
    package var sessionMayHaveChanged = false
    /// Set while a transaction's deferred `BEGIN` is being sent: until it is, the
    /// connection is idle with a transaction open by ``transaction(_:_:)``'s account.
    var sendingOpening = false
    /// The options of the outermost transaction ``transaction(_:_:)`` has open (what it
    /// learns); the defaults between transactions.
    var transactionOptions = TransactionOptions()
    /// The outermost transaction's `BEGIN`, not sent yet: it goes in the pipeline of the
    /// transaction's first statement (``pipeline(_:)``), which saves a write unit a round
    /// trip; a transaction that sends nothing sends neither `BEGIN` nor `COMMIT`.
    var deferredOpening: PostgresStatement?
    /// The id (`txid_current()`) of the transaction ``transaction(_:_:)`` has open, once a
    /// statement of it wrote and its ``TransactionOptions/learnsTransactionID`` is on; `nil` otherwise.
    public internal(set) var transactionID: Int?
    /// The id of the last transaction whose `COMMIT` was sent and whose reply never came
    /// (the connection was lost): it may have committed or not, and only the server can say
    /// (`txid_status`). `nil` when the last commit's outcome is known, or the transaction
    /// had written nothing. Cleared when the next transaction begins.
    public internal(set) var unconfirmedCommit: Int?
    /// Where in the log the last transaction committed by ``transaction(_:_:)`` ended (at or
    /// past its commit record), when its ``TransactionOptions/learnsCommitPosition`` was on; `nil` otherwise, or
    /// when the server could not say.
    public internal(set) var lastCommitPosition: LSN?
    /// A statement sent ahead (``sendAhead(_:format:)``): in flight, or its outcome once read.
    var readAhead: ReadAhead?
    /// Whether ``queryPrepared(_:_:format:)`` prepares its statements on the server (the
    /// default); off, it runs them as ``query(_:_:format:)`` does. Turn it off behind a
    /// pooler that does not keep a session's prepared statements (PgBouncer in transaction
    /// mode before 1.21, or with `max_prepared_statements = 0`). The connection turns it off
    /// itself when the server loses its statements a second time.
    public var preparesStatements = true
    /// The statements ``queryPrepared(_:_:format:)`` prepared in this session.
    var prepared = PreparedStatements()
    private let noticeSink: NoticeSink
    /// Secrets that must not appear in any error text this connection produces.
    let secrets: [String]

    /// Opens a connection from a `postgresql://` URL. libpq fills in what the URL leaves out
    /// from the PG* environment variables, `~/.pgpass` and the service file.
    ///
    /// ```swift
    /// let connection = try Connection(url: "postgresql://app@db.example.com/app?sslmode=verify-full")
    /// ```
    ///
    /// - Parameters:
    ///   - url: A `postgresql://` (or `postgres://`) URL, as libpq reads it.
    ///   - logger: Where the connection logs; a logger labelled `relate.postgres` by default.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/connectionFailed``
    ///   with libpq's message (any password taken out), or
    ///   ``PostgresError/Kind-swift.struct/invalidInput`` for a NUL byte.
    public convenience init(url: String, logger: Logger = Logger(label: "relate.postgres")) throws {
        try self.init(conninfo: url, logger: logger)
    }

    /// Opens a connection from a conninfo string (`host=… dbname=…`) or a URL; the empty
    /// string means "everything from the environment", as with `psql`.
    ///
    /// - Parameters:
    ///   - conninfo: `key=value` pairs (`host=/var/run/postgresql dbname=app`), a URL, or the
    ///     empty string.
    ///   - logger: Where the connection logs; a logger labelled `relate.postgres` by default.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/connectionFailed``
    ///   with libpq's message (any password taken out), or
    ///   ``PostgresError/Kind-swift.struct/invalidInput`` for a NUL byte.
    public convenience init(conninfo: String, logger: Logger = Logger(label: "relate.postgres")) throws {
        let secrets = ConnectionString.secrets(in: conninfo)
        guard !conninfo.utf8.contains(0) else {
            throw PostgresError(kind: .invalidInput, message: "the connection string contains a NUL byte")
        }
        if let problem = ConnectionString.syntaxProblem(in: conninfo) {
            throw PostgresError(kind: .connectionFailed, message: ConnectionString.redact(problem, secrets: secrets))
        }
        try self.init(logger: logger, secrets: secrets) { PQconnectdb(conninfo) }
    }

    /// Opens a connection from a conninfo string or URL, with `defaults` for what neither it
    /// nor the environment gives (`["connect_timeout": "10"]`): libpq reads the string
    /// after the defaults, so the string's own values win; a default whose PG* variable is
    /// set is left to the variable.
    ///
    /// ```swift
    /// let connection = try Connection(conninfo: "", defaults: ["connect_timeout": "10"])
    /// ```
    ///
    /// - Parameters:
    ///   - conninfo: `key=value` pairs, a URL, or the empty string.
    ///   - defaults: libpq parameters by keyword, used where neither `conninfo` nor the
    ///     environment gives one.
    ///   - logger: Where the connection logs; a logger labelled `relate.postgres` by default.
    /// - Throws: A ``PostgresError`` of kind ``PostgresError/Kind-swift.struct/connectionFailed``
    ///   with libpq's message (any password taken out), or
    ///   ``PostgresError/Kind-swift.struct/invalidInput`` for a NUL byte.
    public convenience init(conninfo: String, defaults: [String: String], logger: Logger = Logger(label: "relate.postgres")) throws {
        let secrets = ConnectionString.secrets(in: conninfo)
        guard !conninfo.utf8.contains(0), !defaults.contains(where: { $0.key.utf8.contains(0) || $0.value.utf8.contains(0) }) else {
            throw PostgresError(kind: .invalidInput, message: "the connection string contains a NUL byte")
        }
        if let problem = ConnectionString.syntaxProblem(in: conninfo) {
            throw PostgresError(kind: .connectionFailed, message: ConnectionString.redact(problem, secrets: secrets))
        }
        let given = Self.libpqDefaults()
        let parameters = defaults.sorted { $0.key < $1.key }.filter { given[$0.key] == nil } + [("dbname", conninfo)]
        try self.init(logger: logger, secrets: secrets) {
            Self.connect(parameters, expandingDatabaseName: true)
        }
    }

    /// The parameters libpq has a value for before any connection string: from the PG*
    /// variables, or compiled in.
    private static func libpqDefaults() -> [String: String] {
        guard let options = PQconndefaults() else { return [:] }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return values
    }

    /// `PQconnectdbParams` with `parameters` in order; with `expandingDatabaseName`, the
    /// first `dbname` may be a whole conninfo string or URL.
    private static func connect(_ parameters: [(String, String)], expandingDatabaseName: Bool) -> OpaquePointer? {
        let keywords = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer { (keywords + values).forEach { free($0) } }
        return (keywords.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { keywordList in
            (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { valueList in
                PQconnectdbParams(keywordList.baseAddress, valueList.baseAddress, expandingDatabaseName ? 1 : 0)
            }
        }
    }

    /// Opens another connection to the server `other` is connected to, with the same
    /// parameters as libpq holds them (host list, user, password, TLS, …) and `options`
    /// added or replaced: `["replication": "database"]` for a replication connection. It
    /// logs as `other` does (``queryLogLevel``, ``logsValuesForDebugging``).
    ///
    /// - Parameters:
    ///   - other: An open connection whose parameters are copied.
    ///   - options: libpq parameters by keyword that are added or replace the copied ones.
    /// - Throws: A ``PostgresError`` when `other` is closed or the new connection cannot be opened.
    public convenience init(sameAs other: Connection, adding options: [String: String] = [:]) throws {
        let handle = try other.openHandle()
        guard let given = PQconninfo(handle) else {
            throw PostgresError(kind: .client, message: "libpq could not list the connection's parameters")
        }
        var parameters: [(String, String)] = []
        var option = given
        while let keyword = option.pointee.keyword {
            let name = String(cString: keyword)
            if let value = option.pointee.val, options[name] == nil { parameters.append((name, String(cString: value))) }
            option += 1
        }
        PQconninfoFree(given)
        parameters += options.sorted { $0.key < $1.key }
        try self.init(logger: other.logger, secrets: other.secrets) {
            Self.connect(parameters, expandingDatabaseName: false)
        }
        // It logs as the other does (a feed's listener as its connection).
        queryLogLevel = other.queryLogLevel
        logsValuesForDebugging = other.logsValuesForDebugging
    }

    private init(logger: Logger, secrets: [String], connect: () -> OpaquePointer?) throws {
        self.logger = logger
        self.noticeSink = NoticeSink(logger: logger)
        self.secrets = secrets
        guard let connection = connect() else {
            throw PostgresError(kind: .client, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = ConnectionString.redact(Self.libpqMessage(connection), secrets: secrets)
            PQfinish(connection)
            throw PostgresError(kind: .connectionFailed, message: message)
        }
        self.handle = connection
        PQsetNoticeReceiver(connection, { context, result in
            guard let context, let result else { return }
            let sink = Unmanaged<NoticeSink>.fromOpaque(context).takeUnretainedValue()
            let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))).map { String(cString: $0) }
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            sink.receive(
                String(cString: PQresultErrorMessage(result)), severity: severity, sqlState: sqlState, isWarning: severity == "WARNING")
        }, Unmanaged.passUnretained(noticeSink).toOpaque())
        do {
            try configureSession()
        } catch {
            close()
            throw error
        }
        logger.debug("connected", metadata: [
            "relate.host": "\(String(cString: PQhost(connection)))",
            "relate.database": "\(String(cString: PQdb(connection)))",
            "relate.server_version": "\(PQserverVersion(connection))",
        ])
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Closes the connection; later calls throw ``PostgresError/Kind-swift.struct/connectionClosed``.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        readAhead = nil
        prepared.forgetAll()
    }

    /// Connects again with the parameters it was opened with (libpq's `PQreset`), after the
    /// server closed it: a restart, or a failover, where a multi-host conninfo with
    /// `target_session_attrs=read-write` finds the new primary. What the session held is
    /// gone: a transaction, `LISTEN`s, settings made with `SET`.
    ///
    /// ```swift
    /// if !connection.probe() { try connection.reconnect() }
    /// ```
    ///
    /// - Throws: ``PostgresError/Kind-swift.struct/connectionFailed`` when no server takes
    ///   the connection (the failover is not over yet: try again later), or
    ///   ``PostgresError/Kind-swift.struct/connectionClosed`` after ``close()``.
    public func reconnect() throws {
        guard let handle else {
            throw PostgresError(kind: .connectionClosed, message: "the connection was closed; open a new Connection")
        }
        readAhead = nil
        transactionDepth = 0
        prepared.forgetAll()
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(kind: .connectionFailed, message: libpqMessage)
        }
        try configureSession()
        logger.debug("connected again", metadata: ["relate.host": "\(String(cString: PQhost(handle)))"])
    }

    /// Whether the connection is open and usable, as libpq last saw it.
    public var isOpen: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Whether the server still holds this idle connection: reads what it sent meanwhile
    /// (libpq's `PQconsumeInput`, which never waits), so that a connection the server closed
    /// (a restart, a failover, `pg_terminate_backend`) shows as closed before it is used.
    ///
    /// - Returns: `true` when the connection is open and the server has not closed it.
    public func probe() -> Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return false }
        return PQconsumeInput(handle) == 1 && PQstatus(handle) == CONNECTION_OK
    }

    /// The server's version as an integer, `150004` for 15.4.
    public var serverVersion: Int {
        guard let handle else { return 0 }
        return Int(PQserverVersion(handle))
    }

    /// The host the connection reached (a name, an address, or a socket directory), as
    /// libpq reports it; `nil` once closed.
    public var host: String? {
        guard let handle, let host = PQhost(handle) else { return nil }
        return String(cString: host)
    }

    /// The port the connection reached; `nil` once closed.
    public var port: Int? {
        guard let handle, let port = PQport(handle) else { return nil }
        return Int(String(cString: port))
    }

    /// The database the connection is to; `nil` once closed.
    public var databaseName: String? {
        guard let handle, let name = PQdb(handle) else { return nil }
        return String(cString: name)
    }

    /// A session setting as the server reported it (`TimeZone`, `server_encoding`, …).
    ///
    /// - Parameter name: The setting's name, as the server reports it (`server_version`,
    ///   `TimeZone`, `application_name`…).
    /// - Returns: Its value, or `nil` when the server reported none by that name.
    public func parameterStatus(_ name: String) -> String? {
        guard let handle, let value = PQparameterStatus(handle, name) else { return nil }
        return String(cString: value)
    }

    /// Runs `body` with libpq's `PGconn` of this connection, for what Relate does not wrap
    /// (as GRDB lends its `sqlite3` handle). Leave it as you found it: open, not in a
    /// statement, in the transaction state it was in; do not `PQfinish` it.
    ///
    /// - Parameter body: Code that uses libpq's `PGconn *`.
    /// - Returns: What `body` returns.
    /// - Throws: A ``PostgresError`` when the connection is closed, or what `body` throws.
    public func withUnsafeHandle<Result>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        try body(try openHandle())
    }

    /// The handle, or the error that says why there is none. A statement sent ahead is
    /// read first (and its outcome kept), so that whatever comes next finds the
    /// connection free.
    func openHandle() throws -> OpaquePointer {
        if case .inFlight = readAhead { collectReadAhead() }
        guard let handle else {
            throw PostgresError(kind: .connectionClosed, message: "the connection was closed; open a new Connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(
                kind: .connectionClosed,
                message: "the connection to the server was lost (\(libpqMessage)); open a new Connection")
        }
        // A body of `transaction(_:_:)` that ended the transaction itself (its own `COMMIT`,
        // `ROLLBACK` or `END`): what it sends next would run outside it — committing on its
        // own, without the role and settings it opened with — and its `COMMIT` would find
        // nothing to commit. Refused, so that the unit fails instead.
        if transactionDepth > 0, deferredOpening == nil, !sendingOpening, PQtransactionStatus(handle) == PQTRANS_IDLE {
            throw PostgresError(
                kind: .client,
                message: "the transaction was ended inside its body (a COMMIT, ROLLBACK or END it ran): "
                    + "nothing more runs in it; end it by returning or throwing")
        }
        // What cannot carry a deferred `BEGIN` in its own pipeline (a copy, a script, a
        // statement sent ahead, the raw handle) finds the transaction begun.
        if let opening = deferredOpening {
            deferredOpening = nil
            sendingOpening = true
            defer { sendingOpening = false }
            try execute(opening.sql)
        }
        return handle
    }

    /// libpq's last message for this connection, trimmed and with any secret removed.
    var libpqMessage: String {
        guard let handle else { return "closed" }
        return ConnectionString.redact(Self.libpqMessage(handle), secrets: secrets)
    }

    static func libpqMessage(_ connection: OpaquePointer) -> String {
        String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Text decoding of dates and intervals assumes ISO and `postgres` output, and `Date` is an instant: the session
    /// reads and writes timestamps in UTC. Only what differs is changed, so the usual
    /// server needs no extra round trip.
    private func configureSession() throws {
        guard let handle else { return }
        if parameterStatus("client_encoding") != "UTF8" {
            guard PQsetClientEncoding(handle, "UTF8") == 0 else {
                throw PostgresError(kind: .connectionFailed, message: "the server cannot speak UTF8: \(libpqMessage)")
            }
        }
        var settings: [String] = []
        if !["UTC", "Etc/UTC", "UCT", "Etc/UCT", "Zulu", "Etc/Zulu"].contains(parameterStatus("TimeZone") ?? "") {
            settings.append("SET TimeZone = 'UTC'")
        }
        if !(parameterStatus("DateStyle") ?? "").hasPrefix("ISO") {
            settings.append("SET DateStyle = 'ISO, MDY'")
        }
        // Text decoding of intervals reads the default style (a database or role may set
        // `iso_8601`, `sql_standard` or `postgres_verbose`).
        if parameterStatus("IntervalStyle") != "postgres" {
            settings.append("SET IntervalStyle = 'postgres'")
        }
        if !settings.isEmpty {
            // The simple protocol: a replication connection takes no other.
            try executeScript(settings.joined(separator: "; "))
        }
        // The session as opened: what changes it from here on counts.
        sessionMayHaveChanged = false
    }
}

@available(*, unavailable, message: "a libpq connection is not thread-safe")
extension Connection: Sendable {}

/// Receives the server's notices (libpq would print them on stderr) and logs them.
private final class NoticeSink {
    let logger: Logger
    /// Whether the notice's text is logged: a trigger's `RAISE NOTICE` can quote a row, so
    /// only when values are logged for debugging.
    var logsText = false
    init(logger: Logger) { self.logger = logger }
    /// A WARNING deserves attention; NOTICE, INFO and the like are routine.
    func receive(_ message: String, severity: String?, sqlState: String?, isWarning: Bool) {
        var metadata: Logger.Metadata = ["relate.source": "server"]
        if let severity { metadata["relate.severity"] = "\(severity)" }
        if let sqlState { metadata["relate.sqlstate"] = "\(sqlState)" }
        let text = logsText ? message.trimmingCharacters(in: .whitespacesAndNewlines) : "server notice (text withheld: it may quote row data)"
        logger.log(level: isWarning ? .warning : .debug, "\(text)", metadata: metadata)
    }
}
