import Foundation
import RelatePostgres

/// The stable, machine-readable description of a model that `relate inspect --format json`
/// prints (DESIGN "`relate inspect --format json`"). Other tools decode it with these types.
public struct ModelDescription: Codable, Sendable, Hashable {
    public var entities: [EntityDescription]
    public var relationships: [RelationshipDescription]

    public struct EntityDescription: Codable, Sendable, Hashable {
        public var schema: String
        public var name: String
        public var kind: String
        public var primaryKey: [String]
        public var attributes: [AttributeDescription]
        /// The entity's name in the model (`person`, or `schema.table` outside the first
        /// schema), for the typed-model generator; absent in older files.
        public var modelName: String? = nil
    }

    public struct AttributeDescription: Codable, Sendable, Hashable {
        public var name: String
        public var type: String
        public var nullable: Bool
        /// The key the attribute answers to, when it is not the column's name.
        public var key: String? = nil
        /// A domain's built-in base type, the type its values read as.
        public var baseType: String? = nil
        /// An enum type's labels, in order.
        public var enumLabels: [String]? = nil
    }

    public struct RelationshipDescription: Codable, Sendable, Hashable {
        public struct End: Codable, Sendable, Hashable {
            public var schema: String
            public var table: String
            public var columns: [String]
        }
        public struct Via: Codable, Sendable, Hashable {
            public var schema: String
            public var table: String
            public var fromColumns: [String]
            public var toColumns: [String]
        }
        public var key: String
        public var kind: String
        public var from: End
        public var to: End
        public var via: Via?
        public var foreignKeyIn: String
        public var constraint: String
        public var rule: String
        /// The inverse relationship's key on the `to` entity.
        public var inverse: String
    }

    public init(_ model: Model) {
        entities = model.entities.map { entity in
            EntityDescription(
                schema: entity.schema, name: entity.table, kind: entity.kind.rawValue, primaryKey: entity.primaryKey,
                attributes: entity.attributes.map { attribute in
                    let base = PostgresType(attribute.typeOID).description
                    return AttributeDescription(
                        name: attribute.name, type: attribute.type, nullable: attribute.isNullable,
                        key: attribute.key == attribute.name ? nil : attribute.key,
                        baseType: base == attribute.type || base.hasPrefix("oid ") ? nil : base, enumLabels: attribute.enumLabels)
                }, modelName: entity.name)
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
    public func jsonDescription() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(ModelDescription(self)), as: UTF8.self)
    }
}
