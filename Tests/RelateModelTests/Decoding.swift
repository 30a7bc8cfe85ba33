import RelatePostgres

/// A cell's bytes decoded as a type, as a result hands them over: a text cell with its
/// terminating NUL outside the cell, a binary one as it is.
func decode<T: PostgresDecodable>(_: T.Type, text: String, type: PostgresType) throws -> T {
    var bytes = Array(text.utf8)
    bytes.append(0)
    return try bytes.withUnsafeBytes { try T.decode(from: UnsafeRawBufferPointer(rebasing: $0.dropLast()), type: type, format: .text) }
}

/// See ``decode(_:text:type:)``.
func decode<T: PostgresDecodable>(_: T.Type, binary: [UInt8], type: PostgresType) throws -> T {
    try binary.withUnsafeBytes { try T.decode(from: $0, type: type, format: .binary) }
}
