import Foundation

extension UUID: PostgresArrayElement {
    /// `UUID` is sent as `uuid`.
    public static var postgresType: PostgresType { .uuid }
    /// `UUID` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[UUID]` is sent as `uuid[]`.
    public static var postgresArrayType: PostgresType { .uuidArray }

    /// Appends the 16 bytes of the UUID.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        withUnsafeBytes(of: uuid) { buffer.append(contentsOf: $0) }
    }

    /// Appends the UUID's text form (`uuidString`).
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: uuidString.lowercased().utf8)
    }

    /// Reads a `uuid` cell in either form, or a `text`, `varchar` or `bpchar` cell in text form
    /// that holds a UUID; any other cell throws.
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
    ) throws(PostgresDecodingError) -> UUID {
        switch (format, type) {
        case (.binary, .uuid) where bytes.count == 16:
            // Loaded from the bytes, not copied into a random UUID's: no random number made.
            return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
        case (.text, .uuid), (.text, .text), (.text, .varchar), (.text, .bpchar):
            guard let value = UUID(uuidString: bytes.utf8String) else { throw .malformed(type, format) }
            return value
        default:
            throw .mismatch(UUID.self, type, format)
        }
    }
}
