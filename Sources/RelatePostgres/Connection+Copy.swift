import CLibPQ

/// `COPY` through libpq's copy functions: rows streamed to the server (`COPY … FROM STDIN`)
/// or from it (`COPY … TO STDOUT`), in one exchange, with as little memory as a chunk.
extension Connection {
    /// Runs `sql`, a `COPY … FROM STDIN`, and sends the data `produce` gives, chunk by chunk
    /// (`PQputCopyData`); answers how many rows the server took. All or nothing: when
    /// `produce` throws, the copy is ended with an error and no row stays.
    ///
    /// ```swift
    /// let rows = try connection.copyIn("COPY person (firstname) FROM STDIN") { send in
    ///     try send(Array("Ada\nGrace\n".utf8))
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - sql: A `COPY … FROM STDIN` statement; it cannot have parameters.
    ///   - produce: Calls `send` with each chunk of the copy's data, in the format the
    ///     statement names (text, CSV or binary); chunks need not end at rows.
    /// - Returns: The number of rows copied.
    /// - Throws: A ``PostgresError``: the server's (a row it refused, with its SQLSTATE), a
    ///   statement that is not a `COPY … FROM STDIN` (``PostgresError/Kind-swift.struct/invalidInput``),
    ///   a lost connection; or what `produce` threw.
    @discardableResult
    public func copyIn(_ sql: String, _ produce: (_ send: ([UInt8]) throws -> Void) throws -> Void) throws -> Int {
        let handle = try openHandle()
        try Self.checkSQL(sql)
        return try roundTrip(.copy, .one(sql, nil)) {
            try startCopy(handle, sql, shownAs: sql, expecting: PGRES_COPY_IN, "COPY … FROM STDIN")
            var failure: (any Error)?
            do {
                try produce { bytes in
                    guard !bytes.isEmpty else { return }
                    let sent = bytes.withUnsafeBufferPointer { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
                    guard sent == 1 else { throw connectionError(sql: sql) }
                }
            } catch {
                failure = error
            }
            // An error message makes the server fail the COPY: nothing of it stays.
            let ended = PQputCopyEnd(handle, failure == nil ? nil : "the client stopped the copy")
            if let failure {
                // The server's answer is the error the client's message caused: the client's own says why.
                _ = try? finishCopy(handle, sql)
                throw failure
            }
            let copied = try finishCopy(handle, sql)
            guard ended == 1 else { throw connectionError(sql: sql) }
            return copied
        }
    }

    /// Runs `sql`, a `COPY … TO STDOUT`, and hands each row the server sends to `receive`
    /// as it arrives (`PQgetCopyData`): memory holds one row at a time. Answers how many
    /// rows were copied.
    ///
    /// ```swift
    /// try connection.copyOut("COPY person TO STDOUT (FORMAT csv)") { row in file.write(Data(row)) }
    /// ```
    ///
    /// - Parameters:
    ///   - sql: A `COPY … TO STDOUT` statement; it cannot have parameters.
    ///   - shown: The statement as logs, traces and errors show it, when `sql` holds values
    ///     that must not go there (a query's values written in as literals, as `COPY` takes
    ///     no parameters): the same with placeholders. An error then has no position.
    ///   - receive: Takes each row's bytes (valid only during the call), in the format the
    ///     statement names; the binary format's header comes with the first row.
    /// - Returns: The number of rows copied.
    /// - Throws: A ``PostgresError`` (the server's, a statement that is not a `COPY … TO
    ///   STDOUT`, a lost connection), or what `receive` threw: the rest of the copy is then
    ///   read and dropped, so the connection stays usable.
    @discardableResult public func copyOut(_ sql: String, shown: String? = nil, _ receive: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        guard let shown else { return try copyOut(sql, shownAs: sql, receive) }
        do {
            return try copyOut(sql, shownAs: shown, receive)
        } catch var error as PostgresError {
            error.position = nil
            throw error
        }
    }

    private func copyOut(_ sent: String, shownAs sql: String, _ receive: (UnsafeRawBufferPointer) throws -> Void) throws -> Int {
        let handle = try openHandle()
        try Self.checkSQL(sent)
        return try roundTrip(.copy, .one(sql, nil)) {
            try startCopy(handle, sent, shownAs: sql, expecting: PGRES_COPY_OUT, "COPY … TO STDOUT")
            var failure: (any Error)?
            var buffer: UnsafeMutablePointer<CChar>?
            while true {
                let length = PQgetCopyData(handle, &buffer, 0)
                if length == -1 { break }
                guard length > 0, let row = buffer else {
                    _ = try? finishCopy(handle, sql)
                    throw connectionError(sql: sql)
                }
                if failure == nil {
                    do { try receive(UnsafeRawBufferPointer(start: row, count: Int(length))) } catch { failure = error }
                }
                PQfreemem(row)
            }
            let copied = try finishCopy(handle, sql)
            if let failure { throw failure }
            return copied
        }
    }

    /// Sends `sent` (shown as `sql`) and checks that the server started the copy `status` names.
    private func startCopy(_ handle: OpaquePointer, _ sent: String, shownAs sql: String, expecting status: ExecStatusType, _ what: String) throws {
        guard let started = PQexec(handle, sent) else { throw connectionError(sql: sql) }
        if PQresultStatus(started) == status {
            PQclear(started)
            return
        }
        // The server's error, or a statement of another kind (whose copy, if any, is ended).
        _ = try checked(started, sql: sql, parameters: nil)
        throw PostgresError(kind: .invalidInput, message: "copyIn and copyOut take a \(what) statement", sql: sql)
    }

    /// Reads the copy's results to the end: its row count, or the server's error.
    private func finishCopy(_ handle: OpaquePointer, _ sql: String) throws -> Int {
        var copied = 0
        var failure: (any Error)?
        while let result = PQgetResult(handle) {
            do {
                copied = try checked(result, sql: sql, parameters: nil).affectedRows ?? copied
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
        return copied
    }
}
