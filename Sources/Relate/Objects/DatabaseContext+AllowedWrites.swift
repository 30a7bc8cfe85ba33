extension DatabaseContext {
    /// Throws before anything is sent when `table`'s relation does not take `operation`
    /// (``Entity/allowedWrites``: a view PostgreSQL cannot update, a materialized view), so
    /// that the error names the view and not whatever the server would have said.
    func require(_ operation: Catalog.WriteOperations, on table: EntityTable) throws {
        guard table.entity.allowedWrites.contains(operation) else { throw RelateError.refused(operation, on: table) }
    }
}
