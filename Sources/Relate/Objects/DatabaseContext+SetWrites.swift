import RelatePostgres

/// Writes by the thousand: one statement for every row a condition picks, or for many new
/// rows, and memory right afterwards. The rows the statement answers become effects applied
/// to whatever memory holds (``ObjectGraph/apply(_:)``, as a pending write is); rows memory
/// holds nothing of are not read back at all.
extension DatabaseContext {
    /// Updates every row of `entity` where `condition` holds, in one `UPDATE … WHERE`; the
    /// objects memory holds for those rows take the values as stored.
    ///
    /// ```swift
    /// let paid = try context.update("invoice", where: Key("due") < cutoff && Key("paid") == false, values: ["paid": true])
    /// try context.update("player", where: Key("team.name") == "red", values: ["score": Key("score") + 1])
    /// ```
    ///
    /// The condition says anything a fetch request can (to-one key paths, `any`/`all`/`none`
    /// through to-manys). A value is a Swift value of the attribute's type, an object for a
    /// to-one whose key this table holds, or a ``RowExpression`` computed from each row.
    /// Memory follows as for a write through each object: changed values, to-ones moved
    /// between the loaded sets on both sides, live results and Observation told of exactly
    /// what changed. A row memory holds nothing of (no object, no loaded set it would
    /// join) is not read back.
    ///
    /// In a context that does not autocommit the write is pending: the rows the condition
    /// picks (as memory sees them) are read and each object set, one undo step.
    ///
    /// - Parameters:
    ///   - entityName: The entity (`person`, or `schema.table`).
    ///   - condition: Which rows.
    ///   - values: The new values by key; a primary-key column cannot be among them.
    /// - Returns: How many rows changed.
    /// - Throws: ``RelateError``: an unknown key, a value the column cannot take, a primary-key
    ///   column, an entity without a key, an expression in a context that does not autocommit,
    ///   or what the database refuses (nothing is written then, memory unchanged).
    @discardableResult
    public func update(_ entityName: String, where condition: Condition, values: [String: Any?]) throws -> Int {
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
        try require(.update, on: table)
        guard !table.primaryKey.isEmpty else { throw RelateError.readOnly(table) }
        let request = FetchRequest(entityName, where: condition)
        if try writesPending() { return try pendUpdate(request, values: values) }
        let assignments = try setValues(values, of: entity)
        guard !assignments.isEmpty else { return 0 }
        graph.membershipsMayChange()
        let written = Set(assignments.map(\.column))
        let descendants = request.only ? [] : layout.descendants[entity] ?? []
        // Descendants whose rows memory may hold or take into a loaded set, with where their
        // keys are among the parent's columns (one without such a key can have no object).
        var heldDescendants: [Int: [Int]] = [:]
        for descendant in descendants where memoryMayHold(descendant, writing: inheritedColumns(of: entity, in: descendant, written)) {
            heldDescendants[descendant] = try? Self.keyColumns(of: layout.entities[descendant], in: layout.entities[entity])
        }
        let returning = memoryMayHold(entity, writing: written) || !heldDescendants.isEmpty
        let statement = try request.updateStatement(layout, setting: assignments, returning: returning, marking: descendants)
        let dependants = heldDependants(of: entity, writing: written)
        let results = dependants.isEmpty
            ? [try send(statement, entity: entity)]
            : try send([statement] + dependants.map { rowsStatement(of: $0.entity, $0.members) }, entity: entity)
        let changed = results[0].affectedRows ?? 0
        if returning, table.entity.kind == .view {
            try applyUpdatedThroughView(results[0], of: entity)
        } else if returning {
            try applyUpdated(results[0], of: entity, descendants: descendants, reading: heldDescendants)
        }
        for ((dependant, members), rows) in zip(dependants, results.dropFirst()) {
            try take(rows, as: members, of: dependant, applyingDeleteRules: true)
        }
        if changed > 0 { for written in [entity] + descendants + dependants.map(\.entity) { graph.noteChange(of: written) } }
        settleLinks()
        return changed
    }

    /// The objects memory holds that refer to `entity` through a foreign key on columns of
    /// `written` whose `ON UPDATE` rule changes them (`CASCADE`, `SET NULL`, `SET DEFAULT`),
    /// and so on as far as the rules go (a column a rule changed may be one a third table
    /// refers to): an update by condition may change rows memory does not hold, and so has
    /// no old value to find their dependants by. They are read again in the update's round
    /// trip, after it.
    private func heldDependants(of entity: Int, writing written: Set<Int>) -> [(entity: Int, members: [DatabaseObject])] {
        var changed: [Int: Set<Int>] = [entity: written]
        var reached: [Int] = []
        var next = [entity]
        while let current = next.popLast() {
            let table = graph.tables[current]
            let columns = changed[current]!
            guard table.layout.movesReferences(writing: columns) else { continue }
            for (index, relationship) in table.entity.relationships.enumerated()
            where relationship.foreignKeyIn == .to && [.cascade, .setNull, .setDefault].contains(relationship.onUpdate)
                && table.fromColumns[index].contains(where: columns.contains) {
                let target = graph.target(of: current, index)
                if !reached.contains(target) { reached.append(target) }
                let before = changed[target] ?? []
                let after = before.union(graph.targetColumns(of: current, index))
                if after != before {
                    changed[target] = after
                    next.append(target)
                }
            }
        }
        return Self.byEntity(reached.flatMap { graph.registries[$0].all })
    }

    /// Deletes every row of `entity` where `condition` holds, in one `DELETE … WHERE`; the
    /// foreign keys' `ON DELETE` rules apply in memory as ``delete(_:)`` applies them for one
    /// object (loaded dependants deleted or set NULL, the sets on the other side of
    /// many-to-manys let go of the rows).
    ///
    /// ```swift
    /// let gone = try context.delete("session", where: Key("user.tenant") == tenant)
    /// ```
    ///
    /// In a context that does not autocommit the delete is pending: the objects the
    /// condition picks are read and deleted, one undo step.
    ///
    /// - Parameters:
    ///   - entityName: The entity (`person`, or `schema.table`).
    ///   - condition: Which rows.
    /// - Returns: How many rows were deleted (dependants a cascade deleted not counted).
    /// - Throws: ``RelateError``: `.deleteDenied` naming the constraint when a `RESTRICT` /
    ///   `NO ACTION` foreign key refuses (nothing is deleted, memory unchanged), an unknown
    ///   key, or what else the database refuses.
    @discardableResult
    public func delete(_ entityName: String, where condition: Condition) throws -> Int {
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
        try require(.delete, on: table)
        guard !table.primaryKey.isEmpty else { throw RelateError.readOnly(table) }
        let request = FetchRequest(entityName, where: condition)
        if try writesPending() {
            let objects = try fetch(request)
            try pendingStep { for object in objects where !object.isDeleted { applyEffect(.delete(object)) } }
            return objects.count
        }
        graph.membershipsMayChange()
        let descendants = request.only ? [] : layout.descendants[entity] ?? []
        let reach = cascadeReach(of: entity, descendants: descendants)
        let returning = !graph.registries[entity].isEmpty || reach.heldOneLevelDown
        // Objects further down than the rows the statement returns are read again in the
        // same round trip, after the delete: only the database knows what its rules did there.
        let below = Self.byEntity(reach.below.flatMap { graph.registries[$0].all })
        let delete = try request.deleteStatement(layout, returning: returning, marking: descendants)
        let results: [PostgresResult]
        do {
            results = below.isEmpty
                ? [try send(delete, entity: entity)]
                : try send([delete] + below.map { rowsStatement(of: $0.entity, $0.members) }, entity: entity)
        } catch let error as RelateError {
            throw RelateError.deleteDenied(error, entity: table.entity.name, detail: "rows where a condition holds") ?? error
        }
        let result = results[0]
        let deleted = result.affectedRows ?? 0
        if returning {
            let marker = result.columns.count - 1
            var gone: [DatabaseObject] = []
            for row in 0..<result.count {
                // A descendant's row: its object, if memory holds one, is among those read again.
                if !descendants.isEmpty, try result[row].decode(Int.self, at: marker) != 0 { continue }
                let values = try graph.storedValues(of: result[row], entity: entity)
                if let object = graph.registered(entity: entity, indexes: table.primaryKey, values: table.primaryKey.map { values[$0] }) {
                    gone.append(object)
                } else if reach.heldOneLevelDown {
                    // Memory holds rows that referred to it: an object made to be deleted
                    // takes them through the rules, as a delete by key does.
                    gone.append(try graph.materialize(entity: entity, row: result[row]))
                }
            }
            rowsDeleted(gone)
        }
        for ((entity, members), rows) in zip(below, results.dropFirst()) {
            try take(rows, as: members, of: entity, applyingDeleteRules: true)
        }
        if deleted > 0 { for reached in reach.entities { graph.noteChange(of: reached) } }
        settleLinks()
        return deleted
    }

    /// Inserts `rows` of `entity` and answers one object per row, in order: at most two
    /// round trips whatever the number of rows, all or nothing. Keys, defaults and generated
    /// values are read back; each new object joins the loaded sets of what it refers to.
    ///
    /// ```swift
    /// let people = try context.insert("person", rows: [["firstname": "Ada"], ["firstname": "Grace", "surname": "Hopper"]])
    /// ```
    ///
    /// Rows that give the same keys go as one `INSERT … SELECT * FROM (SELECT unnest($1), unnest($2), …)`,
    /// each column one bound array (a column whose type has no array mapping: multi-row
    /// `VALUES`); rows that leave a key out take that column's default, as
    /// ``insert(_:values:)`` does. Several such statements go in one pipeline; a row that
    /// gives a foreign key of its table to itself is grouped only with the rows next to it, so
    /// that rows listed before the rows that refer to them are stored first. For a load that
    /// needs no objects, ``copy(into:rows:)`` is faster still.
    ///
    /// In a context that does not autocommit each row is a pending insert, one undo step.
    ///
    /// - Parameters:
    ///   - entityName: The entity (`person`, or `schema.table`).
    ///   - rows: The rows' values by key, as ``insert(_:values:)`` takes them.
    /// - Returns: The new objects, in the order of `rows`.
    /// - Throws: ``RelateError``: an unknown key, a value that does not fit its column (before
    ///   anything is sent), or what the database refuses for any row (nothing is written then).
    @discardableResult
    public func insert(_ entityName: String, rows: [[String: Any?]]) throws -> [DatabaseObject] {
        graph.membershipsMayChange()
        let entity = try entityIndex(named: entityName)
        let table = graph.tables[entity]
        try require(.insert, on: table)
        if try writesPending() { return try pendingStep { try rows.map { try pendInsert(entity, values: $0) } } }
        guard !rows.isEmpty else { return [] }
        // Every row encoded before anything is sent; rows grouped by the columns they give
        // (one that may refer to another only with the rows next to it).
        let referringColumns = selfReferences(entity).columns
        var groups: [(columns: [Int], rows: [Int], values: [[(any PostgresEncodable)?]])] = []
        var groupOf: [[Int]: Int] = [:]
        var given = [[Int]](repeating: [], count: rows.count)
        for (position, row) in rows.enumerated() {
            let (columns, parameters) = try columnValues(row, of: entity, for: "insert first, then set it")
            given[position] = columns
            let refers = !referringColumns.isEmpty && columns.contains(where: referringColumns.contains)
            let group = refers ? (groups.last?.columns == columns ? groups.count - 1 : nil) : groupOf[columns]
            guard let group else {
                groupOf[columns] = groups.count
                groups.append((columns, [position], [parameters]))
                continue
            }
            groups[group].rows.append(position)
            groups[group].values.append(parameters)
        }
        var statements: [Statement] = []
        var positions: [Int] = []
        for group in groups {
            statements += Statements.insertRows(into: table.layout, columns: group.columns, rows: group.values)
            positions += group.rows
        }
        func sendAll() throws -> [PostgresResult] {
            statements.count == 1 ? [try send(statements[0], entity: entity)] : try send(statements, entity: entity)
        }
        // Rows a trigger dropped, or a key a view's trigger left out, roll the others back.
        let results = try table.entity.kind.keysEveryRow && !table.entity.dropsInserts
            ? sendAll() : read(entity: entity) { try inDatabaseTransaction { try requireKeys(try sendAll(), count: rows.count, of: table) } }
        var objects = [DatabaseObject?](repeating: nil, count: rows.count)
        var next = 0
        for result in results {
            for object in try graph.materialize(entity: entity, result: result, rowsAreDistinct: true) {
                objects[positions[next]] = object
                next += 1
            }
        }
        guard next == rows.count else { throw RelateError.noRowReturned(table) }
        for (object, columns) in zip(objects, given) { graph.apply(.insert(object!, columns: columns)) }
        settleLinks()
        return objects.map { $0! }
    }

    // MARK: - Pending

    /// An update by condition in a context that does not autocommit: each object the
    /// condition picks (pending changes seen) is set, one undo step.
    private func pendUpdate(_ request: FetchRequest, values: [String: Any?]) throws -> Int {
        for (key, value) in values where value is RowExpression || value is Key {
            throw RelateError(
                kind: .invalidWrite,
                message: "key \"\(key)\" of \"\(request.entity)\" is given an expression of the row, which only the database computes; "
                    + "save() first and update with autocommits on, or give a value",
                entity: request.entity, key: key)
        }
        // Nothing to set changes no row, as with autocommit on.
        guard !values.isEmpty else { return 0 }
        let objects = try fetch(request)
        let sorted = values.sorted { $0.key < $1.key }
        try pendingStep {
            for object in objects {
                for (key, value) in sorted { try object.setValue(value, forKey: key) }
            }
        }
        return objects.count
    }

    // MARK: - Memory

    /// `values` by key as what an `UPDATE` sets each column to: bound values (to-ones given
    /// objects as their foreign-key columns) or expressions of the row. A primary-key column
    /// is refused: rows keep their identity in a write by condition.
    private func setValues(_ values: [String: Any?], of entity: Int) throws -> [(column: Int, value: SetValue)] {
        let table = graph.tables[entity]
        var assignments: [(column: Int, value: SetValue)] = []
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            let unwrapped = AttributeValue.unwrap(value)
            let expression: RowExpression.Node? =
                switch unwrapped {
                case let expression as RowExpression: expression.node
                case let key as Key: .key(key.path)
                default: nil
                }
            if let expression {
                guard case .attribute(let index) = try resolve(key, in: entity) else {
                    throw RelateError(
                        kind: .invalidWrite, message: "key \"\(key)\" of \"\(table.entity.name)\" is a relationship; an expression computes an attribute",
                        entity: table.entity.name, key: key)
                }
                assignments.append((index, .expression(expression)))
                continue
            }
            let (columns, parameters) = try columnValues([key: value], of: entity, for: "update its objects one by one")
            assignments += zip(columns, parameters).map { ($0, .parameter($1)) }
        }
        if let column = assignments.first(where: { table.primaryKey.contains($0.column) })?.column {
            let name = table.entity.attributes[column].key
            throw RelateError(
                kind: .invalidWrite,
                message: "key \"\(name)\" of \"\(table.entity.name)\" is part of the primary key; a write by condition keeps rows' keys (update the object instead)",
                entity: table.entity.name, key: name)
        }
        return assignments
    }

    /// Whether memory may hold something an update of `columns` of `entity` changes: an
    /// object of the entity, or a loaded set a row would join (a foreign key written toward
    /// an object whose inverse set is loaded). When not, the statement returns no rows.
    private func memoryMayHold(_ entity: Int, writing columns: Set<Int>) -> Bool {
        !graph.registries[entity].isEmpty || joinsLoadedSets(Array(columns), of: entity)
    }

    /// The updated rows as memory takes them: an object memory holds takes the columns that
    /// changed (one update effect); a row new to memory becomes an object only when it joins
    /// a loaded set (its foreign key now refers to a held object whose inverse is loaded).
    /// A row of one of `descendants` (the result's last column says which) is read again
    /// from the descendant's table, whose columns the parent's are not all of, when it is
    /// one of those `reading` (memory may hold what its rows become; with the parent's
    /// indexes of its key's columns): one query per such descendant.
    private func applyUpdated(_ result: PostgresResult, of entity: Int, descendants: [Int] = [], reading: [Int: [Int]] = [:]) throws {
        let table = graph.tables[entity]
        var descendantKeys: [Int: [[StoredValue]]] = [:]
        let marker = result.columns.count - 1
        for row in 0..<result.count {
            let values = try graph.storedValues(of: result[row], entity: entity)
            if !descendants.isEmpty, case let which = try result[row].decode(Int.self, at: marker), which > 0 {
                let descendant = descendants[which - 1]
                if let key = reading[descendant] { descendantKeys[descendant, default: []].append(key.map { values[$0] }) }
                continue
            }
            if let object = graph.registered(entity: entity, indexes: table.primaryKey, values: table.primaryKey.map { values[$0] }) {
                try applyStored(result[row], to: object)
            } else if joinsLoadedSet(values, of: entity) {
                let object = try graph.materialize(entity: entity, row: result[row])
                graph.didChange(object, from: nil)
            }
        }
        for (descendant, keys) in descendantKeys.sorted(by: { $0.key < $1.key }) {
            try applyUpdated(try rows(of: descendant, keys: keys), of: descendant)
        }
    }

    /// A view's updated rows as memory takes them. Its `UPDATE … RETURNING` answers each row
    /// as written (what an `INSTEAD OF` trigger returned, most often what it was given), not
    /// as the view shows it: the rows are read through the view again by their keys, as
    /// a write through one object reads its row again, and an object whose row the view no
    /// longer shows leaves memory.
    private func applyUpdatedThroughView(_ returned: PostgresResult, of entity: Int) throws {
        let primaryKey = graph.tables[entity].primaryKey
        var keys: [[StoredValue]] = []
        var held: [DatabaseObject] = []
        for row in 0..<returned.count {
            let values = try graph.storedValues(of: returned[row], entity: entity)
            let key = primaryKey.map { values[$0] }
            keys.append(key)
            if let object = graph.registered(entity: entity, indexes: primaryKey, values: key) { held.append(object) }
        }
        guard !keys.isEmpty else { return }
        let shown = try rows(of: entity, keys: keys)
        try applyUpdated(shown, of: entity)
        var found: Set<ObjectKey> = []
        for row in 0..<shown.count {
            let values = try graph.storedValues(of: shown[row], entity: entity)
            if let key = ObjectKey(primaryKey.map { values[$0] }) { found.insert(key) }
        }
        var dependants: [DatabaseObject] = []
        for object in held where !object.isDeleted && !(object.objectKey.map(found.contains) ?? false) {
            graph.forget(object, applyingDeleteRules: false, settingDefaults: &dependants)
        }
    }

    private func joinsLoadedSet(_ values: [StoredValue], of entity: Int) -> Bool {
        graph.tables[entity].foreignKeys.contains { index, columns in
            let inverse = graph.inverse(of: entity, index)
            // Across a relationship the server links, a target memory holds may take other bytes.
            return graph.loadedRelationships.contains(inverse)
                && (graph.tables[entity].layout.linksByServer[index]
                    || graph.registered(entity: inverse.entity, indexes: graph.targetColumns(of: entity, index), values: columns.map { values[$0] }) != nil)
        }
    }

    /// What a delete of `entity`'s rows (and of `descendants`', tables that inherit from it)
    /// reaches through the foreign keys' `ON DELETE` rules:
    /// - `entities`: every entity whose rows it may delete or change;
    /// - `heldOneLevelDown`: memory holds objects of an entity that refers to `entity`: the
    ///   deleted rows are read back, to take those objects through the rules as a delete of
    ///   each row would;
    /// - `below`: the entities whose objects only the database can tell about — those that
    ///   refer to rows the database deletes by cascade (memory may hold none of those rows,
    ///   and so cannot follow the rules through them), and the descendants themselves.
    private func cascadeReach(of entity: Int, descendants: [Int]) -> (entities: [Int], heldOneLevelDown: Bool, below: [Int]) {
        var reached = [entity] + descendants
        var heldOneLevelDown = false
        var below = Set(descendants)
        var cascaded: Set<Int> = []
        var queue = [(entity, statementRows: true)] + descendants.map { ($0, statementRows: false) }
        while let (current, statementRows) = queue.popLast() {
            for (index, relationship) in graph.model.entities[current].relationships.enumerated() where relationship.foreignKeyIn == .to {
                let target = graph.target(of: current, index)
                if statementRows {
                    if !graph.registries[target].isEmpty { heldOneLevelDown = true }
                } else {
                    below.insert(target)
                }
                if !reached.contains(target) { reached.append(target) }
                if relationship.onDelete == .cascade || relationship.onDeleteVaries, cascaded.insert(target).inserted {
                    queue.append((target, statementRows: false))
                }
            }
        }
        return (reached, heldOneLevelDown, below.sorted())
    }

    /// The attribute indexes in `descendant`, a table that inherits from `entity`, of
    /// `entity`'s `columns` (PostgreSQL's children have their parents' columns by name).
    private func inheritedColumns(of entity: Int, in descendant: Int, _ columns: Set<Int>) -> Set<Int> {
        let parent = graph.model.entities[entity].attributes
        let child = graph.model.entities[descendant].attributes
        return Set(columns.compactMap { column in child.firstIndex { $0.name == parent[column].name } })
    }
}
