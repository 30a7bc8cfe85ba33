import RelatePostgres

/// A primary key written through the context. The object keeps its identity under its new
/// key, and every foreign key that referred to the old one follows its `ON UPDATE` action
/// in memory as it did in the database: CASCADE moves the dependants' keys (re-keying them
/// in turn where the key is part of theirs), SET NULL empties them, SET DEFAULT and the
/// rest read them again. BaseTen allowed it, and natural keys with `ON UPDATE CASCADE`
/// rely on it.
extension DatabaseContext {
    /// `object`'s row, whose key changed, is now `row`.
    func followKeyChange(_ object: DatabaseObject, to row: PostgresRow) throws {
        var stale: [DatabaseObject] = []
        var reloads: [(owner: DatabaseObject, relationship: Int)] = []
        graph.move(object, to: try graph.storedValues(of: row, entity: object.entityIndex), stale: &stale, reloads: &reloads)
        try reread(stale, because: .stale)
        for (owner, index) in reloads where !owner.isDeleted {
            try reloadManyToMany(index, of: owner)
        }
    }

    /// Loads the owner's many-to-many set again; members it no longer has let go of the owner too.
    private func reloadManyToMany(_ index: Int, of owner: DatabaseObject) throws {
        let before = owner.sets[index]?.allObjects ?? []
        try load(relationship: index, for: [owner])
        let inverse = graph.inverse(of: owner.entityIndex, index)
        for member in before where owner.sets[index]?.contains(member) != true {
            member.sets[inverse.relationship]?.drop(owner)
        }
    }

    /// The error for a key change the database refused because rows still refer to the old
    /// key (`ON UPDATE RESTRICT` / `NO ACTION`): names the constraint and the table; `nil`
    /// for any other error.
    func keyChangeDenied(_ error: RelateError, _ object: DatabaseObject) -> RelateError? {
        guard let postgres = error.postgresError, postgres.sqlState == .foreignKeyViolation || postgres.sqlState == .restrictViolation,
            let constraint = postgres.constraint,
            object.entity.relationships.contains(where: { $0.foreignKeyIn == .to && $0.constraint == constraint })
        else { return nil }
        return RelateError(
            kind: .updateDenied,
            message: "the key of this \(object.entity.name) object cannot change: rows of table \"\(postgres.table ?? "?")\" still refer to it "
                + "through constraint \"\(constraint)\" (ON UPDATE RESTRICT or NO ACTION)",
            entity: object.entity.name, postgresError: postgres, detail: "\(object)")
    }
}
