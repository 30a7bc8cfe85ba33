import CLibPQ
import Foundation

/// Statements the server parses and plans once per connection, then runs by name: for the
/// statements a program sends again and again (Relate's object layer sends its reads and
/// writes by primary key this way). Parsing and planning an `UPDATE … RETURNING` by key took
/// the server about 10 µs of its 70–80 (pgbench, `-M prepared` against `-M extended`).
extension Connection {
    /// Runs one statement as ``query(_:_:format:)`` does, through a statement prepared on the
    /// server the first time this connection runs `sql` with parameters of these types, and
    /// run by name after, so the server parses and plans it once. Every call is one round
    /// trip, the first too: the prepare and the first run go together in one pipeline.
    ///
    /// Runs as ``query(_:_:format:)`` when ``preparesStatements`` is off, and once the
    /// connection holds 256 prepared statements (the first ones stay). When the server
    /// refuses a statement before running it — its result changed shape (a column's type
    /// altered, SQLSTATE `0A000`), or the session no longer holds it (a `DEALLOCATE`, a
    /// pooler restarted or lending another session, `26000`) — and no transaction is open,
    /// the statement is prepared again and run once more, in one round trip: it cannot have
    /// had an effect. Inside a transaction the error is thrown (the server aborted the
    /// transaction; it cannot go on). A connection whose session loses its statements a
    /// second time stops preparing (a pooler in transaction mode would lose them for ever).
    ///
    /// ```swift
    /// for id in ids {
    ///     let row = try connection.queryPrepared("SELECT name FROM person WHERE id = $1", [id])
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - sql: One statement, with `$1`, `$2`… where its parameters go.
    ///   - parameters: The values bound to the placeholders, in order; `nil` binds NULL.
    ///   - format: The form every column comes back in: `.text` (the default) or `.binary`.
    /// - Returns: The statement's rows.
    /// - Throws: A ``PostgresError``, as ``query(_:_:format:)`` throws.
    @discardableResult
    public func queryPrepared(
        _ sql: String, _ parameters: [(any PostgresEncodable)?] = [], format: PostgresFormat = .text
    ) throws -> PostgresResult {
        // A transaction learning its id, or yet to send its `BEGIN`, sends a pipeline of its
        // own (see `query`).
        guard preparesStatements, !learnsTransactionIDNow, deferredOpening == nil else { return try query(sql, parameters, format: format) }
        let handle = try openHandle()
        try Self.checkSQL(sql)
        let bound = try BoundParameters(parameters)
        let key = PreparedStatements.Key(sql: sql, types: Array(bound.types))
        guard let name = prepared.names[key] else {
            guard prepared.names.count < PreparedStatements.capacity else { return try query(sql, parameters, format: format) }
            return try prepareAndRun(key, bound: bound, format: format, handle: handle)
        }
        // Only the server's own word that the statement is gone, or that its plan no
        // longer fits (both raised before the statement runs), is taken for that: the same
        // SQLSTATEs raised by a trigger or a function are the statement's errors.
        var (lost, replanned) = (false, false)
        do {
            return try roundTrip(.query, .one(sql, bound)) {
                let result = name.withCString { name in
                    bound.withPointers { _, values, lengths, formats in
                        PQexecPrepared(handle, name, Int32(bound.count), values, lengths, formats, format.rawValue)
                    }
                }
                lost = Self.raisedBy(result, "FetchPreparedStatement")
                replanned = Self.raisedBy(result, "RevalidateCachedQuery")
                return try checked(result, sql: sql, parameters: bound)
            }
        } catch var error as PostgresError where lost || replanned {
            if lost { preparedStatementsLost() }
            // Inside a transaction the failed statement aborted it: nothing may be run again.
            // A statement whose shape changed stays known then, so that the next call, after
            // the transaction, finds the same and prepares it afresh.
            guard PQtransactionStatus(handle) == PQTRANS_IDLE else {
                if lost {
                    error.message += " (the session lost this connection's prepared statements: behind PgBouncer in transaction mode, "
                        + "turn preparesStatements off)"
                }
                throw error
            }
            if !preparesStatements { return try query(sql, parameters, format: format) }
            if replanned { prepared.names[key] = nil }
            return try prepareAndRun(key, bound: bound, format: format, handle: handle, replacing: replanned ? name : nil)
        }
    }

    /// The session lost every prepared statement, not one only (a pooler in transaction
    /// mode lends it another server connection, or restarted): they are forgotten, and after
    /// a second loss the connection no longer prepares statements.
    func preparedStatementsLost() {
        prepared.forgetAll()
        prepared.losses += 1
        if prepared.losses > 1, preparesStatements {
            preparesStatements = false
            logger.warning(
                """
                the server lost this connection's prepared statements twice: no longer preparing statements on it \
                (behind PgBouncer in transaction mode, set preparesStatements to false)
                """)
        }
    }

    /// Whether `result` is an error raised by the server's C function `function` (the
    /// field libpq gives as `PG_DIAG_SOURCE_FUNCTION`, the same in every language).
    private static func raisedBy(_ result: OpaquePointer?, _ function: String) -> Bool {
        guard let result, PQresultStatus(result) == PGRES_FATAL_ERROR,
              let source = PQresultErrorField(result, Int32(UInt8(ascii: "R")))
        else { return false }
        return String(cString: source) == function
    }

    /// Prepares `key`'s statement under a new name of this connection's and runs it, in one
    /// pipeline: one round trip. `replacing` names a statement of the same text the server
    /// still holds with its old plan: it is deallocated in the same round trip, after a sync
    /// point of its own, so that it goes whether or not the run fails.
    private func prepareAndRun(
        _ key: PreparedStatements.Key, bound: BoundParameters, format: PostgresFormat, handle: OpaquePointer,
        replacing old: String? = nil
    ) throws -> PostgresResult {
        let name = prepared.nextName()
        let deallocate = old.map { "DEALLOCATE \($0)" }
        let sent: SentStatements = if let deallocate {
            .many([key.sql, deallocate], [bound, try BoundParameters([])])
        } else {
            .one(key.sql, bound)
        }
        return try roundTrip(.prepare, sent, untraced: old == nil ? 0 : 1) {
            guard PQenterPipelineMode(handle) == 1 else {
                throw PostgresError(kind: .client, message: "cannot enter pipeline mode: \(libpqMessage)", sql: key.sql)
            }
            var syncs = 0
            defer { leavePipeline(handle, syncs: syncs, statements: 3) }
            let sent = name.withCString { name in
                key.sql.withCString { sql in
                    bound.withPointers { types, values, lengths, formats in
                        PQsendPrepare(handle, name, sql, Int32(bound.count), types) == 1
                            && PQsendQueryPrepared(handle, name, Int32(bound.count), values, lengths, formats, format.rawValue) == 1
                    }
                }
            }
            guard sent, PQpipelineSync(handle) == 1 else { throw connectionError(sql: key.sql) }
            syncs = 1
            if let deallocate, PQsendQueryParams(handle, deallocate, 0, nil, nil, nil, nil, 0) == 1, PQpipelineSync(handle) == 1 {
                syncs = 2
            }

            // The prepare's result, then the run's (aborted when the prepare failed); each
            // ends with a NULL.
            guard let preparing = PQgetResult(handle) else { throw connectionError(sql: key.sql) }
            if PQresultStatus(preparing) == PGRES_COMMAND_OK {
                PQclear(preparing)
            } else {
                _ = try checked(preparing, sql: key.sql, parameters: bound)
            }
            while let extra = PQgetResult(handle) { PQclear(extra) }
            // Prepared on the server from here on, whatever the run does.
            prepared.names[key] = name
            guard let run = PQgetResult(handle) else { throw connectionError(sql: key.sql) }
            let result = try checked(run, sql: key.sql, parameters: bound)
            while let extra = PQgetResult(handle) { PQclear(extra) }
            return result
        }
    }
}

/// The statements a connection prepared in its session, by text and parameter types (a
/// statement is declared with its parameters' types, so `$1` bound as an `int8` and as a
/// text are two statements).
struct PreparedStatements {
    struct Key: Hashable {
        let sql: String
        let types: [Int32]

        /// The text by its bytes, as the server parses it: a statement with a composed `é`
        /// in a literal and one with a decomposed `é` (one string to Swift's `==`) are two
        /// statements, and the second ran the first's, with the first's literal.
        static func == (left: Key, right: Key) -> Bool {
            left.types == right.types && left.sql.hasSameBytes(as: right.sql)
        }

        /// `String`'s own hash: coarser than the bytes, so equal keys hash alike.
        func hash(into hasher: inout Hasher) {
            hasher.combine(sql)
            hasher.combine(types)
        }
    }

    /// At most this many a connection: the statements a program repeats are few, and each
    /// holds memory in the server's session.
    static let capacity = 256

    var names: [Key: String] = [:]
    /// How many times the session lost its statements (see `queryPrepared`).
    var losses = 0
    /// Names no other connection uses (a pooler may lend this session's server connection
    /// to another client, whose statements must never be taken for ours).
    private let prefix = "relate_" + String(UInt64.random(in: 0...UInt64.max), radix: 36) + "_"
    private var made = 0

    mutating func nextName() -> String {
        made += 1
        return prefix + String(made)
    }

    /// The session ended (closed, or connected again): the server holds none of them.
    mutating func forgetAll() {
        names.removeAll()
    }
}
