import RelatePostgres

/// Writes to a row by its primary key, without reading it first: one statement each, whose
/// answer becomes (or refreshes) the row's object, so memory follows as it does for writes
/// through an object.
extension DatabaseContext {
    /// Updates the row whose primary key is `primaryKey` without reading it first: one
    /// `UPDATE … SET … WHERE <key> RETURNING …`, whose row becomes the object (the one memory
    /// holds, refreshed, or a new one). Keys are attributes, or to-one relationships given an
    /// object; a primary-key column may be among them (see ``DatabaseObject/setValue(_:forKey:)``).
    ///
    /// ```swift
    /// let ada = try context.update("person", primaryKey: 1, values: ["surname": "King"])   // the object, as stored
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: the entity (`person`, or `schema.table`).
    ///   - primaryKey: the row's key; an array for a composite key.
    ///   - values: the new values by key.
    /// - Returns: the row's object as stored, or `nil` when there is no such row.
    /// - Throws: ``RelateError`` for an unknown key, a value the column cannot take, a table
    ///   without a primary key, or what the database refuses.
    @discardableResult
    public func update(_ entityName: String, primaryKey: Any, values: [String: Any?]) throws -> DatabaseObject? {
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
        let key = try keyParameters(primaryKey, of: entity, for: "rows cannot be told apart for a write")
        try require(.update, on: table)
        if try writesPending() {
            // Pending, the write is the object's: read it (if memory does not hold it) and set it.
            guard let object = try object(entityName, primaryKey: primaryKey) else { return nil }
            try pendingStep { for (key, value) in values.sorted(by: { $0.key < $1.key }) { try object.setValue(value, forKey: key) } }
            return object
        }
        let (columns, parameters) = try columnValues(values, of: entity, for: "set it through the object that holds the key")
        guard !columns.isEmpty else { return try object(entityName, primaryKey: primaryKey) }
        graph.membershipsMayChange()
        let registered = ObjectKey(parameters: key).flatMap { graph.registries[entity][$0] }
        let writesKey = table.layout.movesReferences(writing: columns)
        if writesKey, let registered { try loadServerLinks(of: [registered]) }
        let result: PostgresResult
        do {
            result = try send(updateStatement(table.layout, setting: columns, to: parameters, key: key), entity: entity)
        } catch let error as RelateError where writesKey && registered != nil {
            throw keyChangeDenied(error, registered!) ?? error
        }
        guard let row = result.first else {
            // No such row: an object memory held for it is out of date (or a trigger declined the write).
            if let registered {
                switch noRowWritten(registered, .update(columns: columns)) {
                case .gone: throw markVanished(registered)
                case .declined(let error): throw error
                case .written: return registered
                }
            }
            return nil
        }
        if let registered {
            if writesKey { try followKeyChange(registered, to: row) } else { try applyStored(row, to: registered) }
            settleLinks()
            return registered
        }
        // New to memory: it joins the loaded sets of what it refers to, as an insert does.
        let object = try graph.materialize(entity: entity, row: row)
        graph.noteChange(of: entity)
        graph.didChange(object, from: nil)
        settleLinks()
        return object
    }

    /// Deletes the row whose primary key is `primaryKey` without reading it first: one
    /// `DELETE … RETURNING`. The foreign keys' `ON DELETE` rules apply in memory as in the
    /// database, and an object memory holds for the row is marked deleted.
    ///
    /// ```swift
    /// try context.delete("person", primaryKey: 7)
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: the entity (`person`, or `schema.table`).
    ///   - primaryKey: the row's key; an array for a composite key.
    /// - Returns: whether there was such a row.
    /// - Throws: ``RelateError``: `.deleteDenied` naming the constraint when rows still refer
    ///   to it (`RESTRICT` / `NO ACTION`), or what else the database refuses.
    @discardableResult
    public func delete(_ entityName: String, primaryKey: Any) throws -> Bool {
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
        let key = try keyParameters(primaryKey, of: entity, for: "rows cannot be told apart for a write")
        try require(.delete, on: table)
        graph.membershipsMayChange()
        if try writesPending() {
            guard let object = try object(entityName, primaryKey: primaryKey) else { return false }
            try delete(object)
            return true
        }
        let registered = ObjectKey(parameters: key).flatMap { graph.registries[entity][$0] }
        if let registered { try loadServerLinks(of: [registered]) }
        let result: PostgresResult
        do {
            result = try send(Statements.delete(from: table.layout, key: key, returning: true), entity: entity)
        } catch let error as RelateError {
            throw RelateError.deleteDenied(error, entity: table.entity.name, detail: "key \(key.map { "\($0.map { "\($0)" } ?? "NULL")" })") ?? error
        }
        guard let row = result.first else {
            // No such row: an object memory held for it is out of date (unless a trigger declined the delete).
            if let registered {
                if case .declined(let error) = noRowWritten(registered, .delete) { throw error }
                rowDeleted(registered)
            }
            settleLinks()
            return false
        }
        // A row memory did not hold becomes an object only to be marked deleted: its
        // dependants in memory follow the rules all the same.
        let object = try registered ?? graph.materialize(entity: entity, row: row)
        rowDeleted(object)
        settleLinks()
        return true
    }
}
