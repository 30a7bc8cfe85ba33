import RelatePostgres

extension DatabaseContext {
    /// The objects a request describes, in one query.
    ///
    /// ```swift
    /// let sailors = try context.fetch(FetchRequest("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil"))))
    /// ```
    public func fetch(_ request: FetchRequest) throws -> [DatabaseObject] {
        let (entity, statement) = try request.selectStatement(layout)
        let result = try database(entity: entity) { try connection.query(statement.sql, statement.parameters, format: .binary) }
        return try materialize(entity: entity, result: result, rowsAreDistinct: statement.rowsAreDistinct)
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
        return try countQuery(statement.sql, statement.parameters, entity: entity)
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
        var sql = "SELECT count(*) FROM \(tables[entity].table)"
        if let condition { sql += " WHERE \(condition)" }
        return try countQuery(sql, arguments, entity: entity)
    }

    func countQuery(_ sql: String, _ parameters: [(any PostgresEncodable)?], entity: Int) throws -> Int {
        try database(entity: entity) {
            let result = try connection.query(sql, parameters, format: .binary)
            return try result[0].decode(Int.self, at: 0)
        }
    }
}
