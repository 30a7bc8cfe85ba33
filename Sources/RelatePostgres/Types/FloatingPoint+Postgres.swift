import Foundation

extension Double: PostgresArrayElement {
    /// `Double` is sent as `float8`.
    public static var postgresType: PostgresType { .float8 }
    /// `Double` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[Double]` is sent as `float8[]`.
    public static var postgresArrayType: PostgresType { .float8Array }

    /// Appends the IEEE 754 bits in network byte order.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    @inlinable
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.appendBigEndian(bitPattern)
    }

    /// Appends the shortest text that reads back as the same `Double` (`NaN`, `Infinity`).
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: postgresText(isNaN: isNaN, infinite: isInfinite, negative: self < 0, finite: "\(self)").utf8)
    }

    /// Reads a `float8` or `float4` cell in either form; a cell of another type throws.
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
    ) throws(PostgresDecodingError) -> Double {
        switch (format, type) {
        case (.binary, .float8) where bytes.count == 8: return Double(bitPattern: bytes.bigEndian(UInt64.self))
        case (.binary, .float4) where bytes.count == 4: return Double(Float(bitPattern: bytes.bigEndian(UInt32.self)))
        case (.text, .float8), (.text, .float4):
            guard let value = parseFloatingPoint(bytes) else { throw .malformed(type, format) }
            return value
        default:
            throw .mismatch(Double.self, type, format)
        }
    }
}

extension Float: PostgresArrayElement {
    /// `Float` is sent as `float4`.
    public static var postgresType: PostgresType { .float4 }
    /// `Float` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[Float]` is sent as `float4[]`.
    public static var postgresArrayType: PostgresType { .float4Array }

    /// Appends the IEEE 754 bits in network byte order.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.appendBigEndian(bitPattern)
    }

    /// Appends the shortest text that reads back as the same `Float` (`NaN`, `Infinity`).
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: postgresText(isNaN: isNaN, infinite: isInfinite, negative: self < 0, finite: "\(self)").utf8)
    }

    /// Reads a `float4` cell in either form; a cell of another type throws.
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
    ) throws(PostgresDecodingError) -> Float {
        switch (format, type) {
        case (.binary, .float4) where bytes.count == 4: return Float(bitPattern: bytes.bigEndian(UInt32.self))
        case (.text, .float4):
            guard let value = parseFloatingPoint(bytes) else { throw .malformed(type, format) }
            return Float(value)
        default:
            throw .mismatch(Float.self, type, format)
        }
    }
}

/// The server prints `NaN`, `Infinity` and `-Infinity`; Swift prints `nan` and `inf`.
private func postgresText(isNaN: Bool, infinite: Bool, negative: Bool, finite: @autoclosure () -> String) -> String {
    if isNaN { return "NaN" }
    if infinite { return negative ? "-Infinity" : "Infinity" }
    return finite()
}

/// The server's shortest exact text form, read back exactly (`strtod` knows `NaN` and
/// `Infinity` too). The cell is NUL-terminated by libpq, so no copy is needed.
@usableFromInline
func parseFloatingPoint(_ bytes: UnsafeRawBufferPointer) -> Double? {
    guard let start = bytes.baseAddress?.assumingMemoryBound(to: CChar.self), !bytes.isEmpty else { return nil }
    var end: UnsafeMutablePointer<CChar>?
    let value = strtod(start, &end)
    guard let end, UnsafeRawPointer(end) == bytes.baseAddress! + bytes.count else { return nil }
    return value
}
