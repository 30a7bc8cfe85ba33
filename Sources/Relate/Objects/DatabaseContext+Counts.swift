import RelatePostgres

/// How many members an unloaded to-many relationship has, as the database counted them in
/// one ``DatabaseContext/graph.membershipGeneration``.
struct CachedCount {
    var value: Int
    var generation: Int
}

extension DatabaseObject {
    /// How many members the to-many relationship `key` has, counting a pair a helper table
    /// holds twice twice: from the loaded set with no query, else from a count kept by
    /// ``DatabaseContext/prefetchCounts(_:for:)``, else with one `count(*)` query. Nothing
    /// is loaded.
    ///
    /// ```swift
    /// let emails = try ada.count(forKey: "email")
    /// ```
    ///
    /// - Parameter key: A to-many relationship key of the object's entity.
    /// - Returns: The number of members, repeats of a helper table without a unique key included.
    /// - Throws: A ``RelateError`` when `key` is unknown or not to-many, or the database's error.
    public func count(forKey key: String) throws -> Int {
        // The common case, a kept count or a loaded set, with one lookup of the key.
        if let index = table.layout.relationshipIndex(forKey: key), table.isToMany[index], !isDeleted, let context,
            let known = knownCount(index, generation: context.graph.membershipGeneration)
        {
            return known
        }
        let context = try liveContext()
        let index = try relationshipIndex(key, toMany: true)
        if let known = knownCount(index, generation: context.graph.membershipGeneration) { return known }
        // Pending changes may move members in or out: the set, loaded seeing them, counts.
        if !context.graph.pendingObjects.isEmpty { return try relationshipSet(index).totalCount }
        try context.loadCounts(relationship: index, for: [self])
        return knownCount(index, generation: context.graph.membershipGeneration) ?? 0
    }

    /// The count memory knows for relationship `index`: the loaded set's, or one kept in
    /// the current generation.
    func knownCount(_ index: Int, generation: Int) -> Int? {
        if let set = sets[index] { return set.totalCount }
        if let cached = loaded?.counts[index], cached.generation == generation { return cached.value }
        return nil
    }
}

extension DatabaseContext {
    /// Counts the members of each to-many relationship in `keys` for all `objects` (of one
    /// entity) with one grouped query per key, loading none of them; objects whose set is
    /// loaded need no counting. ``DatabaseObject/count(forKey:)`` then answers without a
    /// query until this context next writes.
    ///
    /// ```swift
    /// try context.prefetchCounts(["email"], for: people)   // SELECT person_id, count(*) … GROUP BY person_id
    /// ```
    ///
    /// - Parameters:
    ///   - keys: To-many relationship keys of the objects' entity.
    ///   - objects: Objects of one entity, of this context.
    /// - Throws: A ``RelateError`` when a key is unknown or not to-many, the objects are of
    ///   several entities or another context, or the database's error.
    public func prefetchCounts(_ keys: [String], for objects: [DatabaseObject]) throws {
        guard let first = try checkOneEntity(objects, for: "prefetchCounts") else { return }
        let indexes = try keys.map { key in try first.relationshipIndex(key, toMany: true) }
        for index in indexes {
            // Pending changes may move members in or out: the sets, loaded seeing them, count.
            if !graph.pendingObjects.isEmpty {
                try load(relationship: index, for: objects.filter { $0.sets[index] == nil })
            } else {
                try loadCounts(relationship: index, for: objects)
            }
        }
    }

    /// Counts relationship `index`'s members for the `owners` memory has no count for, in
    /// one query: `SELECT <foreign key>, count(*) … WHERE <foreign key> = ANY($1) GROUP BY
    /// <foreign key>` on the target's table, or on the helper's for a many-to-many.
    func loadCounts(relationship index: Int, for owners: [DatabaseObject]) throws {
        guard let first = owners.first else { return }
        let generation = graph.membershipGeneration
        let ownerTable = first.table.layout
        let ownerColumns = ownerTable.fromColumns[index]
        // Keys may repeat in the lists: `= ANY` and the grouping take them once. One list
        // a column, not an array a key: a thousand owners made a thousand arrays.
        var keyColumns = ownerColumns.map { _ in [StoredValue]() }
        for column in keyColumns.indices { keyColumns[column].reserveCapacity(owners.count) }
        var uncounted: [(DatabaseObject, ObjectKey?)] = []
        uncounted.reserveCapacity(owners.count)
        for owner in owners where owner.knownCount(index, generation: generation) == nil {
            let key = owner.key(at: ownerColumns)
            uncounted.append((owner, key))
            guard key != nil else { continue }
            for (position, column) in ownerColumns.enumerated() { keyColumns[position].append(owner.storedValue(at: column)) }
        }
        guard !uncounted.isEmpty else { return }

        var counts: [ObjectKey: Int] = [:]
        if keyColumns.first?.isEmpty == false {
            let statement = Statements.counts(relationship: index, of: ownerTable, in: layout, ownerKeysByColumn: keyColumns)
            let result = try send(statement, entity: first.entityIndex)
            let readers = StoredValue.Reader.readers(for: result)
            let width = ownerColumns.count
            counts.reserveCapacity(result.count)
            try read(entity: first.entityIndex) {
                for row in result {
                    let key =
                        width == 1
                        ? ObjectKey(try readers[0].read(row, at: 0))
                        : ObjectKey(try (0..<width).map { try readers[$0].read(row, at: $0) })
                    if let key { counts[key] = try row.decode(Int.self, at: width) }
                }
            }
        }
        graph.storeCounts(
            relationship: index, of: uncounted.map(\.0), counts: uncounted.map { _, key in key.flatMap { counts[$0] } ?? 0 },
            generation: generation)
    }
}
