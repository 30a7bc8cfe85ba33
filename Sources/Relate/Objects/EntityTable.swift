import RelatePostgres

/// The SQL pieces of one entity, quoted once per context: its table, its select list and
/// how to find a row by key. Values are always bound; only quoted identifiers appear here.
/// Shared by the entity's objects, immutable.
@usableFromInline
final class EntityTable {
    /// The context the table was made for. Its objects reach the context through here, so
    /// that they hold no reference of their own to it (one weak reference per object costs
    /// a side-table update on every fetch and free).
    weak var context: DatabaseContext?
    let entity: Entity
    /// The entity's index in the model.
    let index: Int
    /// `"schema"."table"`.
    let table: String
    /// Quoted column names, by attribute index.
    let columns: [String]
    /// Each attribute's type, by attribute index.
    let types: [PostgresType]
    /// Whether the attribute is read through `::text` (types without a binary decoder).
    let readsAsText: [Bool]
    /// Attribute indexes of the primary key, in key order.
    let primaryKey: [Int]
    /// `entity.keys`, kept here so that resolving a key does not copy the `Entity`.
    let keys: [String: Entity.KeyTarget]
    /// Each attribute's key, by attribute index: for an entity's handful of columns a scan
    /// of these short strings is cheaper than hashing the key.
    @usableFromInline let attributeKeys: [String]
    /// Whether each relationship is to-many, by relationship index.
    let isToMany: [Bool]
    /// Each relationship's `from.columns` as attribute indexes, by relationship index.
    let fromColumns: [[Int]]
    /// The relationships whose foreign key this table holds, with the key's attribute indexes.
    let foreignKeys: [(relationship: Int, columns: [Int])]

    init(entity: Entity, index: Int, quote: (String) throws -> String) throws {
        self.entity = entity
        self.index = index
        table = try quote(entity.schema) + "." + quote(entity.table)
        columns = try entity.attributes.map { try quote($0.name) }
        types = entity.attributes.map { PostgresType($0.typeOID) }
        readsAsText = types.map { !Self.hasBinaryDecoder($0) }
        primaryKey = entity.primaryKey.compactMap { column in entity.attributes.firstIndex { $0.name == column } }
        keys = entity.keys
        attributeKeys = entity.attributes.map(\.key)
        isToMany = entity.relationships.map(\.isToMany)
        let attributes = entity.attributes
        let fromColumns = entity.relationships.map { relationship in
            relationship.from.columns.compactMap { name in attributes.firstIndex { $0.name == name } }
        }
        self.fromColumns = fromColumns
        foreignKeys = entity.relationships.indices.compactMap { index in
            entity.relationships[index].foreignKeyIn == .from ? (index, fromColumns[index]) : nil
        }
    }

    /// The attribute `key` names, if it names one. Inlinable: every typed read starts here.
    @inlinable @inline(__always)
    func attributeIndex(forKey key: String) -> Int? {
        guessedAttributeIndex(forKey: key) ?? searchAttributeIndex(forKey: key)
    }

    /// The attribute `key` names when it is the one after the attribute found last, else
    /// `nil`. Reads tend to go through the attributes in order, so this one comparison is
    /// usually all a read costs.
    @inlinable @inline(__always)
    func guessedAttributeIndex(forKey key: String) -> Int? {
        let guess = nextGuess
        guard guess < attributeKeys.count, attributeKeys[guess] == key else { return nil }
        nextGuess = guess + 1 < attributeKeys.count ? guess + 1 : 0
        return guess
    }

    @usableFromInline
    func searchAttributeIndex(forKey key: String) -> Int? {
        if attributeKeys.count <= 16 {
            guard let index = attributeKeys.firstIndex(of: key) else { return nil }
            nextGuess = index + 1 < attributeKeys.count ? index + 1 : 0
            return index
        }
        if case .attribute(let index)? = keys[key] { return index }
        return nil
    }

    /// Where ``attributeIndex(forKey:)`` looks first. Touched only from the context's
    /// thread, never in overlapping accesses.
    @exclusivity(unchecked) @usableFromInline var nextGuess = 0

    /// Types ``PostgresValue`` reads in binary form; anything else is read as text.
    static func hasBinaryDecoder(_ type: PostgresType) -> Bool {
        switch type {
        case .int2, .int4, .int8, .oid, .float4, .float8, .numeric, .bool, .date, .timestamp, .timestamptz, .uuid,
            .bytea, .text, .varchar, .bpchar, .name, .char, .json, .jsonb:
            return true
        default:
            return type.arrayElement.map(hasBinaryDecoder) ?? false
        }
    }

    /// The columns in attribute order, qualified by `alias` when given.
    func selectList(alias: String? = nil) -> String {
        columns.indices.map { index in
            let column = alias.map { "\($0).\(columns[index])" } ?? columns[index]
            return readsAsText[index] ? "\(column)::text" : column
        }.joined(separator: ", ")
    }

    /// `"a" = $n AND "b" = $n+1` for the given attribute indexes, parameters from `start`.
    func condition(_ attributes: [Int], alias: String? = nil, start: Int = 1) -> String {
        attributes.enumerated().map { offset, index in
            (alias.map { "\($0)." } ?? "") + "\(columns[index]) = $\(start + offset)"
        }.joined(separator: " AND ")
    }

    func attributeIndexes(_ columnNames: [String]) -> [Int] {
        columnNames.compactMap { name in entity.attributes.firstIndex { $0.name == name } }
    }
}
