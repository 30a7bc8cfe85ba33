import Foundation

extension UUID: PostgresArrayElement {
    /// `UUID` is sent as `uuid`.
    public static var postgresType: PostgresType { .uuid }
    /// `UUID` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[UUID]` is sent as `uuid[]`.
    public static var postgresArrayType: PostgresType { .uuidArray }

    /// Appends the 16 bytes of the UUID.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        withUnsafeBytes(of: uuid) { buffer.append(contentsOf: $0) }
    }

    /// Appends the UUID's text form (`uuidString`).
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: uuidString.lowercased().utf8)
    }

    /// Reads a `uuid` cell in either form, or a `text`, `varchar` or `bpchar` cell in text form
    /// that holds a UUID; any other cell throws.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> UUID {
        switch (format, type) {
        case (.binary, .uuid) where bytes.count == 16:
            var value = UUID().uuid
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: bytes) }
            return UUID(uuid: value)
        case (.text, .uuid), (.text, .text), (.text, .varchar), (.text, .bpchar):
            guard let value = UUID(uuidString: bytes.utf8String) else { throw .malformed(type, format) }
            return value
        default:
            throw .mismatch(UUID.self, type, format)
        }
    }
}
