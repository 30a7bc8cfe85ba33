import CLibPQ
import Foundation

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
        let plans = namedPlans(for: statements, bound: bound)
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
            // libpq 15's PQpipelineSync sends what it holds at once: a live round of a hundred
            // principals' groups was a hundred sends, each a segment the server woke for.
            // Corked, the socket sends full segments only, and the rest when uncorked.
            do {
                let corked = groups.count > 1 && Self.cork(PQsocket(handle), true)
                // Uncorked before the results are read, however the sending ends.
                defer { if corked { Self.cork(PQsocket(handle), false) } }
                for group in groups {
                    for statement in group {
                        if let plan = plans[index] {
                            try sendPrepared(handle, statement, plan, index: index, parameters: bound[index])
                        } else {
                            try sendInPipeline(handle, statement, index: index, parameters: bound[index])
                        }
                        index += 1
                    }
                    guard PQpipelineSync(handle) == 1 else { throw connectionError(sql: nil) }
                }
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
                    if let plan = plans[index], plan.isNew {
                        // The prepare's own result first: the name is the session's once it succeeded.
                        switch try pipelineResult(handle, statement.sql, index: index, parameters: bound[index]) {
                        case .success(_?): prepared.names[plan.key] = plan.name
                        case .success: break
                        case .failure(let error): failure = failure ?? error
                        }
                    }
                    switch try pipelineResult(handle, statement.sql, index: index, parameters: bound[index]) {
                    case .success(let result?): results.append(result)
                    case .success(nil): break
                    case .failure(let error):
                        if let plan = plans[index] { forgetPlanAfter(error, plan) }
                        failure = failure ?? error
                    }
                }
                try readSyncPoint(handle)
                answers.append(failure.map { .failure($0) } ?? .success(results))
            }
            finished = true
            return answers
        }
    }

    /// Sets `TCP_CORK` on `socket`; whether it took (not on a Unix-domain socket). Clearing it
    /// sends what it held back.
    @discardableResult
    private static func cork(_ socket: Int32, _ on: Bool) -> Bool {
        guard socket >= 0 else { return false }
        var value: Int32 = on ? 1 : 0
        return setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    /// How a statement that ``PostgresStatement/prepares`` runs: by `name`, prepared first
    /// in the same pipeline when `isNew`.
    struct NamedPlan {
        let key: PreparedStatements.Key
        let name: String
        let isNew: Bool
    }

    /// The statements of a pipeline run by name, by index: those that ask to be prepared,
    /// while the connection prepares statements and has room for their names.
    private func namedPlans(for statements: [PostgresStatement], bound: [BoundParameters]) -> [NamedPlan?] {
        var plans = [NamedPlan?](repeating: nil, count: statements.count)
        guard preparesStatements, statements.contains(where: \.prepares) else { return plans }
        var preparing: [PreparedStatements.Key: String] = [:]
        for (index, statement) in statements.enumerated() where statement.prepares {
            let key = PreparedStatements.Key(sql: statement.sql, types: Array(bound[index].types))
            if let name = prepared.names[key] ?? preparing[key] {
                plans[index] = NamedPlan(key: key, name: name, isNew: false)
            } else if prepared.names.count + preparing.count < PreparedStatements.capacity {
                let name = prepared.nextName()
                preparing[key] = name
                plans[index] = NamedPlan(key: key, name: name, isNew: true)
            }
        }
        return plans
    }

    /// Sends statement `index` by its plan's name, after its prepare when the plan is new.
    private func sendPrepared(
        _ handle: OpaquePointer, _ statement: PostgresStatement, _ plan: NamedPlan, index: Int, parameters: BoundParameters
    ) throws(PostgresError) {
        let sent = plan.name.withCString { name in
            statement.sql.withCString { sql in
                parameters.withPointers { types, values, lengths, formats in
                    (!plan.isNew || PQsendPrepare(handle, name, sql, Int32(parameters.count), types) == 1)
                        && PQsendQueryPrepared(handle, name, Int32(parameters.count), values, lengths, formats, statement.format.rawValue) == 1
                }
            }
        }
        guard sent else {
            var error = connectionError(sql: statement.sql)
            error.statementIndex = index
            throw error
        }
    }

    /// A statement run by name failed: when the session lost its statements (a pooler's
    /// restart; twice, and the connection stops preparing, as ``queryPrepared(_:_:format:)``
    /// does), or the plan no longer fits the table, the names go, and the next pipeline
    /// prepares the statement again or sends it as it is. (The group's error is reported as
    /// it is; running it again is its caller's to decide.)
    private func forgetPlanAfter(_ error: PostgresError, _ plan: NamedPlan) {
        switch error.sqlState {
        case .invalidSQLStatementName? where prepared.names[plan.key] != nil: preparedStatementsLost()
        case .featureNotSupported?: prepared.names[plan.key] = nil
        default: break
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
