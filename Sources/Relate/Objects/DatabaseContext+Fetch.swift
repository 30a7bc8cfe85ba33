import RelatePostgres

extension DatabaseContext {
    /// The rows of an entity as objects: all of them, or those matching `condition` (SQL
    /// with `$1`, `$2`… bound to `arguments`), ordered by `orderBy` (SQL), at most `limit`.
    ///
    /// ```swift
    /// let smiths = try context.fetch("person", where: "surname = $1", ["Smith"], orderBy: "firstname", limit: 10)
    /// ```
    public func fetch(
        _ entityName: String, where condition: String? = nil, _ arguments: [(any PostgresEncodable)?] = [],
        orderBy: String? = nil, limit: Int? = nil
    ) throws -> [DatabaseObject] {
        let entity = try entityIndex(named: entityName)
        let table = tables[entity]
        var sql = "SELECT \(table.selectList()) FROM \(table.table)"
        if let condition { sql += " WHERE \(condition)" }
        if let orderBy { sql += " ORDER BY \(orderBy)" }
        var parameters = arguments
        if let limit {
            parameters.append(limit)
            sql += " LIMIT $\(parameters.count)"
        }
        let result = try database(entity: entity) { try connection.query(sql, parameters, format: .binary) }
        return try materialize(entity: entity, result: result, rowsAreDistinct: true)
    }

    /// The object whose primary key is `primaryKey` (an array for a composite key), from
    /// memory when it is there, else by one query; `nil` when there is no such row.
    public func object(_ entityName: String, primaryKey: Any) throws -> DatabaseObject? {
        let entity = try entityIndex(named: entityName)
        let table = tables[entity]
        guard !table.primaryKey.isEmpty else {
            throw RelateError(
                kind: .invalidWrite, message: "\"\(table.entity.name)\" has no primary key; use fetch(_:where:)",
                entity: table.entity.name)
        }
        // A composite key comes as an array; a single one as its value or a one-element array.
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
        let parameters = try zip(table.primaryKey, given).map { index, value in
            try AttributeValue.encodable(value, for: table.entity.attributes[index], entity: table.entity)
        }
        if let key = ObjectKey(parameters: parameters), let registered = registries[entity][key] {
            return registered
        }
        let sql = "SELECT \(table.selectList()) FROM \(table.table) WHERE \(table.condition(table.primaryKey))"
        let result = try database(entity: entity) { try connection.query(sql, parameters, format: .binary) }
        return try result.first.map { try materialize(entity: entity, row: $0) }
    }

    /// Loads `keyPaths` (`"email"`, `"email.person"`) for all `objects` of one entity:
    /// one query per relationship and level, however many objects.
    public func prefetch(_ keyPaths: [String], for objects: [DatabaseObject]) throws {
        guard let first = objects.first else { return }
        for object in objects { try check(object) }
        var levels: [String: [String]] = [:]
        var order: [String] = []
        for path in keyPaths {
            let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
            if levels[parts[0]] == nil { order.append(parts[0]) }
            levels[parts[0], default: []].append(contentsOf: parts.count > 1 ? [parts[1]] : [])
        }
        for key in order {
            let index = try relationshipIndex(key, in: first.entityIndex)
            let owners = objects.filter { $0.entityIndex == first.entityIndex }
            try load(relationship: index, for: owners)
            guard let deeper = levels[key], !deeper.isEmpty else { continue }
            let relationship = first.entity.relationships[index]
            var next: [DatabaseObject] = []
            var seen = Set<ObjectIdentifier>()
            for owner in owners {
                let related: [DatabaseObject] =
                    relationship.isToMany ? owner.sets[index].map(\.objects) ?? [] : [owner.toOne[index] ?? nil].compactMap { $0 }
                for object in related where seen.insert(ObjectIdentifier(object)).inserted { next.append(object) }
            }
            if !next.isEmpty {
                try prefetch(deeper, for: next)
            }
        }
    }

    /// Loads relationship `index` for `owners` (all of one entity) in one query, and stores
    /// the answers: to-one objects, or loaded ``RelationshipSet``s.
    func load(relationship index: Int, for owners: [DatabaseObject]) throws {
        guard let first = owners.first else { return }
        loadedRelationships.insert(RelationshipAddress(entity: first.entityIndex, relationship: index))
        let relationship = first.entity.relationships[index]
        let ownerTable = first.table
        let target = entityIndex(of: relationship.to)
        let targetTable = tables[target]

        // The owners' values of the columns the relationship starts from.
        let ownerColumns = ownerTable.fromColumns[index]
        let targetIndexes = targetColumns[first.entityIndex][index]
        var keys: [ObjectKey: [StoredValue]] = [:]
        keys.reserveCapacity(owners.count)
        var ownerKeys: [ObjectKey?] = []
        ownerKeys.reserveCapacity(owners.count)
        for owner in owners {
            let key = ObjectKey(owner.values, at: ownerColumns)
            ownerKeys.append(key)
            if let key { _ = keys.value(forKey: key, orInserting: { ownerColumns.map { owner.values[$0] } }) }
        }

        // Rows of the target, each with the key of the owner it belongs to. A to-one
        // whose target is in memory needs no query.
        var found: [ObjectKey: [DatabaseObject]] = [:]
        found.reserveCapacity(keys.count)
        if relationship.foreignKeyIn == .from {
            for (key, values) in keys {
                if let object = registered(entity: target, indexes: targetIndexes, values: values) {
                    found[key] = [object]
                    keys[key] = nil
                }
            }
        }
        if !keys.isEmpty {
            let keyValues = Array(keys.values)
            let sql: String
            let parameters: [(any PostgresEncodable)?]
            let matchedColumns: [Int]
            switch relationship.foreignKeyIn {
            case .from, .to:
                matchedColumns = targetIndexes
                let (condition, values) = Self.keyCondition(
                    matchedColumns.map { targetTable.columns[$0] }, types: matchedColumns.map { targetTable.types[$0] }, keyValues)
                sql = "SELECT \(targetTable.selectList()) FROM \(targetTable.table) WHERE \(condition)"
                parameters = values
            case .via:
                let via = relationship.via!
                let helper = tables[entityIndex(of: Relationship.End(schema: via.schema, table: via.table, columns: []))]
                let helperFromColumns = helper.attributeIndexes(via.fromColumns)
                let helperFrom = helperFromColumns.map { "h.\(helper.columns[$0])" }
                let helperTo = helper.attributeIndexes(via.toColumns).map { "h.\(helper.columns[$0])" }
                let targetJoined = targetIndexes.map { "t.\(targetTable.columns[$0])" }
                let join = zip(targetJoined, helperTo).map { "\($0) = \($1)" }.joined(separator: " AND ")
                let (condition, values) = Self.keyCondition(helperFrom, types: helperFromColumns.map { helper.types[$0] }, keyValues)
                sql = "SELECT \(targetTable.selectList(alias: "t")), \(helperFrom.joined(separator: ", ")) FROM \(helper.table) h "
                    + "JOIN \(targetTable.table) t ON \(join) WHERE \(condition)"
                parameters = values
                matchedColumns = []
            }
            let result = try database(entity: first.entityIndex) { try connection.query(sql, parameters, format: .binary) }
            let width = targetTable.columns.count
            let readers = StoredValue.Reader.readers(for: result)
            for (object, row) in zip(try materialize(entity: target, result: result, rowsAreDistinct: relationship.foreignKeyIn != .via), result) {
                let key =
                    relationship.foreignKeyIn == .via
                    ? ObjectKey(try (width..<result.columns.count).map { try readers[$0].read(row, at: $0) })
                    : ObjectKey(object.values, at: matchedColumns)
                if let key { found[key, default: []].append(object) }
            }
        }

        let mayRepeat = relationship.foreignKeyIn == .via
        for (owner, key) in zip(owners, ownerKeys) {
            let related = key.flatMap { found[$0] } ?? []
            if relationship.isToMany {
                let previous = owner.sets[index]
                owner.relations.sets[index] = RelationshipSet(owner: owner, relationship: index, members: related, mayRepeat: mayRepeat)
                if isRecordingUndo { recordUndo { owner.relations.sets[index] = previous } }
            } else {
                let previous = owner.toOne[index]
                owner.relations.toOne[index] = .some(related.first)
                if isRecordingUndo { recordUndo { owner.relations.toOne[index] = previous } }
            }
        }
    }

    /// `"c" = $1` for one key, `"c" = ANY($1)` for several, and for composite keys
    /// `("a", "b") IN (SELECT * FROM unnest($1, $2))`.
    static func keyCondition(
        _ columns: [String], types: [PostgresType], _ keys: [[StoredValue]]
    ) -> (String, [(any PostgresEncodable)?]) {
        if keys.count == 1 {
            let condition = columns.enumerated().map { "\($1) = $\($0 + 1)" }.joined(separator: " AND ")
            return (condition, keys[0].map(\.parameter))
        }
        var parameters: [(any PostgresEncodable)?] = []
        var targets: [String] = []
        for (position, column) in columns.enumerated() {
            let (array, asText) = AttributeValue.array(keys.map { $0[position] }, columnType: types[position])
            parameters.append(array)
            targets.append(asText ? "\(column)::text" : column)
        }
        if columns.count == 1 {
            return ("\(targets[0]) = ANY($1)", parameters)
        }
        let arrays = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
        return ("(\(targets.joined(separator: ", "))) IN (SELECT * FROM unnest(\(arrays)))", parameters)
    }
}
