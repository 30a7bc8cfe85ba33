import Foundation

/// Reading a cell without naming a Swift type: the type follows the column's PostgreSQL
/// type, as ``PostgresType/mapping`` says (in binary form, a type without a mapping reads
/// as its bytes, `Data`).
public enum PostgresValue {
    /// Reads a non-NULL cell as the Swift value its type maps to (``PostgresType/mapping``).
    ///
    /// - Parameters:
    ///   - bytes: The cell as the server sent it.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: An `Int`, `Double`, `String`, `Date`… or an array of them; an array of more
    ///   than one dimension, or whose first index is not 1, as its text (`[0:1]={1,2}`,
    ///   which goes back to the column as the same array); in binary form, a type without a
    ///   mapping reads as `Data`.
    /// - Throws: A ``PostgresDecodingError`` when the bytes are malformed for the type.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> any Sendable {
        switch type.mapping {
        case .integer: return try Int.decode(from: bytes, type: type, format: format)
        case .float: return try Float.decode(from: bytes, type: type, format: format)
        case .double: return try Double.decode(from: bytes, type: type, format: format)
        case .decimal: return try Decimal.decode(from: bytes, type: type, format: format)
        case .bool: return try Bool.decode(from: bytes, type: type, format: format)
        case .date: return try Date.decode(from: bytes, type: type, format: format)
        case .uuid: return try UUID.decode(from: bytes, type: type, format: format)
        case .data: return try Data.decode(from: bytes, type: type, format: format)
        case .string: return try String.decode(from: bytes, type: type, format: format)
        case .json: return try JSONValue.decode(from: bytes, type: type, format: format)
        case .time: return try PostgresTime.decode(from: bytes, type: type, format: format)
        case .interval: return try PostgresInterval.decode(from: bytes, type: type, format: format)
        case .inet: return try PostgresInet.decode(from: bytes, type: type, format: format)
        case .macAddress: return try PostgresMacAddress.decode(from: bytes, type: type, format: format)
        case .range(let bound): return try decodeRange(from: bytes, type: type, bound: bound, format: format)
        case .multirange(.integer): return try PostgresMultirange<Int>.decode(from: bytes, type: type, format: format)
        case .multirange(.decimal): return try PostgresMultirange<Decimal>.decode(from: bytes, type: type, format: format)
        case .multirange(.date): return try PostgresMultirange<Date>.decode(from: bytes, type: type, format: format)
        case .multirange: throw .mismatch(Any.self, type, format)
        case .array(let element): return try decodeArray(from: bytes, type: type, element: element, format: format)
        case .textForm:
            switch format {
            case .text: return bytes.utf8String
            case .binary: return Data(bytes)
            }
        }
    }

    private static func decodeRange(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, bound: PostgresValueMapping, format: PostgresFormat
    ) throws(PostgresDecodingError) -> any Sendable {
        switch bound {
        case .integer: return try PostgresRange<Int>.decode(from: bytes, type: type, format: format)
        case .decimal: return try PostgresRange<Decimal>.decode(from: bytes, type: type, format: format)
        case .date: return try PostgresRange<Date>.decode(from: bytes, type: type, format: format)
        default: throw .mismatch(Any.self, type, format)
        }
    }

    private static func decodeArray(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, element: PostgresValueMapping, format: PostgresFormat
    ) throws(PostgresDecodingError) -> any Sendable {
        func read<T: PostgresArrayElement & Sendable>(_: T.Type) throws(PostgresDecodingError) -> any Sendable {
            // Of more than one dimension, or from another index than 1: its text, which
            // goes back to the column as the same array.
            if let text = try [T?].shapedText(from: bytes, type: type, format: format) { return text }
            let values = try [T?].decode(from: bytes, type: type, format: format)
            if values.contains(where: { $0 == nil }) { return values }
            return values.compactMap { $0 }
        }
        switch element {
        case .integer: return try read(Int.self)
        case .float: return try read(Float.self)
        case .double: return try read(Double.self)
        case .decimal: return try read(Decimal.self)
        case .bool: return try read(Bool.self)
        case .date: return try read(Date.self)
        case .uuid: return try read(UUID.self)
        case .data: return try read(Data.self)
        case .json: return try read(JSONValue.self)
        case .time: return try read(PostgresTime.self)
        case .interval: return try read(PostgresInterval.self)
        case .inet: return try read(PostgresInet.self)
        case .macAddress: return try read(PostgresMacAddress.self)
        case .range(.integer): return try read(PostgresRange<Int>.self)
        case .range(.decimal): return try read(PostgresRange<Decimal>.self)
        case .range(.date): return try read(PostgresRange<Date>.self)
        case .string, .textForm, .array, .range, .multirange: return try read(String.self)
        }
    }
}

extension PostgresValue {
    /// The text of a cell whose value its Swift type cannot hold exactly, as the server
    /// prints it: a `numeric` past `Decimal`'s 38 digits or its exponent, or infinite; a
    /// `json` or `jsonb` document with such a number, or with two member names Swift's `==`
    /// takes for one. The text goes back to the column as the same value. `nil` for a cell
    /// of another type, or a malformed one (whose typed read's error stands).
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    package static func textOfValueNotHeld(from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat) -> String? {
        switch (type, format) {
        case (.numeric, .binary):
            return try? Decimal.numericText(binary: bytes)
        case (.numeric, .text):
            let text = bytes.utf8String
            let isNumber = text == "Infinity" || text == "-Infinity"
                || (!text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) })
            return isNumber ? text : nil
        case (.json, _), (.jsonb, _):
            let document = type == .jsonb && format == .binary ? UnsafeRawBufferPointer(rebasing: bytes.dropFirst()) : bytes
            guard type != .jsonb || format != .binary || bytes.first == 1 else { return nil }
            do {
                _ = try JSONValue.read(document)
                return nil
            } catch is JSONValue.NotHeldExactly {
                return document.utf8String
            } catch {
                return nil
            }
        default:
            return nil
        }
    }
}
