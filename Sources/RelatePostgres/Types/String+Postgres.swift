/// `String` is sent untyped, in text form, so the server gives it the type the statement
/// needs; it reads from the text form of any column, and from the binary form of the
/// types whose binary form is text.
extension String: PostgresArrayElement {
    /// A `String` is sent untyped (``PostgresType/unspecified``): the server reads it as the
    /// type the statement needs there, so a `String` binds to a `uuid`, `date` or enum parameter.
    public static var postgresType: PostgresType { .unspecified }
    /// `String` is sent in text form.
    public static var postgresFormat: PostgresFormat { .text }
    /// `[String]` is sent as `text[]`.
    public static var postgresArrayType: PostgresType { .textArray }
    /// Inside an array a `String` is `text`: the array is typed.
    public static var arrayElementType: PostgresType { .text }
    /// Inside an array a `String` goes in binary, which for `text` is its UTF-8 bytes: the
    /// array needs no quoting and escaping, and the server no parsing (a `[String?]` of
    /// 1,000 values cost `save()` a tenth of its work as text; Benchmarks/README.md).
    public static var arrayElementFormat: PostgresFormat { .binary }

    /// Appends the string's UTF-8 bytes; a string holding a NUL byte throws, since no
    /// PostgreSQL text can hold one.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: A ``PostgresEncodingError`` when PostgreSQL cannot take the value.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        guard !utf8.contains(0) else {
            throw PostgresEncodingError("the string contains a NUL byte, which PostgreSQL text cannot store")
        }
        buffer.append(contentsOf: utf8)
    }

    /// Appends the string's UTF-8 bytes.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: utf8)
    }

    /// Reads any cell in text form as its text; in binary form, the textual types (`text`,
    /// `varchar`, `name`, `json`…), `jsonb` and `"char"`. Other binary cells throw.
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value.
    /// - Throws: A ``PostgresDecodingError`` when the cell's type cannot be read as this
    ///   type, or its bytes are malformed.
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
