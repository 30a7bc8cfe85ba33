/// A PostgreSQL type, identified by its OID as the server reports it in a result or
/// expects it for a parameter. An open struct rather than an enum: a schema can hold any
/// type, and an OID this file does not name is still a valid value.
public struct PostgresType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    @inlinable public init(_ oid: UInt32) { self.rawValue = oid }

    /// No type: a parameter sent as `unknown` takes the type the server infers from its use.
    @inlinable public static var unspecified: PostgresType { PostgresType(rawValue: 0) }
    @inlinable public static var bool: PostgresType { PostgresType(rawValue: 16) }
    @inlinable public static var bytea: PostgresType { PostgresType(rawValue: 17) }
    @inlinable public static var char: PostgresType { PostgresType(rawValue: 18) }
    @inlinable public static var name: PostgresType { PostgresType(rawValue: 19) }
    @inlinable public static var int8: PostgresType { PostgresType(rawValue: 20) }
    @inlinable public static var int2: PostgresType { PostgresType(rawValue: 21) }
    @inlinable public static var int4: PostgresType { PostgresType(rawValue: 23) }
    @inlinable public static var text: PostgresType { PostgresType(rawValue: 25) }
    @inlinable public static var oid: PostgresType { PostgresType(rawValue: 26) }
    @inlinable public static var json: PostgresType { PostgresType(rawValue: 114) }
    @inlinable public static var xml: PostgresType { PostgresType(rawValue: 142) }
    @inlinable public static var float4: PostgresType { PostgresType(rawValue: 700) }
    @inlinable public static var float8: PostgresType { PostgresType(rawValue: 701) }
    @inlinable public static var unknown: PostgresType { PostgresType(rawValue: 705) }
    @inlinable public static var bpchar: PostgresType { PostgresType(rawValue: 1042) }
    @inlinable public static var varchar: PostgresType { PostgresType(rawValue: 1043) }
    @inlinable public static var date: PostgresType { PostgresType(rawValue: 1082) }
    @inlinable public static var time: PostgresType { PostgresType(rawValue: 1083) }
    @inlinable public static var timestamp: PostgresType { PostgresType(rawValue: 1114) }
    @inlinable public static var timestamptz: PostgresType { PostgresType(rawValue: 1184) }
    @inlinable public static var numeric: PostgresType { PostgresType(rawValue: 1700) }
    @inlinable public static var uuid: PostgresType { PostgresType(rawValue: 2950) }
    @inlinable public static var jsonb: PostgresType { PostgresType(rawValue: 3802) }

    @inlinable public static var boolArray: PostgresType { PostgresType(rawValue: 1000) }
    @inlinable public static var byteaArray: PostgresType { PostgresType(rawValue: 1001) }
    @inlinable public static var charArray: PostgresType { PostgresType(rawValue: 1002) }
    @inlinable public static var nameArray: PostgresType { PostgresType(rawValue: 1003) }
    @inlinable public static var int2Array: PostgresType { PostgresType(rawValue: 1005) }
    @inlinable public static var int4Array: PostgresType { PostgresType(rawValue: 1007) }
    @inlinable public static var textArray: PostgresType { PostgresType(rawValue: 1009) }
    @inlinable public static var bpcharArray: PostgresType { PostgresType(rawValue: 1014) }
    @inlinable public static var varcharArray: PostgresType { PostgresType(rawValue: 1015) }
    @inlinable public static var int8Array: PostgresType { PostgresType(rawValue: 1016) }
    @inlinable public static var float4Array: PostgresType { PostgresType(rawValue: 1021) }
    @inlinable public static var float8Array: PostgresType { PostgresType(rawValue: 1022) }
    @inlinable public static var oidArray: PostgresType { PostgresType(rawValue: 1028) }
    @inlinable public static var timestampArray: PostgresType { PostgresType(rawValue: 1115) }
    @inlinable public static var dateArray: PostgresType { PostgresType(rawValue: 1182) }
    @inlinable public static var timestamptzArray: PostgresType { PostgresType(rawValue: 1185) }
    @inlinable public static var jsonArray: PostgresType { PostgresType(rawValue: 199) }
    @inlinable public static var numericArray: PostgresType { PostgresType(rawValue: 1231) }
    @inlinable public static var uuidArray: PostgresType { PostgresType(rawValue: 2951) }
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

    public var description: String {
        if let name = Self.names[self] { return name }
        if let element = arrayElement { return "\(element)[]" }
        return "oid \(rawValue)"
    }
}

/// The two forms in which PostgreSQL exchanges a value.
public enum PostgresFormat: Int32, Sendable {
    case text = 0
    case binary = 1
}
