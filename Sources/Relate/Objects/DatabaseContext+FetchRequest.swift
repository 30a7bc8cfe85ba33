import RelatePostgres

extension DatabaseContext {
    /// The objects a request describes, in one query.
    ///
    /// ```swift
    /// let sailors = try context.fetch(FetchRequest("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil"))))
    /// ```
    public func fetch(_ request: FetchRequest) throws -> [DatabaseObject] {
        let (entity, statement) = try request.selectStatement(layout)
        let result = try send(statement.statement, entity: entity)
        return try graph.materialize(entity: entity, result: result, rowsAreDistinct: statement.rowsAreDistinct)
    }

    /// The objects of an entity that meet `condition`, in one query.
    ///
    /// ```swift
    /// let hoppers = try context.fetch("person", where: Key("surname") == "Hopper", orderBy: [.ascending("firstname")])
    /// ```
    public func fetch(
        _ entityName: String, where condition: Condition, orderBy: [Ordering] = [], limit: Int? = nil, offset: Int? = nil
    ) throws -> [DatabaseObject] {
        try fetch(FetchRequest(entityName, where: condition, orderBy: orderBy, limit: limit, offset: offset))
    }

    /// How many objects a request fetches, counted by the database: nothing is loaded.
    public func count(_ request: FetchRequest) throws -> Int {
        let (entity, statement) = try request.countStatement(layout)
        return try countQuery(statement.statement, entity: entity)
    }

    /// How many objects of an entity meet `condition`, counted by the database.
    public func count(_ entityName: String, where condition: Condition) throws -> Int {
        try count(FetchRequest(entityName, where: condition))
    }

    /// How many rows of an entity there are, or how many meet `condition` (SQL with `$1`,
    /// `$2`… bound to `arguments`), counted by the database.
    ///
    /// ```swift
    /// let hoppers = try context.count("person", where: "surname = $1", ["Hopper"])
    /// ```
    public func count(_ entityName: String, where condition: String? = nil, _ arguments: [(any PostgresEncodable)?] = []) throws -> Int {
        let entity = try entityIndex(named: entityName)
        return try countQuery(Statements.count(of: layout.entities[entity], where: condition, arguments), entity: entity)
    }

    func countQuery(_ statement: Statement, entity: Int) throws -> Int {
        let result = try send(statement, entity: entity)
        return try read(entity: entity) { try result[0].decode(Int.self, at: 0) }
    }
}
