/// The errors of the object layer's writes, made in one place.
extension RelateError {
    /// The model never makes these; they guard the object layer's switches.
    static func notToOne(_ relationship: Relationship) -> RelateError {
        RelateError(kind: .invalidWrite, message: "relationship \"\(relationship.key)\" is to-many: set a collection", key: relationship.key)
    }

    static func notToMany(_ relationship: Relationship) -> RelateError {
        RelateError(kind: .invalidWrite, message: "relationship \"\(relationship.key)\" is to-one: set an object", key: relationship.key)
    }

    static func readOnly(_ table: EntityTable) -> RelateError {
        RelateError(
            kind: .invalidWrite,
            message: "\"\(table.entity.name)\" has no key (no primary key, nor a unique key whose columns are all NOT NULL), "
                + "so its rows cannot be told apart for a write; declare one with Override.primaryKey(of:columns:)",
            entity: table.entity.name)
    }

    /// An object whose key holds NULL (a key declared by an override on a column that
    /// allows it): no statement can find its row by key.
    static func nullKey(_ object: DatabaseObject) -> RelateError {
        let table = object.table
        let columns = table.primaryKey.filter { object.values[$0].isNull }.map { table.entity.attributes[$0].name }
        return RelateError(
            kind: .invalidWrite,
            message: "this \(table.entity.name) object's key (\(columns.joined(separator: ", "))) is NULL, so no statement can find its row "
                + "to write it; write it by condition (update(_:where:values:)), or key the entity on columns that are NOT NULL",
            entity: table.entity.name, key: columns.first)
    }

    /// A write the relation does not take (``Entity/allowedWrites``), refused before it is sent.
    static func refused(_ operation: Catalog.WriteOperations, on table: EntityTable) -> RelateError {
        let verb = operation == .insert ? "an insert into" : operation == .update ? "an update of" : "a delete from"
        let entity = table.entity
        let what: String =
            switch entity.kind {
            case .materializedView: "a materialized view, which is read-only (refresh it with refreshMaterializedView(_:concurrently:))"
            case .view: "a view PostgreSQL cannot \(operation == .insert ? "insert into" : operation == .update ? "update" : "delete from")"
                + " (not a simple view over one table, and no INSTEAD OF trigger or rule for it)"
            default: "a \(entity.kind.rawValue) PostgreSQL does not let this statement write"
            }
        return RelateError(
            kind: .invalidWrite, message: "\(verb) \"\(entity.name)\" was not sent: it is \(what)", entity: entity.name)
    }

    static func noRowReturned(_ table: EntityTable) -> RelateError {
        RelateError(
            kind: .invalidWrite,
            message: "the insert into \"\(table.entity.name)\" returned no row (a rule or trigger dropped it)",
            entity: table.entity.name)
    }

    /// An insert whose row came back without its key: an `INSTEAD OF` trigger (or a rule)
    /// returned the row as given, before the table gave it one. Its object could never be
    /// found again by its key, so the insert is refused and rolled back.
    static func insertedWithoutKey(_ table: EntityTable) -> RelateError {
        RelateError(
            kind: .invalidWrite,
            message: "the insert into \"\(table.entity.name)\" came back without its key (an INSTEAD OF trigger or a rule returned "
                + "the row before the table gave it one), so it was rolled back: have the trigger return the row as stored "
                + "(INSERT … RETURNING * INTO NEW)",
            entity: table.entity.name)
    }

    /// A delete that a `RESTRICT` / `NO ACTION` foreign key refused, naming the constraint and
    /// the table that still refers to the row; `nil` for any other error.
    static func deleteDenied(_ error: RelateError, entity: String, detail: String) -> RelateError? {
        guard let postgres = error.postgresError,
            postgres.sqlState == .foreignKeyViolation || postgres.sqlState == .restrictViolation
        else { return nil }
        return RelateError(
            kind: .deleteDenied,
            message: "this \(entity) object cannot be deleted: rows of table \"\(postgres.table ?? "?")\" still refer to it "
                + "through constraint \"\(postgres.constraint ?? "?")\"",
            entity: entity, postgresError: postgres, detail: detail)
    }

    /// The object's row no longer holds what memory believed (`what` says how).
    /// A write of `object` (`"update"`, `"delete"`) that a trigger or rule declined: a
    /// `BEFORE` trigger that returns NULL (a soft delete), an `INSTEAD OF` trigger that
    /// does, a rule that does nothing; its row is still there. `then` says what became of
    /// memory and of the write.
    static func declined(_ object: DatabaseObject, _ write: String, then: String) -> RelateError {
        RelateError(
            kind: .invalidWrite,
            message: "the \(write) of this \(object.entity.name) object was not applied: a trigger or rule of \"\(object.entity.name)\" "
                + "declined it; \(then)", entity: object.entity.name, detail: "\(object)")
    }

    static func conflict(_ object: DatabaseObject, _ what: String) -> RelateError {
        RelateError(
            kind: .conflict, message: "the row of this \(object.entity.name) object \(what)", entity: object.entity.name,
            detail: "\(object)")
    }
}
