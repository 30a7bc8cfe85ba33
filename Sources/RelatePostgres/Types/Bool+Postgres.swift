extension Bool: PostgresArrayElement {
    /// `Bool` is sent as `bool`.
    public static var postgresType: PostgresType { .bool }
    /// `Bool` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[Bool]` is sent as `bool[]`.
    public static var postgresArrayType: PostgresType { .boolArray }

    /// Appends one byte, 1 for `true` and 0 for `false`.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.append(self ? 1 : 0)
    }

    /// Appends `t` or `f`, as the server prints a `bool`.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(self ? UInt8(ascii: "t") : UInt8(ascii: "f"))
    }

    /// Reads a `bool` cell in either form; a cell of another type throws.
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
    ) throws(PostgresDecodingError) -> Bool {
        guard type == .bool, bytes.count == 1 else { throw .mismatch(Bool.self, type, format) }
        switch (format, bytes[0]) {
        case (.binary, 0), (.text, UInt8(ascii: "f")): return false
        case (.binary, 1), (.text, UInt8(ascii: "t")): return true
        default: throw .malformed(type, format)
        }
    }
}
