import Foundation

/// The model as `relate inspect --format json` prints it, decoded without the `Relate` library: what the generator reads, from the
/// database (`relate generate`) or from a checked-in `relate-model.json` (the
/// `RelateGenerator` plugin). Fields added to the format after its first version are
/// optional here, so that an older snapshot still decodes.
///
/// ```swift
/// let snapshot = try ModelSnapshot(json: Data(contentsOf: url))
/// let files = try Generator(snapshot).files()
/// ```
public struct ModelSnapshot: Codable, Sendable, Hashable {
    /// Every entity (table, view…) of the model.
    public var entities: [Entity]
    /// Every relationship, once per direction.
    public var relationships: [Relationship]

    /// A table or view, with its columns in the table's order.
    public struct Entity: Codable, Sendable, Hashable {
        /// The table's schema.
        public var schema: String
        /// The table's name (without schema).
        public var name: String
        /// `table`, `view`, `partitioned-table`, `materialized-view` or `foreign-table`.
        public var kind: String
        /// The key's columns, in key order: the primary key, or the unique key or override
        /// ``keySource`` names; empty when there is none.
        public var primaryKey: [String]
        /// The columns, in the table's order.
        public var attributes: [Attribute]
        /// The entity's name in the model (`person`, or `schema.table`); absent in older
        /// snapshots (see ``ModelSnapshot/entityName(schema:table:)``).
        public var modelName: String?
        /// Where the key comes from: `primary-key`, `unique-constraint`, `unique-index`,
        /// `override` or `view`; absent when there is no key, and in older snapshots (a primary key then).
        public var keySource: String?
        /// The unique constraint's or index's name, for `unique-constraint` and `unique-index`;
        /// for `view`, the columns of the table the view carries (`email.id`).
        public var keyName: String?

        /// Creates an entity by hand (tests of the generator); decoding a snapshot makes them otherwise.
        ///
        /// - Parameters:
        ///   - schema: The table's schema.
        ///   - name: The table's name.
        ///   - kind: `table`, `view`, `materialized-view`…
        ///   - primaryKey: The primary key's columns.
        ///   - attributes: The columns.
        ///   - modelName: The entity's name in the model, when known.
        ///   - keySource: Where the key comes from, when known.
        ///   - keyName: The unique constraint's or index's name that is the key.
        public init(
            schema: String, name: String, kind: String = "table", primaryKey: [String], attributes: [Attribute], modelName: String? = nil,
            keySource: String? = nil, keyName: String? = nil
        ) {
            self.modelName = modelName
            self.keySource = keySource
            self.keyName = keyName
            self.schema = schema
            self.name = name
            self.kind = kind
            self.primaryKey = primaryKey
            self.attributes = attributes
        }
    }

    /// A column.
    public struct Attribute: Codable, Sendable, Hashable {
        /// The column's name.
        public var name: String
        /// The column's type as the catalog names it (`int4`, `varchar`, `text[]`, a
        /// domain's or an enum's own name).
        public var type: String
        /// Whether it may hold NULL.
        public var nullable: Bool
        /// The key the attribute answers to, when it is not the column's name (a
        /// relationship claimed the name).
        public var key: String?
        /// For a domain: the built-in type it is based on.
        public var baseType: String?
        /// For an enum type: its labels, in order.
        public var enumLabels: [String]?
        /// For a composite type (or an array of one): its fields.
        public var composite: Composite?

        /// Creates an attribute by hand.
        ///
        /// - Parameters:
        ///   - name: The column's name.
        ///   - type: Its type's name.
        ///   - nullable: Whether it accepts NULL.
        ///   - key: The key it answers to, when not its name.
        ///   - baseType: A domain's base type.
        ///   - enumLabels: An enum type's labels.
        public init(name: String, type: String, nullable: Bool, key: String? = nil, baseType: String? = nil, enumLabels: [String]? = nil) {
            self.name = name
            self.type = type
            self.nullable = nullable
            self.key = key
            self.baseType = baseType
            self.enumLabels = enumLabels
        }
    }

    /// A composite type, as a column (or a field) of it gives it.
    public struct Composite: Codable, Sendable, Hashable {
        /// The type's schema.
        public var schema: String
        /// The type's name.
        public var name: String
        /// The fields, in order.
        public var fields: [Field]

        /// - Parameters:
        ///   - schema: The type's schema.
        ///   - name: Its name.
        ///   - fields: Its fields.
        public init(schema: String, name: String, fields: [Field]) {
            self.schema = schema
            self.name = name
            self.fields = fields
        }
    }

    /// A field of a composite type.
    public struct Field: Codable, Sendable, Hashable {
        /// The field's name.
        public var name: String
        /// Its type's name (`int4`, `text[]`, a composite's name).
        public var type: String
        /// For a nested composite (or an array of one): its type.
        public var composite: Composite?
        /// For a field of an enum type: its labels, in order (the field gets the generated enum).
        public var enumLabels: [String]?

        /// - Parameters:
        ///   - name: The field's name.
        ///   - type: Its type's name.
        ///   - composite: Its composite type, when it is one.
        ///   - enumLabels: Its enum type's labels, when it is one.
        public init(name: String, type: String, composite: Composite? = nil, enumLabels: [String]? = nil) {
            self.name = name
            self.type = type
            self.composite = composite
            self.enumLabels = enumLabels
        }
    }

    /// A relationship as seen from its `from` entity.
    public struct Relationship: Codable, Sendable, Hashable {
        /// One side: its table and the columns joined on.
        public struct End: Codable, Sendable, Hashable {
            /// The table's schema.
            public var schema: String
            /// The table's name.
            public var table: String
            /// The columns joined on, in foreign-key order.
            public var columns: [String]

            /// Creates a relationship end by hand.
            ///
            /// - Parameters:
            ///   - schema: The table's schema.
            ///   - table: The table's name.
            ///   - columns: The columns joined on.
            public init(schema: String, table: String, columns: [String]) {
                self.schema = schema
                self.table = table
                self.columns = columns
            }
        }

        /// A many-to-many's helper table and its columns referring to each end.
        public struct Via: Codable, Sendable, Hashable {
            /// The helper table's schema.
            public var schema: String
            /// The helper table's name.
            public var table: String
            /// The helper's columns that refer to `from`.
            public var fromColumns: [String]
            /// The helper's columns that refer to `to`.
            public var toColumns: [String]

            /// Creates a helper table description by hand.
            ///
            /// - Parameters:
            ///   - schema: The helper table's schema.
            ///   - table: Its name.
            ///   - fromColumns: Its columns that refer to `from`.
            ///   - toColumns: Its columns that refer to `to`.
            public init(schema: String, table: String, fromColumns: [String], toColumns: [String]) {
                self.schema = schema
                self.table = table
                self.fromColumns = fromColumns
                self.toColumns = toColumns
            }
        }

        /// The key it answers to on its `from` entity.
        public var key: String
        /// `many-to-one`, `one-to-many`, `one-to-one` or `many-to-many`.
        public var kind: String
        /// The side it is seen from.
        public var from: End
        /// The side it leads to.
        public var to: End
        /// The helper table, for a many-to-many.
        public var via: Via?
        /// `from`, `to` or `via`: which side holds the foreign key.
        public var foreignKeyIn: String
        /// The foreign key constraint (for many-to-many: the helper's key to `to`).
        public var constraint: String
        /// What made it: `foreign-key`, `keyed`, `override`…
        public var rule: String
        /// The inverse relationship's key on the `to` entity.
        public var inverse: String

        /// Creates a relationship by hand.
        ///
        /// - Parameters:
        ///   - key: The name it answers to.
        ///   - kind: `many-to-one`, `one-to-many`, `one-to-one` or `many-to-many`.
        ///   - from: The end at its entity.
        ///   - to: The end it leads to.
        ///   - via: The helper table, for many-to-many.
        ///   - foreignKeyIn: `from`, `to` or `via`.
        ///   - constraint: The foreign key's name.
        ///   - rule: What made it.
        ///   - inverse: The inverse's key on the `to` entity.
        public init(
            key: String, kind: String, from: End, to: End, via: Via? = nil, foreignKeyIn: String, constraint: String = "",
            rule: String = "foreign-key", inverse: String = ""
        ) {
            self.key = key
            self.kind = kind
            self.from = from
            self.to = to
            self.via = via
            self.foreignKeyIn = foreignKeyIn
            self.constraint = constraint
            self.rule = rule
            self.inverse = inverse
        }

        /// Whether the relationship leads to many objects.
        public var isToMany: Bool { kind == "one-to-many" || kind == "many-to-many" }
    }

    /// Creates a snapshot by hand (tests of the generator).
    ///
    /// - Parameters:
    ///   - entities: The model's entities.
    ///   - relationships: Its relationships, each direction on its own.
    public init(entities: [Entity], relationships: [Relationship]) {
        self.entities = entities
        self.relationships = relationships
    }

    /// Decodes the JSON of `relate inspect --format json`.
    ///
    /// - Parameter json: the file's bytes.
    /// - Throws: `DecodingError` when the JSON is not of that format.
    public init(json: Data) throws {
        self = try JSONDecoder().decode(ModelSnapshot.self, from: json)
    }

    /// The schema whose tables are named without schema, for a snapshot whose entities do
    /// not give their model names: the schema that holds the most tables (the smallest
    /// name on a tie).
    public var firstSchema: String {
        var counts: [String: Int] = [:]
        for entity in entities { counts[entity.schema, default: 0] += 1 }
        return counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.first?.key ?? "public"
    }

    /// The name the model gives the entity of `schema.table`: as the snapshot says, else its
    /// table's name in the first schema and `schema.table` in others.
    ///
    /// - Parameters:
    ///   - schema: The table's schema.
    ///   - table: The table's name.
    /// - Returns: The entity's name in the model.
    public func entityName(schema: String, table: String) -> String {
        if let entity = entities.first(where: { $0.schema == schema && $0.name == table }), let name = entity.modelName {
            return name
        }
        return schema == firstSchema ? table : "\(schema).\(table)"
    }
}
