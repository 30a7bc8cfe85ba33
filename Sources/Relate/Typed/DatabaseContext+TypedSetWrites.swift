/// Writes by the thousand for generated types: the typed forms of
/// ``DatabaseContext/update(_:where:values:)``, ``DatabaseContext/delete(_:where:)-(String,_)`` and
/// ``DatabaseContext/insert(_:rows:)->[DatabaseObject]``.
extension DatabaseContext {
    /// Updates every row of a generated type where `condition` holds, in one statement, to
    /// what `set` gives the draft; the objects memory holds follow.
    ///
    /// ```swift
    /// let renamed = try context.update(Person.self, where: { $0.surname == "Hopper" }, set: { $0.firstname = "Grace" })
    /// ```
    ///
    /// A value computed from the row (``RowExpression``) goes through the dynamic form.
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - condition: which rows, on its columns.
    ///   - body: sets the draft's values: only those are written.
    /// - Returns: how many rows changed.
    /// - Throws: what `body` throws (nothing is sent then); `RelateError` as the dynamic form
    ///   throws, or `.schemaChanged` when the type no longer matches the model.
    @inlinable @discardableResult
    public func update<Object: TypedObject>(
        _ type: Object.Type, where condition: (Object.Columns) -> Condition, set body: (inout Object.Draft) throws -> Void
    ) throws -> Int {
        try check(Object.entity)
        var draft = Object.Draft()
        try body(&draft)
        return try update(Object.entity.name, where: condition(Object.Columns(prefix: "")), values: draft.assignments.values)
    }

    /// Deletes every row of a generated type where `condition` holds, in one statement; the
    /// `ON DELETE` rules apply in memory.
    ///
    /// ```swift
    /// let gone = try context.delete(Session.self, where: { $0.expires < .now })
    /// ```
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - condition: which rows, on its columns.
    /// - Returns: how many rows were deleted.
    /// - Throws: `RelateError`: `.deleteDenied` naming the constraint when rows still refer
    ///   to them, or `.schemaChanged` when the type no longer matches the model.
    @inlinable @discardableResult
    public func delete<Object: TypedObject>(_ type: Object.Type, where condition: (Object.Columns) -> Condition) throws -> Int {
        try check(Object.entity)
        return try delete(Object.entity.name, where: condition(Object.Columns(prefix: "")))
    }

    /// Inserts a row of a generated type for each draft, in at most two round trips, all or
    /// nothing; answers the new objects in the drafts' order.
    ///
    /// ```swift
    /// let people = try context.insert(Person.self, rows: names.map { name in
    ///     var draft = Person.Draft(); draft.firstname = name; return draft
    /// })
    /// ```
    ///
    /// - Parameters:
    ///   - type: the generated type.
    ///   - rows: the drafts, each with what its row is given (the rest take their defaults).
    /// - Returns: the new objects.
    /// - Throws: `RelateError` when a value does not fit or the database refuses a row
    ///   (nothing is written then), or `.schemaChanged` when the type no longer matches the model.
    @inlinable @discardableResult
    public func insert<Object: TypedObject>(_ type: Object.Type, rows: [Object.Draft]) throws -> [Object] {
        try check(Object.entity)
        return Object.viewing(try insert(Object.entity.name, rows: rows.map(\.assignments.values)))
    }
}
