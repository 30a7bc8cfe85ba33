import RelatePostgres

/// One live group's read among many: its request, and who reads it (`nil`: the pool's role).
struct LiveRead: Sendable {
    var request: FetchRequest
    var principal: Principal?
}

/// One test of changed rows among many (``Database/requestsMet(_:)``): the tests of
/// requests on `entity`'s own columns of one principal, and the keys (text forms) of the
/// rows that changed.
struct LiveDecision: Sendable {
    var tests: MatchTests
    var entity: Int
    var keys: [[String?]]
    var principal: Principal?
}

extension Database {
    /// The answers of `reads`, on one pooled connection of the primary in one round trip:
    /// each read as its principal (with one, in a read-only transaction of its own: `SELECT
    /// set_config…; SELECT`, the implicit transaction up to a sync point:
    /// ``Statements/pipelined(_:as:)``), so a read that fails (a setting a policy cannot
    /// cast) fails alone, and the next
    /// transaction starts as the login role with no setting. A request whose entity other
    /// tables inherit from is read after the round trip, in a transaction of its own.
    ///
    /// - Returns: Per read, in order, its rows or the error reading them.
    /// - Throws: A ``RelateError`` when no read could run: the connection was lost (its
    ///   ``RelateError/postgresError`` says so), or the database is shutting down.
    func liveRows(of reads: [LiveRead]) async throws -> [Result<[LiveRow], RelateError>] {
        try await unit("relate.read") {
            let layout = self.layout.withLock { $0 }
            return try await self.withConnection { connection, _ in
                try Self.liveRows(of: reads, on: connection, layout: layout)
            }
        }
    }

    /// The indexes of each decision's requests that a row of its entity whose key is one of
    /// its keys meets now (rows deleted meanwhile meet none), in one round trip on one
    /// pooled connection of the primary: each decision as its principal (the rows it may
    /// see; with a principal, in a read-only transaction of its own), failing alone.
    ///
    /// - Returns: Per decision, in order, the indexes met or the error deciding.
    /// - Throws: A ``RelateError`` when no decision could run (the connection was lost, a shutdown).
    func requestsMet(_ decisions: [LiveDecision]) async throws -> [Result<Set<Int>, RelateError>] {
        try await unit("relate.read") {
            let layout = self.layout.withLock { $0 }
            return try await self.withConnection { connection, _ in
                var answers = [Result<Set<Int>, RelateError>?](repeating: nil, count: decisions.count)
                var sent: [(decision: Int, group: Int)] = []
                var groups: [[PostgresStatement]] = []
                for (index, decision) in decisions.enumerated() {
                    do {
                        try decision.principal?.validate()
                        let stored = decision.keys.compactMap { layout.entities[decision.entity].storedKey($0)?.first }
                        guard !stored.isEmpty else {
                            answers[index] = .success([])
                            continue
                        }
                        sent.append((index, groups.count))
                        groups += decision.tests.pipelined(keys: stored, as: decision.principal)
                    } catch {
                        answers[index] = .failure(Self.relateError(error))
                    }
                }
                let results = try relateErrors(naming: nil) { try connection.pipeline(groups: groups) }
                for (index, group) in sent {
                    let entity = layout.model.entities[decisions[index].entity].name
                    answers[index] = Result {
                        let statementResults = try results[group].get()
                        return try relateErrors(naming: entity) { Set(try statementResults.last!.map { row in try row.decode(Int.self, at: 0) }) }
                    }.mapError { Self.relateError($0, entity: entity) }
                }
                return answers.map { $0! }
            }
        }
    }

    /// ``liveRows(of:)`` on `connection`.
    private static func liveRows(of reads: [LiveRead], on connection: Connection, layout: ModelLayout) throws -> [Result<[LiveRow], RelateError>] {
        var answers = [Result<[LiveRow], RelateError>?](repeating: nil, count: reads.count)
        var sent: [(read: Int, entity: Int, statement: RequestStatement, group: Int)] = []
        var alone: [Int] = []
        var groups: [[PostgresStatement]] = []
        for (index, read) in reads.enumerated() {
            do {
                try read.principal?.validate()
                let (entity, statement) = try read.request.selectStatement(layout, descendants: .marked)
                guard statement.descendants.isEmpty else {
                    alone.append(index)
                    continue
                }
                sent.append((index, entity, statement, groups.count))
                groups += Statements.pipelined(statement.statement.postgres, as: UnitOfWork(.read, as: read.principal, replicas: .primaryOnly))
            } catch {
                answers[index] = .failure(relateError(error))
            }
        }
        let results = try relateErrors(naming: nil) { try connection.pipeline(groups: groups) }
        // One context for every answer, emptied between them: no object of one principal's
        // answer is another's.
        let context = DatabaseContext(connection: connection, layout: layout)
        defer { context.reset(keepingSpares: false) }
        for (index, entity, statement, group) in sent {
            let name = layout.model.entities[entity].name
            answers[index] = Result {
                let statementResults = try results[group].get()
                defer { context.reset(keepingSpares: true) }
                return try context.graph.materialize(entity: entity, result: statementResults.last!, rowsAreDistinct: statement.rowsAreDistinct)
                    .map(LiveRow.init)
            }.mapError { relateError($0, entity: name) }
        }
        for index in alone {
            let unit = UnitOfWork(.read, as: reads[index].principal, replicas: .primaryOnly)
            answers[index] = Result {
                defer { context.reset(keepingSpares: true) }
                return try context.transaction(options: Statements.opening(of: unit, learnsTransactionID: false, learnsCommitPosition: false)) {
                    try context.fetch(reads[index].request).map(LiveRow.init)
                }
            }.mapError { relateError($0) }
        }
        return answers.map { $0! }
    }

    /// `error` as a ``RelateError``, naming `entity` when it is the database's.
    private static func relateError(_ error: any Error, entity: String? = nil) -> RelateError {
        switch error {
        case let error as RelateError: error
        case let error as PostgresError: RelateError(error, entity: entity)
        default: RelateError(kind: .database, message: "\(error)", entity: entity)
        }
    }
}
