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
        try refresh(graph.registries.flatMap(\.all))
    }

    /// `applyingDeleteRules`: an object whose row is gone takes its dependants in memory
    /// along as the database's rules did (see `reread(_:afterDelete:)`).
    func refresh(_ objects: [DatabaseObject], applyingDeleteRules: Bool = false) throws {
        // Whatever is found, kept counts may be another client's past.
        defer { graph.membershipsMayChange() }
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

    /// Reads objects' rows again (one query per entity, `= ANY` of their keys): each takes
    /// its row's values, moving between loaded sets as its foreign keys did; an object whose
    /// row is gone is marked deleted and leaves every loaded set. `afterDelete`: the rows
    /// are dependants of a deleted row, so one that vanished was deleted by the database's
    /// rules, and its own dependants in memory follow them too.
    func reread(_ objects: [DatabaseObject], afterDelete: Bool = false) throws {
        let groups = Dictionary(grouping: objects.filter { !$0.isDeleted && $0.objectKey != nil }, by: \.entityIndex)
        for (entity, members) in groups.sorted(by: { $0.key < $1.key }) {
            let primaryKey = graph.tables[entity].primaryKey
            let result = try rows(of: entity, keys: members.map { member in primaryKey.map { member.values[$0] } })
            let found = Set(try graph.materialize(entity: entity, result: result, rowsAreDistinct: false).map(ObjectIdentifier.init))
            var dependants: [DatabaseObject] = []
            for member in members where !found.contains(ObjectIdentifier(member)) {
                graph.forget(member, applyingDeleteRules: afterDelete, settingDefaults: &dependants)
            }
            if !dependants.isEmpty { try reread(dependants, afterDelete: true) }
        }
    }

    /// The rows of `entity` whose primary keys are `keys` (in key order), in one query.
    func rows(of entity: Int, keys: [[StoredValue]]) throws -> PostgresResult {
        try send(Statements.rows(of: layout.entities[entity], keys: keys), entity: entity)
    }
}
