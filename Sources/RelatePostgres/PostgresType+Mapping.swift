/// The Swift type each PostgreSQL type maps to: the one table that reading a cell without
/// naming a type (``PostgresValue``), the object layer's cell readers and its writers all
/// consult, so that a new type mapping is one edit here (and a codec file of its own).
///
/// | PostgreSQL | Swift |
/// |---|---|
/// | int2, int4, int8, oid | `Int` |
/// | float4 / float8 | `Float` / `Double` |
/// | numeric | `Decimal` |
/// | text, varchar, char, name, json, jsonb, xml | `String` |
/// | bool | `Bool` |
/// | date, timestamp, timestamptz | `Date` |
/// | uuid | `UUID` |
/// | bytea | `Data` |
/// | arrays of these | `[T]`, or `[T?]` when an element is NULL |
/// | anything else | its text form as `String` |
public enum PostgresValueMapping: Sendable, Hashable {
    /// `Int`: int2, int4, int8 and oid.
    case integer
    /// `Float`: float4.
    case float
    /// `Double`: float8.
    case double
    /// `Decimal`: numeric.
    case decimal
    /// `Bool`: bool.
    case bool
    /// `String`: text, varchar, char, name, json, jsonb and xml.
    case string
    /// `Date`: date, timestamp and timestamptz.
    case date
    /// `UUID`: uuid.
    case uuid
    /// `Data`: bytea.
    case data
    /// An array whose elements map as `element` does: `[T]`, or `[T?]` when an element is NULL.
    indirect case array(element: PostgresValueMapping)
    /// No Swift mapping: the value is read and written in its text form, as a `String`.
    case textForm

    /// Whether a value of this mapping can be read in binary form; otherwise it is asked
    /// for in text form (`::text` in a select list).
    public var readsBinary: Bool {
        switch self {
        case .textForm: false
        case .array(let element): element.readsBinary
        default: true
        }
    }
}

extension PostgresType {
    /// The Swift type values of this type map to.
    public var mapping: PostgresValueMapping {
        switch self {
        case .int2, .int4, .int8, .oid: .integer
        case .float4: .float
        case .float8: .double
        case .numeric: .decimal
        case .bool: .bool
        case .text, .varchar, .bpchar, .name, .char, .json, .jsonb, .xml, .unknown: .string
        case .date, .timestamp, .timestamptz: .date
        case .uuid: .uuid
        case .bytea: .data
        default: arrayElement.map { .array(element: $0.mapping) } ?? .textForm
        }
    }
}
