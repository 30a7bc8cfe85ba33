extension DatabaseContext {
    /// Runs a materialized view's query again: `REFRESH MATERIALIZED VIEW`. Its objects
    /// already in memory keep their values until read again (``refresh(_:)``, a fetch);
    /// live results over it are read again.
    ///
    /// ```swift
    /// try context.refreshMaterializedView("sales_by_month", concurrently: true)
    /// let months = try context.fetch("sales_by_month")
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: The materialized view's entity name (`sales_by_month`, or `schema.view`).
    ///   - concurrently: Whether readers of the view may go on reading it meanwhile
    ///     (`CONCURRENTLY`: the view needs a unique index, and the statement cannot run
    ///     inside a transaction block).
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidRequest`` when
    ///   the entity is not a materialized view (nothing is sent), or the database's error (the
    ///   owner's privilege, no unique index for `concurrently`).
    public func refreshMaterializedView(_ entityName: String, concurrently: Bool = false) throws {
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
        guard table.entity.kind == .materializedView else {
            throw RelateError(
                kind: .invalidRequest,
                message: "\"\(table.entity.name)\" is a \(table.entity.kind.rawValue), not a materialized view: there is nothing to refresh",
                entity: table.entity.name)
        }
        let sql = "REFRESH MATERIALIZED VIEW " + (concurrently ? "CONCURRENTLY " : "") + table.layout.table
        _ = try send(Statement(sql: sql, parameters: []), entity: entity)
        graph.noteChange(of: entity)
    }
}
