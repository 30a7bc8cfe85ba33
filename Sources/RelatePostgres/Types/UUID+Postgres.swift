import Foundation

extension UUID: PostgresArrayElement {
    public static var postgresType: PostgresType { .uuid }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .uuidArray }

    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        withUnsafeBytes(of: uuid) { buffer.append(contentsOf: $0) }
    }

    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: uuidString.lowercased().utf8)
    }

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
