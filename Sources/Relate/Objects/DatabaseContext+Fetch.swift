import RelatePostgres

extension DatabaseContext {
    /// The rows of an entity as objects: all of them, or those matching `condition` (SQL
    /// with `$1`, `$2`… bound to `arguments`), ordered by `orderBy` (SQL), at most `limit`.
    ///
    /// ```swift
    /// let smiths = try context.fetch("person", where: "surname = $1", ["Smith"], orderBy: "firstname", limit: 10)
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: The entity's name (`person`, or `schema.table`).
    ///   - condition: A SQL condition on the entity's table, or `nil` for every row.
    ///   - arguments: The values bound to `$1`, `$2`… in `condition`.
    ///   - orderBy: A SQL `ORDER BY` list, or `nil` for the server's order.
    ///   - limit: At most this many objects; all when `nil`.
    /// - Returns: The objects, each row's one instance in this context; for a table that others
    ///   `INHERITS` from, their rows too, as objects of their own entities (see ``fetch(_:)``).
    /// - Throws: A ``RelateError`` when the entity is unknown or the database refuses the
    ///   query, and one of kind ``RelateError/Kind-swift.struct/invalidRequest`` for more
    ///   than 4,294,967,295 values (rows × columns): read those in batches with
    ///   ``fetch(_:batchSize:_:)``.
    public func fetch(
        _ entityName: String, where condition: String? = nil, _ arguments: [(any PostgresEncodable)?] = [],
        orderBy: String? = nil, limit: Int? = nil
    ) throws -> [DatabaseObject] {
        let entity = try entityIndex(named: entityName)
        let descendants = layout.descendants[entity] ?? []
        let seesPending = !graph.pendingObjects.isEmpty
        // With pending changes, every row is what memory can judge; a condition in SQL only
        // the database can: pending inserts and updates are judged as the database holds them.
        if seesPending, condition == nil, orderBy == nil { return try fetch(FetchRequest(entityName, limit: limit)) }
        let statement = Statements.select(
            from: layout.entities[entity], where: condition, arguments, orderBy: orderBy, limit: limit,
            marking: descendants.map { layout.entities[$0] })
        let result = try send(statement, entity: entity)
        let objects =
            descendants.isEmpty
            ? try graph.materialize(entity: entity, result: result, rowsAreDistinct: true)
            : try materialize(entity: entity, descendants: descendants, result: result)
        settleLinks()
        return seesPending ? objects.filter { !$0.isDeleted } : objects
    }

    /// The object whose primary key is `primaryKey` (an array for a composite key), from
    /// memory when it is there, else by one query; `nil` when there is no such row.
    ///
    /// - Parameters:
    ///   - entityName: The entity's name (`person`, or `schema.table`).
    ///   - primaryKey: The primary key's value, or an array of values in key order for a
    ///     composite key.
    /// - Returns: The object, or `nil` when there is no such row.
    /// - Throws: A ``RelateError`` when the entity is unknown or has no key (see ``Entity/primaryKey``)
    ///   (``RelateError/Kind-swift.struct/invalidRequest``), the values do not fit the key
    ///   (``RelateError/Kind-swift.struct/typeMismatch``), or the database refuses the query.
    public func object(_ entityName: String, primaryKey: Any) throws -> DatabaseObject? {
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
        let parameters = try keyParameters(primaryKey, of: entity, for: "use fetch(_:where:)")
        if let key = ObjectKey(parameters: parameters), let registered = graph.registries[entity][key] {
            // A deleted object stays registered only while its delete is pending.
            return registered.isDeleted ? nil : registered
        }
        let result = try send(Statements.row(of: table.layout, key: parameters), entity: entity)
        let object = try result.first.map { try graph.materialize(entity: entity, row: $0) }
        settleLinks()
        return object
    }

    /// `primaryKey` (an array for a composite key) as the key's parameters, each checked
    /// against its column. `advice` says what to do instead for a table without a key.
    func keyParameters(_ primaryKey: Any, of entity: Int, for advice: String) throws -> [(any PostgresEncodable)?] {
        let table = graph.tables[entity]
        guard !table.primaryKey.isEmpty else {
            throw RelateError(
                kind: .invalidRequest, message: "\"\(table.entity.name)\" has no key (no primary key, nor a unique key whose columns are all NOT NULL); \(advice)", entity: table.entity.name)
        }
        // A composite key comes as an array; a single one as its value or a one-element array.
        // The value itself, most often: tried first, as the cast to an array is not cheap.
        if table.primaryKey.count == 1, let key = AttributeValue.common(primaryKey, table.types[table.primaryKey[0]]) {
            return [key]
        }
        let list = (primaryKey as? [Any?]) ?? (primaryKey as? [Any])?.map { $0 as Any? }
        let singleIsArray = table.primaryKey.count == 1 && PostgresType(table.entity.attributes[table.primaryKey[0]].typeOID).arrayElement != nil
        let given: [Any?] =
            if table.primaryKey.count == 1, singleIsArray || list?.count != 1 { [primaryKey] } else { list ?? [primaryKey] }
        guard given.count == table.primaryKey.count else {
            throw RelateError(
                kind: .typeMismatch,
                message: "the primary key of \"\(table.entity.name)\" has \(table.primaryKey.count) columns (\(table.entity.primaryKey.joined(separator: ", "))); \(given.count) values given",
                entity: table.entity.name)
        }
        return try zip(table.primaryKey, given).map { index, value in
            try AttributeValue.encodable(value, for: table.entity.attributes[index], entity: table.entity)
        }
    }

    /// Loads `keyPaths` (`"email"`, `"email.person"`) for all `objects`, which are of one
    /// entity: one query per relationship and level, however many objects. Every key path
    /// is checked against the model before anything is sent.
    ///
    /// ```swift
    /// let people = try context.fetch("person")
    /// try context.prefetch(["email", "title"], for: people)   // two queries, then no more
    /// ```
    ///
    /// - Parameters:
    ///   - keyPaths: Dotted paths of relationships from the objects' entity.
    ///   - objects: Objects of one entity, of this context.
    /// - Throws: A ``RelateError`` when a key path is unknown or not a relationship, the
    ///   objects are of several entities or another context, or the database's error.
    public func prefetch(_ keyPaths: [String], for objects: [DatabaseObject]) throws {
        guard let first = try checkOneEntity(objects, for: "prefetch") else { return }
        let paths = try keyPaths.map { try relationshipPath($0, from: first.entityIndex) }
        try prefetch(Self.byFirstKey(paths), for: objects)
        settleLinks()
    }

    /// The first of `objects` once each is checked to be this context's, live, and of the
    /// first's entity; `nil` when there are none. `call` names the method in the error.
    func checkOneEntity(_ objects: [DatabaseObject], for call: String) throws -> DatabaseObject? {
        guard let first = objects.first else { return nil }
        for object in objects {
            try check(object)
            guard object.entityIndex == first.entityIndex else {
                throw RelateError(
                    kind: .invalidObject,
                    message: "\(call) takes objects of one entity: \(first.entity.name) and \(object.entity.name) objects were given; "
                        + "give each entity's objects apart",
                    entity: object.entity.name)
            }
        }
        return first
    }

    /// Paths grouped by their first relationship, in the order first met, with what follows it.
    private static func byFirstKey(_ paths: [[Int]]) -> [(relationship: Int, deeper: [[Int]])] {
        var groups: [(relationship: Int, deeper: [[Int]])] = []
        var position: [Int: Int] = [:]
        for path in paths {
            guard let head = path.first else { continue }
            if let at = position[head] {
                groups[at].deeper.append(Array(path.dropFirst()))
            } else {
                position[head] = groups.count
                groups.append((head, [Array(path.dropFirst())]))
            }
        }
        return groups
    }

    /// Loads each relationship for `owners`, then its deeper paths for what it found.
    private func prefetch(_ paths: [(relationship: Int, deeper: [[Int]])], for owners: [DatabaseObject]) throws {
        guard let first = owners.first else { return }
        for (index, deeper) in paths {
            try load(relationship: index, for: owners)
            let rest = deeper.filter { !$0.isEmpty }
            guard !rest.isEmpty else { continue }
            var next: [DatabaseObject] = []
            var seen = Set<ObjectIdentifier>()
            for owner in owners {
                let related: [DatabaseObject] =
                    first.table.isToMany[index] ? owner.sets[index]?.allObjects ?? [] : [owner.toOne[index] ?? nil].compactMap { $0 }
                for object in related where seen.insert(ObjectIdentifier(object)).inserted { next.append(object) }
            }
            try prefetch(Self.byFirstKey(rest), for: next)
        }
    }

    /// The relationship indexes a dotted key path follows from `entity`, one per key; an
    /// empty path or key, an unknown key or one that names an attribute is an error that
    /// names the key path and the keys there are.
    func relationshipPath(_ keyPath: String, from entity: Int) throws(RelateError) -> [Int] {
        var indexes: [Int] = []
        for step in try layout.steps(of: keyPath, from: entity) {
            switch step {
            case .relationship(_, let index):
                indexes.append(index)
            case .attribute(let entity, let index):
                let owner = model.entities[entity]
                let relationships = owner.relationships.map(\.key)
                throw layout.keyPathError(
                    keyPath, use: nil,
                    RelateError(
                        kind: .unknownKey,
                        message: "key \"\(owner.attributes[index].key)\" of entity \"\(owner.name)\" is the attribute "
                            + "\"\(owner.attributes[index].name)\", not a relationship; relationships: " + relationships.joined(separator: ", "),
                        entity: owner.name, candidates: relationships))
            }
        }
        return indexes
    }

    /// Loads relationship `index` for `owners` (all of one entity) in one query, and stores
    /// the answers: to-one objects, or the members of ``RelationshipSet``s — refilled in
    /// place where the owner already has one, so that a set handed out stays live.
    func load(relationship index: Int, for owners: [DatabaseObject]) throws {
        guard let first = owners.first else { return }
        let ownerEntity = first.entityIndex
        let relationship = first.entity.relationships[index]
        let ownerTable = first.table
        let target = graph.target(of: ownerEntity, index)
        let targetTable = graph.tables[target]

        // Each distinct key of the owners (the values of the columns the relationship starts
        // from) gets a slot, whose group collects its related objects; each owner notes its
        // slot (-1: a NULL key, nothing related). One lookup a row, and each group's array
        // made at its size: growing them cost a prefetch of 10,000 children 1.8 M instructions.
        let ownerColumns = ownerTable.fromColumns[index]
        let targetIndexes = graph.targetColumns(of: ownerEntity, index)
        var slots = ObjectKeyMap<Int>()
        slots.reserveCapacity(owners.count)
        var slotValues: [[StoredValue]] = []
        var ownerSlots: [Int] = []
        ownerSlots.reserveCapacity(owners.count)
        for owner in owners {
            guard let key = owner.key(at: ownerColumns) else {
                ownerSlots.append(-1)
                continue
            }
            ownerSlots.append(slots.value(forKey: key) {
                slotValues.append(ownerColumns.map { owner.values[$0] })
                return slotValues.count - 1
            })
        }
        var groups = [[DatabaseObject]](repeating: [], count: slotValues.count)

        // Rows of the target, each with the key of the owner it belongs to. A to-one
        // whose target is in memory needs no query.
        var asked = Array(slotValues.indices)
        if relationship.foreignKeyIn == .from {
            asked.removeAll { slot in
                guard let object = graph.registered(entity: target, indexes: targetIndexes, values: slotValues[slot]) else { return false }
                groups[slot] = [object]
                return true
            }
        }
        let byServer = ownerTable.layout.linksByServer[index]
        if byServer, relationship.foreignKeyIn == .from, !graph.pendingObjects.isEmpty {
            // A pending owner's foreign key is not its row's yet: its target is the one the
            // server takes for the value memory holds, asked alone (one statement a value,
            // in one round trip; pending writes are few).
            let pendingSlots = Set(zip(owners, ownerSlots).filter { graph.pendingObjects.contains(ObjectIdentifier($0.0)) && $0.1 >= 0 }.map(\.1))
            let byValue = asked.filter(pendingSlots.contains)
            if !byValue.isEmpty {
                let statements = byValue.map { Statements.load(relationship: index, of: ownerTable.layout, in: layout, ownerKeys: [slotValues[$0]], byValues: true) }
                for (slot, result) in zip(byValue, try send(statements, entity: ownerEntity)) {
                    groups[slot] = try graph.materialize(entity: target, result: result, rowsAreDistinct: true)
                }
                asked.removeAll(where: pendingSlots.contains)
            }
        }
        if !asked.isEmpty {
            var ownerKeys = asked.map { slotValues[$0] }
            if byServer, Statements.ownersByPrimaryKey(relationship: index, of: ownerTable.layout) {
                // The owners whose targets are asked for, by their primary keys.
                let wanted = Set(asked)
                ownerKeys = zip(owners, ownerSlots).filter { wanted.contains($1) }.map { owner, _ in ownerTable.primaryKey.map { owner.values[$0] } }
            }
            let statement = Statements.load(relationship: index, of: ownerTable.layout, in: layout, ownerKeys: ownerKeys)
            let result = try send(statement, entity: ownerEntity)
            let width = targetTable.columns.count
            let readers = StoredValue.Reader.readers(for: result)
            // Through a helper, or for a relationship the server links, the owner's key
            // follows the target's columns; else it is the target's joined columns.
            let readsOwnerKey = relationship.foreignKeyIn == .via || byServer
            let matchedColumns = readsOwnerKey ? [] : targetIndexes
            let objects = try graph.materialize(entity: target, result: result, rowsAreDistinct: !readsOwnerKey)
            var rowSlots: [Int] = []
            rowSlots.reserveCapacity(objects.count)
            var sizes = [Int](repeating: 0, count: groups.count)
            // A pending row of a set the server links goes where memory's values put it (by
            // bytes, until saved), not where its row in the database does.
            let placesPending = byServer && relationship.foreignKeyIn == .to && !graph.pendingObjects.isEmpty
            for (row, object) in objects.enumerated() {
                let key =
                    placesPending && graph.pendingObjects.contains(ObjectIdentifier(object))
                    ? object.key(at: targetIndexes)
                    : readsOwnerKey
                    ? ObjectKey(try (width..<result.columns.count).map { try readers[$0].read(result, row: row, column: $0) })
                    : object.key(at: matchedColumns)
                let slot = key.flatMap { slots[$0] } ?? -1
                rowSlots.append(slot)
                if slot >= 0 { sizes[slot] += 1 }
            }
            for slot in asked where sizes[slot] > 0 { groups[slot].reserveCapacity(sizes[slot]) }
            for (object, slot) in zip(objects, rowSlots) where slot >= 0 { groups[slot].append(object) }
        }

        if !graph.pendingObjects.isEmpty {
            correctLoadForPending(&groups, slots: slots, relationship: index, ownerEntity: ownerEntity)
            pending.noteLoadSeeingPending(owners, relationship: index)
        }
        graph.storeLoaded(
            relationship: index, of: owners, related: ownerSlots.map { $0 < 0 ? [] : groups[$0] },
            mayRepeat: relationship.foreignKeyIn == .via)
    }
}

extension DatabaseContext {
    /// Loads again, in place, the sets and to-ones of the relationships memory could not
    /// keep in step by bytes (``ObjectGraph/unsettled``): one query a relationship, for the
    /// owners that hold them; nothing when there are none (the common case, one check).
    /// A write calls it once the database took it, a read once it read rows, a change feed
    /// once it applied a batch.
    ///
    /// Not while writes are pending: those sets hold what the save will write (paired by
    /// bytes until then), and a load is no step that undo or `rollback()` could take back;
    /// `save()` settles them. A load that fails is logged and left for the next call: the
    /// write that called it stands, and must not throw after the database took it.
    func settleLinks() {
        guard graph.pendingObjects.isEmpty else { return }
        while let address = graph.unsettled.min(by: { ($0.entity, $0.relationship) < ($1.entity, $1.relationship) }) {
            var owners: [DatabaseObject] = []
            for owner in graph.registries[address.entity].all where !owner.isDeleted {
                if owner.sets[address.relationship] != nil {
                    owners.append(owner)
                } else if let box = owner.loaded, box.toOne[address.relationship] != nil {
                    // A to-one asked again when next read.
                    box.toOne[address.relationship] = nil
                }
            }
            do {
                if !owners.isEmpty { try load(relationship: address.relationship, for: owners) }
            } catch {
                connection.logger.warning(
                    "sets of a relationship the server links could not be loaded again; they are loaded at the next write or read",
                    metadata: ["relate.entity": "\(model.entities[address.entity].name)", "relate.error": "\(error)"])
                return
            }
            graph.unsettled.remove(address)
        }
    }

    /// Loads, for `objects` about to be deleted or to take another key, their sets and
    /// to-ones across the relationships the server links (``EntityLayout/linksByServer``)
    /// where memory holds objects of the other side and has not loaded them: one query a
    /// relationship. The delete's or the key change's rules then reach in memory the rows
    /// the server pairs with them, which their bytes do not tell (``ObjectGraph/dependants(of:across:values:unsure:)``).
    func loadServerLinks(of objects: [DatabaseObject]) throws {
        guard let first = objects.first, first.table.layout.linksByServer.contains(true) else { return }
        for (index, relationship) in first.entity.relationships.enumerated()
        where relationship.foreignKeyIn == .to && first.table.layout.linksByServer[index]
            && !graph.registries[graph.target(of: first.entityIndex, index)].isEmpty
        {
            let owners = objects.filter { $0.entityIndex == first.entityIndex && $0.sets[index] == nil && $0.toOne[index] == nil && !$0.isDeleted }
            if !owners.isEmpty { try load(relationship: index, for: owners) }
        }
    }
}
