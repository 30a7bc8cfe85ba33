/// A `macaddr` (6 bytes) or `macaddr8` (8 bytes) value.
///
/// ```swift
/// let nic = try PostgresMacAddress("08:00:2b:01:02:03")
/// nic.bytes   // [8, 0, 43, 1, 2, 3]
/// ```
public struct PostgresMacAddress: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The address's bytes: 6 for a `macaddr`, 8 for a `macaddr8`.
    public var bytes: [UInt8]

    /// Creates an address from its bytes.
    ///
    /// - Parameter bytes: 6 bytes (`macaddr`) or 8 (`macaddr8`).
    /// - Throws: A ``PostgresEncodingError`` for another number of bytes.
    public init(bytes: [UInt8]) throws(PostgresEncodingError) {
        guard bytes.count == 6 || bytes.count == 8 else {
            throw PostgresEncodingError("a MAC address has 6 or 8 bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// Bytes whose count the caller checked.
    fileprivate init(checked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses the form PostgreSQL prints: six or eight pairs of hexadecimal digits
    /// separated by `:` (or `-`).
    ///
    /// - Parameter text: The address.
    /// - Throws: A ``PostgresEncodingError`` when the text is not an address.
    public init(_ text: String) throws(PostgresEncodingError) {
        let pairs = text.split(whereSeparator: { $0 == ":" || $0 == "-" })
        let bytes = pairs.compactMap { $0.count == 2 ? UInt8($0, radix: 16) : nil }
        guard bytes.count == pairs.count else { throw PostgresEncodingError("\"\(text)\" is not a MAC address") }
        try self.init(bytes: bytes)
    }

    /// The address as PostgreSQL prints it: `08:00:2b:01:02:03`.
    public var description: String {
        bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined(separator: ":")
    }
}

extension PostgresMacAddress: PostgresArrayElement {
    /// `PostgresMacAddress` is sent as `macaddr` (see ``postgresValueType``).
    public static var postgresType: PostgresType { .macaddr }
    /// `PostgresMacAddress` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[PostgresMacAddress]` is sent as `macaddr[]`.
    public static var postgresArrayType: PostgresType { .macaddrArray }
    /// `macaddr8` for eight bytes, `macaddr` for six.
    public var postgresValueType: PostgresType { bytes.count == 8 ? .macaddr8 : .macaddr }

    /// Appends the address's bytes.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: A ``PostgresEncodingError`` for an address of neither 6 nor 8 bytes.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        guard bytes.count == 6 || bytes.count == 8 else {
            throw PostgresEncodingError("a MAC address has 6 or 8 bytes, not \(bytes.count)")
        }
        buffer.append(contentsOf: bytes)
    }

    /// Appends the address's text form (``description``).
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: description.utf8)
    }

    /// Reads a `macaddr` or `macaddr8` cell in either form.
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value.
    /// - Throws: A ``PostgresDecodingError`` when the cell is neither type, or its bytes are
    ///   malformed.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> PostgresMacAddress {
        switch (format, type) {
        case (.binary, .macaddr) where bytes.count == 6, (.binary, .macaddr8) where bytes.count == 8:
            return PostgresMacAddress(checked: Array(bytes))
        case (.text, .macaddr), (.text, .macaddr8):
            guard let value = try? PostgresMacAddress(bytes.utf8String), (value.bytes.count == 8) == (type == .macaddr8) else {
                throw .malformed(type, format)
            }
            return value
        default:
            throw .mismatch(PostgresMacAddress.self, type, format)
        }
    }
}
