import RelatePostgres

/// A parameter in binary form, encoded once and bound as its bytes: for values a statement
/// binds again and again unchanged. A live round binds each principal's tests of the
/// changed rows (arrays of the requests' values) every round; encoding them anew was a
/// sixth of the hub's process time under a hundred tenants (Benchmarks/README.md,
/// "Decisions of a round in one transaction").
struct EncodedParameter: PostgresEncodable, Sendable {
    static var postgresType: PostgresType { .unspecified }
    static var postgresFormat: PostgresFormat { .binary }
    let postgresValueType: PostgresType
    let bytes: [UInt8]

    /// `value` encoded now, when it goes in binary form; `value` itself otherwise (text is
    /// copied as it is bound anyway), or when it cannot be encoded (binding it reports why).
    static func once(_ value: (any PostgresEncodable)?) -> (any PostgresEncodable)? {
        guard let value, type(of: value).postgresFormat == .binary else { return value }
        var bytes: [UInt8] = []
        do {
            try value.encode(into: &bytes)
        } catch {
            return value
        }
        return EncodedParameter(postgresValueType: value.postgresValueType, bytes: bytes)
    }

    func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.append(contentsOf: bytes)
    }
}
