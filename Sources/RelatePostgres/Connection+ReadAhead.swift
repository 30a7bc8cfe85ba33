import CLibPQ

/// A statement sent without waiting for its result, so that the server works on it while
/// the program does something else (the next batch of a cursor while this one is used).
enum ReadAhead {
    case inFlight(sql: String)
    case done(Result<PostgresResult, any Error>)
}

extension Connection {
    /// Sends `sql` (no parameters) and returns at once; ``resultSentAhead()`` reads its
    /// result later. Any statement sent meanwhile first reads and keeps that result, so the
    /// connection can be used as usual in between: only the waiting is saved, never the order
    /// changed.
    ///
    /// ```swift
    /// try connection.sendAhead("FETCH FORWARD 1000 FROM walk", format: .binary)
    /// …                                        // other work, other statements
    /// let rows = try connection.resultSentAhead()
    /// ```
    ///
    /// - Parameters:
    ///   - sql: One statement, without parameters.
    ///   - format: The form its rows come back in; text by default.
    /// - Throws: A ``PostgresError`` when the statement cannot be sent (a closed connection, a
    ///   NUL byte); its own failure is thrown by ``resultSentAhead()``.
    public func sendAhead(_ sql: String, format: PostgresFormat = .text) throws {
        let handle = try openHandle()
        try Self.checkSQL(sql)
        readAhead = nil
        // Its result is read later, by another call: only the sending is timed and observed.
        try roundTrip(.sendAhead, .one(sql, nil), timed: false) {
            guard PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, format.rawValue) == 1 else {
                throw connectionError(sql: sql)
            }
        }
        readAhead = .inFlight(sql: sql)
    }

    /// The result of the statement ``sendAhead(_:format:)`` sent, waiting for it if need be;
    /// its error, if it failed.
    ///
    /// - Returns: The statement's rows.
    /// - Throws: The statement's ``PostgresError``, or one of kind
    ///   ``PostgresError/Kind-swift.struct/invalidInput`` when nothing was sent ahead.
    public func resultSentAhead() throws -> PostgresResult {
        if case .inFlight = readAhead { collectReadAhead() }
        guard case .done(let outcome) = readAhead else {
            throw PostgresError(kind: .invalidInput, message: "no statement was sent ahead on this connection")
        }
        readAhead = nil
        return try outcome.get()
    }

    /// Forgets a statement sent ahead, reading its result first if it is still in flight.
    public func discardSentAhead() {
        if case .inFlight = readAhead { collectReadAhead() }
        readAhead = nil
    }

    /// Reads the result of the statement in flight, to the end, and keeps its outcome.
    func collectReadAhead() {
        guard case .inFlight(let sql) = readAhead else { return }
        guard let handle else {
            readAhead = .done(.failure(PostgresError(kind: .connectionClosed, message: "the connection was closed", sql: sql)))
            return
        }
        var first: OpaquePointer?
        while let result = PQgetResult(handle) {
            // A COPY would keep answering: end it, as `query` does.
            endCopy(handle, status: PQresultStatus(result))
            if first == nil { first = result } else { PQclear(result) }
        }
        readAhead = .done(Result { try checked(first, sql: sql, parameters: nil) })
    }
}
