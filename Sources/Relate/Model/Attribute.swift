import RelatePostgres

/// A column of an entity, as a key.
public struct Attribute: Sendable, Hashable {
    /// The column's name.
    public let name: String
    /// The name it answers to: the column's name, unless a relationship claims the same
    /// name (then `<column>_column`, and the bare name is ambiguous).
    public internal(set) var key: String
    /// The column's type name: `int4`, `varchar`, `text[]`, or a user type's name.
    public let type: String
    /// The OID results report for the column (a domain's base type); `0` when unknown.
    public let typeOID: UInt32
    /// Whether the column accepts NULL, so the value may be `nil`.
    public let isNullable: Bool
    /// The column's default expression as the server prints it, or `nil` when it has none.
    public let defaultValue: String?
    /// Whether the column is an identity column: the server numbers it when an insert leaves it out.
    public let isIdentity: Bool
    /// Whether the column is a generated column, which is never written.
    public let isGenerated: Bool
    /// For an enum type (a domain over one, or an array of one): its labels, in order.
    public let enumLabels: [String]?
    /// The type's modifier as the catalog keeps it (`atttypmod`): a `varchar(n)`'s length
    /// plus 4, a `numeric(p, s)`'s precision and scale; `nil` when the type has none.
    public let typeModifier: Int32?
    /// For a composite type (or an array of one): its fields. Such a column reads as a
    /// `PostgresRecord` (an array of them: `[PostgresRecord?]`), in binary.
    public let composite: Catalog.CompositeType?
    /// For an array of a domain, the type a select list casts it to (``Catalog/Column``'s).
    let readsAs: String?
    /// For an array, the type a value compared with it is cast to (``Catalog/Column``'s).
    let arrayType: String?
    /// The collation its text compares by, where that is not by code points (``Catalog/Column``'s).
    let collation: String?
    /// Whether that collation's equal texts are equal bytes (``Catalog/Column``'s).
    let collationIsDeterministic: Bool
    /// Whether values are compared by their text (``Catalog/Column``'s).
    let comparesAsText: Bool
    /// Whether values its equality takes for one are stored alike (``Catalog/Column``'s).
    let equalityIsByImage: Bool
    /// The collation it compares by, whichever it is (``Catalog/Column``'s).
    let collationName: String?

    init(_ column: Catalog.Column) {
        name = column.name
        key = column.name
        type = column.type
        typeOID = column.typeOID
        isNullable = column.isNullable
        defaultValue = column.defaultValue
        isIdentity = column.isIdentity
        isGenerated = column.isGenerated
        enumLabels = column.enumLabels
        typeModifier = column.typeModifier
        composite = column.composite
        readsAs = column.readsAs
        arrayType = column.arrayType
        collation = column.collation
        collationIsDeterministic = column.collationIsDeterministic ?? true
        comparesAsText = column.comparesAsText ?? false
        equalityIsByImage = column.equalityIsByImage ?? true
        collationName = column.collationName
    }

    /// Whether the column is an array of an enum type (`mood[]`): it reads as `[String]`.
    var isEnumArray: Bool { enumLabels != nil && type.hasSuffix("[]") }

    /// Whether a value goes to the column as a text the library makes of it
    /// (``AttributeValue/encodable(_:for:entity:use:)``): an enum array's literal, a `json`
    /// document, an array of a type whose values go as one of several types (a range, a
    /// time, an address, JSON).
    var sendsAsText: Bool {
        guard composite == nil else { return false }
        let type = PostgresType(typeOID)
        if isEnumArray || type == .json { return true }
        if case .array(let element) = type.mapping { return element.sentAsSeveralTypes }
        return false
    }

    /// Whether the server fills the column when an INSERT leaves it out.
    public var hasDefault: Bool { defaultValue != nil || isIdentity || isGenerated }
}
