import CLibPQ
import Foundation

/// `bytea`. The text form (hex, or the older escape format) is read by libpq's own
/// `PQunescapeBytea`.
extension Data: PostgresArrayElement {
    /// `Data` is sent as `bytea`.
    public static var postgresType: PostgresType { .bytea }
    /// `Data` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[Data]` is sent as `bytea[]`.
    public static var postgresArrayType: PostgresType { .byteaArray }

    /// Appends the bytes as they are.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.append(contentsOf: self)
    }

    /// Appends the bytes in `bytea`'s hex text form, `\\x` then two hexadecimal digits a byte.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        buffer.append(UInt8(ascii: "\\"))
        buffer.append(UInt8(ascii: "x"))
        for byte in self {
            buffer.append(hex[Int(byte >> 4)])
            buffer.append(hex[Int(byte & 0x0f)])
        }
    }

    /// Reads a `bytea` cell: its bytes in binary form, unescaped in text form; a cell of
    /// another type throws.
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value.
    /// - Throws: A ``PostgresDecodingError`` when the cell's type cannot be read as this
    ///   type, or its bytes are malformed.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> Data {
        switch (format, type) {
        case (.binary, .bytea):
            return Data(bytes)
        case (.text, .bytea):
            // PQunescapeBytea needs a NUL-terminated string; result cells are, array
            // elements are copied with one.
            var terminated = [UInt8](bytes)
            terminated.append(0)
            var length = 0
            guard let unescaped = terminated.withUnsafeBufferPointer({ PQunescapeBytea($0.baseAddress, &length) }) else {
                throw .malformed(type, format)
            }
            defer { PQfreemem(unescaped) }
            return Data(bytes: unescaped, count: length)
        default:
            throw .mismatch(Data.self, type, format)
        }
    }
}
