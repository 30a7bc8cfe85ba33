import RelatePostgres

/// The helper table of a many-to-many relationship: which it is, whether it holds a pair
/// once, and the statements that write its rows, with the values they need checked.
extension DatabaseContext {
    func helperTable(of set: RelationshipSet) throws -> EntityTable {
        guard let helper = set.owner.table.layout.helpers[set.relationshipIndex] else {
            throw RelateError.notToMany(set.relationship)
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
    func helperKeyValues(_ set: RelationshipSet, member: DatabaseObject) -> [(any PostgresEncodable)?] {
        let owner = set.owner
        let index = set.relationshipIndex
        return owner.table.fromColumns[index].map { owner.values[$0].parameter }
            + graph.targetColumns(of: owner.entityIndex, index).map { member.values[$0].parameter }
    }

    /// Whether a loaded relationship shows the helper's own rows (`person.person_title_rel`),
    /// so that new rows must come back (`RETURNING`) to join it. Otherwise an insert sends
    /// nothing back: 10,000 inserts through a replace then cost no 10,000 result rows.
    func helperRowsAreShown(_ helper: EntityTable) -> Bool {
        graph.loadedRelationships.contains { graph.target(of: $0.entity, $0.relationship) == helper.index }
    }

    /// The pair of `set`'s owner and `member` as a new helper row, with `helperValues` for
    /// the helper's other columns; `skippingExisting`: `ON CONFLICT (pair) DO NOTHING`.
    func helperInsert(
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

    /// One `INSERT` a pair of `set`'s owner and each of `members` (each `times` over), for
    /// keys ``helperInsertAll(_:helper:members:returning:)`` cannot send as arrays: the text
    /// made once, each member's key bound into it after the owner's, as
    /// ``helperInsert(_:helper:member:helperValues:returning:skippingExisting:)`` binds them.
    func helperInserts(
        _ set: RelationshipSet, helper: EntityTable, members: [(object: DatabaseObject, times: Int)], returning: Bool,
        skippingExisting: Bool = false
    ) throws -> [Statement] {
        guard let first = members.first else { return [] }
        let template = try helperInsert(
            set, helper: helper, member: first.object, helperValues: [:], returning: returning, skippingExisting: skippingExisting)
        let ownerValues = set.owner.table.fromColumns[set.relationshipIndex].map { set.owner.values[$0].parameter }
        let memberKey = graph.targetColumns(of: set.owner.entityIndex, set.relationshipIndex)
        var statements: [Statement] = []
        for (member, times) in members {
            let statement = member === first.object
                ? template : Statement(sql: template.sql, parameters: ownerValues + memberKey.map { member.values[$0].parameter })
            statements += repeatElement(statement, count: times)
        }
        return statements
    }

    /// Every pair of `members` (each `times` over) in one `INSERT … SELECT … FROM (SELECT
    /// unnest(…) …)` (``Statements/arrayRows(_:as:numbered:)``);
    /// `nil` for fewer than two rows, or where ``helperInsertAll(owner:relationship:helper:rows:returning:skippingExisting:)``
    /// answers `nil`: then one `INSERT` a pair.
    func helperInsertAll(
        _ set: RelationshipSet, helper: EntityTable, members: [(object: DatabaseObject, times: Int)], returning: Bool
    ) throws -> Statement? {
        let rows = members.flatMap { member, times in repeatElement(member, count: times) }
        guard rows.count > 1 else { return nil }
        return try helperInsertAll(owner: set.owner, relationship: set.relationshipIndex, helper: helper, rows: rows, returning: returning)
    }

    /// The pairs of `owner` and each of `rows` in one statement (``Statements/insertPairs(into:pair:owner:arrays:returning:skippingExisting:)``):
    /// the owner's key once, the members' keys as an array a column; `nil` when a member
    /// key column's values have no array type that goes into the column as it is (an
    /// enum, a date), or a key holds a NULL.
    func helperInsertAll(
        owner: DatabaseObject, relationship index: Int, helper: EntityTable, rows: [DatabaseObject], returning: Bool,
        skippingExisting: Bool = false
    ) throws -> Statement? {
        let pair = owner.table.layout.helperColumns[index]
        let ownerKey = owner.table.fromColumns[index].map { owner.values[$0] }
        guard !ownerKey.contains(where: \.isNull), pair.from.allSatisfy({ Self.unnestable.contains(helper.types[$0]) }) else { return nil }
        let memberKey = graph.targetColumns(of: owner.entityIndex, index)
        var arrays: [any PostgresEncodable] = []
        for (column, memberColumn) in zip(pair.to, memberKey) {
            let type = helper.types[column]
            let values = rows.map { $0.values[memberColumn] }
            guard Self.unnestable.contains(type), !values.contains(where: \.isNull),
                case .typed(let array) = AttributeValue.keyList(values, columnType: type)
            else { return nil }
            arrays.append(array)
        }
        try requireValues(helper, columns: pair.from + pair.to)
        return Statements.insertPairs(
            into: helper.layout, pair: pair, owner: ownerKey.map(\.parameter), arrays: arrays, returning: returning,
            skippingExisting: skippingExisting)
    }

    /// Column types whose values' array (the Swift type's) goes into the column by an
    /// assignment cast or none; text into json or an enum, or a timestamptz into a date, would not.
    static let unnestable: Set<PostgresType> = [.int2, .int4, .int8, .float4, .float8, .numeric, .bool, .text, .varchar, .bpchar, .uuid, .bytea]

    /// A helper row written with only `columns` must get every other NOT NULL column from a default.
    func requireValues(_ helper: EntityTable, columns: [Int]) throws {
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
    func helperDelete(_ set: RelationshipSet, helper: EntityTable, member: DatabaseObject) -> Statement {
        Statements.deletePair(
            from: helper.layout, pair: set.owner.table.layout.helperColumns[set.relationshipIndex],
            values: helperKeyValues(set, member: member), keyed: helperIsKeyed(set.relationship, helper: helper))
    }

    /// Deletes the owner's pairs with every member but `kept` (`RETURNING` them).
    func helperDelete(owner: DatabaseObject, relationship index: Int, helper: EntityTable, keeping kept: [DatabaseObject]) -> Statement {
        let targetKey = graph.targetColumns(of: owner.entityIndex, index)
        return Statements.deletePairs(
            from: helper.layout, pair: owner.table.layout.helperColumns[index],
            owner: owner.table.fromColumns[index].map { owner.values[$0].parameter },
            keeping: targetKey.map { column in kept.map { $0.values[column] } })
    }
}
