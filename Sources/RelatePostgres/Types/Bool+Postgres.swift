extension Bool: PostgresArrayElement {
    public static var postgresType: PostgresType { .bool }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .boolArray }

    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.append(self ? 1 : 0)
    }

    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(self ? UInt8(ascii: "t") : UInt8(ascii: "f"))
    }

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
