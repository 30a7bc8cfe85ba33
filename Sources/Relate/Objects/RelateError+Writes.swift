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

    static func noRowReturned(_ table: EntityTable) -> RelateError {
        RelateError(
            kind: .invalidWrite,
            message: "the insert into \"\(table.entity.name)\" returned no row (a rule or trigger dropped it)",
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
    static func conflict(_ object: DatabaseObject, _ what: String) -> RelateError {
        RelateError(
            kind: .conflict, message: "the row of this \(object.entity.name) object \(what)", entity: object.entity.name,
            detail: "\(object)")
    }
}
