import Foundation
import RelatePostgres

/// The stable, machine-readable description of a model that `relate inspect --format json`
/// prints (see <doc:CommandLine>). Other tools decode it with these types.
public struct ModelDescription: Codable, Sendable, Hashable {
    /// Every entity of the model, sorted by name.
    public var entities: [EntityDescription]
    /// Every relationship of the model, each direction on its own (a relationship and its
    /// inverse are two entries).
    public var relationships: [RelationshipDescription]

    /// An entity: its table, kind, primary key and attributes.
    public struct EntityDescription: Codable, Sendable, Hashable {
        /// The table's schema.
        public var schema: String
        /// The table's name in the catalog.
        public var name: String
        /// The ``Catalog/Table/Kind`` raw value: `table`, `view`, `materialized-view`…
        public var kind: String
        /// The key's columns in key order (``Entity/primaryKey``: the primary key, or the
        /// unique key or override `keySource` names); empty when there is none.
        public var primaryKey: [String]
        /// The columns, in table order.
        public var attributes: [AttributeDescription]
        /// The entity's name in the model (`person`, or `schema.table` outside the first
        /// schema), for the typed-model generator; absent in older files.
        public var modelName: String? = nil
        /// The ``Entity/KeySource`` raw value: `primary-key`, `unique-constraint`,
        /// `unique-index`, `override` or `view`; absent when the entity has no key, and in older files.
        public var keySource: String? = nil
        /// The unique constraint's or index's name, for `unique-constraint` and `unique-index`;
        /// for `view`, the columns of the table the view carries (`email.id`).
        public var keyName: String? = nil
        /// For a table that `INHERITS` from another: the parent entity's model name.
        public var parent: String? = nil
    }

    /// A column of an entity.
    public struct AttributeDescription: Codable, Sendable, Hashable {
        /// The column's name.
        public var name: String
        /// The column's type name (`int4`, `text[]`, a user type's name).
        public var type: String
        /// Whether the column accepts NULL.
        public var nullable: Bool
        /// The key the attribute answers to, when it is not the column's name.
        public var key: String? = nil
        /// A domain's built-in base type, the type its values read as.
        public var baseType: String? = nil
        /// An enum type's labels, in order.
        public var enumLabels: [String]? = nil
        /// A composite type's (or its array's element type's) fields.
        public var composite: CompositeDescription? = nil
    }

    /// A composite type: its name and fields, for the generator's structs.
    public struct CompositeDescription: Codable, Sendable, Hashable {
        /// The type's schema.
        public var schema: String
        /// The type's name.
        public var name: String
        /// The fields, in order.
        public var fields: [FieldDescription]

        init(_ type: Catalog.CompositeType) {
            schema = type.schema
            name = type.name
            fields = type.fields.map {
                FieldDescription(name: $0.name, type: $0.type, composite: $0.composite.map(CompositeDescription.init), enumLabels: $0.enumLabels)
            }
        }
    }

    /// A field of a composite type.
    public struct FieldDescription: Codable, Sendable, Hashable {
        /// The field's name.
        public var name: String
        /// Its type's name (`int4`, `text[]`, a composite's name).
        public var type: String
        /// For a nested composite (or an array of one): its type.
        public var composite: CompositeDescription? = nil
        /// For a field of an enum type: its labels, in order.
        public var enumLabels: [String]? = nil
    }

    /// A relationship from one entity to another: the JSON form of ``Relationship``.
    public struct RelationshipDescription: Codable, Sendable, Hashable {
        /// One end: a table and the columns joined on there.
        public struct End: Codable, Sendable, Hashable {
            /// The table's schema.
            public var schema: String
            /// The table's name.
            public var table: String
            /// The columns joined on at this end.
            public var columns: [String]
        }
        /// The helper table of a many-to-many relationship.
        public struct Via: Codable, Sendable, Hashable {
            /// The helper table's schema.
            public var schema: String
            /// The helper table's name.
            public var table: String
            /// The helper's columns that refer to `from`.
            public var fromColumns: [String]
            /// The helper's columns that refer to `to`.
            public var toColumns: [String]
        }
        /// The name the relationship answers to on the `from` entity.
        public var key: String
        /// The ``Relationship/Kind`` raw value: `many-to-one`, `one-to-many`, `one-to-one`, `many-to-many`.
        public var kind: String
        /// The end at the relationship's entity.
        public var from: End
        /// The end at the entity it leads to.
        public var to: End
        /// The helper table, for many-to-many; absent otherwise.
        public var via: Via?
        /// The ``Relationship/Side`` raw value: `from`, `to` or `via`.
        public var foreignKeyIn: String
        /// The foreign key constraint's name (for many-to-many, the helper's key that refers to `to`).
        public var constraint: String
        /// The ``Relationship/Rule`` raw value: what made the relationship.
        public var rule: String
        /// The inverse relationship's key on the `to` entity.
        public var inverse: String
    }

    /// Describes a model, as `relate inspect --format json` prints it.
    ///
    /// - Parameter model: The model to describe.
    public init(_ model: Model) {
        entities = model.entities.map { entity in
            EntityDescription(
                schema: entity.schema, name: entity.table, kind: entity.kind.rawValue, primaryKey: entity.primaryKey,
                attributes: entity.attributes.map { attribute in
                    let base = PostgresType(attribute.typeOID).description
                    return AttributeDescription(
                        name: attribute.name, type: attribute.type, nullable: attribute.isNullable,
                        key: attribute.key == attribute.name ? nil : attribute.key,
                        baseType: base == attribute.type || base.hasPrefix("oid ") ? nil : base, enumLabels: attribute.enumLabels,
                        composite: attribute.composite.map(CompositeDescription.init))
                }, modelName: entity.name, keySource: entity.keySource?.rawValue, keyName: entity.keyName,
                parent: entity.parent)
        }
        relationships = model.relationships.map { relationship in
            RelationshipDescription(
                key: relationship.key, kind: relationship.kind.rawValue,
                from: RelationshipDescription.End(schema: relationship.from.schema, table: relationship.from.table, columns: relationship.from.columns),
                to: RelationshipDescription.End(schema: relationship.to.schema, table: relationship.to.table, columns: relationship.to.columns),
                via: relationship.via.map {
                    RelationshipDescription.Via(schema: $0.schema, table: $0.table, fromColumns: $0.fromColumns, toColumns: $0.toColumns)
                },
                foreignKeyIn: relationship.foreignKeyIn.rawValue, constraint: relationship.constraint,
                rule: relationship.rule.rawValue, inverse: relationship.inverseKey)
        }
    }
}

extension Model {
    /// The model in the JSON format of `relate inspect --format json`, keys sorted.
    ///
    /// - Returns: The JSON text, pretty-printed.
    /// - Throws: An `EncodingError`, which a model's values do not cause in practice.
    public func jsonDescription() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(ModelDescription(self)), as: UTF8.self)
    }
}
