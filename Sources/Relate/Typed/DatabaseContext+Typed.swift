extension DatabaseContext {
    /// The objects of a generated type that meet a condition, in one query.
    ///
    /// ```swift
    /// let sailors = try context.fetch(Person.self, where: { $0.email.any { $0.address.hasSuffix("@navy.mil") } },
    ///                                 orderBy: { [$0.surname.ascending] }, limit: 10)
    /// ```
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - condition: a condition on its columns (all objects when `nil`).
    ///   - orderBy: sort keys from its columns.
    ///   - limit: at most this many.
    ///   - offset: skipping this many first.
    /// - Returns: the objects, typed.
    /// - Throws: `RelateError` (`.schemaChanged` when the type no longer matches the model).
    @inlinable
    public func fetch<Object: TypedObject>(
        _ type: Object.Type, where condition: ((Object.Columns) -> Condition)? = nil,
        orderBy: ((Object.Columns) -> [Ordering])? = nil, limit: Int? = nil, offset: Int? = nil
    ) throws -> [Object] {
        try check(Object.entity)
        return Object.viewing(try fetch(FetchRequest(Object.self, where: condition, orderBy: orderBy, limit: limit, offset: offset)))
    }

    /// How many objects of a generated type meet a condition, counted by the database.
    ///
    /// ```swift
    /// let hoppers = try context.count(Person.self, where: { $0.surname == "Hopper" })
    /// ```
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - condition: a condition on its columns (all objects when `nil`).
    /// - Returns: the count.
    /// - Throws: `RelateError` (`.schemaChanged` when the type no longer matches the model).
    public func count<Object: TypedObject>(_ type: Object.Type, where condition: ((Object.Columns) -> Condition)? = nil) throws -> Int {
        try check(Object.entity)
        return try count(FetchRequest(Object.self, where: condition))
    }

    /// The object of a generated type whose primary key is `primaryKey`, from memory when
    /// it is there, else by one query.
    ///
    /// ```swift
    /// let ada: Person? = try context.object(Person.self, primaryKey: 1)
    /// ```
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - primaryKey: the key's value (an array for a composite key).
    /// - Returns: the object, or `nil` when there is no such row.
    /// - Throws: `RelateError` (`.schemaChanged` when the type no longer matches the model).
    @inlinable
    public func object<Object: TypedObject>(_ type: Object.Type, primaryKey: Object.PrimaryKey) throws -> Object? {
        try check(Object.entity)
        return try object(Object.entity.name, primaryKey: primaryKey).map(Object.init(unchecked:))
    }

    /// Inserts a row of a generated type (`INSERT … RETURNING`, so defaults and triggers
    /// show): only what `body` sets is sent, other columns take their defaults.
    ///
    /// ```swift
    /// let grace = try context.insert(Person.self) { $0.firstname = "Grace"; $0.surname = "Hopper" }
    /// let email = try context.insert(Email.self) { $0.address = "grace@navy.mil"; $0.person = grace }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - body: sets the draft's values.
    /// - Returns: the new object.
    /// - Throws: what `body` throws (nothing is sent then); `RelateError` when the database
    ///   refuses the row or the type no longer matches the model.
    @inlinable @discardableResult
    public func insert<Object: TypedObject>(_ type: Object.Type, _ body: (inout Object.Draft) throws -> Void = { _ in }) throws -> Object {
        try check(Object.entity)
        var draft = Object.Draft()
        try body(&draft)
        return Object(unchecked: try insert(Object.entity.name, values: draft.assignments.values))
    }

    /// Updates the row of a generated type whose primary key is `primaryKey` without reading
    /// it first: one `UPDATE … RETURNING` of what `body` sets, whose row becomes the object.
    ///
    /// ```swift
    /// let ada = try context.update(Person.self, primaryKey: 1) { $0.surname = "King" }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - primaryKey: the row's key.
    ///   - body: sets the values to write; only those are sent.
    /// - Returns: the object as stored, or `nil` when there is no such row.
    /// - Throws: what `body` throws (nothing is sent then); `RelateError` when the database
    ///   refuses the write or the type no longer matches the model.
    @inlinable @discardableResult
    public func update<Object: TypedObject>(
        _ type: Object.Type, primaryKey: Object.PrimaryKey, _ body: (inout Object.Draft) throws -> Void
    ) throws -> Object? {
        try check(Object.entity)
        var draft = Object.Draft()
        try body(&draft)
        return try update(Object.entity.name, primaryKey: primaryKey, values: draft.assignments.values).map(Object.init(unchecked:))
    }

    /// Deletes the row of a generated type whose primary key is `primaryKey` without reading
    /// it first (see ``delete(_:primaryKey:)``).
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - primaryKey: the row's key.
    /// - Returns: whether there was such a row.
    /// - Throws: `RelateError`: `.deleteDenied` when rows still refer to it, or the type no
    ///   longer matches the model.
    @inlinable @discardableResult
    public func delete<Object: TypedObject>(_ type: Object.Type, primaryKey: Object.PrimaryKey) throws -> Bool {
        try check(Object.entity)
        return try delete(Object.entity.name, primaryKey: primaryKey)
    }

    /// Checks a generated type against this context's model: done on the type's first use
    /// in a context of the model, then remembered for the model.
    ///
    /// - Parameter type: the generated type.
    /// - Throws: `RelateError` of kind `.schemaChanged` naming the table and column and what differs.
    public func check<Object: TypedObject>(_ type: Object.Type) throws {
        try check(Object.entity)
    }

    /// Checks what a generated type was made from against this context's model (see
    /// ``check(_:)-(Object.Type)``).
    ///
    /// - Parameter entity: the generated type's ``TypedEntity``.
    /// - Throws: `RelateError` of kind `.schemaChanged` naming the table and column and what differs.
    public func check(_ entity: TypedEntity) throws {
        try TypedModelCheck.check(entity, against: layout)
    }
}
