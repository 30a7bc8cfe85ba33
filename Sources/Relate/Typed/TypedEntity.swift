import Foundation

/// What a generated type was made from: its entity's name, attributes and relationships as
/// the model described them, and their fingerprint. The generated code holds one as its
/// static `entity`; the first use of the type in a context checks it against the live
/// model (see ``DatabaseContext/check(_:)-(TypedEntity)``).
///
/// ```swift
/// public static let entity = TypedEntity(
///     name: "email",
///     attributes: [TypedAttribute(name: "id", type: "int4", nullable: false), …],
///     relationships: [TypedRelationship(key: "person", kind: "many-to-one", target: "person",
///                                       columns: ["person_id"], targetColumns: ["id"])],
///     fingerprint: "3c9f…")
/// ```
public struct TypedEntity: Sendable, Hashable {
    /// The entity's name in the model (`person`, or `schema.table`).
    public let name: String
    /// Every column, in the table's order: generated getters read them by position.
    public let attributes: [TypedAttribute]
    /// The relationships the generated type reaches, by key.
    public let relationships: [TypedRelationship]
    /// A hash of the above (FNV-1a over their canonical text), as the generator computed it.
    public let fingerprint: String

    /// - Parameters:
    ///   - name: the entity's name in the model.
    ///   - attributes: every column, in the table's order.
    ///   - relationships: the relationships the generated type reaches.
    ///   - fingerprint: the generator's hash of them.
    public init(name: String, attributes: [TypedAttribute], relationships: [TypedRelationship], fingerprint: String) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.fingerprint = fingerprint
    }
}

/// A column as a generated type knows it.
public struct TypedAttribute: Sendable, Hashable {
    /// The column's name.
    public let name: String
    /// The key it answers to (the column's name unless a relationship claimed it).
    public let key: String
    /// The type's name as the catalog gives it (`int4`, `varchar`, a domain's own name).
    public let type: String
    /// Whether the column may hold NULL.
    public let nullable: Bool
    /// For an enum column (or an array of one): the labels its generated enum has.
    public let enumLabels: [String]?
    /// For a composite column (or an array of one): its generated struct's fields, each
    /// `name type`, in order.
    public let compositeFields: [String]?

    /// - Parameters:
    ///   - name: the column's name.
    ///   - key: the key it answers to; the column's name when `nil`.
    ///   - type: the catalog's name of its type.
    ///   - nullable: whether it may hold NULL.
    ///   - enumLabels: for an enum column, the labels of its generated enum.
    ///   - compositeFields: for a composite column, its generated struct's fields (`name type`).
    public init(name: String, key: String? = nil, type: String, nullable: Bool, enumLabels: [String]? = nil, compositeFields: [String]? = nil) {
        self.compositeFields = compositeFields
        self.name = name
        self.key = key ?? name
        self.type = type
        self.nullable = nullable
        self.enumLabels = enumLabels
    }
}

/// A relationship as a generated type knows it: its key and where it leads.
public struct TypedRelationship: Sendable, Hashable {
    /// The key it answers to (`email`, `book_by_authorId`).
    public let key: String
    /// `many-to-one`, `one-to-many`, `one-to-one` or `many-to-many` (``Relationship/Kind``'s raw values).
    public let kind: String
    /// The target entity's name in the model.
    public let target: String
    /// This entity's columns it joins on.
    public let columns: [String]
    /// The target's columns it joins on.
    public let targetColumns: [String]
    /// The helper entity's name, for a many-to-many.
    public let via: String?

    /// - Parameters:
    ///   - key: the relationship's key.
    ///   - kind: ``Relationship/Kind``'s raw value.
    ///   - target: the target entity's name.
    ///   - columns: this entity's columns joined on.
    ///   - targetColumns: the target's columns joined on.
    ///   - via: the helper entity's name, for a many-to-many.
    public init(key: String, kind: String, target: String, columns: [String], targetColumns: [String], via: String? = nil) {
        self.key = key
        self.kind = kind
        self.target = target
        self.columns = columns
        self.targetColumns = targetColumns
        self.via = via
    }
}

/// One attribute a typed `update` changes: its index and its new value.
public struct TypedChange {
    /// The attribute's index in its entity (the column's position).
    public let index: Int
    /// The new value, `nil` for NULL.
    public let value: (any Sendable)?

    /// - Parameters:
    ///   - index: the attribute's index.
    ///   - value: its new value.
    public init<Value: Sendable>(index: Int, value: Value) {
        self.index = index
        self.value = TypedValue.flattened(value)
    }
}

/// Optional values taken apart, so that `String?.none` is NULL and not a value.
@usableFromInline
enum TypedValue {
    /// `value`, or what it wraps when it is an optional (`nil` for none). The types of
    /// DESIGN's mapping come out as themselves (a cast from `Any` looks through optionals);
    /// another type comes out as given.
    @usableFromInline
    static func flattened<Value: Sendable>(_ value: Value) -> (any Sendable)? {
        let any = value as Any
        if let optional = any as? any TypedOptional, optional.isNone { return nil }
        switch any {
        case let value as Int: return value
        case let value as String: return value
        case let value as Double: return value
        case let value as Float: return value
        case let value as Bool: return value
        case let value as Date: return value
        case let value as UUID: return value
        case let value as Data: return value
        case let value as Decimal: return value
        case let value as [Int]: return value
        case let value as [String]: return value
        case let value as [Double]: return value
        case let value as [Float]: return value
        case let value as [Bool]: return value
        case let value as [Date]: return value
        case let value as [UUID]: return value
        case let value as [Data]: return value
        case let value as [Decimal]: return value
        case let value as any TypedEnum: return value.rawValue
        case let value as [any TypedEnum]: return value.map { $0.rawValue }
        default: return value
        }
    }
}

@usableFromInline
protocol TypedOptional {
    /// Whether this optional, or one it wraps, holds nothing.
    var isNone: Bool { get }
}

extension Optional: TypedOptional {
    @usableFromInline var isNone: Bool {
        guard let value = self else { return true }
        return (value as? any TypedOptional)?.isNone ?? false
    }
}
