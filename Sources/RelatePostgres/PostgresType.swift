/// A PostgreSQL type, identified by its OID as the server reports it in a result or
/// expects it for a parameter. An open struct rather than an enum: a schema can hold any
/// type, and an OID this file does not name is still a valid value.
public struct PostgresType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The type's OID, as in `pg_type.oid`.
    public var rawValue: UInt32
    /// Creates the type with the given OID.
    ///
    /// - Parameter rawValue: The type's OID.
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Creates the type with the given OID: `PostgresType(16)` is ``bool``.
    ///
    /// - Parameter oid: The type's OID.
    @inlinable public init(_ oid: UInt32) { self.rawValue = oid }

    /// No type: a parameter sent as `unknown` takes the type the server infers from its use.
    @inlinable public static var unspecified: PostgresType { PostgresType(rawValue: 0) }
    /// `bool` (OID 16), read and written as `Bool`.
    @inlinable public static var bool: PostgresType { PostgresType(rawValue: 16) }
    /// `bytea` (OID 17), read and written as `Data`.
    @inlinable public static var bytea: PostgresType { PostgresType(rawValue: 17) }
    /// `"char"` (OID 18), the one-byte internal type, read as `String`.
    @inlinable public static var char: PostgresType { PostgresType(rawValue: 18) }
    /// `name` (OID 19), the type of identifiers in the system catalogs, read as `String`.
    @inlinable public static var name: PostgresType { PostgresType(rawValue: 19) }
    /// `int8` / `bigint` (OID 20), read and written as `Int`.
    @inlinable public static var int8: PostgresType { PostgresType(rawValue: 20) }
    /// `int2` / `smallint` (OID 21), read as `Int`, written from `Int16`.
    @inlinable public static var int2: PostgresType { PostgresType(rawValue: 21) }
    /// `int4` / `integer` (OID 23), read as `Int`, written from `Int32`.
    @inlinable public static var int4: PostgresType { PostgresType(rawValue: 23) }
    /// `text` (OID 25), read and written as `String`.
    @inlinable public static var text: PostgresType { PostgresType(rawValue: 25) }
    /// `oid` (OID 26), read as `Int`.
    @inlinable public static var oid: PostgresType { PostgresType(rawValue: 26) }
    /// `json` (OID 114), read and written as its text, a `String`.
    @inlinable public static var json: PostgresType { PostgresType(rawValue: 114) }
    /// `xml` (OID 142), read and written as its text, a `String`.
    @inlinable public static var xml: PostgresType { PostgresType(rawValue: 142) }
    /// `float4` / `real` (OID 700), read and written as `Float`.
    @inlinable public static var float4: PostgresType { PostgresType(rawValue: 700) }
    /// `float8` / `double precision` (OID 701), read and written as `Double`.
    @inlinable public static var float8: PostgresType { PostgresType(rawValue: 701) }
    /// `unknown` (OID 705): the type of an untyped string literal in a result.
    @inlinable public static var unknown: PostgresType { PostgresType(rawValue: 705) }
    /// `bpchar` / `character(n)` (OID 1042), read as `String`.
    @inlinable public static var bpchar: PostgresType { PostgresType(rawValue: 1042) }
    /// `varchar` / `character varying(n)` (OID 1043), read as `String`.
    @inlinable public static var varchar: PostgresType { PostgresType(rawValue: 1043) }
    /// `date` (OID 1082), read and written as `Date` (midnight UTC).
    @inlinable public static var date: PostgresType { PostgresType(rawValue: 1082) }
    /// `time` (OID 1083), the time of day without a date; read in its text form, as `String`.
    @inlinable public static var time: PostgresType { PostgresType(rawValue: 1083) }
    /// `timestamp` (OID 1114), without time zone, read and written as `Date` taken as UTC.
    @inlinable public static var timestamp: PostgresType { PostgresType(rawValue: 1114) }
    /// `timestamptz` (OID 1184), read and written as `Date`.
    @inlinable public static var timestamptz: PostgresType { PostgresType(rawValue: 1184) }
    /// `numeric` (OID 1700), read and written as `Decimal`.
    @inlinable public static var numeric: PostgresType { PostgresType(rawValue: 1700) }
    /// `uuid` (OID 2950), read and written as `UUID`.
    @inlinable public static var uuid: PostgresType { PostgresType(rawValue: 2950) }
    /// `jsonb` (OID 3802), read and written as its text, a `String`.
    @inlinable public static var jsonb: PostgresType { PostgresType(rawValue: 3802) }

    /// `bool[]` (OID 1000).
    @inlinable public static var boolArray: PostgresType { PostgresType(rawValue: 1000) }
    /// `bytea[]` (OID 1001).
    @inlinable public static var byteaArray: PostgresType { PostgresType(rawValue: 1001) }
    /// `"char"[]` (OID 1002).
    @inlinable public static var charArray: PostgresType { PostgresType(rawValue: 1002) }
    /// `name[]` (OID 1003).
    @inlinable public static var nameArray: PostgresType { PostgresType(rawValue: 1003) }
    /// `int2[]` (OID 1005).
    @inlinable public static var int2Array: PostgresType { PostgresType(rawValue: 1005) }
    /// `int4[]` (OID 1007).
    @inlinable public static var int4Array: PostgresType { PostgresType(rawValue: 1007) }
    /// `text[]` (OID 1009).
    @inlinable public static var textArray: PostgresType { PostgresType(rawValue: 1009) }
    /// `bpchar[]` (OID 1014).
    @inlinable public static var bpcharArray: PostgresType { PostgresType(rawValue: 1014) }
    /// `varchar[]` (OID 1015).
    @inlinable public static var varcharArray: PostgresType { PostgresType(rawValue: 1015) }
    /// `int8[]` (OID 1016).
    @inlinable public static var int8Array: PostgresType { PostgresType(rawValue: 1016) }
    /// `float4[]` (OID 1021).
    @inlinable public static var float4Array: PostgresType { PostgresType(rawValue: 1021) }
    /// `float8[]` (OID 1022).
    @inlinable public static var float8Array: PostgresType { PostgresType(rawValue: 1022) }
    /// `oid[]` (OID 1028).
    @inlinable public static var oidArray: PostgresType { PostgresType(rawValue: 1028) }
    /// `timestamp[]` (OID 1115).
    @inlinable public static var timestampArray: PostgresType { PostgresType(rawValue: 1115) }
    /// `date[]` (OID 1182).
    @inlinable public static var dateArray: PostgresType { PostgresType(rawValue: 1182) }
    /// `timestamptz[]` (OID 1185).
    @inlinable public static var timestamptzArray: PostgresType { PostgresType(rawValue: 1185) }
    /// `json[]` (OID 199).
    @inlinable public static var jsonArray: PostgresType { PostgresType(rawValue: 199) }
    /// `numeric[]` (OID 1231).
    @inlinable public static var numericArray: PostgresType { PostgresType(rawValue: 1231) }
    /// `uuid[]` (OID 2951).
    @inlinable public static var uuidArray: PostgresType { PostgresType(rawValue: 2951) }
    /// `jsonb[]` (OID 3807).
    @inlinable public static var jsonbArray: PostgresType { PostgresType(rawValue: 3807) }

    private static let arrayElements: [PostgresType: PostgresType] = [
        .boolArray: .bool, .byteaArray: .bytea, .charArray: .char, .nameArray: .name,
        .int2Array: .int2, .int4Array: .int4, .textArray: .text, .bpcharArray: .bpchar,
        .varcharArray: .varchar, .int8Array: .int8, .float4Array: .float4,
        .float8Array: .float8, .oidArray: .oid, .timestampArray: .timestamp,
        .dateArray: .date, .timestamptzArray: .timestamptz, .jsonArray: .json,
        .numericArray: .numeric, .uuidArray: .uuid, .jsonbArray: .jsonb,
    ]

    private static let names: [PostgresType: String] = [
        .bool: "bool", .bytea: "bytea", .char: "char", .name: "name", .int8: "int8",
        .int2: "int2", .int4: "int4", .text: "text", .oid: "oid", .json: "json",
        .xml: "xml", .float4: "float4", .float8: "float8", .unknown: "unknown",
        .bpchar: "bpchar", .varchar: "varchar", .date: "date", .time: "time",
        .timestamp: "timestamp", .timestamptz: "timestamptz", .numeric: "numeric",
        .uuid: "uuid", .jsonb: "jsonb",
    ]

    /// The element type when this is one of the array types named above.
    public var arrayElement: PostgresType? { Self.arrayElements[self] }

    /// Integer types, which all read as `Int`.
    @inlinable public var isInteger: Bool { self == .int2 || self == .int4 || self == .int8 || self == .oid }

    /// Types whose binary form is their text form, so any reader of text reads them.
    @inlinable public var isTextual: Bool {
        switch self {
        case .text, .varchar, .bpchar, .name, .unknown, .json, .xml: true
        default: false
        }
    }

    /// The type's name (`int4`, `text[]`), or `oid N` for a type this file does not name.
    public var description: String {
        if let name = Self.names[self] { return name }
        if let element = arrayElement { return "\(element)[]" }
        return "oid \(rawValue)"
    }
}

/// The two forms in which PostgreSQL exchanges a value.
public enum PostgresFormat: Int32, Sendable {
    /// The text form: what `psql` prints, parsed by each type's input function.
    case text = 0
    /// The binary form: each type's `*_send` / `*_recv` layout, in network byte order.
    case binary = 1
}
