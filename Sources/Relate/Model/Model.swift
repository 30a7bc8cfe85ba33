/// The object graph over a catalog: entities with attributes and relationships, inferred
/// from foreign keys, unique keys and helper tables. Built by a pure function of the
/// catalog and the options; no I/O.
///
/// ```swift
/// let model = try Model(catalog: Catalog.introspect(connection))
/// let email = try model.entity("person").relationship(forKey: "email")   // one-to-many
/// ```
public struct Model: Sendable, Hashable {
    /// The schemas the catalog read; tables of the first are named without schema.
    public let schemas: [String]
    /// The rule the model recognised many-to-many helper tables by (``ModelOptions/manyToMany``).
    public let manyToManyRule: ManyToManyRule
    /// The model's entities, one per table or view, sorted by name.
    public let entities: [Entity]
    private let index: [String: Int]

    /// Builds the model of a catalog: entities named, relationships inferred from foreign keys,
    /// unique keys and helper tables, then the overrides applied. A pure function, no I/O.
    ///
    /// ```swift
    /// let connection = try Connection(url: "postgresql://me@localhost/app")
    /// let model = try Model(
    ///     catalog: Catalog.introspect(connection),
    ///     options: ModelOptions(manyToMany: .strict, overrides: [.ignore("audit_log")]))
    /// let books = try model.entity("person").relationship(forKey: "book")
    /// ```
    ///
    /// - Parameters:
    ///   - catalog: What the server's catalog says about the schemas (``Catalog/introspect(_:schemas:)``).
    ///   - options: The many-to-many rule and the overrides; the defaults when left out.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidOverride`` when an override
    ///   names a table, column or key the catalog does not have.
    public init(catalog: Catalog, options: ModelOptions = ModelOptions()) throws(RelateError) {
        let built = try ModelBuilder(catalog: catalog, options: options).build()
        schemas = catalog.schemas
        manyToManyRule = options.manyToMany
        entities = built
        var index: [String: Int] = [:]
        for (position, entity) in built.enumerated() {
            index["\(entity.schema).\(entity.table)"] = position
            index[entity.name] = position
        }
        self.index = index
    }

    /// The entity called `name` (`person`, or `schema.table`); an unknown name throws an
    /// error with the nearest names.
    ///
    /// - Parameter name: The entity's name: the table's name in the first schema, else `schema.table`.
    /// - Returns: The entity.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/unknownEntity``.
    public func entity(_ name: String) throws(RelateError) -> Entity {
        guard let position = index[name] else {
            throw .unknownEntity(name, existing: entities.map(\.name))
        }
        return entities[position]
    }

    /// The index in ``entities`` of the entity called `name`.
    func position(of name: String) throws(RelateError) -> Int {
        guard let position = index[name] else {
            throw .unknownEntity(name, existing: entities.map(\.name))
        }
        return position
    }

    /// The entity of `schema.table`, if the model has it.
    ///
    /// - Parameters:
    ///   - schema: The table's schema.
    ///   - table: The table's name.
    /// - Returns: The entity, or `nil`.
    public func entity(schema: String, table: String) -> Entity? {
        index["\(schema).\(table)"].map { entities[$0] }
    }

    /// Every relationship of every entity: each appears once per direction.
    public var relationships: [Relationship] {
        entities.flatMap(\.relationships)
    }
}
