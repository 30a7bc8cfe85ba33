import RelatePostgres

/// Why rows are read again: each reason says what else follows the rows. The one way the
/// object layer reads objects it holds again.
enum RereadReason {
    /// Memory may be behind the database: a write's conflict, another client's committed
    /// change, a key change's dependants. The rows' values; an object whose row is gone is
    /// marked deleted, its dependants left as they are.
    case stale
    /// The rows are dependants of a row just deleted: one that is gone was deleted by the
    /// database's rules, and its own dependants in memory follow them too.
    case parentDeleted
    /// Asked for (``DatabaseContext/refresh(_:)``): the values and every loaded set of the
    /// objects, refilled in place.
    case refresh
    /// What memory learnt inside a transaction that rolled back (an object a conflict
    /// corrected, a set first loaded there): as ``refresh``, and a row gone takes its
    /// dependants along by the database's rules.
    case rolledBack
}

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
    ///
    /// - Parameter object: An object of this context.
    /// - Throws: A ``RelateError`` when the object is another context's, or the database's error.
    public func refresh(_ object: DatabaseObject) throws {
        try check(object)
        try reread([object], because: .refresh)
    }

    /// ``refresh(_:)`` for every object the context holds: one query per entity for the
    /// rows, one per loaded relationship for the sets, however many objects.
    ///
    /// - Throws: A ``RelateError`` wrapping the database's error.
    public func refreshAll() throws {
        try reread(graph.registries.flatMap(\.all), because: .refresh)
    }

    /// Reads `objects` again from the database, one query per entity (`= ANY` of their
    /// keys), and what `reason` says follows them (their loaded sets, one query per
    /// relationship; the delete rules for rows gone).
    func reread(_ objects: [DatabaseObject], because reason: RereadReason) throws {
        switch reason {
        case .stale:
            try rereadRows(objects, applyingDeleteRules: false)
        case .parentDeleted:
            try rereadRows(objects, applyingDeleteRules: true)
        case .refresh, .rolledBack:
            // Whatever is found, kept counts may be another client's past.
            defer { graph.membershipsMayChange() }
            try rereadRows(objects, applyingDeleteRules: reason == .rolledBack)
            try reloadSets(of: objects)
        }
        settleLinks()
    }

    /// Loads every set `objects` have loaded again, one query per relationship.
    private func reloadSets(of objects: [DatabaseObject]) throws {
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

    /// Each object takes its row's values, moving between loaded sets as its foreign keys
    /// did; an object whose row is gone is marked deleted and leaves every loaded set, its
    /// dependants following the delete rules when `applyingDeleteRules`.
    private func rereadRows(_ objects: [DatabaseObject], applyingDeleteRules: Bool) throws {
        // An object with pending changes holds what the save will write, under the key it
        // will have: its row is not read (under a changed key, or a new row's, it would
        // read as gone, and the pending write be lost).
        let pending = graph.pendingObjects
        let objects = pending.isEmpty ? objects : objects.filter { !pending.contains(ObjectIdentifier($0)) }
        for (entity, members) in Self.byEntity(objects) {
            try take(try send(rowsStatement(of: entity, members), entity: entity), as: members, of: entity, applyingDeleteRules: applyingDeleteRules)
        }
    }

    /// `objects` that memory may read again (not deleted, keyed), by entity in entity order.
    static func byEntity(_ objects: [DatabaseObject]) -> [(entity: Int, members: [DatabaseObject])] {
        Dictionary(grouping: objects.filter { !$0.isDeleted && $0.objectKey != nil }, by: \.entityIndex)
            .sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The statement that reads the rows of `members`, objects of `entity`, by their keys.
    func rowsStatement(of entity: Int, _ members: [DatabaseObject]) -> Statement {
        let primaryKey = graph.tables[entity].primaryKey
        return Statements.rows(of: layout.entities[entity], keys: members.map { member in primaryKey.map { member.values[$0] } })
    }

    /// `members`, objects of `entity`, take `result`, their rows read by key
    /// (``rowsStatement(of:_:)``): the values of those found; those not found (and not
    /// deleted in memory meanwhile, nor holding pending changes) are marked deleted, their
    /// dependants following the delete rules when `applyingDeleteRules`.
    func take(_ result: PostgresResult, as members: [DatabaseObject], of entity: Int, applyingDeleteRules: Bool) throws {
        let found = Set(try graph.materialize(entity: entity, result: result, rowsAreDistinct: false).map(ObjectIdentifier.init))
        var dependants: [DatabaseObject] = []
        for member in members where !found.contains(ObjectIdentifier(member)) && !graph.pendingObjects.contains(ObjectIdentifier(member)) {
            graph.forget(member, applyingDeleteRules: applyingDeleteRules, settingDefaults: &dependants)
        }
        if !dependants.isEmpty { try rereadRows(dependants, applyingDeleteRules: true) }
    }

    /// The rows of `entity` whose primary keys are `keys` (in key order), in one query.
    func rows(of entity: Int, keys: [[StoredValue]]) throws -> PostgresResult {
        try send(Statements.rows(of: layout.entities[entity], keys: keys), entity: entity)
    }
}
