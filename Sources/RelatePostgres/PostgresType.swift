/// A PostgreSQL type, identified by its OID as the server reports it in a result or
/// expects it for a parameter. An open struct rather than an enum: a schema can hold any
/// type, and an OID this file does not name is still a valid value.
public struct PostgresType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ oid: UInt32) { self.rawValue = oid }

    /// No type: a parameter sent as `unknown` takes the type the server infers from its use.
    public static let unspecified = PostgresType(0)
    public static let bool = PostgresType(16)
    public static let bytea = PostgresType(17)
    public static let char = PostgresType(18)
    public static let name = PostgresType(19)
    public static let int8 = PostgresType(20)
    public static let int2 = PostgresType(21)
    public static let int4 = PostgresType(23)
    public static let text = PostgresType(25)
    public static let oid = PostgresType(26)
    public static let json = PostgresType(114)
    public static let xml = PostgresType(142)
    public static let float4 = PostgresType(700)
    public static let float8 = PostgresType(701)
    public static let unknown = PostgresType(705)
    public static let bpchar = PostgresType(1042)
    public static let varchar = PostgresType(1043)
    public static let date = PostgresType(1082)
    public static let time = PostgresType(1083)
    public static let timestamp = PostgresType(1114)
    public static let timestamptz = PostgresType(1184)
    public static let numeric = PostgresType(1700)
    public static let uuid = PostgresType(2950)
    public static let jsonb = PostgresType(3802)

    public static let boolArray = PostgresType(1000)
    public static let byteaArray = PostgresType(1001)
    public static let charArray = PostgresType(1002)
    public static let nameArray = PostgresType(1003)
    public static let int2Array = PostgresType(1005)
    public static let int4Array = PostgresType(1007)
    public static let textArray = PostgresType(1009)
    public static let bpcharArray = PostgresType(1014)
    public static let varcharArray = PostgresType(1015)
    public static let int8Array = PostgresType(1016)
    public static let float4Array = PostgresType(1021)
    public static let float8Array = PostgresType(1022)
    public static let oidArray = PostgresType(1028)
    public static let timestampArray = PostgresType(1115)
    public static let dateArray = PostgresType(1182)
    public static let timestamptzArray = PostgresType(1185)
    public static let jsonArray = PostgresType(199)
    public static let numericArray = PostgresType(1231)
    public static let uuidArray = PostgresType(2951)
    public static let jsonbArray = PostgresType(3807)

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
    public var isInteger: Bool { self == .int2 || self == .int4 || self == .int8 || self == .oid }

    /// Types whose binary form is their text form, so any reader of text reads them.
    public var isTextual: Bool {
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
