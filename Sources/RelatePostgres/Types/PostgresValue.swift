import Foundation

/// Reading a cell without naming a Swift type: the type follows the column's PostgreSQL
/// type, as the object layer presents attributes.
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
/// | anything else | its text form as `String` (in binary form: its bytes as `Data`) |
public enum PostgresValue {
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> any Sendable {
        switch type {
        case .int2, .int4, .int8, .oid: return try Int.decode(from: bytes, type: type, format: format)
        case .float4: return try Float.decode(from: bytes, type: type, format: format)
        case .float8: return try Double.decode(from: bytes, type: type, format: format)
        case .numeric: return try Decimal.decode(from: bytes, type: type, format: format)
        case .bool: return try Bool.decode(from: bytes, type: type, format: format)
        case .date, .timestamp, .timestamptz: return try Date.decode(from: bytes, type: type, format: format)
        case .uuid: return try UUID.decode(from: bytes, type: type, format: format)
        case .bytea: return try Data.decode(from: bytes, type: type, format: format)
        case .text, .varchar, .bpchar, .name, .char, .json, .jsonb, .xml, .unknown:
            return try String.decode(from: bytes, type: type, format: format)
        default:
            if let element = type.arrayElement {
                return try decodeArray(from: bytes, type: type, element: element, format: format)
            }
            switch format {
            case .text: return bytes.utf8String
            case .binary: return Data(bytes)
            }
        }
    }

    private static func decodeArray(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, element: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> any Sendable {
        func read<T: PostgresArrayElement & Sendable>(_: T.Type) throws(PostgresDecodingError) -> any Sendable {
            let values = try [T?].decode(from: bytes, type: type, format: format)
            if values.contains(where: { $0 == nil }) { return values }
            return values.map { $0! }
        }
        switch element {
        case .int2, .int4, .int8, .oid: return try read(Int.self)
        case .float4: return try read(Float.self)
        case .float8: return try read(Double.self)
        case .numeric: return try read(Decimal.self)
        case .bool: return try read(Bool.self)
        case .date, .timestamp, .timestamptz: return try read(Date.self)
        case .uuid: return try read(UUID.self)
        case .bytea: return try read(Data.self)
        default: return try read(String.self)
        }
    }
}
