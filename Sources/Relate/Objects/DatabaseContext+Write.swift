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
    ///
    /// - Parameters:
    ///   - entityName: The entity's name (`person`, or `schema.table`).
    ///   - values: Values by key: attributes as Swift values (`nil` for NULL), to-one
    ///     relationships as objects; columns left out take their defaults.
    /// - Returns: The new row's object, holding the row as stored.
    /// - Throws: A ``RelateError`` when a key is unknown or to-many, a value does not fit its
    ///   column (``RelateError/Kind-swift.struct/typeMismatch``), or the database refuses the row
    ///   (``RelateError/Kind-swift.struct/database``, with its `PostgresError`); nothing is
    ///   written then.
    @discardableResult
    public func insert(_ entityName: String, values: [String: Any?] = [:]) throws -> DatabaseObject {
        graph.membershipsMayChange()
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
        try require(.insert, on: table)
        if try writesPending() { return try pendInsert(entity, values: values) }
        let (columns, parameters) = try columnValues(values, of: entity, for: "insert first, then set it")
        let statement = Statements.insert(into: table.layout, columns: columns, values: parameters)
        // A table's key is never NULL; a view's or a foreign table's may come back so, and
        // then the insert is rolled back.
        let result = try table.entity.kind.keysEveryRow
            ? send(statement, entity: entity)
            : read(entity: entity) { try inDatabaseTransaction { try requireKeys([try send(statement, entity: entity)], count: 1, of: table)[0] } }
        guard let row = result.first else { throw RelateError.noRowReturned(table) }
        // The row as stored, registered as it was read; then the insert's effect, as a
        // pending insert's: inverses, watchers.
        let object = try graph.materialize(entity: entity, row: row)
        graph.apply(.insert(object, columns: columns))
        settleLinks()
        return object
    }

    /// `results`, an insert's of `count` rows, when they returned that many rows and each
    /// holds its key; otherwise throws (``RelateError/noRowReturned(_:)``,
    /// ``RelateError/insertedWithoutKey(_:)``). For a relation that may return a row without
    /// its key (``Catalog/Table/Kind/keysEveryRow``), in the insert's transaction, inside
    /// ``read(entity:_:)`` (an error at its `COMMIT`, a deferred key's, names the entity).
    func requireKeys(_ results: [PostgresResult], count: Int, of table: EntityTable) throws -> [PostgresResult] {
        guard results.reduce(0, { $0 + $1.count }) == count else { throw RelateError.noRowReturned(table) }
        for result in results {
            for row in 0..<result.count {
                for column in table.primaryKey where try read(entity: table.layout.index, { try result.cell(row: row, column: column) }) == nil {
                    throw RelateError.insertedWithoutKey(table)
                }
            }
        }
        return results
    }

    /// Deletes the object's row; the foreign keys' `ON DELETE` rules apply in memory as
    /// in the database: CASCADE deletes dependants, SET NULL / SET DEFAULT updates them,
    /// RESTRICT / NO ACTION refuses with an error naming the constraint and the table.
    /// A row already gone (another client deleted it) is a conflict; the object is marked
    /// deleted all the same.
    ///
    /// - Parameter object: An object of this context, not yet deleted.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/deleteDenied`` when a
    ///   `RESTRICT` or `NO ACTION` foreign key refuses, ``RelateError/Kind-swift.struct/conflict``
    ///   when the row was already gone, or the database's error; memory changes only when the
    ///   database accepted.
    public func delete(_ object: DatabaseObject) throws {
        graph.membershipsMayChange()
        try check(object)
        let table = object.table
        guard !table.primaryKey.isEmpty else { throw RelateError.readOnly(table) }
        try require(.delete, on: table)
        // What refers to it in bytes memory cannot pair, as the server pairs it (before the delete).
        try loadServerLinks(of: [object])
        if try writesPending() { return try pendingStep { applyEffect(.delete(object)) } }
        // Pending, a new object's key may still be NULL (validation refuses it at save()).
        guard !table.primaryKey.contains(where: { object.values[$0].isNull }) else { throw RelateError.nullKey(object) }
        let delete = Statements.delete(from: table.layout, key: object.primaryKeyValues.map(\.parameter))
        // Objects memory holds that the cascade may reach through rows it does not: whether
        // their parents are still there is asked in the delete's round trip, after it (none
        // to ask where memory holds the whole cascade).
        let beyond = holdsCascade(below: object) ? [] : heldBeyondMemory(deleting: [object.entityIndex])
        let asked = parentsStatements(beyond)
        let results: [PostgresResult]
        do {
            results = asked.isEmpty ? [try send(delete, entity: object.entityIndex)] : try send([delete] + asked, entity: object.entityIndex)
        } catch let error as RelateError {
            throw RelateError.deleteDenied(error, entity: table.entity.name, detail: "\(object)") ?? error
        }
        if results[0].affectedRows ?? 0 == 0 {
            if case .declined(let error) = noRowWritten(object, .delete) { throw error }
            throw markVanished(object)
        }
        rowDeleted(object)
        let reached = try reachedBeyond(beyond, parents: Array(results.dropFirst()))
        if !reached.isEmpty { try reread(reached, because: .parentDeleted) }
        settleLinks()
    }

    /// An object memory holds below a cascade, whose parent row memory does not hold: the
    /// parent (an entity, the columns the object's foreign key refers to, their values).
    struct HeldBeyond {
        let object: DatabaseObject
        let parent: Int
        let columns: [Int]
        let key: [StoredValue]
    }

    /// The statements that ask which parents of `beyond` are still there: one a parent
    /// entity and columns, each parent once (the children of one row share it), in
    /// ``heldBeyond``'s order of first meeting them.
    func parentsStatements(_ beyond: [HeldBeyond]) -> [Statement] {
        parentGroups(beyond).map { group in
            let layout = graph.tables[group.parent].layout
            let names = group.columns.map { layout.columns[$0] }
            var sql = SQLBuilder()
            let condition = sql.keyCondition(names, types: group.columns.map { layout.types[$0] }, group.keys)
            sql += "SELECT \(names.joined(separator: ", ")) FROM \(layout.table) WHERE \(condition)"
            return sql.statement
        }
    }

    /// The objects of `beyond` whose parent is gone, by the answers of ``parentsStatements(_:)``.
    func reachedBeyond(_ beyond: [HeldBeyond], parents results: [PostgresResult]) throws -> [DatabaseObject] {
        var reached: [DatabaseObject] = []
        for (group, result) in zip(parentGroups(beyond), results) {
            let readers = StoredValue.Reader.readers(for: result)
            var present: Set<ObjectKey> = []
            for row in 0..<result.count {
                let values = try readers.indices.map { try readers[$0].read(result, row: row, column: $0) }
                if let key = ObjectKey(values) { present.insert(key) }
            }
            for member in group.members where !member.object.isDeleted && !(ObjectKey(member.key).map(present.contains) ?? false) {
                reached.append(member.object)
            }
        }
        return reached
    }

    /// `beyond` by parent entity and columns: the distinct parent keys of each, and its members.
    private func parentGroups(_ beyond: [HeldBeyond]) -> [(parent: Int, columns: [Int], keys: [[StoredValue]], members: [HeldBeyond])] {
        var groups: [(parent: Int, columns: [Int], keys: [[StoredValue]], members: [HeldBeyond])] = []
        var seen: [Int: Set<ObjectKey>] = [:]
        for member in beyond {
            let index =
                groups.firstIndex { $0.parent == member.parent && $0.columns == member.columns }
                ?? { groups.append((member.parent, member.columns, [], [])); return groups.count - 1 }()
            groups[index].members.append(member)
            if let key = ObjectKey(member.key), seen[index, default: []].insert(key).inserted { groups[index].keys.append(member.key) }
        }
        return groups
    }

    /// Whether memory holds every row a delete of `object` deletes by cascade: each set a
    /// `CASCADE` goes through loaded, all the way down (a dependant a `SET NULL` or `SET
    /// DEFAULT` changes, memory finds by its key, loaded or not). Then memory follows the
    /// whole delete itself, and ``heldBeyondMemory(deleting:)`` need not look at every
    /// object of the entities below (for a tree, every node memory holds).
    private func holdsCascade(below object: DatabaseObject, depth: Int = 0) -> Bool {
        guard depth < 64 else { return false }
        for (index, relationship) in object.entity.relationships.enumerated()
        where relationship.foreignKeyIn == .to && (relationship.onDelete == .cascade || relationship.onDeleteVaries) {
            // Partitions that disagree on the rule: only the database knows what it did.
            guard !relationship.onDeleteVaries, let set = object.sets[index] else { return false }
            for member in set.heldMembers where !holdsCascade(below: member, depth: depth + 1) { return false }
        }
        return true
    }

    /// The objects memory holds whose rows a delete of rows of `entities` may delete or
    /// change without memory seeing it: where an `ON DELETE` rule goes on from a row the
    /// database deleted by `CASCADE` to rows that refer to it, the objects of those rows
    /// whose parent memory does not hold (the rows memory deletes and their dependants it
    /// holds, memory follows itself), with their parents. Those whose parent is gone after
    /// the delete (``reachedBeyond(_:parents:)``) are read again.
    func heldBeyondMemory(deleting entities: Set<Int>) -> [HeldBeyond] {
        var beyond: [HeldBeyond] = []
        var found: Set<ObjectIdentifier> = []
        // Entities whose rows the database may delete by cascade, beyond the deleted ones.
        var cascaded: Set<Int> = []
        var next = entities.map { (entity: $0, deleted: true) }
        while let (current, deleted) = next.popLast() {
            for (index, relationship) in graph.model.entities[current].relationships.enumerated()
            where relationship.foreignKeyIn == .to && (relationship.onDeleteVaries || ![.restrict, .noAction].contains(relationship.onDelete)) {
                let target = graph.target(of: current, index)
                if !deleted {
                    // A row of `current` the cascade deleted is one memory may not hold: its
                    // dependants memory holds are read again, unless their parent is held.
                    let columns = graph.targetColumns(of: current, index)
                    let parentColumns = graph.tables[current].fromColumns[index]
                    for object in graph.registries[target].all where !object.isDeleted {
                        let values = columns.map { object.values[$0] }
                        guard !values.contains(where: \.isNull) else { continue }
                        if graph.registered(entity: current, indexes: parentColumns, values: values) == nil, found.insert(ObjectIdentifier(object)).inserted {
                            beyond.append(HeldBeyond(object: object, parent: current, columns: parentColumns, key: values))
                        }
                    }
                }
                if relationship.onDelete == .cascade || relationship.onDeleteVaries, cascaded.insert(target).inserted {
                    next.append((target, false))
                }
            }
        }
        return beyond
    }

    /// The object's row was deleted: memory marks it deleted, and its dependants in memory
    /// follow the foreign keys' `ON DELETE` rules as the database applied them.
    func rowDeleted(_ object: DatabaseObject) {
        rowsDeleted([object])
    }

    /// ``rowDeleted(_:)`` for the rows one statement deleted: the dependants to read again
    /// (given defaults, or that memory cannot pair by bytes) are read once, after all.
    func rowsDeleted(_ objects: [DatabaseObject]) {
        var defaults: [DatabaseObject] = []
        var seen = Set<ObjectIdentifier>()
        graph.scannedUnsure = objects.count > 1 ? [] : nil
        defer { graph.scannedUnsure = nil }
        for object in objects {
            for dependant in graph.apply(.delete(object)) where seen.insert(ObjectIdentifier(dependant)).inserted { defaults.append(dependant) }
        }
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
    }

    /// `values` by key as the columns and parameters a statement writes: attributes, and
    /// to-one relationships whose key this table holds, given an object. `advice` says what
    /// to do for a key this table does not hold.
    func columnValues(
        _ values: [String: Any?], of entity: Int, for advice: String
    ) throws -> (columns: [Int], parameters: [(any PostgresEncodable)?]) {
        let table = graph.tables[entity]
        var columns: [Int] = []
        var parameters: [(any PostgresEncodable)?] = []
        columns.reserveCapacity(values.count)
        parameters.reserveCapacity(values.count)
        func add(_ key: String, _ value: Any?) throws {
            switch try resolve(key, in: entity) {
            case .attribute(let index):
                columns.append(index)
                parameters.append(try AttributeValue.encodable(value, for: table.entity.attributes[index], entity: table.entity))
            case .relationship(let index):
                for (column, value) in try heldToOne(key, value, of: entity, index, for: advice) {
                    columns.append(column)
                    parameters.append(value.parameter)
                }
            }
        }
        // In the keys' order, so that one set of keys always makes the same statement (a
        // single key needs no sorting, which makes an array).
        if values.count == 1, let (key, value) = values.first {
            try add(key, value)
        } else {
            for (key, value) in values.sorted(by: { $0.key < $1.key }) { try add(key, value) }
        }
        return (columns, parameters)
    }

    /// A to-one `key` (relationship `index` of `entity`) given `value`, an object or `nil`,
    /// as the values of the foreign-key columns this table holds; `advice` says what to do
    /// for a to-one whose key the other table holds.
    func heldToOne(_ key: String, _ value: Any?, of entity: Int, _ index: Int, for advice: String) throws -> [(column: Int, value: StoredValue)] {
        let table = graph.tables[entity]
        guard table.entity.relationships[index].foreignKeyIn == .from else {
            throw RelateError(
                kind: .invalidWrite, message: "key \"\(key)\" of \"\(table.entity.name)\" is not held by this table; \(advice)",
                entity: table.entity.name, key: key)
        }
        let target = try relatedObject(AttributeValue.unwrap(value), for: entity, index, key: key)
        let referenced = graph.targetColumns(of: entity, index)
        return table.fromColumns[index].enumerated().map { offset, column in (column, target?.values[referenced[offset]] ?? .null) }
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
        _ object: DatabaseObject, columns: SmallArray<Int>, values: SmallArray<(any PostgresEncodable)?>,
        expecting expected: [(column: Int, value: StoredValue)] = []
    ) throws {
        graph.membershipsMayChange()
        let table = object.table
        guard !table.primaryKey.isEmpty else { throw RelateError.readOnly(table) }
        try require(.update, on: table)
        // A key that moves: what refers to it in bytes memory cannot pair, as the server pairs it (before the write).
        if table.layout.movesReferences(writing: columns) { try loadServerLinks(of: [object]) }
        if try writesPending() {
            let attributes = table.entity.attributes
            return try pendUpdate(
                object, columns: columns, to: SmallArray(columns.indices.map { StoredValue(pending: values[$0], for: attributes[columns[$0]], of: table.entity) }))
        }
        guard !table.primaryKey.contains(where: { object.values[$0].isNull }) else { throw RelateError.nullKey(object) }
        // A key, or a column another table's foreign key refers to (a unique one): what
        // refers to it follows in memory as its `ON UPDATE` action did in the database.
        let writesKey = table.layout.movesReferences(writing: columns)
        let statement = updateStatement(
            table.layout, setting: Array(columns), to: Array(values), key: object.primaryKeyValues.map(\.parameter), expecting: expected)
        // A view's UPDATE … RETURNING answers the row written, even one its WHERE no longer
        // shows: it is read through the view again, in the same round trip where the key
        // stays (a key written is read under the key the row comes back with, after it).
        let readsAgain = table.entity.kind == .view
        let result: PostgresResult
        var again: PostgresResult?
        do {
            if readsAgain && !writesKey {
                let results = try send([statement, rowsStatement(of: object.entityIndex, [object])], entity: object.entityIndex)
                (result, again) = (results[0], results[1])
            } else {
                result = try send(statement, entity: object.entityIndex)
            }
        } catch let error as RelateError where writesKey {
            throw keyChangeDenied(error, object) ?? error
        }
        guard let row = result.first else {
            if expected.isEmpty {
                switch noRowWritten(object, .update(columns: Array(columns)), readAgain: again) {
                case .gone: throw markVanished(object)
                case .declined(let error): throw error
                case .written:
                    settleLinks()
                    return
                }
            }
            graph.learntInTransaction(.corrected(object))
            try reread([object], because: .stale)
            if object.isDeleted { throw markVanished(object) }
            throw RelateError.conflict(object, "no longer holds what this context believed (another client changed it); it has been read again")
        }
        if writesKey {
            try followKeyChange(object, to: row)
        } else {
            try applyStored(row, to: object)
        }
        // A row gone from the view leaves memory too.
        if let again {
            try take(again, as: [object], of: object.entityIndex, applyingDeleteRules: false)
        } else if readsAgain {
            try reread([object], because: .stale)
        }
        settleLinks()
    }

    /// The row the database answered for `object` (a write's `RETURNING`) as memory takes
    /// it: one update effect of the columns that changed (``ObjectGraph/apply(_:)``, the
    /// place every write changes memory), nothing when none did.
    func applyStored(_ row: PostgresRow, to object: DatabaseObject) throws {
        let values = try graph.storedValues(of: row, entity: object.entityIndex)
        let changed = values.indices.filter { !object.values[$0].isSame(as: values[$0]) }
        guard !changed.isEmpty else { return }
        let columns = SmallArray(changed)
        let computed = graph.apply(.update(object, columns: columns, from: columns.smallMap { object.values[$0] }, to: columns.smallMap { values[$0] }, releasing: false))
        // Dependants the database gave their defaults (`ON UPDATE SET DEFAULT`).
        if !computed.isEmpty { try reread(computed, because: .stale) }
    }

    /// ``Statements/update(_:setting:to:key:expecting:)``, its text made once for each
    /// entity and columns set (without `expected`, the text depends on nothing else): the
    /// text cost a by-key write 10 of its 53 thousand instructions (Benchmarks/README.md).
    /// A user who writes many different columns sets keeps at most 256 texts.
    func updateStatement(
        _ table: EntityLayout, setting columns: [Int], to values: [(any PostgresEncodable)?], key: [(any PostgresEncodable)?],
        expecting expected: [(column: Int, value: StoredValue)] = []
    ) -> Statement {
        guard expected.isEmpty else { return Statements.update(table, setting: columns, to: values, key: key, expecting: expected) }
        let shape = UpdateShape(entity: table.index, columns: columns)
        if let sql = updateTexts[shape] { return Statements.update(sql: sql, values: values, key: key) }
        let statement = Statements.update(table, setting: columns, to: values, key: key)
        if updateTexts.count == 256 { updateTexts.removeAll() }
        updateTexts[shape] = statement.sql
        return statement
    }

    func setToOne(_ object: DatabaseObject, _ index: Int, _ target: DatabaseObject?) throws {
        graph.membershipsMayChange()
        if try writesPending() { return try pendToOne(object, index, target) }
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
                    try update(object, columns: SmallArray(columns), values: SmallArray(values))
                }
            } else {
                try update(object, columns: SmallArray(columns), values: SmallArray(values))
            }
        case .to:
            // The inverse side of a one-to-one: the key is in the other table.
            let child = graph.target(of: object.entityIndex, index)
            let childColumns = graph.targetColumns(of: object.entityIndex, index)
            let ownerValues = object.table.fromColumns[index].map { object.values[$0].parameter }
            try transaction {
                try nullify(entity: child, columns: childColumns, matching: ownerValues, except: target)
                if let target { try update(target, columns: SmallArray(childColumns), values: SmallArray(ownerValues)) }
            }
        case .via:
            throw RelateError.notToOne(relationship)
        }
    }

    /// `UPDATE t SET fk = NULL WHERE fk = … [AND NOT <key of except>] RETURNING …`.
    private func nullify(entity: Int, columns: [Int], matching values: [(any PostgresEncodable)?], except: DatabaseObject?) throws {
        try require(.update, on: graph.tables[entity])
        let statement = Statements.nullify(layout.entities[entity], columns: columns, matching: values, exceptKey: except?.primaryKeyValues)
        let result = try send(statement, entity: entity)
        _ = try graph.materialize(entity: entity, result: result, rowsAreDistinct: true)
    }

    /// The object given for to-one relationship `index` of `entity`, checked: of this
    /// context, alive, of the target entity.
    func relatedObject(_ value: Any?, for entity: Int, _ index: Int, key: String) throws -> DatabaseObject? {
        guard let value else { return nil }
        guard let object = value as? DatabaseObject else {
            let owner = model.entities[entity].name
            throw RelateError(
                kind: .typeMismatch,
                message: "key \"\(key)\" of \"\(owner)\" leads to \"\(model.entities[graph.target(of: entity, index)].name)\"; "
                    + "give a DatabaseObject (or nil), not a \(type(of: value))",
                entity: owner, key: key)
        }
        try relatedMember(object, for: entity, index, key: key)
        return object
    }

    /// ``relatedMember(_:for:_:key:)`` for each of `objects`: the context and the entity
    /// are checked once per entity table, and each object's deleted flag.
    func relatedMembers(_ objects: [DatabaseObject], for entity: Int, _ index: Int, key: String) throws {
        var checked: EntityTable?
        for object in objects {
            if object.table === checked {
                guard !object.isDeleted else { throw object.deletedError() }
            } else {
                try relatedMember(object, for: entity, index, key: key)
                checked = object.table
            }
        }
    }

    /// Checks that `object` may be related through relationship `index` of `entity`: it
    /// belongs to this context, is not deleted and is of the relationship's target entity.
    /// The check of every member of a to-many write (10,000 for an attach): nothing is
    /// boxed or copied unless it throws.
    func relatedMember(_ object: DatabaseObject, for entity: Int, _ index: Int, key: String) throws {
        try check(object)
        let targetEntity = graph.target(of: entity, index)
        guard object.entityIndex == targetEntity else {
            let owner = model.entities[entity].name
            throw RelateError(
                kind: .typeMismatch,
                message: "key \"\(key)\" of \"\(owner)\" leads to \"\(model.entities[targetEntity].name)\", not to \"\(object.entity.name)\"",
                entity: owner, key: key)
        }
    }

    /// What a write by key of `object` that changed no row (none returned, none counted)
    /// comes to, its row read again (`readAgain`: read in the write's round trip, a view's;
    /// else now). An update of a table whose updates nothing declines
    /// (``Entity/rewritesUpdates``) is not read again: its row is gone.
    enum NoRowWritten {
        /// The row is gone: another client deleted it.
        case gone
        /// The row is there as it was at `columns` (all of them for a delete): a trigger or
        /// a rule declined the write — a `BEFORE` trigger that returns NULL (a soft delete),
        /// an `INSTEAD OF` trigger, a rule that does nothing. The object took the row.
        case declined(RelateError)
        /// The row holds other values at `columns`: an `INSTEAD OF` trigger wrote them and
        /// answered no row. The object took the row.
        case written
    }

    /// A write by key whose row may not come back: an update of `columns`, or a delete.
    enum WriteByKey {
        case update(columns: [Int])
        case delete
    }

    /// ``NoRowWritten`` of `write` of `object`.
    func noRowWritten(_ object: DatabaseObject, _ write: WriteByKey, readAgain: PostgresResult? = nil) -> NoRowWritten {
        let before = Array(object.values)
        var columns: [Int]?
        if case .update(let written) = write { columns = written }
        guard columns == nil || object.table.entity.rewritesUpdates,
            let rows = readAgain ?? (try? send(rowsStatement(of: object.entityIndex, [object]), entity: object.entityIndex)), rows.count > 0,
            (try? take(rows, as: [object], of: object.entityIndex, applyingDeleteRules: false)) != nil
        else { return .gone }
        if let columns, columns.contains(where: { !object.values[$0].isSame(as: before[$0]) }) { return .written }
        return .declined(.declined(object, columns == nil ? "delete" : "update", then: "the object holds the row as read again"))
    }

    /// The object's row is gone: memory marks it deleted (its dependants follow the delete
    /// rules, as the database applied them); answers the conflict error that says so.
    func markVanished(_ object: DatabaseObject) -> RelateError {
        graph.learntInTransaction(.corrected(object))
        try? reread(graph.apply(.delete(object)), because: .parentDeleted)
        return .conflict(object, "is no longer in the database (another client deleted it); the object is marked deleted")
    }
}

/// What the text of an `UPDATE` by primary key depends on.
struct UpdateShape: Hashable {
    let entity: Int
    let columns: [Int]
}
