import RelatePostgres

extension DatabaseContext {
    /// The objects a request describes, in one query.
    ///
    /// ```swift
    /// let sailors = try context.fetch(FetchRequest("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil"))))
    /// ```
    ///
    /// A fetch of a table that others `INHERITS` from includes their rows, as PostgreSQL
    /// does, each as an object of its own entity (read again from its table: one more query
    /// per child entity present); ``FetchRequest/only`` leaves them out.
    ///
    /// - Parameter request: The entity, condition, order and page.
    /// - Returns: The objects, in the request's order; each row's one instance in this context.
    /// - Throws: A ``RelateError`` when a key path is unknown or crosses a to-many relationship
    ///   without a quantifier, a value does not fit its attribute, the limit or offset is
    ///   negative, or the database refuses the query.
    public func fetch(_ request: FetchRequest) throws -> [DatabaseObject] {
        if !graph.pendingObjects.isEmpty, let objects = try fetchSeeingPending(request, entity: entityIndex(named: request.entity)) {
            return objects
        }
        return try fetchFromDatabase(request)
    }

    /// ``fetch(_:)`` as the database answers it.
    func fetchFromDatabase(_ request: FetchRequest) throws -> [DatabaseObject] {
        let (entity, statement) = try request.selectStatement(layout, descendants: .marked)
        let result = try send(statement.statement, entity: entity)
        let objects =
            statement.descendants.isEmpty
            ? try graph.materialize(entity: entity, result: result, rowsAreDistinct: statement.rowsAreDistinct)
            : try materialize(entity: entity, descendants: statement.descendants, result: result)
        // Rows that changed since memory read them may have moved across a relationship the server links.
        settleLinks()
        return objects
    }

    /// The objects of an entity that meet `condition`, in one query.
    ///
    /// ```swift
    /// let hoppers = try context.fetch("person", where: Key("surname") == "Hopper", orderBy: [.ascending("firstname")])
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: The entity's name (`person`, or `schema.table`).
    ///   - condition: Which objects.
    ///   - orderBy: The sort order, most significant key first.
    ///   - limit: At most this many objects; all when `nil`.
    ///   - offset: How many objects of the order to skip first.
    /// - Returns: The objects, in that order.
    /// - Throws: A ``RelateError``, as ``fetch(_:)`` throws.
    public func fetch(
        _ entityName: String, where condition: Condition, orderBy: [Ordering] = [], limit: Int? = nil, offset: Int? = nil
    ) throws -> [DatabaseObject] {
        try fetch(FetchRequest(entityName, where: condition, orderBy: orderBy, limit: limit, offset: offset))
    }

    /// How many objects a request fetches, counted by the database: nothing is loaded.
    ///
    /// - Parameter request: The entity and condition; its order is ignored, its limit and offset
    ///   apply.
    /// - Returns: The number of objects the request would fetch.
    /// - Throws: A ``RelateError``, as ``fetch(_:)`` throws.
    public func count(_ request: FetchRequest) throws -> Int {
        // With pending changes of the entity, the objects a fetch answers are what counts.
        if !graph.pendingObjects.isEmpty, let objects = try fetchSeeingPending(request, entity: entityIndex(named: request.entity)) {
            return objects.count
        }
        let (entity, statement) = try request.countStatement(layout)
        return try countQuery(statement.statement, entity: entity)
    }

    /// How many objects of an entity meet `condition`, counted by the database.
    ///
    /// - Parameters:
    ///   - entityName: The entity's name (`person`, or `schema.table`).
    ///   - condition: Which objects to count.
    /// - Returns: The number of objects that meet `condition`.
    /// - Throws: A ``RelateError`` when the entity or a key path is unknown, a value does not fit
    ///   its attribute, or the database refuses the query.
    public func count(_ entityName: String, where condition: Condition) throws -> Int {
        try count(FetchRequest(entityName, where: condition))
    }

    /// How many rows of an entity there are, or how many meet `condition` (SQL with `$1`,
    /// `$2`… bound to `arguments`), counted by the database.
    ///
    /// ```swift
    /// let hoppers = try context.count("person", where: "surname = $1", ["Hopper"])
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: The entity's name (`person`, or `schema.table`).
    ///   - condition: A SQL condition on the entity's table, or `nil` to count every row.
    ///   - arguments: The values bound to `$1`, `$2`… in `condition`.
    /// - Returns: The number of rows.
    /// - Throws: A ``RelateError`` when the entity is unknown or the database refuses the query.
    public func count(_ entityName: String, where condition: String? = nil, _ arguments: [(any PostgresEncodable)?] = []) throws -> Int {
        let entity = try entityIndex(named: entityName)
        if !graph.pendingObjects.isEmpty, condition == nil { return try count(FetchRequest(entityName)) }
        return try countQuery(Statements.count(of: layout.entities[entity], where: condition, arguments), entity: entity)
    }

    func countQuery(_ statement: Statement, entity: Int) throws -> Int {
        let result = try send(statement, entity: entity)
        return try read(entity: entity) { try result[0].decode(Int.self, at: 0) }
    }
}
