import Logging

/// One exchange with the server, as a ``RoundTripObserver`` sees it: the SQL sent (with its
/// placeholders; the bound values are never given) and what kind of call sent it.
public struct RoundTrip: Sendable {
    /// What sent a round trip.
    public enum Kind: String, Sendable {
        /// ``Connection/query(_:_:format:)``, ``Connection/execute(_:_:)``, or a prepared
        /// statement run by name.
        case query
        /// ``Connection/queryPrepared(_:_:format:)`` preparing a statement and running it, in
        /// one pipeline (`PQsendPrepare`, then `PQsendQueryPrepared`).
        case prepare
        /// ``Connection/pipeline(_:)``: several statements in one round trip.
        case pipeline
        /// ``Connection/executeScript(_:)``: statements without parameters.
        case script
        /// ``Connection/sendAhead(_:format:)``: sent now, its result read later.
        case sendAhead = "send ahead"
        /// A command of the replication protocol (a logical replication stream starting).
        case replication
        /// ``Connection/copyIn(_:_:)`` or ``Connection/copyOut(_:shown:_:)``: a `COPY` and its data.
        case copy
    }

    /// What sent it.
    public var kind: Kind
    /// The SQL of each statement, in order: one, or a pipeline's several.
    public var statements: [String]
    /// How many of the last ``statements`` the connection added of its own (asking the
    /// transaction's id in the same pipeline, a `DEALLOCATE`): sent, but not what the
    /// caller asked for.
    public var addedStatements: Int
    /// How many of the first ``statements`` open the transaction the others run in: the
    /// `BEGIN` of a ``Connection/transaction(_:_:)``, sent with its first statement.
    public var openingStatements = 0

    /// The statements the caller asked for: ``statements`` without the `BEGIN` and those
    /// the connection added (all of them when nothing else is left).
    public var requestedStatements: ArraySlice<String> {
        let asked = statements.dropFirst(openingStatements).dropLast(addedStatements)
        return asked.isEmpty ? statements[...] : asked
    }
}

/// Sees every round trip of a ``Connection``, around it: the one place where a statement
/// can be timed, traced or counted (Relate's `Database` turns each into a span). Called on
/// the connection's thread, synchronously; it must call `exchange` exactly once.
public protocol RoundTripObserver: AnyObject {
    /// Runs `exchange` (the round trip `roundTrip` describes) and returns what it returns;
    /// whatever the observer does goes around it. `exchange` throws the statement's
    /// ``PostgresError`` when the server refused it or the connection was lost.
    ///
    /// - Parameters:
    ///   - roundTrip: The statements about to be sent.
    ///   - exchange: The round trip itself.
    /// - Returns: What `exchange` returned.
    /// - Throws: What `exchange` threw.
    func observe<Result>(_ roundTrip: RoundTrip, _ exchange: () throws -> Result) rethrows -> Result
}

/// The statements of one round trip as ``Connection``'s choke point sees them: one, the
/// usual case, with no array made for it, or a pipeline's several.
enum SentStatements {
    case one(String, BoundParameters?)
    case many([String], [BoundParameters])

    var count: Int {
        switch self {
        case .one: 1
        case .many(let sql, _): sql.count
        }
    }

    var first: String {
        switch self {
        case .one(let sql, _): sql
        case .many(let sql, _): sql.first ?? ""
        }
    }

    /// Every statement's SQL (an array made: only for an observer or a trace).
    var sql: [String] {
        switch self {
        case .one(let sql, _): [sql]
        case .many(let sql, _): sql
        }
    }

    /// How many parameters in all, and the values as a debugging log shows them.
    var parameterCount: Int {
        switch self {
        case .one(_, let bound): bound?.count ?? 0
        case .many(_, let bound): bound.reduce(0) { $0 + $1.count }
        }
    }

    var debugTexts: [[String]] {
        switch self {
        case .one(_, let bound): bound.map { [$0.debugTexts] } ?? []
        case .many(_, let bound): bound.map(\.debugTexts)
        }
    }
}

extension Connection {
    /// Every exchange with the server goes through here, and only here are statements
    /// logged (at ``queryLogLevel``, SQL only unless ``logsValuesForDebugging``), handed to
    /// ``trace``, counted in ``roundTrips``, timed for ``statementTimer`` and shown to the
    /// ``roundTripObserver``. The last `untraced` statements are Relate's own (a
    /// transaction's id, a `DEALLOCATE`): counted and observed, not traced; the first
    /// `opening` ones open the transaction (``RoundTrip/openingStatements``). Without a log
    /// at that level, a trace, a timer or an observer, it costs a few comparisons.
    func roundTrip<Result>(
        _ kind: RoundTrip.Kind, _ statements: SentStatements, untraced: Int = 0, opening: Int = 0, timed: Bool = true,
        _ exchange: () throws -> Result
    ) rethrows -> Result {
        if logger.logLevel <= queryLogLevel { log(kind, statements) }
        if let trace {
            switch statements {
            case .one(let sql, _): if untraced == 0 { trace(sql) }
            case .many(let sql, _): for sql in sql.dropLast(untraced) { trace(sql) }
            }
        }
        roundTrips += 1
        let started = timed ? statementTimer.map { _ in ContinuousClock.now } : nil
        defer { if let started { statementTimer?(ContinuousClock.now - started) } }
        guard let roundTripObserver else { return try exchange() }
        var roundTrip = RoundTrip(kind: kind, statements: statements.sql, addedStatements: untraced)
        roundTrip.openingStatements = opening
        return try roundTripObserver.observe(roundTrip, exchange)
    }

    /// One line per round trip: the first statement's SQL (placeholders only), how many
    /// statements and parameters; the values only when logged for debugging.
    private func log(_ kind: RoundTrip.Kind, _ statements: SentStatements) {
        var metadata: Logger.Metadata = ["relate.sql": "\(statements.first)"]
        if statements.count > 1 { metadata["relate.statements"] = "\(statements.count)" }
        let parameters = statements.parameterCount
        if parameters > 0 {
            metadata["relate.parameter_count"] = "\(parameters)"
            if logsValuesForDebugging {
                metadata["relate.parameters"] = .array(statements.debugTexts.map { .array($0.map { .string($0) }) })
            }
        }
        logger.log(level: queryLogLevel, "\(kind.rawValue)", metadata: metadata)
    }
}
