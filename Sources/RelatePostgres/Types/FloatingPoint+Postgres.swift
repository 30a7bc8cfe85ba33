import Foundation

extension Double: PostgresArrayElement {
    public static var postgresType: PostgresType { .float8 }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .float8Array }

    @inlinable
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.appendBigEndian(bitPattern)
    }

    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: postgresText(isNaN: isNaN, infinite: isInfinite, negative: self < 0, finite: "\(self)").utf8)
    }

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
    public static var postgresType: PostgresType { .float4 }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .float4Array }

    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.appendBigEndian(bitPattern)
    }

    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: postgresText(isNaN: isNaN, infinite: isInfinite, negative: self < 0, finite: "\(self)").utf8)
    }

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
