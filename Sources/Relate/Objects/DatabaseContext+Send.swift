import RelatePostgres

/// The object layer's only way to the connection: every ``Statement`` goes through here,
/// and here a `PostgresError` becomes a ``RelateError`` (SQLSTATE, constraint and all
/// kept, the entity named). Reading a row's cells (``read(entity:_:)``) is the other place
/// the connection layer's errors come from, and turns them the same way.
extension DatabaseContext {
    /// Sends one statement; answers its result. `entity`: the one the error names.
    @discardableResult
    func send(_ statement: Statement, entity: Int?) throws -> PostgresResult {
        try read(entity: entity) {
            statement.isRepeated
                ? try connection.queryPrepared(statement.sql, statement.parameters, format: statement.format)
                : try connection.query(statement.sql, statement.parameters, format: statement.format)
        }
    }

    /// Sends `statements` in one pipeline: one round trip, all or nothing.
    func send(_ statements: [Statement], entity: Int?) throws -> [PostgresResult] {
        try read(entity: entity) { try connection.pipeline(statements.map(\.postgres)) }
    }

    /// Sends `statement` without waiting for its result (see ``Connection/sendAhead(_:format:)``);
    /// ``resultSentAhead(entity:)`` reads it.
    func sendAhead(_ statement: Statement, entity: Int?) throws {
        try read(entity: entity) { try connection.sendAhead(statement.sql, format: statement.format) }
    }

    func resultSentAhead(entity: Int?) throws -> PostgresResult {
        try read(entity: entity) { try connection.resultSentAhead() }
    }

    /// Lets go of a statement sent ahead whose result nobody will read.
    func discardSentAhead() {
        connection.discardSentAhead()
    }

    /// Runs `body` in a transaction of the connection's (a savepoint when one is open),
    /// opened as `options` say when it is the outermost.
    func inDatabaseTransaction<Result>(
        _ options: TransactionOptions = TransactionOptions(), _ body: () throws -> Result
    ) throws -> Result {
        try connection.transaction(options, body)
    }

    /// Runs work that reads from the connection layer (a statement, a row's cells), turning
    /// its errors into ``RelateError``s that name `entity`.
    func read<Result>(entity: Int?, _ work: () throws -> Result) throws -> Result {
        try relateErrors(naming: entity.map { model.entities[$0].name }, work)
    }

    /// Errors of the connection layer as ``RelateError``s, for work that names no entity
    /// (opening a connection, reading the catalog, a change feed).
    static func wrappingErrors<Result>(_ work: () throws -> Result) throws -> Result {
        try relateErrors(naming: nil, work)
    }

    /// `error` as the object layer reports it: a `PostgresError` becomes a ``RelateError``.
    static func relateError(_ error: any Error) -> any Error {
        if let error = error as? PostgresError { return RelateError(error) }
        return error
    }
}

/// Runs work of the connection layer (a statement sent, a row's cells read): a
/// `PostgresError` it throws comes out as a ``RelateError`` naming `entity`. The one
/// place the object layer translates them.
func relateErrors<Result>(naming entity: String?, _ work: () throws -> Result) throws -> Result {
    do {
        return try work()
    } catch let error as PostgresError {
        throw RelateError(error, entity: entity)
    }
}
