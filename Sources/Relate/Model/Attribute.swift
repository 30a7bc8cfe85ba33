/// A column of an entity, as a key.
public struct Attribute: Sendable, Hashable {
    /// The column's name.
    public let name: String
    /// The name it answers to: the column's name, unless a relationship claims the same
    /// name (then `<column>_column`, and the bare name is ambiguous).
    public internal(set) var key: String
    public let type: String
    public let typeOID: UInt32
    public let isNullable: Bool
    public let defaultValue: String?
    public let isIdentity: Bool
    public let isGenerated: Bool
    /// For an enum type (or a domain over one): its labels, in order.
    public let enumLabels: [String]?

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
    }

    /// Whether the server fills the column when an INSERT leaves it out.
    public var hasDefault: Bool { defaultValue != nil || isIdentity || isGenerated }
}
