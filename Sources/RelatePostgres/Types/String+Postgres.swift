/// `String` is sent untyped, in text form, so the server gives it the type the statement
/// needs; it reads from the text form of any column, and from the binary form of the
/// types whose binary form is text.
extension String: PostgresArrayElement {
    public static var postgresType: PostgresType { .unspecified }
    public static var postgresFormat: PostgresFormat { .text }
    public static var postgresArrayType: PostgresType { .textArray }

    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        guard !utf8.contains(0) else {
            throw PostgresEncodingError("the string contains a NUL byte, which PostgreSQL text cannot store")
        }
        buffer.append(contentsOf: utf8)
    }

    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: utf8)
    }

    @inlinable @inline(__always)
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> String {
        switch format {
        case .text:
            return bytes.utf8String
        case .binary:
            if type.isTextual { return bytes.utf8String }
            if type == .jsonb, bytes.first == 1 { return UnsafeRawBufferPointer(rebasing: bytes.dropFirst()).utf8String }
            if type == .char, bytes.count <= 1 { return bytes.utf8String }
            throw .mismatch(String.self, type, format)
        }
    }
}
