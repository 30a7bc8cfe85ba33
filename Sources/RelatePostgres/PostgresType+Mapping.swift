/// The Swift type each PostgreSQL type maps to: the one table that reading a cell without
/// naming a type (``PostgresValue``), the object layer's cell readers and its writers all
/// consult, so that a new type mapping is one edit here (and a codec file of its own).
///
/// | PostgreSQL | Swift |
/// |---|---|
/// | int2, int4, int8, oid | `Int` |
/// | float4 / float8 | `Float` / `Double` |
/// | numeric, money (read as numeric) | `Decimal` |
/// | text, varchar, char, name, xml | `String` |
/// | json, jsonb | ``JSONValue`` |
/// | bool | `Bool` |
/// | date, timestamp, timestamptz | `Date` |
/// | time, timetz | ``PostgresTime`` |
/// | interval | ``PostgresInterval`` |
/// | int4range, int8range / numrange / daterange, tsrange, tstzrange | ``PostgresRange`` of `Int` / `Decimal` / `Date` |
/// | int4multirange, int8multirange / nummultirange / datemultirange, tsmultirange, tstzmultirange | ``PostgresMultirange`` of `Int` / `Decimal` / `Date` |
/// | inet, cidr | ``PostgresInet`` |
/// | macaddr, macaddr8 | ``PostgresMacAddress`` |
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
    /// `Decimal`: numeric, and money read as numeric.
    case decimal
    /// `Bool`: bool.
    case bool
    /// `String`: text, varchar, char, name and xml.
    case string
    /// ``JSONValue``: json and jsonb.
    case json
    /// `Date`: date, timestamp and timestamptz.
    case date
    /// `UUID`: uuid.
    case uuid
    /// `Data`: bytea.
    case data
    /// ``PostgresTime``: time and timetz.
    case time
    /// ``PostgresInterval``: interval.
    case interval
    /// ``PostgresInet``: inet and cidr.
    case inet
    /// ``PostgresMacAddress``: macaddr and macaddr8.
    case macAddress
    /// ``PostgresRange`` whose bounds map as `bound` does (`integer`, `decimal` or `date`).
    indirect case range(bound: PostgresValueMapping)
    /// ``PostgresMultirange`` whose bounds map as `bound` does (`integer`, `decimal` or `date`).
    indirect case multirange(bound: PostgresValueMapping)
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
        case .numeric, .money: .decimal
        case .bool: .bool
        case .text, .varchar, .bpchar, .name, .char, .xml, .unknown: .string
        case .json, .jsonb: .json
        case .date, .timestamp, .timestamptz: .date
        case .uuid: .uuid
        case .bytea: .data
        case .time, .timetz: .time
        case .interval: .interval
        case .inet, .cidr: .inet
        case .macaddr, .macaddr8: .macAddress
        default:
            if let element = rangeElement { .range(bound: element.mapping) }
            else if let range = multirangeRange, let element = range.rangeElement { .multirange(bound: element.mapping) }
            else { arrayElement.map { .array(element: $0.mapping) } ?? .textForm }
        }
    }

    /// The type a select list casts a column of this type to, so that it reads as its
    /// mapping: `text` for a type without one, `numeric` for `money` (whose binary form the
    /// server's `lc_monetary` scales); `nil` for the others, read as they are.
    public var selectCast: String? {
        if self == .money { return "numeric" }
        if self == .moneyArray { return "numeric[]" }
        return mapping.readsBinary ? nil : "text"
    }
}
