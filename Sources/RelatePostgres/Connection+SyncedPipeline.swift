import CLibPQ

extension Connection {
    /// Sends several groups of statements in one round trip, a sync point after each group:
    /// each group runs as ``pipeline(_:)`` runs its statements (one implicit transaction, or
    /// the explicit one a `BEGIN` of the group opened), and a group that fails is skipped to
    /// its end while the groups after it run. For many short transactions at once, each with
    /// its own settings:
    ///
    /// ```swift
    /// let answers = try connection.pipeline(groups: tenants.flatMap { tenant in [
    ///     [PostgresStatement("BEGIN READ ONLY"),
    ///      PostgresStatement("SELECT set_config('app.tenant', $1, true)", [tenant]),
    ///      PostgresStatement("SELECT count(*) FROM document")],
    ///     [PostgresStatement("COMMIT")],
    /// ] })
    /// ```
    ///
    /// A group that fails after its `BEGIN` leaves that transaction aborted, and the
    /// server refuses every statement but `COMMIT` or `ROLLBACK` until one ends it: end a
    /// transaction in a group of its own, as above (`COMMIT` of an aborted transaction rolls
    /// it back), so that one failure never reaches the next transaction.
    ///
    /// - Parameter groups: The groups of statements, in order.
    /// - Returns: Per group, its statements' results in order, or the error of the first
    ///   that failed (its ``PostgresError/statementIndex`` counted over every group's
    ///   statements).
    /// - Throws: A ``PostgresError`` when the connection is lost or libpq refuses the
    ///   pipeline; the connection is closed then (half a pipeline would answer every later
    ///   call wrongly), and what ran on the server is unknown.
    public func pipeline(groups: [[PostgresStatement]]) throws -> [Result<[PostgresResult], PostgresError>] {
        let statements = groups.flatMap { $0 }
        if statements.isEmpty { return groups.map { _ in .success([]) } }
        let handle = try openHandle()
        var bound: [BoundParameters] = []
        bound.reserveCapacity(statements.count)
        for (index, statement) in statements.enumerated() {
            do {
                try Self.checkSQL(statement.sql)
                bound.append(try BoundParameters(statement.parameters))
            } catch var error as PostgresError {
                error.statementIndex = index
                error.sql = statement.sql
                throw error
            }
        }
        return try roundTrip(.pipeline, .many(statements.map(\.sql), bound)) {
            guard PQenterPipelineMode(handle) == 1 else {
                throw PostgresError(kind: .client, message: "cannot enter pipeline mode: \(libpqMessage)")
            }
            var finished = false
            defer {
                if !finished || PQexitPipelineMode(handle) != 1 {
                    // libpq's message is left out: after a failed statement it can quote row data.
                    logger.error("closing the connection: a pipeline could not be finished", metadata: ["relate.statements": "\(statements.count)"])
                    close()
                }
            }
            var index = 0
            for group in groups {
                for statement in group {
                    try sendInPipeline(handle, statement, index: index, parameters: bound[index])
                    index += 1
                }
                guard PQpipelineSync(handle) == 1 else { throw connectionError(sql: nil) }
            }
            var answers: [Result<[PostgresResult], PostgresError>] = []
            answers.reserveCapacity(groups.count)
            index = 0
            for group in groups {
                var results: [PostgresResult] = []
                results.reserveCapacity(group.count)
                var failure: PostgresError?
                for statement in group {
                    defer { index += 1 }
                    switch try pipelineResult(handle, statement.sql, index: index, parameters: bound[index]) {
                    case .success(let result?): results.append(result)
                    case .success(nil): break
                    case .failure(let error): failure = failure ?? error
                    }
                }
                try readSyncPoint(handle)
                answers.append(failure.map { .failure($0) } ?? .success(results))
            }
            finished = true
            return answers
        }
    }

    /// Reads a group's sync point. libpq answers NULL for ever when nothing more will
    /// come (the connection broke): a few NULLs in a row mean it never will.
    private func readSyncPoint(_ handle: OpaquePointer) throws {
        var nulls = 0
        while PQstatus(handle) == CONNECTION_OK {
            guard let result = PQgetResult(handle) else {
                nulls += 1
                if nulls > 2 { break }
                continue
            }
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { return }
            endCopy(handle, status: status)
        }
        throw connectionError(sql: nil)
    }
}
