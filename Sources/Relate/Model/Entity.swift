/// A table or view as the model presents it: attributes and relationships by key.
public struct Entity: Sendable, Hashable {
    /// The schema that holds the table.
    public let schema: String
    /// The table's (or view's) name in the catalog.
    public let table: String
    /// The name the model uses: the table's name in the first schema searched, else
    /// `schema.table`.
    public let name: String
    /// Whether the entity is a table, a view, a materialized view…
    public let kind: Catalog.Table.Kind
    /// The columns that identify a row, in key order: the primary key; for a table without
    /// one, the unique key ``keySource`` names; for a view, the key of a table it carries
    /// (see <doc:Relationships>); empty when nothing identifies a row (an aggregate view),
    /// and then the entity is read-only.
    public let primaryKey: [String]
    /// Where ``primaryKey`` comes from; `nil` when the entity has no key.
    public let keySource: KeySource?
    /// The name of the unique constraint or index that is the key, when ``keySource`` is
    /// ``KeySource/uniqueConstraint`` or ``KeySource/uniqueIndex``; for
    /// ``KeySource/view``, the columns of the table the view's key is (`email.id`,
    /// `towns.code, towns.department`); `nil` otherwise.
    public let keyName: String?
    /// Columns of the other unique keys.
    public let uniqueKeys: [[String]]
    /// For a table that `INHERITS` from another: the parent entity's name (the first table
    /// its `INHERITS` clause names, when the model has it); `nil` otherwise. The parent's
    /// foreign keys apply to the child where it carries their columns.
    public internal(set) var parent: String? = nil
    /// The tables that inherit from this entity's, directly, whether the model has them or
    /// not: their rows are in the table's, and a statement keeps to the rows of the entity
    /// and of the descendants the model has (see `EntityLayout.ownTables`).
    var children: [QualifiedName] = []
    /// For a view or materialized view: the entities its query reads (its `FROM`'s tables
    /// and views that the model has), by name, in the order the query names them; empty
    /// for a table. A live query over a view is read again when they change.
    public internal(set) var reads: [String] = []
    /// What PostgreSQL lets a statement do to the entity's relation: everything for a table;
    /// for a view, what it can update (a simple view, or `INSTEAD OF` triggers or rules); nothing
    /// for a materialized view. A write it does not allow throws before any statement is sent.
    public let allowedWrites: Catalog.WriteOperations
    /// The writes a view's `DO INSTEAD` rule takes without `RETURNING` (see
    /// ``Catalog/Table/writesWithoutReturning``): an insert or update is refused before it is sent.
    let writesWithoutReturning: Catalog.WriteOperations
    /// The columns of every unique index, partial ones too, with whether it counts NULLs as
    /// equal: the values two rows cannot hold at once, which order a save's writes.
    let valuesHeldOnce: [HeldOnce]

    /// Columns no two rows hold the same values in (``valuesHeldOnce``).
    struct HeldOnce: Sendable, Hashable {
        let columns: [String]
        let nullsNotDistinct: Bool
        /// For a partial index: the columns its predicate reads; `nil` for a key.
        var predicateColumns: [String]? = nil
    }

    /// Whether the database may store other than what an `UPDATE` sends
    /// (``Catalog/Table/rewritesUpdates``; not known counts as yes).
    let rewritesUpdates: Bool
    /// Whether an `INSERT` may store fewer rows than it sends (``Catalog/Table/dropsInserts``;
    /// not known counts as yes).
    let dropsInserts: Bool
    /// The entity's columns as attributes, in table order.
    public internal(set) var attributes: [Attribute]
    /// The relationships from this entity to others (and to itself), each with an inverse on
    /// the entity it leads to.
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
        /// The key names a column.
        case attribute(Attribute)
        /// The key names a relationship.
        case relationship(Relationship)
    }

    init(table: Catalog.Table, name: String, key: IdentityKey?) {
        schema = table.schema
        self.table = table.name
        self.name = name
        kind = table.kind
        let columns = key?.columns ?? []
        primaryKey = columns
        keySource = key?.source
        keyName = key?.name
        uniqueKeys = table.uniqueKeys.map(\.columns).filter { $0 != columns }
        valuesHeldOnce = (table.primaryKey.isEmpty ? [] : [HeldOnce(columns: table.primaryKey, nullsNotDistinct: false)])
            + table.uniqueKeys.map { HeldOnce(columns: $0.columns, nullsNotDistinct: $0.nullsNotDistinct ?? false) }
            + (table.partialUniqueKeys ?? []).map {
                HeldOnce(columns: $0.columns, nullsNotDistinct: $0.nullsNotDistinct ?? false, predicateColumns: $0.predicateColumns ?? [])
            }
        allowedWrites = table.allowedWrites ?? (table.kind == .materializedView ? [] : .all)
        writesWithoutReturning = table.writesWithoutReturning ?? []
        rewritesUpdates = table.rewritesUpdates ?? true
        dropsInserts = table.dropsInserts ?? true
        attributes = table.columns.map(Attribute.init)
        relationships = []
        children = (table.children ?? []).map { QualifiedName($0.schema, $0.name) }
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
    ///
    /// ```swift
    /// switch try model.entity("email").property(forKey: "person") {
    /// case .attribute(let attribute): print("column", attribute.name)
    /// case .relationship(let relationship): print("to", relationship.to.table)   // to person
    /// }
    /// ```
    ///
    /// - Parameter key: Any name the attribute or relationship answers to.
    /// - Returns: What the key names.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/unknownKey`` or
    ///   ``RelateError/Kind-swift.struct/ambiguousKey``.
    public func property(forKey key: String) throws(RelateError) -> Property {
        switch keys[key] {
        case .attribute(let index): return .attribute(attributes[index])
        case .relationship(let index): return .relationship(relationships[index])
        case .ambiguous(let candidates): throw .ambiguousKey(key, entity: name, candidates: candidates)
        case nil: throw .unknownKey(key, entity: name, existing: keyNames)
        }
    }

    /// The relationship `key` names.
    ///
    /// ```swift
    /// let emails = try model.entity("person").relationship(forKey: "email")
    /// print(emails.kind, emails.to.table)   // oneToMany email
    /// ```
    ///
    /// - Parameter key: Any name the relationship answers to: its key, name, qualified name
    ///   or an alias.
    /// - Returns: The relationship.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/unknownKey`` when the key is
    ///   unknown or names an attribute, ``RelateError/Kind-swift.struct/ambiguousKey`` when several
    ///   relationships share it (the error lists their qualified names).
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

    /// The attribute `key` names.
    ///
    /// - Parameter key: The attribute's key: its column's name, or `<column>_column` when a
    ///   relationship has the same name.
    /// - Returns: The attribute.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/unknownKey`` when the key is
    ///   unknown or names a relationship, ``RelateError/Kind-swift.struct/ambiguousKey`` when it is ambiguous.
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
    ///
    /// - Parameter column: The column's name, as in the catalog.
    /// - Returns: The attribute, or `nil` when the entity has no such column.
    public func attribute(column: String) -> Attribute? {
        attributes.first { $0.name == column }
    }
}
