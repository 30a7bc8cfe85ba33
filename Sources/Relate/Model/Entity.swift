/// A table or view as the model presents it: attributes and relationships by key.
public struct Entity: Sendable, Hashable {
    public let schema: String
    public let table: String
    /// The name the model uses: the table's name in the first schema searched, else
    /// `schema.table`.
    public let name: String
    public let kind: Catalog.Table.Kind
    /// Primary key columns; empty for views and tables without one.
    public let primaryKey: [String]
    /// Columns of the other unique keys.
    public let uniqueKeys: [[String]]
    public internal(set) var attributes: [Attribute]
    public internal(set) var relationships: [Relationship]
    /// Every name a key answers to, and what it names.
    var keys: [String: KeyTarget] = [:]

    enum KeyTarget: Sendable, Hashable {
        case attribute(Int)
        case relationship(Int)
        case ambiguous([String])
    }

    /// What a key names.
    public enum Property: Sendable, Hashable {
        case attribute(Attribute)
        case relationship(Relationship)
    }

    init(table: Catalog.Table, name: String) {
        schema = table.schema
        self.table = table.name
        self.name = name
        kind = table.kind
        primaryKey = table.primaryKey
        uniqueKeys = table.uniqueKeys.map(\.columns)
        attributes = table.columns.map(Attribute.init)
        relationships = []
    }

    /// Every unambiguous name this entity answers to, sorted.
    public var keyNames: [String] {
        keys.compactMap { name, target in
            if case .ambiguous = target { return nil }
            return name
        }.sorted()
    }

    /// The attribute or relationship `key` names; an unknown key throws an error with the
    /// nearest names, an ambiguous one an error with the qualified names to use.
    public func property(forKey key: String) throws(RelateError) -> Property {
        switch keys[key] {
        case .attribute(let index): return .attribute(attributes[index])
        case .relationship(let index): return .relationship(relationships[index])
        case .ambiguous(let candidates): throw .ambiguousKey(key, entity: name, candidates: candidates)
        case nil: throw .unknownKey(key, entity: name, existing: keyNames)
        }
    }

    public func relationship(forKey key: String) throws(RelateError) -> Relationship {
        switch try property(forKey: key) {
        case .relationship(let relationship): return relationship
        case .attribute(let attribute):
            throw RelateError(
                kind: .unknownKey,
                message: "key \"\(key)\" of entity \"\(name)\" is the attribute \"\(attribute.name)\", not a relationship; relationships: "
                    + relationships.map(\.key).joined(separator: ", "),
                entity: name, key: key, candidates: relationships.map(\.key))
        }
    }

    public func attribute(forKey key: String) throws(RelateError) -> Attribute {
        switch try property(forKey: key) {
        case .attribute(let attribute): return attribute
        case .relationship(let relationship):
            throw RelateError(
                kind: .unknownKey,
                message: "key \"\(key)\" of entity \"\(name)\" is the relationship \"\(relationship.qualifiedName)\", not an attribute",
                entity: name, key: key, candidates: attributes.map(\.key))
        }
    }

    /// The attribute for a column name, whatever key it answers to.
    public func attribute(column: String) -> Attribute? {
        attributes.first { $0.name == column }
    }
}
