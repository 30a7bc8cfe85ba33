extension DatabaseContext {
    /// Throws before anything is sent when `table`'s relation does not take `operation`
    /// (``Entity/allowedWrites``: a view PostgreSQL cannot update, a materialized view), so
    /// that the error names the view and not whatever the server would have said.
    func require(_ operation: Catalog.WriteOperations, on table: EntityTable) throws {
        guard table.entity.allowedWrites.contains(operation) else { throw RelateError.refused(operation, on: table) }
        // Every insert and update reads its row back (`RETURNING`), which such a rule refuses.
        if operation != .delete, table.entity.writesWithoutReturning.contains(operation) {
            let verb = operation == .insert ? "INSERT" : "UPDATE"
            throw RelateError(
                kind: .invalidWrite,
                message: "\"\(table.entity.name)\" has an ON \(verb) DO INSTEAD rule with no RETURNING clause, and Relate reads back every row it "
                    + "inserts or updates: add RETURNING and the view's columns to the rule's action (CREATE OR REPLACE RULE)",
                entity: table.entity.name)
        }
    }
}
