import CLibPQ

/// One statement of a pipeline: SQL, its parameters, and the form its rows come in.
public struct PostgresStatement {
    /// The statement's SQL, with `$1`, `$2`… where its parameters go.
    public var sql: String
    /// The values bound to `$1`, `$2`…, in order; `nil` binds NULL.
    public var parameters: [(any PostgresEncodable)?]
    /// The form the statement's rows come back in.
    public var format: PostgresFormat
    /// Whether ``Connection/pipeline(groups:)`` prepares the statement (once a session, as
    /// ``Connection/queryPrepared(_:_:format:)`` does) and runs it by name: for a long
    /// statement sent again and again, parsed once, and planned once when the transaction
    /// asks for a generic plan (`plan_cache_mode`). Other calls send it as it is.
    package var prepares = false

    /// Creates a statement of a pipeline.
    ///
    /// ```swift
    /// let results = try connection.pipeline([
    ///     PostgresStatement("UPDATE account SET balance = balance - $1 WHERE id = $2", [100, 1]),
    ///     PostgresStatement("UPDATE account SET balance = balance + $1 WHERE id = $2", [100, 2]),
    /// ])
    /// ```
    ///
    /// - Parameters:
    ///   - sql: The statement's SQL, with `$1`, `$2`… where its parameters go.
    ///   - parameters: The values bound to the placeholders, in order; `nil` binds NULL.
    ///   - format: The form the rows come back in: `.text` (the default) or `.binary`.
    public init(_ sql: String, _ parameters: [(any PostgresEncodable)?] = [], format: PostgresFormat = .text) {
        self.sql = sql
        self.parameters = parameters
        self.format = format
    }
}

extension Connection {
    /// Sends every statement at once in libpq's pipeline mode and reads all results: one
    /// round trip, however many statements.
    ///
    /// The statements run as one implicit transaction (or inside the open one): if one
    /// fails, the error names it by ``PostgresError/statementIndex`` and none of them
    /// takes effect.
    ///
    /// ```swift
    /// let results = try connection.pipeline([
    ///     PostgresStatement("INSERT INTO email (address, person_id) VALUES ($1, $2)", ["ada@example.com", 1]),
    ///     PostgresStatement("SELECT count(*) FROM email WHERE person_id = $1", [1], format: .binary),
    /// ])
    /// let count = try results[1][0].decode(Int.self, at: 0)
    /// ```
    ///
    /// - Parameter statements: The statements, in order.
    /// - Returns: Their results, in the same order.
    /// - Throws: A ``PostgresError`` naming the failed statement by
    ///   ``PostgresError/statementIndex``; none of the statements took effect then.
    @discardableResult
    public func pipeline(_ statements: [PostgresStatement]) throws -> [PostgresResult] {
        guard !statements.isEmpty else { return [] }
        let opening = deferredOpening.map { [$0] } ?? []
        let learning = learnsTransactionIDNow && !(statements.count == 1 && Self.isTransactionControl(statements[0].sql))
        guard learning || !opening.isEmpty else { return try send(statements, learning: false) }
        // The transaction's `BEGIN` and the question of its id ride along: no round trip more.
        deferredOpening = nil
        let outerSending = sendingOpening
        sendingOpening = outerSending || !opening.isEmpty
        defer { sendingOpening = outerSending }
        var results: [PostgresResult]
        do {
            results = try send(opening + statements + (learning ? [Self.transactionIDStatement] : []), learning: learning, opening: opening.count)
        } catch var error as PostgresError {
            error.statementIndex = error.statementIndex.flatMap { $0 >= opening.count ? $0 - opening.count : nil }
            throw error
        }
        if learning { learnTransactionID(from: results.removeLast()) }
        return Array(results.dropFirst(opening.count))
    }

    /// Whether the next statement should carry ``transactionIDStatement``.
    var learnsTransactionIDNow: Bool {
        transactionOptions.learnsTransactionID && transactionDepth > 0 && transactionID == nil
    }

    /// Asks for the transaction's id, when one was assigned (a statement wrote): sent with
    /// other statements, in their pipeline.
    static var transactionIDStatement: PostgresStatement { PostgresStatement("SELECT txid_current_if_assigned()") }

    func learnTransactionID(from result: PostgresResult) {
        if result.count == 1, let id = try? result[0].decode(Int?.self, at: 0) { transactionID = id }
    }

    /// `pipeline`, its last statement untraced (it is Relate's, not the caller's), and no
    /// transaction id learned.
    func sendWithoutTrace(_ statements: [PostgresStatement]) throws -> [PostgresResult] {
        try send(statements, learning: true)
    }

    /// `pipeline`, the last statement untraced when `learning` (it is Relate's, not the
    /// caller's), the first `opening` ones a transaction's deferred `BEGIN`.
    private func send(_ statements: [PostgresStatement], learning: Bool, opening: Int = 0) throws -> [PostgresResult] {
        if statements.isEmpty { return [] }
        let handle = try openHandle()
        var bound: [BoundParameters] = []
        bound.reserveCapacity(statements.count)
        var checked: String?
        for (index, statement) in statements.enumerated() {
            do {
                if statement.sql != checked {
                    try Self.checkSQL(statement.sql)
                    checked = statement.sql
                }
                bound.append(try BoundParameters(statement.parameters))
            } catch var error as PostgresError {
                error.statementIndex = index
                error.sql = statement.sql
                throw error
            }
        }
        // The statement learning the transaction's id is Relate's own: untraced.
        return try roundTrip(.pipeline, .many(statements.map(\.sql), bound), untraced: learning ? 1 : 0, opening: opening) {
            guard PQenterPipelineMode(handle) == 1 else {
                throw PostgresError(kind: .client, message: "cannot enter pipeline mode: \(libpqMessage)")
            }
            var syncs = 0
            // Every way out, thrown or returned, reads up to the sync point and leaves pipeline
            // mode, so the connection answers the next call as usual.
            defer { leavePipeline(handle, syncs: syncs, statements: statements.count) }

            for (index, statement) in statements.enumerated() {
                try sendInPipeline(handle, statement, index: index, parameters: bound[index])
            }
            guard PQpipelineSync(handle) == 1 else {
                throw connectionError(sql: nil)
            }
            syncs = 1

            var results: [PostgresResult] = []
            results.reserveCapacity(statements.count)
            var firstError: PostgresError?
            for (index, statement) in statements.enumerated() {
                switch try pipelineResult(handle, statement.sql, index: index, parameters: bound[index]) {
                case .success(let result?): results.append(result)
                case .success(nil): break
                case .failure(let error): firstError = firstError ?? error
                }
            }
            if let firstError { throw firstError }
            return results
        }
    }

    /// Sends statement `index` of a pipeline (its result is read later, by ``pipelineResult(_:_:index:parameters:)``).
    func sendInPipeline(_ handle: OpaquePointer, _ statement: PostgresStatement, index: Int, parameters: BoundParameters) throws(PostgresError) {
        // withCString, as in `query`: passing the String itself made a copy of its text.
        let sent = statement.sql.withCString { sql in
            parameters.withPointers { types, values, lengths, formats in
                PQsendQueryParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, statement.format.rawValue)
            }
        }
        guard sent == 1 else {
            var error = connectionError(sql: statement.sql)
            error.statementIndex = index
            throw error
        }
    }

    /// The result of statement `index` of a pipeline, read through the NULL that ends it:
    /// its rows, `nil` when an earlier failure aborted it, or the error it met (a copy it
    /// started is ended, refused). A lost connection is thrown: nothing more will come.
    func pipelineResult(
        _ handle: OpaquePointer, _ sql: String, index: Int, parameters: BoundParameters
    ) throws(PostgresError) -> Result<PostgresResult?, PostgresError> {
        guard let result = PQgetResult(handle) else {
            var error = connectionError(sql: sql)
            error.statementIndex = index
            throw error
        }
        // Each statement's results end with a NULL.
        defer { while let extra = PQgetResult(handle) { PQclear(extra) } }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            noteSessionChange(tag: PQcmdStatus(result), sql: sql)
            return .success(PostgresResult(handle: result, sql: sql))
        case PGRES_PIPELINE_ABORTED:
            PQclear(result)
            return .success(nil)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            // Until the copy ends, libpq answers with the copy state for ever.
            let status = PQresultStatus(result)
            PQclear(result)
            endCopy(handle, status: status)
            var error = PostgresError(kind: .invalidInput, message: "COPY FROM STDIN and COPY TO STDOUT are not supported here", sql: sql)
            error.statementIndex = index
            return .failure(error)
        default:
            var error = Self.error(from: result, sql: sql, parameters: parameters, connectionLost: !isOpen, libpqMessage: libpqMessage)
            error.statementIndex = index
            PQclear(result)
            if error.kind == .connectionClosed { throw error }
            return .failure(error)
        }
    }

    /// Reads what is left up to the last of the `syncs` sync points sent (sending one if none
    /// was) and leaves pipeline mode. A connection that cannot (it broke, or libpq refuses)
    /// is closed: half in a pipeline, it would answer every later call wrongly.
    func leavePipeline(_ handle: OpaquePointer, syncs: Int, statements: Int) {
        var drained = syncs > 0 || PQpipelineSync(handle) == 1
        for _ in 0..<max(syncs, 1) where drained {
            drained = drainPipeline(handle, statements: statements)
        }
        if drained, PQexitPipelineMode(handle) == 1 { return }
        // libpq's message is left out: after a failed statement it can quote row data.
        logger.error("closing the connection: a pipeline could not be finished", metadata: ["relate.statements": "\(statements)"])
        close()
    }

    /// Reads up to and including the sync point. libpq answers NULL once after each
    /// statement's results, and NULL for ever when nothing more will come (the sync was
    /// lost): more NULLs than statements means the sync point will never arrive.
    private func drainPipeline(_ handle: OpaquePointer, statements: Int) -> Bool {
        var nulls = 0
        while PQstatus(handle) == CONNECTION_OK {
            guard let result = PQgetResult(handle) else {
                nulls += 1
                if nulls > statements + 1 { return false }
                continue
            }
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { return true }
            endCopy(handle, status: status)
        }
        return false
    }
}
