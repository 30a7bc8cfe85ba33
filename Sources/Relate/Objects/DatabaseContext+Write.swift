import RelatePostgres

/// Writes: each goes to the database first; objects in memory follow once it succeeded
/// (and roll back with an enclosing transaction). A write that depends on what memory
/// believes says so in its SQL, and a row that no longer matches is a conflict, never a
/// silent success.
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
        graph.membershipsMayChange()
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
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
                let target = try relatedObject(AttributeValue.unwrap(value), for: entity, index, key: key)
                let referenced = graph.targetColumns(of: entity, index)
                for (offset, column) in table.fromColumns[index].enumerated() {
                    columns.append(column)
                    parameters.append(target.map { $0.values[referenced[offset]].parameter } ?? nil)
                }
            }
        }
        let result = try send(Statements.insert(into: table.layout, columns: columns, values: parameters), entity: entity)
        guard let row = result.first else { throw noRowReturned(table) }
        let object = try graph.materialize(entity: entity, row: row)
        graph.didChange(object, from: Array(repeating: .null, count: object.values.count))
        return object
    }

    /// Deletes the object's row; the foreign keys' `ON DELETE` rules apply in memory as
    /// in the database: CASCADE deletes dependants, SET NULL / SET DEFAULT updates them,
    /// RESTRICT / NO ACTION refuses with an error naming the constraint and the table.
    /// A row already gone (another client deleted it) is a conflict; the object is marked
    /// deleted all the same.
    public func delete(_ object: DatabaseObject) throws {
        graph.membershipsMayChange()
        try check(object)
        let table = object.table
        guard !table.primaryKey.isEmpty else { throw readOnly(table) }
        let deleted: Int
        do {
            deleted = try send(Statements.delete(from: table.layout, key: object.primaryKeyValues), entity: object.entityIndex).affectedRows ?? 0
        } catch let relateError as RelateError
            where relateError.postgresError?.sqlState == .foreignKeyViolation || relateError.postgresError?.sqlState == .restrictViolation
        {
            let error = relateError.postgresError!
            throw RelateError(
                kind: .deleteDenied,
                message: "this \(table.entity.name) object cannot be deleted: rows of table \"\(error.table ?? "?")\" still refer to it "
                    + "through constraint \"\(error.constraint ?? "?")\"",
                entity: table.entity.name, postgresError: error, detail: "\(object)")
        }
        var defaults: [DatabaseObject] = []
        graph.forget(object, settingDefaults: &defaults)
        do {
            try reread(defaults, because: .parentDeleted)
        } catch {
            // The delete stands; dependants that could not be read back are made unusable
            // rather than trusted.
            var ignored: [DatabaseObject] = []
            for dependant in defaults where !dependant.isDeleted {
                graph.forget(dependant, applyingDeleteRules: false, settingDefaults: &ignored)
            }
        }
        if deleted == 0 { throw vanished(object) }
    }

    // MARK: - Attributes and to-one keys

    func setAttribute(_ object: DatabaseObject, _ index: Int, _ value: Any?) throws {
        let table = object.table
        let attribute = table.entity.attributes[index]
        try update(object, columns: [index], values: [try AttributeValue.encodable(value, for: attribute, entity: table.entity)])
    }

    /// `UPDATE … SET … WHERE <key> [AND <expected>] RETURNING …`: the object takes the row
    /// as stored. `expected` are the values memory believes the row holds and the write
    /// depends on (a foreign key it clears): when the row no longer holds them, nothing is
    /// written, the object is read again and the call throws a conflict.
    ///
    /// A write of primary-key columns keeps the object (re-keyed in the identity map), and
    /// the `ON UPDATE` actions of the foreign keys that refer to it are mirrored in memory
    /// (see `followKeyChange`); one that a `RESTRICT` / `NO ACTION` key refuses throws an
    /// error naming the constraint and the table that still refers to the old key.
    func update(
        _ object: DatabaseObject, columns: [Int], values: [(any PostgresEncodable)?],
        expecting expected: [(column: Int, value: StoredValue)] = []
    ) throws {
        graph.membershipsMayChange()
        let table = object.table
        guard !table.primaryKey.isEmpty else { throw readOnly(table) }
        let writesKey = columns.contains(where: table.primaryKey.contains)
        let statement = Statements.update(table.layout, setting: columns, to: values, key: object.primaryKeyValues, expecting: expected)
        let result: PostgresResult
        do {
            result = try send(statement, entity: object.entityIndex)
        } catch let error as RelateError where writesKey {
            throw keyChangeDenied(error, object) ?? error
        }
        guard let row = result.first else {
            if expected.isEmpty { throw vanished(object) }
            graph.learntInTransaction(.corrected(object))
            try reread([object], because: .stale)
            if object.isDeleted { throw vanished(object) }
            throw conflict(object, "no longer holds what this context believed (another client changed it); it has been read again")
        }
        if writesKey {
            try followKeyChange(object, to: row)
        } else {
            _ = try graph.materialize(entity: object.entityIndex, row: row)
        }
    }

    func setToOne(_ object: DatabaseObject, _ index: Int, _ target: DatabaseObject?) throws {
        graph.membershipsMayChange()
        let relationship = object.entity.relationships[index]
        switch relationship.foreignKeyIn {
        case .from:
            let columns = object.table.fromColumns[index]
            let values: [(any PostgresEncodable)?] =
                target.map { target in graph.targetColumns(of: object.entityIndex, index).map { target.values[$0].parameter } }
                ?? Array(repeating: nil, count: columns.count)
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
            let child = graph.target(of: object.entityIndex, index)
            let childColumns = graph.targetColumns(of: object.entityIndex, index)
            let ownerValues = object.table.fromColumns[index].map { object.values[$0].parameter }
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
        let statement = Statements.nullify(layout.entities[entity], columns: columns, matching: values, exceptKey: except?.primaryKeyValues)
        let result = try send(statement, entity: entity)
        _ = try graph.materialize(entity: entity, result: result, rowsAreDistinct: true)
    }

    /// The object given for to-one relationship `index` of `entity`, checked: of this
    /// context, alive, of the target entity.
    func relatedObject(_ value: Any?, for entity: Int, _ index: Int, key: String) throws -> DatabaseObject? {
        guard let value else { return nil }
        let owner = model.entities[entity]
        let targetEntity = graph.target(of: entity, index)
        guard let object = value as? DatabaseObject else {
            throw RelateError(
                kind: .typeMismatch,
                message: "key \"\(key)\" of \"\(owner.name)\" leads to \"\(model.entities[targetEntity].name)\"; "
                    + "give a DatabaseObject (or nil), not a \(type(of: value))",
                entity: owner.name, key: key)
        }
        try check(object)
        guard object.entityIndex == targetEntity else {
            throw RelateError(
                kind: .typeMismatch,
                message: "key \"\(key)\" of \"\(owner.name)\" leads to \"\(model.entities[targetEntity].name)\", not to \"\(object.entity.name)\"",
                entity: owner.name, key: key)
        }
        return object
    }

    // MARK: - To-many collections

    func insert(_ object: DatabaseObject, into set: RelationshipSet, owner: DatabaseObject, helperValues: [String: Any?]) throws {
        graph.membershipsMayChange()
        let relationship = set.relationship
        _ = try relatedObject(object, for: owner.entityIndex, set.relationshipIndex, key: relationship.key)
        switch relationship.foreignKeyIn {
        case .to:
            // Written even when memory shows it in the set: another client may have moved it.
            try setToOne(object, graph.inverse(of: owner.entityIndex, set.relationshipIndex).relationship, owner)
        case .via:
            let helper = try helperTable(of: set)
            // A keyed pair is stored once: the database, not memory, says whether it is there
            // (another client may have removed or added it), and the set ends holding it.
            let keyed = helperIsKeyed(relationship, helper: helper)
            let shown = helperRowsAreShown(helper)
            let statement = try helperInsert(
                set, helper: helper, member: object, helperValues: helperValues, returning: shown, skippingExisting: keyed)
            let result = try send(statement, entity: owner.entityIndex)
            if shown { try graph.didInsertHelperRows(result, helper: helper) }
            if !keyed || !set.contains(object) { graph.link(owner, object, set: set, times: 1) }
        case .from:
            throw Self.notToMany(relationship)
        }
    }

    func remove(_ object: DatabaseObject, from set: RelationshipSet, owner: DatabaseObject) throws {
        graph.membershipsMayChange()
        try check(object)
        guard set.contains(object) else { return }
        let relationship = set.relationship
        switch relationship.foreignKeyIn {
        case .to:
            try requireNullable(relationship, childEntity: object.entityIndex)
            let columns = graph.targetColumns(of: owner.entityIndex, set.relationshipIndex)
            let ownerValues = owner.table.fromColumns[set.relationshipIndex].map { owner.values[$0] }
            do {
                try update(
                    object, columns: columns, values: Array(repeating: nil, count: columns.count),
                    expecting: Array(zip(columns, ownerValues)))
            } catch let error as RelateError where error.kind == .conflict {
                // The database moved it elsewhere: the owner's set takes what the database holds.
                graph.learntInTransaction(.corrected(owner))
                try load(relationship: set.relationshipIndex, for: [owner])
                throw error
            }
        case .via:
            let helper = try helperTable(of: set)
            let statement = helperDelete(set, helper: helper, member: object)
            let result = try send(statement, entity: owner.entityIndex)
            try graph.didDeleteHelperRows(result, helper: helper)
            guard result.count > 0 else {
                // No such helper row any more: memory lets go of the pair as the database did.
                graph.learntInTransaction(.corrected(owner))
                graph.learntInTransaction(.corrected(object))
                graph.unlink(owner, object, set: set, times: set.count(for: object))
                throw conflict(object, "was no longer linked to this \(owner.entity.name) through \"\(helper.entity.name)\" "
                    + "(another client removed the pair); memory now agrees")
            }
            graph.unlink(owner, object, set: set, times: result.count)
        case .from:
            throw Self.notToMany(relationship)
        }
    }

    /// Makes the set hold exactly `members` (with their multiplicity), writing only the
    /// difference, all of it in one pipeline — one round trip, all or nothing. What leaves
    /// is chosen by the database, not by memory (`… WHERE fk = $owner AND NOT (key = ANY(…))`),
    /// so a member another client added leaves too, even when memory saw nothing to remove;
    /// memory follows the rows that changed.
    func replace(members: [DatabaseObject], of set: RelationshipSet, owner: DatabaseObject) throws {
        graph.membershipsMayChange()
        let relationship = set.relationship
        let index = set.relationshipIndex
        for member in members { _ = try relatedObject(member, for: owner.entityIndex, index, key: relationship.key) }
        // Members in the order given, each once, with how many times it was given.
        var wanted: [ObjectIdentifier: Int] = [:]
        var distinct: [DatabaseObject] = []
        for member in members {
            let id = ObjectIdentifier(member)
            if wanted[id] == nil { distinct.append(member) }
            wanted[id, default: 0] += 1
        }
        let current = set.allObjects
        let removesAny = current.contains { wanted[ObjectIdentifier($0)] == nil }
        let target = graph.target(of: owner.entityIndex, index)
        let targetTable = graph.tables[target]
        let targetKey = graph.targetColumns(of: owner.entityIndex, index)
        let ownerValues = owner.table.fromColumns[index].map { owner.values[$0].parameter }

        switch relationship.foreignKeyIn {
        case .to:
            if removesAny { try requireNullable(relationship, childEntity: target) }
            // Both statements follow the database, not memory (which may be stale): what
            // leaves is whatever it links to the owner beyond the members, what arrives is
            // every member it does not link yet.
            let keys = distinct.map(\.primaryKeyValues)
            var statements = [Statements.release(targetTable.layout, foreignKey: targetKey, owner: ownerValues, keeping: keys)]
            if !distinct.isEmpty {
                statements.append(Statements.claim(targetTable.layout, foreignKey: targetKey, owner: ownerValues, members: keys))
            }
            let results = try send(statements, entity: owner.entityIndex)
            for result in results {
                _ = try graph.materialize(entity: target, result: result, rowsAreDistinct: true)
            }

        case .via:
            let helper = try helperTable(of: set)
            let helperTo = owner.table.layout.helperColumns[index].to
            var statements: [Statement] = []
            // Whole members leave by one statement the database answers; fewer copies of a
            // pair (a helper without a key) by one row each.
            statements.append(helperDelete(owner: owner, relationship: index, helper: helper, keeping: distinct))
            var added: [(object: DatabaseObject, times: Int)] = []
            if !members.isEmpty {
                for member in distinct {
                    let delta = (wanted[ObjectIdentifier(member)] ?? 0) - set.count(for: member)
                    if delta < 0 {
                        let statement = helperDelete(set, helper: helper, member: member)
                        for _ in 0..<(-delta) { statements.append(statement) }
                    } else if delta > 0 {
                        added.append((member, delta))
                    }
                }
            }
            let deletes = statements.count
            let shown = helperRowsAreShown(helper)
            if let many = try helperInsertAll(set, helper: helper, members: added, returning: shown) {
                statements.append(many)
            } else {
                var template: Statement?
                for (member, times) in added {
                    let statement: Statement
                    if let template {
                        statement = Statement(sql: template.sql, parameters: ownerValues + targetKey.map { member.values[$0].parameter })
                    } else {
                        statement = try helperInsert(set, helper: helper, member: member, helperValues: [:], returning: shown)
                        template = statement
                    }
                    for _ in 0..<times { statements.append(statement) }
                }
            }
            if statements.isEmpty { return }
            let results = try send(statements, entity: owner.entityIndex)
            // The deleted rows say which pairs left, and how often.
            var left: [ObjectIdentifier: (object: DatabaseObject, times: Int)] = [:]
            for result in results.prefix(deletes) {
                for row in try graph.didDeleteHelperRows(result, helper: helper) {
                    let values = helperTo.map { row.values[$0] }
                    guard let member = graph.registered(entity: target, indexes: targetKey, values: values) else { continue }
                    left[ObjectIdentifier(member), default: (member, 0)].times += 1
                }
            }
            for result in results.dropFirst(deletes) where !result.columns.isEmpty {
                try graph.didInsertHelperRows(result, helper: helper)
            }
            for (member, times) in left.values {
                graph.unlink(owner, member, set: set, times: times)
            }
            for (member, times) in added {
                graph.link(owner, member, set: set, times: times)
            }

        case .from:
            throw Self.notToMany(relationship)
        }
    }

    /// A replace of a many-to-many set through a helper that holds a pair once: the
    /// database is told the whole membership, not the difference from what memory
    /// believes, so neither a set nobody loaded (which needed a read first: it cost as much
    /// as the writes, 2.5× a single raw `INSERT … SELECT unnest`) nor a loaded one that is
    /// stale (a pair another client added or removed) can make it fail or leave it wrong.
    /// One pipeline: what leaves is deleted and answered (so the other side's loaded sets
    /// follow), every member is inserted unless its pair is there already; the set then
    /// holds exactly `members`. Answers false, having done nothing, where the helper may
    /// hold a pair twice or the keys have no array type that goes into the columns (then
    /// the set is loaded and the difference written).
    func replaceKeyedManyToMany(members: [DatabaseObject], relationship index: Int, owner: DatabaseObject) throws -> Bool {
        let relationship = owner.entity.relationships[index]
        guard relationship.foreignKeyIn == .via, let helperIndex = owner.table.layout.helpers[index] else {
            return false
        }
        let helper = graph.tables[helperIndex]
        guard helperIsKeyed(relationship, helper: helper) else { return false }
        for member in members { _ = try relatedObject(member, for: owner.entityIndex, index, key: relationship.key) }
        var distinct: [DatabaseObject] = []
        var seen = Set<ObjectIdentifier>()
        for member in members where seen.insert(ObjectIdentifier(member)).inserted { distinct.append(member) }
        let helperTo = owner.table.layout.helperColumns[index].to
        let targetKey = graph.targetColumns(of: owner.entityIndex, index)
        let shown = helperRowsAreShown(helper)

        var statements = [helperDelete(owner: owner, relationship: index, helper: helper, keeping: distinct)]
        if !distinct.isEmpty {
            guard let insert = try helperInsertAll(
                owner: owner, relationship: index, helper: helper, rows: distinct, returning: shown, skippingExisting: true)
            else { return false }
            statements.append(insert)
        }
        graph.membershipsMayChange()
        let results = try send(statements, entity: owner.entityIndex)

        let target = graph.target(of: owner.entityIndex, index)
        let inverse = graph.inverse(of: owner.entityIndex, index)
        if let set = owner.sets[index] {
            for member in set.allObjects where !seen.contains(ObjectIdentifier(member)) {
                graph.unlink(owner, member, set: set, times: set.count(for: member))
            }
            for member in distinct where !set.contains(member) {
                graph.link(owner, member, set: set, times: 1)
            }
        } else {
            graph.storeLoaded(relationship: index, of: [owner], related: [distinct], mayRepeat: true)
        }
        // Pairs memory did not know of (another client's) leave the other side's sets too.
        for row in try graph.didDeleteHelperRows(results[0], helper: helper) {
            guard let member = graph.registered(entity: target, indexes: targetKey, values: helperTo.map { row.values[$0] }) else { continue }
            member.sets[inverse.relationship]?.drop(owner)
        }
        if results.count > 1, shown { try graph.didInsertHelperRows(results[1], helper: helper) }
        for member in distinct {
            if let other = member.sets[inverse.relationship], !other.contains(owner) { other.add(owner) }
        }
        return true
    }

    // MARK: - Helper graph.tables

    private func helperTable(of set: RelationshipSet) throws -> EntityTable {
        guard let helper = set.owner.table.layout.helpers[set.relationshipIndex] else {
            throw Self.notToMany(set.relationship)
        }
        return graph.tables[helper]
    }

    /// Whether the helper's two keys form a unique key, so a pair is stored at most once.
    func helperIsKeyed(_ relationship: Relationship, helper: EntityTable) -> Bool {
        guard let via = relationship.via else { return false }
        let pair = Set(via.fromColumns + via.toColumns)
        return ([helper.entity.primaryKey] + helper.entity.uniqueKeys).contains { !$0.isEmpty && Set($0) == pair }
    }

    /// The helper row's values for the pair: the owner's key, then the member's.
    private func helperKeyValues(_ set: RelationshipSet, member: DatabaseObject) -> [(any PostgresEncodable)?] {
        let owner = set.owner
        let index = set.relationshipIndex
        return owner.table.fromColumns[index].map { owner.values[$0].parameter }
            + graph.targetColumns(of: owner.entityIndex, index).map { member.values[$0].parameter }
    }

    /// Whether a loaded relationship shows the helper's own rows (`person.person_title_rel`),
    /// so that new rows must come back (`RETURNING`) to join it. Otherwise an insert sends
    /// nothing back: 10,000 inserts through a replace then cost no 10,000 result rows.
    private func helperRowsAreShown(_ helper: EntityTable) -> Bool {
        graph.loadedRelationships.contains { graph.target(of: $0.entity, $0.relationship) == helper.index }
    }

    /// The pair of `set`'s owner and `member` as a new helper row, with `helperValues` for
    /// the helper's other columns; `skippingExisting`: `ON CONFLICT (pair) DO NOTHING`.
    private func helperInsert(
        _ set: RelationshipSet, helper: EntityTable, member: DatabaseObject, helperValues: [String: Any?], returning: Bool,
        skippingExisting: Bool = false
    ) throws -> Statement {
        let pair = set.owner.table.layout.helperColumns[set.relationshipIndex]
        var more: [(column: Int, value: (any PostgresEncodable)?)] = []
        for (key, value) in helperValues.sorted(by: { $0.key < $1.key }) {
            guard let index = helper.entity.attributes.firstIndex(where: { $0.key == key || $0.name == key }) else {
                throw RelateError.unknownKey(key, entity: helper.entity.name, existing: helper.entity.attributes.map(\.key))
            }
            more.append((index, try AttributeValue.encodable(value, for: helper.entity.attributes[index], entity: helper.entity)))
        }
        try requireValues(helper, columns: pair.from + pair.to + more.map(\.column))
        return Statements.insertPair(
            into: helper.layout, pair: pair, values: helperKeyValues(set, member: member), more: more, returning: returning,
            skippingExisting: skippingExisting)
    }

    /// Every pair of `members` (each `times` over) in one `INSERT … SELECT * FROM unnest(…)`;
    /// `nil` for fewer than two rows, or where ``helperInsertAll(owner:relationship:helper:rows:returning:skippingExisting:)``
    /// answers `nil`: then one `INSERT` a pair.
    private func helperInsertAll(
        _ set: RelationshipSet, helper: EntityTable, members: [(object: DatabaseObject, times: Int)], returning: Bool
    ) throws -> Statement? {
        let rows = members.flatMap { member, times in repeatElement(member, count: times) }
        guard rows.count > 1 else { return nil }
        return try helperInsertAll(owner: set.owner, relationship: set.relationshipIndex, helper: helper, rows: rows, returning: returning)
    }

    /// The pairs of `owner` and each of `rows` in one statement (``Statements/insertPairs(into:pair:arrays:returning:skippingExisting:)``);
    /// `nil` when a column's values have no array type that goes into the column as it is
    /// (an enum, a date) or hold a NULL.
    private func helperInsertAll(
        owner: DatabaseObject, relationship index: Int, helper: EntityTable, rows: [DatabaseObject], returning: Bool,
        skippingExisting: Bool = false
    ) throws -> Statement? {
        let pair = owner.table.layout.helperColumns[index]
        let ownerKey = owner.table.fromColumns[index].map { owner.values[$0] }
        let memberKey = graph.targetColumns(of: owner.entityIndex, index)
        let columnValues = ownerKey.map { value in Array(repeating: value, count: rows.count) }
            + memberKey.map { column in rows.map { $0.values[column] } }
        let columns = pair.from + pair.to
        var arrays: [any PostgresEncodable] = []
        for (column, values) in zip(columns, columnValues) {
            let type = helper.types[column]
            guard Self.unnestable.contains(type), !values.contains(where: \.isNull),
                case .typed(let array) = AttributeValue.keyList(values, columnType: type)
            else { return nil }
            arrays.append(array)
        }
        try requireValues(helper, columns: columns)
        return Statements.insertPairs(into: helper.layout, pair: pair, arrays: arrays, returning: returning, skippingExisting: skippingExisting)
    }

    /// Column types whose values' array (the Swift type's) goes into the column by an
    /// assignment cast or none; text into json or an enum, or a timestamptz into a date, would not.
    private static let unnestable: Set<PostgresType> = [.int2, .int4, .int8, .float4, .float8, .numeric, .bool, .text, .varchar, .bpchar, .uuid, .bytea]

    /// A helper row written with only `columns` must get every other NOT NULL column from a default.
    private func requireValues(_ helper: EntityTable, columns: [Int]) throws {
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
    }

    /// Deletes one helper row of the pair: where pairs may repeat, exactly one of them.
    private func helperDelete(_ set: RelationshipSet, helper: EntityTable, member: DatabaseObject) -> Statement {
        Statements.deletePair(
            from: helper.layout, pair: set.owner.table.layout.helperColumns[set.relationshipIndex],
            values: helperKeyValues(set, member: member), keyed: helperIsKeyed(set.relationship, helper: helper))
    }

    /// Deletes the owner's pairs with every member but `kept` (`RETURNING` them).
    private func helperDelete(owner: DatabaseObject, relationship index: Int, helper: EntityTable, keeping kept: [DatabaseObject]) -> Statement {
        let targetKey = graph.targetColumns(of: owner.entityIndex, index)
        return Statements.deletePairs(
            from: helper.layout, pair: owner.table.layout.helperColumns[index],
            owner: owner.table.fromColumns[index].map { owner.values[$0].parameter },
            keeping: kept.map { member in targetKey.map { member.values[$0] } })
    }

    private func requireNullable(_ relationship: Relationship, childEntity: Int) throws {
        let child = graph.tables[childEntity]
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

    private func noRowReturned(_ table: EntityTable) -> RelateError {
        RelateError(
            kind: .invalidWrite,
            message: "the insert into \"\(table.entity.name)\" returned no row (a rule or trigger dropped it)",
            entity: table.entity.name)
    }

    /// The object's row is gone: it is marked deleted (its dependants follow the delete
    /// rules, as the database applied them) and the error says so.
    private func vanished(_ object: DatabaseObject) -> RelateError {
        graph.learntInTransaction(.corrected(object))
        var defaults: [DatabaseObject] = []
        graph.forget(object, settingDefaults: &defaults)
        try? reread(defaults, because: .parentDeleted)
        return conflict(object, "is no longer in the database (another client deleted it); the object is marked deleted")
    }

    private func conflict(_ object: DatabaseObject, _ what: String) -> RelateError {
        RelateError(
            kind: .conflict, message: "the row of this \(object.entity.name) object \(what)", entity: object.entity.name,
            detail: "\(object)")
    }
}
