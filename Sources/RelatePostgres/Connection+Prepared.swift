import CLibPQ
import Foundation

/// Statements the server parses and plans once per connection, then runs by name: for the
/// statements a program sends again and again (Relate's object layer sends its reads and
/// writes by primary key this way). Parsing and planning an `UPDATE … RETURNING` by key took
/// the server about 10 µs of its 70–80 (pgbench, `-M prepared` against `-M extended`).
extension Connection {
    /// Runs one statement as ``query(_:_:format:)`` does, through a statement prepared on the
    /// server the first time this connection runs `sql` with parameters of these types (one
    /// round trip more, that once), and run by name after, so the server parses and plans it
    /// once.
    ///
    /// Runs as ``query(_:_:format:)`` when ``preparesStatements`` is off, and once the
    /// connection holds 256 prepared statements (the first ones stay). A statement the server
    /// no longer holds (a `DEALLOCATE`, a pooler that lends another session) or whose result
    /// changed shape (a column's type altered) is run again unprepared when no transaction
    /// is open, and the connection stops preparing after losing one; inside a transaction the
    /// error is thrown (the transaction cannot go on).
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
        // A transaction learning its id sends a pipeline of its own (see `query`).
        guard preparesStatements, !learnsTransactionIDNow else { return try query(sql, parameters, format: format) }
        let handle = try openHandle()
        try Self.checkSQL(sql)
        let bound = try BoundParameters(parameters)
        let key = PreparedStatements.Key(sql: sql, types: Array(bound.types))
        guard let name = try prepared.names[key] ?? prepare(key, bound: bound, handle: handle) else {
            return try query(sql, parameters, format: format)
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
            let idle = PQtransactionStatus(handle) == PQTRANS_IDLE
            if lost {
                // A session that loses statements (a pooler lending another one) will again.
                preparesStatements = false
                prepared.forgetAll()
                logger.warning(
                    """
                    the server lost a prepared statement: no longer preparing statements on this connection \
                    (behind PgBouncer in transaction mode, set preparesStatements to false)
                    """,
                    metadata: ["relate.prepared": "\(name)"])
            } else if idle {
                // Its result changed shape (a column's type altered): let go of it; it is
                // prepared afresh next time. In a failed transaction it stays, for the next
                // call after it to find the same.
                prepared.names[key] = nil
                let deallocate = "DEALLOCATE \(name)"
                PQclear(roundTrip(.query, .one(deallocate, nil), untraced: 1) { PQexec(handle, deallocate) })
            }
            guard idle else {
                if lost {
                    error.message += " (the session lost this connection's prepared statements: behind PgBouncer in transaction mode, "
                        + "turn preparesStatements off)"
                }
                throw error
            }
            return try query(sql, parameters, format: format)
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

    /// Prepares `key`'s statement under a name of this connection's; `nil` when the
    /// connection holds as many as it keeps.
    private func prepare(_ key: PreparedStatements.Key, bound: BoundParameters, handle: OpaquePointer) throws -> String? {
        guard prepared.names.count < PreparedStatements.capacity else { return nil }
        let name = prepared.nextName()
        try roundTrip(.prepare, .one(key.sql, nil), untraced: 1) {
            let result = name.withCString { name in
                key.sql.withCString { sql in
                    bound.withPointers { types, _, _, _ in PQprepare(handle, name, sql, Int32(bound.count), types) }
                }
            }
            _ = try checked(result, sql: key.sql, parameters: bound)
        }
        prepared.names[key] = name
        return name
    }
}

/// The statements a connection prepared in its session, by text and parameter types (a
/// statement is declared with its parameters' types, so `$1` bound as an `int8` and as a
/// text are two statements).
struct PreparedStatements {
    struct Key: Hashable {
        let sql: String
        let types: [Int32]
    }

    /// At most this many a connection: the statements a program repeats are few, and each
    /// holds memory in the server's session.
    static let capacity = 256

    var names: [Key: String] = [:]
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
