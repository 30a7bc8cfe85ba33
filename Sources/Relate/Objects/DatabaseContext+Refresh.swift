import RelatePostgres

extension DatabaseContext {
    /// Reads `object` again from the database, with every relationship it has loaded: its
    /// attributes take the row's values, it moves between loaded sets as its foreign keys
    /// did, and its loaded sets take their members as the database has them (refilled in
    /// place: a set handed out stays live). When its row is gone, it is marked deleted and
    /// leaves every loaded set.
    ///
    /// ```swift
    /// try context.refresh(ada)       // after another program changed her row or her emails
    /// ```
    public func refresh(_ object: DatabaseObject) throws {
        try check(object)
        try refresh([object])
    }

    /// ``refresh(_:)`` for every object the context holds: one query per entity for the
    /// rows, one per loaded relationship for the sets, however many objects.
    public func refreshAll() throws {
        try refresh(registries.flatMap(\.all))
    }

    /// `applyingDeleteRules`: an object whose row is gone takes its dependants in memory
    /// along as the database's rules did (see `reread(_:afterDelete:)`).
    func refresh(_ objects: [DatabaseObject], applyingDeleteRules: Bool = false) throws {
        // Whatever is found, kept counts may be another client's past.
        defer { membershipsMayChange() }
        try reread(objects, afterDelete: applyingDeleteRules)
        var owners: [RelationshipAddress: [DatabaseObject]] = [:]
        for object in objects where !object.isDeleted {
            guard let box = object.loaded else { continue }
            for (index, _) in box.sets {
                owners[RelationshipAddress(entity: object.entityIndex, relationship: index), default: []].append(object)
            }
        }
        for (address, list) in owners.sorted(by: { ($0.key.entity, $0.key.relationship) < ($1.key.entity, $1.key.relationship) }) {
            try load(relationship: address.relationship, for: list)
        }
    }
}
