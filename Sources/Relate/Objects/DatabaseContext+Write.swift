import RelatePostgres

/// Writes: each goes to the database first; objects in memory follow once it succeeded
/// (and roll back with an enclosing transaction).
extension DatabaseContext {
    // MARK: - Rows

    /// Inserts a row (`INSERT … RETURNING`, so defaults and triggers show) and returns its
    /// object. Keys are attributes, or to-one relationships given an object.
    ///
    /// ```swift
    /// let email = try context.insert("email", values: ["address": "ada@example.com", "person": ada])
    /// ```
    @discardableResult
    public func insert(_ entityName: String, values: [String: Any?] = [:]) throws -> DatabaseObject {
        let entity = try entityIndex(named: entityName)
        let table = tables[entity]
        var columns: [Int] = []
        var parameters: [(any PostgresEncodable)?] = []
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            switch try resolve(key, in: entity) {
            case .attribute(let index):
                columns.append(index)
                parameters.append(try AttributeValue.encodable(value, for: table.entity.attributes[index], entity: table.entity))
            case .relationship(let index):
                let relationship = table.entity.relationships[index]
                guard relationship.foreignKeyIn == .from else {
                    throw RelateError(
                        kind: .invalidWrite,
                        message: "key \"\(key)\" of \"\(table.entity.name)\" is not held by this table; insert first, then set it",
                        entity: table.entity.name, key: key)
                }
                let target = try relatedObject(AttributeValue.unwrap(value), for: relationship, key: key, entity: table.entity)
                let referenced = targetColumns[entity][index]
                for (offset, column) in table.fromColumns[index].enumerated() {
                    columns.append(column)
                    parameters.append(target.map { $0.values[referenced[offset]].parameter } ?? nil)
                }
            }
        }
        let sql =
            columns.isEmpty
            ? "INSERT INTO \(table.table) DEFAULT VALUES RETURNING \(table.selectList())"
            : "INSERT INTO \(table.table) (\(columns.map { table.columns[$0] }.joined(separator: ", "))) VALUES ("
                + (1...columns.count).map { "$\($0)" }.joined(separator: ", ") + ") RETURNING \(table.selectList())"
        let result = try database(entity: entity) { try connection.query(sql, parameters, format: .binary) }
        let object = try materialize(entity: entity, row: result[0])
        didChange(object, from: Array(repeating: .null, count: object.values.count))
        return object
    }

    /// Deletes the object's row; the foreign keys' `ON DELETE` rules apply in memory as
    /// in the database: CASCADE deletes dependants, SET NULL / SET DEFAULT updates them,
    /// RESTRICT / NO ACTION refuses with an error naming the constraint and the table.
    public func delete(_ object: DatabaseObject) throws {
        try check(object)
        let table = object.table
        guard !table.primaryKey.isEmpty else { throw readOnly(table) }
        let sql = "DELETE FROM \(table.table) WHERE \(table.condition(table.primaryKey))"
        do {
            try connection.execute(sql, table.primaryKey.map { object.values[$0].parameter })
        } catch let error as PostgresError where error.sqlState == .foreignKeyViolation || error.sqlState == .restrictViolation {
            throw RelateError(
                kind: .deleteDenied,
                message: "\(object) cannot be deleted: rows of table \"\(error.table ?? "?")\" still refer to it through constraint \"\(error.constraint ?? "?")\"",
                entity: table.entity.name, postgresError: error)
        } catch let error as PostgresError {
            throw RelateError(error, entity: table.entity.name)
        }
        var defaults: [DatabaseObject] = []
        forget(object, settingDefaults: &defaults)
        try refetch(defaults)
    }

    // MARK: - Attributes and to-one keys

    func setAttribute(_ object: DatabaseObject, _ index: Int, _ value: Any?) throws {
        let table = object.table
        let attribute = table.entity.attributes[index]
        if table.primaryKey.contains(index) {
            throw RelateError(
                kind: .invalidWrite,
                message: "\"\(attribute.key)\" is part of the primary key of \"\(table.entity.name)\"; objects keep their key (insert a new row instead)",
                entity: table.entity.name, key: attribute.key)
        }
        try update(object, columns: [index], values: [try AttributeValue.encodable(value, for: attribute, entity: table.entity)])
    }

    /// `UPDATE … SET … WHERE <key> RETURNING …`: the object takes the row as stored.
    func update(_ object: DatabaseObject, columns: [Int], values: [(any PostgresEncodable)?]) throws {
        let table = object.table
        guard !table.primaryKey.isEmpty else { throw readOnly(table) }
        let assignments = columns.enumerated().map { "\(table.columns[$1]) = $\($0 + 1)" }.joined(separator: ", ")
        let sql = "UPDATE \(table.table) SET \(assignments) WHERE \(table.condition(table.primaryKey, start: columns.count + 1)) "
            + "RETURNING \(table.selectList())"
        let parameters = values + table.primaryKey.map { object.values[$0].parameter }
        let result = try database(entity: object.entityIndex) { try connection.query(sql, parameters, format: .binary) }
        guard let row = result.first else { throw vanished(object) }
        _ = try materialize(entity: object.entityIndex, row: row)
    }

    func setToOne(_ object: DatabaseObject, _ index: Int, _ target: DatabaseObject?) throws {
        let relationship = object.entity.relationships[index]
        switch relationship.foreignKeyIn {
        case .from:
            let columns = object.table.attributeIndexes(relationship.from.columns)
            let values: [(any PostgresEncodable)?] =
                target.map { target in
                    target.table.attributeIndexes(relationship.to.columns).map { target.values[$0].parameter }
                } ?? Array(repeating: nil, count: columns.count)
            if relationship.kind == .oneToOne, target != nil {
                // A one-to-one steals: whoever held the target lets go first.
                try transaction {
                    try nullify(entity: object.entityIndex, columns: columns, matching: values, except: object)
                    try update(object, columns: columns, values: values)
                }
            } else {
                try update(object, columns: columns, values: values)
            }
        case .to:
            // The inverse side of a one-to-one: the key is in the other table.
            let child = entityIndex(of: relationship.to)
            let childColumns = tables[child].attributeIndexes(relationship.to.columns)
            let ownerValues = object.table.attributeIndexes(relationship.from.columns).map { object.values[$0].parameter }
            try transaction {
                try nullify(entity: child, columns: childColumns, matching: ownerValues, except: target)
                if let target { try update(target, columns: childColumns, values: ownerValues) }
            }
        case .via:
            throw Self.notToOne(relationship)
        }
    }

    /// `UPDATE t SET fk = NULL WHERE fk = … [AND NOT <key of except>] RETURNING …`.
    private func nullify(entity: Int, columns: [Int], matching values: [(any PostgresEncodable)?], except: DatabaseObject?) throws {
        let table = tables[entity]
        var sql = "UPDATE \(table.table) SET " + columns.map { "\(table.columns[$0]) = NULL" }.joined(separator: ", ")
            + " WHERE \(table.condition(columns))"
        var parameters = values
        if let except {
            sql += " AND NOT (\(table.condition(table.primaryKey, start: columns.count + 1)))"
            parameters += table.primaryKey.map { except.values[$0].parameter }
        }
        sql += " RETURNING \(table.selectList())"
        let result = try database(entity: entity) { try connection.query(sql, parameters, format: .binary) }
        _ = try materialize(entity: entity, result: result, rowsAreDistinct: true)
    }

    /// The object given for a to-one key, checked: of this context, alive, of the target entity.
    func relatedObject(_ value: Any?, for relationship: Relationship, key: String, entity: Entity) throws -> DatabaseObject? {
        guard let value else { return nil }
        guard let object = value as? DatabaseObject else {
            throw RelateError(
                kind: .typeMismatch,
                message: "key \"\(key)\" of \"\(entity.name)\" leads to \"\(relationship.to.table)\"; give a DatabaseObject (or nil), not a \(type(of: value))",
                entity: entity.name, key: key)
        }
        try check(object)
        guard object.entityIndex == entityIndex(of: relationship.to) else {
            throw RelateError(
                kind: .typeMismatch,
                message: "key \"\(key)\" of \"\(entity.name)\" leads to \"\(model.entities[entityIndex(of: relationship.to)].name)\", not to \"\(object.entity.name)\"",
                entity: entity.name, key: key)
        }
        return object
    }

    // MARK: - To-many collections

    func insert(_ object: DatabaseObject, into set: RelationshipSet, owner: DatabaseObject, helperValues: [String: Any?]) throws {
        let relationship = set.relationship
        _ = try relatedObject(object, for: relationship, key: relationship.key, entity: owner.entity)
        switch relationship.foreignKeyIn {
        case .to:
            if set.contains(object) { return }
            guard let inverse = inverses[owner.entityIndex][set.relationshipIndex] else { return }
            try setToOne(object, inverse.relationship, owner)
        case .via:
            if set.contains(object), helperIsKeyed(relationship) { return }
            let shown = helperRowsAreShown(relationship)
            let statement = try helperInsert(relationship, owner: owner, member: object, helperValues: helperValues, returning: shown)
            let result = try database(entity: owner.entityIndex) {
                try connection.query(statement.sql, statement.parameters, format: .binary)
            }
            if shown { try didInsertHelperRows(result, relationship: relationship) }
            link(owner, object, set: set, times: 1)
        case .from:
            throw Self.notToMany(relationship)
        }
    }

    func remove(_ object: DatabaseObject, from set: RelationshipSet, owner: DatabaseObject) throws {
        try check(object)
        guard set.contains(object) else { return }
        let relationship = set.relationship
        switch relationship.foreignKeyIn {
        case .to:
            try requireNullable(relationship)
            let table = object.table
            let columns = table.attributeIndexes(relationship.to.columns)
            try update(object, columns: columns, values: Array(repeating: nil, count: columns.count))
        case .via:
            let statement = helperDelete(relationship, owner: owner, member: object)
            let result = try database(entity: owner.entityIndex) {
                try connection.query(statement.sql, statement.parameters, format: .binary)
            }
            try didDeleteHelperRows(result, relationship: relationship)
            unlink(owner, object, set: set, times: result.count)
        case .from:
            throw Self.notToMany(relationship)
        }
    }

    /// Makes the set hold exactly `members` (with their multiplicity): only the difference
    /// is written, all of it in one pipeline — one round trip, all or nothing.
    func replace(members: [DatabaseObject], of set: RelationshipSet, owner: DatabaseObject) throws {
        let relationship = set.relationship
        for member in members { _ = try relatedObject(member, for: relationship, key: relationship.key, entity: owner.entity) }
        var wanted: [ObjectIdentifier: (object: DatabaseObject, count: Int)] = [:]
        for member in members { wanted[ObjectIdentifier(member), default: (member, 0)].count += 1 }
        let current = set.allObjects
        let removed = current.filter { wanted[ObjectIdentifier($0)] == nil }
        var statements: [PostgresStatement] = []

        switch relationship.foreignKeyIn {
        case .to:
            let child = entityIndex(of: relationship.to)
            let table = tables[child]
            let columns = table.attributeIndexes(relationship.to.columns)
            let ownerValues = owner.table.attributeIndexes(relationship.from.columns).map { owner.values[$0].parameter }
            if !removed.isEmpty { try requireNullable(relationship) }
            let nulls = columns.map { "\(table.columns[$0]) = NULL" }.joined(separator: ", ")
            if members.isEmpty, !removed.isEmpty {
                statements.append(PostgresStatement(
                    "UPDATE \(table.table) SET \(nulls) WHERE \(table.condition(columns)) RETURNING \(table.selectList())",
                    ownerValues, format: .binary))
            } else {
                for member in removed {
                    statements.append(PostgresStatement(
                        "UPDATE \(table.table) SET \(nulls) WHERE \(table.condition(table.primaryKey)) RETURNING \(table.selectList())",
                        table.primaryKey.map { member.values[$0].parameter }, format: .binary))
                }
                let assignments = columns.enumerated().map { "\(table.columns[$1]) = $\($0 + 1)" }.joined(separator: ", ")
                let sql = "UPDATE \(table.table) SET \(assignments) WHERE \(table.condition(table.primaryKey, start: columns.count + 1)) "
                    + "RETURNING \(table.selectList())"
                for (_, entry) in wanted.sorted(by: { $0.value.object.description < $1.value.object.description }) where !set.contains(entry.object) {
                    statements.append(PostgresStatement(
                        sql, ownerValues + table.primaryKey.map { entry.object.values[$0].parameter }, format: .binary))
                }
            }
            if statements.isEmpty { return }
            let results = try database(entity: owner.entityIndex) { try connection.pipeline(statements) }
            for result in results {
                _ = try materialize(entity: child, result: result, rowsAreDistinct: true)
            }

        case .via:
            var changes: [(object: DatabaseObject, delta: Int)] = []
            var seen = Set<ObjectIdentifier>()
            for object in current where wanted[ObjectIdentifier(object)] == nil {
                changes.append((object, -set.count(for: object)))
                seen.insert(ObjectIdentifier(object))
            }
            for member in members where seen.insert(ObjectIdentifier(member)).inserted {
                let delta = (wanted[ObjectIdentifier(member)]?.count ?? 0) - set.count(for: member)
                if delta != 0 { changes.append((member, delta)) }
            }
            if members.isEmpty, !current.isEmpty {
                statements.append(helperDeleteAll(relationship, owner: owner))
            } else {
                for change in changes where change.delta < 0 {
                    for _ in 0..<(-change.delta) { statements.append(helperDelete(relationship, owner: owner, member: change.object)) }
                }
                let shown = helperRowsAreShown(relationship)
                var template: PostgresStatement?
                var ownerValues: [(any PostgresEncodable)?] = []
                var memberColumns: [Int] = []
                for change in changes where change.delta > 0 {
                    let statement: PostgresStatement
                    if let template {
                        statement = PostgresStatement(
                            template.sql, ownerValues + memberColumns.map { change.object.values[$0].parameter },
                            format: .binary)
                    } else {
                        statement = try helperInsert(relationship, owner: owner, member: change.object, helperValues: [:], returning: shown)
                        template = statement
                        ownerValues = owner.table.attributeIndexes(relationship.from.columns).map { owner.values[$0].parameter }
                        memberColumns = change.object.table.attributeIndexes(relationship.to.columns)
                    }
                    for _ in 0..<change.delta { statements.append(statement) }
                }
            }
            if statements.isEmpty { return }
            let results = try database(entity: owner.entityIndex) { try connection.pipeline(statements) }
            for result in results {
                if result.sql.hasPrefix("INSERT") {
                    if result.columns.isEmpty { continue }
                    try didInsertHelperRows(result, relationship: relationship)
                } else {
                    try didDeleteHelperRows(result, relationship: relationship)
                }
            }
            for change in changes {
                if change.delta > 0 {
                    link(owner, change.object, set: set, times: change.delta)
                } else {
                    unlink(owner, change.object, set: set, times: -change.delta)
                }
            }

        case .from:
            throw Self.notToMany(relationship)
        }
    }

    // MARK: - Helper tables

    private func helperTable(_ relationship: Relationship) -> EntityTable {
        let via = relationship.via!
        return tables[entityIndex(of: Relationship.End(schema: via.schema, table: via.table, columns: []))]
    }

    /// Whether the helper's two keys form a unique key, so a pair is stored at most once.
    func helperIsKeyed(_ relationship: Relationship) -> Bool {
        guard let via = relationship.via else { return false }
        let pair = Set(via.fromColumns + via.toColumns)
        let helper = helperTable(relationship).entity
        return ([helper.primaryKey] + helper.uniqueKeys).contains { !$0.isEmpty && Set($0) == pair }
    }

    private func helperKeyValues(_ relationship: Relationship, owner: DatabaseObject, member: DatabaseObject) -> [(any PostgresEncodable)?] {
        owner.table.attributeIndexes(relationship.from.columns).map { owner.values[$0].parameter }
            + member.table.attributeIndexes(relationship.to.columns).map { member.values[$0].parameter }
    }

    /// Whether a loaded relationship shows the helper's own rows (`person.person_title_rel`),
    /// so that new rows must come back (`RETURNING`) to join it. Otherwise an insert sends
    /// nothing back: 10,000 inserts through a replace then cost no 10,000 result rows.
    private func helperRowsAreShown(_ relationship: Relationship) -> Bool {
        let helper = helperTable(relationship)
        return loadedRelationships.contains { targetEntity(of: $0) == helper.index }
    }

    private func helperInsert(
        _ relationship: Relationship, owner: DatabaseObject, member: DatabaseObject, helperValues: [String: Any?], returning: Bool
    ) throws -> PostgresStatement {
        let via = relationship.via!
        let helper = helperTable(relationship)
        var columns = helper.attributeIndexes(via.fromColumns + via.toColumns)
        var parameters = helperKeyValues(relationship, owner: owner, member: member)
        for (key, value) in helperValues.sorted(by: { $0.key < $1.key }) {
            guard let index = helper.entity.attributes.firstIndex(where: { $0.key == key || $0.name == key }) else {
                throw RelateError.unknownKey(key, entity: helper.entity.name, existing: helper.entity.attributes.map(\.key))
            }
            columns.append(index)
            parameters.append(try AttributeValue.encodable(value, for: helper.entity.attributes[index], entity: helper.entity))
        }
        let missing = helper.entity.attributes.enumerated().filter { index, attribute in
            !attribute.isNullable && !attribute.hasDefault && !columns.contains(index)
        }.map(\.element.name)
        if !missing.isEmpty {
            throw RelateError(
                kind: .invalidWrite,
                message: "helper table \"\(helper.entity.name)\" needs values for \(missing.map { "\"\($0)\"" }.joined(separator: ", ")) "
                    + "(NOT NULL without a default): pass them as helperValues",
                entity: helper.entity.name, candidates: missing)
        }
        let sql = "INSERT INTO \(helper.table) (\(columns.map { helper.columns[$0] }.joined(separator: ", "))) VALUES ("
            + (1...columns.count).map { "$\($0)" }.joined(separator: ", ") + ")" + (returning ? " RETURNING \(helper.selectList())" : "")
        return PostgresStatement(sql, parameters, format: .binary)
    }

    /// Deletes one helper row of the pair: where pairs may repeat, exactly one of them.
    private func helperDelete(_ relationship: Relationship, owner: DatabaseObject, member: DatabaseObject) -> PostgresStatement {
        let via = relationship.via!
        let helper = helperTable(relationship)
        let condition = helper.condition(helper.attributeIndexes(via.fromColumns + via.toColumns))
        let parameters = helperKeyValues(relationship, owner: owner, member: member)
        if helperIsKeyed(relationship) {
            return PostgresStatement(
                "DELETE FROM \(helper.table) WHERE \(condition) RETURNING \(helper.selectList())", parameters, format: .binary)
        }
        return PostgresStatement(
            "DELETE FROM \(helper.table) WHERE (tableoid, ctid) = (SELECT tableoid, ctid FROM \(helper.table) WHERE \(condition) LIMIT 1) "
                + "RETURNING \(helper.selectList())",
            parameters, format: .binary)
    }

    private func helperDeleteAll(_ relationship: Relationship, owner: DatabaseObject) -> PostgresStatement {
        let helper = helperTable(relationship)
        let columns = helper.attributeIndexes(relationship.via!.fromColumns)
        return PostgresStatement(
            "DELETE FROM \(helper.table) WHERE \(helper.condition(columns)) RETURNING \(helper.selectList())",
            owner.table.attributeIndexes(relationship.from.columns).map { owner.values[$0].parameter },
            format: .binary)
    }

    /// New helper rows join the loaded one-to-many sets of both ends (`person.person_title_rel`).
    /// Only when ``helperRowsAreShown(_:)``: otherwise a new row is in no set anybody
    /// loaded, and no object has its key yet; the first fetch or load that reaches it
    /// makes its object.
    private func didInsertHelperRows(_ result: PostgresResult, relationship: Relationship) throws {
        let helper = helperTable(relationship)
        for object in try materialize(entity: helper.index, result: result, rowsAreDistinct: true) {
            didChange(object, from: Array(repeating: .null, count: object.values.count))
        }
    }

    private func didDeleteHelperRows(_ result: PostgresResult, relationship: Relationship) throws {
        let helper = helperTable(relationship)
        var defaults: [DatabaseObject] = []
        for object in try materialize(entity: helper.index, result: result, rowsAreDistinct: true) {
            forget(object, settingDefaults: &defaults)
        }
    }

    /// Both sides of a many-to-many, in memory.
    private func link(_ owner: DatabaseObject, _ member: DatabaseObject, set: RelationshipSet, times: Int) {
        set.add(member, times: times)
        if let inverse = inverses[owner.entityIndex][set.relationshipIndex], let other = member.sets[inverse.relationship], other !== set {
            other.add(owner, times: times)
        }
    }

    private func unlink(_ owner: DatabaseObject, _ member: DatabaseObject, set: RelationshipSet, times: Int) {
        set.drop(member, times: times)
        if let inverse = inverses[owner.entityIndex][set.relationshipIndex], let other = member.sets[inverse.relationship], other !== set {
            other.drop(owner, times: times)
        }
    }

    private func requireNullable(_ relationship: Relationship) throws {
        let child = tables[entityIndex(of: relationship.to)]
        for index in child.attributeIndexes(relationship.to.columns) where !child.entity.attributes[index].isNullable {
            let attribute = child.entity.attributes[index]
            throw RelateError(
                kind: .invalidWrite,
                message: "column \"\(attribute.name)\" of \"\(child.entity.name)\" is NOT NULL, so a \(child.entity.name) cannot leave "
                    + "its \(relationship.from.table) without another: move it (set its \"\(relationship.inverseKey)\") or delete it",
                entity: child.entity.name, key: attribute.key)
        }
    }

    /// The model never makes these; they guard the switches above.
    private static func notToOne(_ relationship: Relationship) -> RelateError {
        RelateError(kind: .invalidWrite, message: "relationship \"\(relationship.key)\" is to-many: set a collection", key: relationship.key)
    }

    private static func notToMany(_ relationship: Relationship) -> RelateError {
        RelateError(kind: .invalidWrite, message: "relationship \"\(relationship.key)\" is to-one: set an object", key: relationship.key)
    }

    private func readOnly(_ table: EntityTable) -> RelateError {
        RelateError(
            kind: .invalidWrite,
            message: "\"\(table.entity.name)\" has no primary key, so its rows cannot be told apart for a write",
            entity: table.entity.name)
    }

    private func vanished(_ object: DatabaseObject) -> RelateError {
        RelateError(kind: .invalidObject, message: "the row of \(object) is no longer in the database", entity: object.entity.name)
    }
}
