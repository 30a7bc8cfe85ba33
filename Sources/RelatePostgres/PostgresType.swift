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
    /// `json` (OID 114), read as a ``JSONValue`` (or its text, a `String`, on request).
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
    /// `time` (OID 1083), the time of day without a date, read and written as ``PostgresTime``.
    @inlinable public static var time: PostgresType { PostgresType(rawValue: 1083) }
    /// `timestamp` (OID 1114), without time zone, read and written as `Date` taken as UTC.
    @inlinable public static var timestamp: PostgresType { PostgresType(rawValue: 1114) }
    /// `timestamptz` (OID 1184), read and written as `Date`.
    @inlinable public static var timestamptz: PostgresType { PostgresType(rawValue: 1184) }
    /// `numeric` (OID 1700), read and written as `Decimal`.
    @inlinable public static var numeric: PostgresType { PostgresType(rawValue: 1700) }
    /// `uuid` (OID 2950), read and written as `UUID`.
    @inlinable public static var uuid: PostgresType { PostgresType(rawValue: 2950) }
    /// `jsonb` (OID 3802), read and written as a ``JSONValue`` (or its text, a `String`, on request).
    @inlinable public static var jsonb: PostgresType { PostgresType(rawValue: 3802) }

    /// `money` (OID 790), read as `Decimal` through `numeric` (its binary form depends on the
    /// server's `lc_monetary`).
    @inlinable public static var money: PostgresType { PostgresType(rawValue: 790) }
    /// `cidr` (OID 650), a network, read and written as ``PostgresInet``.
    @inlinable public static var cidr: PostgresType { PostgresType(rawValue: 650) }
    /// `inet` (OID 869), a host address and its network, read and written as ``PostgresInet``.
    @inlinable public static var inet: PostgresType { PostgresType(rawValue: 869) }
    /// `macaddr8` (OID 774), read and written as ``PostgresMacAddress``.
    @inlinable public static var macaddr8: PostgresType { PostgresType(rawValue: 774) }
    /// `macaddr` (OID 829), read and written as ``PostgresMacAddress``.
    @inlinable public static var macaddr: PostgresType { PostgresType(rawValue: 829) }
    /// `interval` (OID 1186), read and written as ``PostgresInterval``.
    @inlinable public static var interval: PostgresType { PostgresType(rawValue: 1186) }
    /// `timetz` (OID 1266), a time of day with its UTC offset, read and written as ``PostgresTime``.
    @inlinable public static var timetz: PostgresType { PostgresType(rawValue: 1266) }
    /// `int4range` (OID 3904), read and written as `PostgresRange<Int>`.
    @inlinable public static var int4range: PostgresType { PostgresType(rawValue: 3904) }
    /// `numrange` (OID 3906), read and written as `PostgresRange<Decimal>`.
    @inlinable public static var numrange: PostgresType { PostgresType(rawValue: 3906) }
    /// `tsrange` (OID 3908), read and written as `PostgresRange<Date>` (bounds taken as UTC).
    @inlinable public static var tsrange: PostgresType { PostgresType(rawValue: 3908) }
    /// `tstzrange` (OID 3910), read and written as `PostgresRange<Date>`.
    @inlinable public static var tstzrange: PostgresType { PostgresType(rawValue: 3910) }
    /// `daterange` (OID 3912), read and written as `PostgresRange<Date>` (bounds at midnight UTC).
    @inlinable public static var daterange: PostgresType { PostgresType(rawValue: 3912) }
    /// `int8range` (OID 3926), read and written as `PostgresRange<Int>`.
    @inlinable public static var int8range: PostgresType { PostgresType(rawValue: 3926) }

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
    /// `cidr[]` (OID 651).
    @inlinable public static var cidrArray: PostgresType { PostgresType(rawValue: 651) }
    /// `macaddr8[]` (OID 775).
    @inlinable public static var macaddr8Array: PostgresType { PostgresType(rawValue: 775) }
    /// `money[]` (OID 791).
    @inlinable public static var moneyArray: PostgresType { PostgresType(rawValue: 791) }
    /// `macaddr[]` (OID 1040).
    @inlinable public static var macaddrArray: PostgresType { PostgresType(rawValue: 1040) }
    /// `inet[]` (OID 1041).
    @inlinable public static var inetArray: PostgresType { PostgresType(rawValue: 1041) }
    /// `time[]` (OID 1183).
    @inlinable public static var timeArray: PostgresType { PostgresType(rawValue: 1183) }
    /// `interval[]` (OID 1187).
    @inlinable public static var intervalArray: PostgresType { PostgresType(rawValue: 1187) }
    /// `timetz[]` (OID 1270).
    @inlinable public static var timetzArray: PostgresType { PostgresType(rawValue: 1270) }
    /// `int4range[]` (OID 3905).
    @inlinable public static var int4rangeArray: PostgresType { PostgresType(rawValue: 3905) }
    /// `numrange[]` (OID 3907).
    @inlinable public static var numrangeArray: PostgresType { PostgresType(rawValue: 3907) }
    /// `tsrange[]` (OID 3909).
    @inlinable public static var tsrangeArray: PostgresType { PostgresType(rawValue: 3909) }
    /// `tstzrange[]` (OID 3911).
    @inlinable public static var tstzrangeArray: PostgresType { PostgresType(rawValue: 3911) }
    /// `daterange[]` (OID 3913).
    @inlinable public static var daterangeArray: PostgresType { PostgresType(rawValue: 3913) }
    /// `int8range[]` (OID 3927).
    @inlinable public static var int8rangeArray: PostgresType { PostgresType(rawValue: 3927) }

    private static let arrayElements: [PostgresType: PostgresType] = [
        .boolArray: .bool, .byteaArray: .bytea, .charArray: .char, .nameArray: .name,
        .int2Array: .int2, .int4Array: .int4, .textArray: .text, .bpcharArray: .bpchar,
        .varcharArray: .varchar, .int8Array: .int8, .float4Array: .float4,
        .float8Array: .float8, .oidArray: .oid, .timestampArray: .timestamp,
        .dateArray: .date, .timestamptzArray: .timestamptz, .jsonArray: .json,
        .numericArray: .numeric, .uuidArray: .uuid, .jsonbArray: .jsonb,
        .cidrArray: .cidr, .macaddr8Array: .macaddr8, .moneyArray: .money, .macaddrArray: .macaddr,
        .inetArray: .inet, .timeArray: .time, .intervalArray: .interval, .timetzArray: .timetz,
        .int4rangeArray: .int4range, .numrangeArray: .numrange, .tsrangeArray: .tsrange,
        .tstzrangeArray: .tstzrange, .daterangeArray: .daterange, .int8rangeArray: .int8range,
    ]

    private static let rangeElements: [PostgresType: PostgresType] = [
        .int4range: .int4, .int8range: .int8, .numrange: .numeric, .daterange: .date,
        .tsrange: .timestamp, .tstzrange: .timestamptz,
    ]

    private static let names: [PostgresType: String] = [
        .bool: "bool", .bytea: "bytea", .char: "char", .name: "name", .int8: "int8",
        .int2: "int2", .int4: "int4", .text: "text", .oid: "oid", .json: "json",
        .xml: "xml", .float4: "float4", .float8: "float8", .unknown: "unknown",
        .bpchar: "bpchar", .varchar: "varchar", .date: "date", .time: "time",
        .timestamp: "timestamp", .timestamptz: "timestamptz", .numeric: "numeric",
        .uuid: "uuid", .jsonb: "jsonb", .money: "money", .cidr: "cidr", .inet: "inet",
        .macaddr8: "macaddr8", .macaddr: "macaddr", .interval: "interval", .timetz: "timetz",
        .int4range: "int4range", .numrange: "numrange", .tsrange: "tsrange", .tstzrange: "tstzrange",
        .daterange: "daterange", .int8range: "int8range",
    ]

    /// The element type when this is one of the array types named above.
    public var arrayElement: PostgresType? { Self.arrayElements[self] }

    /// The type of the bounds when this is one of the built-in range types (`int4` for
    /// `int4range`, `timestamptz` for `tstzrange`).
    public var rangeElement: PostgresType? { Self.rangeElements[self] }

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
        if let name = Self.names[self] ?? Self.multirangeNames[self] { return name }
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
