/// Every integer column (int2, int4, int8, oid) reads as `Int`; `Int` is sent as int8,
/// which the server narrows on assignment and compares with any integer column.
extension Int: PostgresArrayElement {
    /// `Int` is sent as `int8`.
    public static var postgresType: PostgresType { .int8 }
    /// `Int` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[Int]` is sent as `int8[]`.
    public static var postgresArrayType: PostgresType { .int8Array }

    /// Appends the value as a big-endian 64-bit integer.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    @inlinable
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.appendBigEndian(Int64(self))
    }

    /// Appends the value's decimal digits.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: String(self).utf8)
    }

    /// Reads an `int2`, `int4`, `int8` or `oid` cell in either form; a cell of another type throws.
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
    ) throws(PostgresDecodingError) -> Int {
        switch (format, type) {
        case (.binary, .int8) where bytes.count == 8: return Int(bytes.bigEndian(Int64.self))
        case (.binary, .int4) where bytes.count == 4: return Int(bytes.bigEndian(Int32.self))
        case (.binary, .int2) where bytes.count == 2: return Int(bytes.bigEndian(Int16.self))
        case (.binary, .oid) where bytes.count == 4: return Int(bytes.bigEndian(UInt32.self))
        case (.text, _) where type.isInteger:
            guard let value = parseDecimalInteger(bytes) else { throw .malformed(type, format) }
            return value
        default:
            throw .mismatch(Int.self, type, format)
        }
    }

    /// `[-]digits` as the server prints integers, without going through `String`.
    @inlinable
    static func parseDecimalInteger(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty else { return nil }
        let negative = bytes[0] == UInt8(ascii: "-")
        var index = negative ? 1 : 0
        guard index < bytes.count else { return nil }
        var value = 0
        while index < bytes.count {
            let digit = Int(bytes[index]) &- 48
            guard digit >= 0, digit <= 9 else { return nil }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            value = next
            index += 1
        }
        return value
    }
}

/// `Int32` and `Int16` are sent as int4 and int2 (arrays too: a key list compared with an
/// int4 column keeps the column's type, and so its plans). They read any integer column
/// whose value fits.
extension Int32: PostgresArrayElement {
    /// `Int32` is sent as `int4`.
    public static var postgresType: PostgresType { .int4 }
    /// `Int32` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[Int32]` is sent as `int4[]`.
    public static var postgresArrayType: PostgresType { .int4Array }
}

extension Int16: PostgresArrayElement {
    /// `Int16` is sent as `int2`.
    public static var postgresType: PostgresType { .int2 }
    /// `Int16` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[Int16]` is sent as `int2[]`.
    public static var postgresArrayType: PostgresType { .int2Array }
}

/// The coding `Int32` and `Int16` share: their own width on the wire, read through `Int`.
extension PostgresArrayElement where Self: FixedWidthInteger & SignedInteger {
    /// Appends the value as a big-endian integer of its own width.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) { buffer.appendBigEndian(self) }
    /// Appends the value's decimal digits.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) { buffer.append(contentsOf: String(self).utf8) }

    /// Reads any integer cell through `Int`; a value that does not fit in `Self` throws.
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
    ) throws(PostgresDecodingError) -> Self {
        guard let value = Self(exactly: try Int.decode(from: bytes, type: type, format: format)) else {
            throw PostgresDecodingError("the \(type) value does not fit in \(Self.self)")
        }
        return value
    }
}

extension Int64: PostgresEncodable {
    /// `Int64` is sent as `int8`.
    public static var postgresType: PostgresType { .int8 }
    /// `Int64` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// Appends the value as a big-endian 64-bit integer.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) { buffer.appendBigEndian(self) }
}
