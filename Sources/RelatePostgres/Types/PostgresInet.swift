#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An `inet` or `cidr` value: an IPv4 or IPv6 address and the length of its network
/// prefix (`192.168.0.1/24`; a host is `/32` or `/128`). A `cidr` is a network: no bit of
/// its address beyond the prefix is set.
///
/// ```swift
/// let host = try PostgresInet("10.0.0.7")            // 10.0.0.7/32, an inet
/// let net = try PostgresInet("fd00::/8", isNetwork: true)   // a cidr
/// ```
public struct PostgresInet: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The address's bytes in network order: 4 for IPv4, 16 for IPv6.
    public var address: [UInt8]
    /// The length of the network prefix in bits: at most 32 for IPv4, 128 for IPv6.
    public var prefixLength: Int
    /// Whether this is a `cidr` (a network) rather than an `inet`; it is sent as that type.
    public var isNetwork: Bool

    /// Whether the address is an IPv6 one.
    public var isIPv6: Bool { address.count == 16 }

    /// Creates a value from an address's bytes.
    ///
    /// - Parameters:
    ///   - address: 4 bytes (IPv4) or 16 (IPv6), in network order.
    ///   - prefixLength: The network prefix's length in bits; `nil` for the whole address (a host).
    ///   - isNetwork: Whether it is a `cidr`.
    /// - Throws: A ``PostgresEncodingError`` for another number of bytes or a prefix longer
    ///   than the address.
    public init(address: [UInt8], prefixLength: Int? = nil, isNetwork: Bool = false) throws(PostgresEncodingError) {
        guard address.count == 4 || address.count == 16 else {
            throw PostgresEncodingError("an IP address has 4 or 16 bytes, not \(address.count)")
        }
        let prefix = prefixLength ?? address.count * 8
        guard (0...(address.count * 8)).contains(prefix) else {
            throw PostgresEncodingError("a prefix of \(prefix) bits is longer than the address")
        }
        self.address = address
        self.prefixLength = prefix
        self.isNetwork = isNetwork
    }

    /// Parses `address[/prefix]`, IPv4 or IPv6, as PostgreSQL prints it.
    ///
    /// - Parameters:
    ///   - text: The address and an optional prefix length.
    ///   - isNetwork: Whether it is a `cidr`.
    /// - Throws: A ``PostgresEncodingError`` when the text is not an address.
    public init(_ text: String, isNetwork: Bool = false) throws(PostgresEncodingError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let host = String(parts[0])
        var bytes = [UInt8](repeating: 0, count: 16)
        let count: Int
        if host.contains(":") {
            guard inet_pton(AF_INET6, host, &bytes) == 1 else { throw PostgresEncodingError("\"\(text)\" is not an IP address") }
            count = 16
        } else {
            guard inet_pton(AF_INET, host, &bytes) == 1 else { throw PostgresEncodingError("\"\(text)\" is not an IP address") }
            count = 4
        }
        var prefix: Int?
        if parts.count == 2 {
            guard let length = Int(parts[1]) else { throw PostgresEncodingError("\"\(text)\" has no valid prefix length") }
            prefix = length
        }
        try self.init(address: Array(bytes.prefix(count)), prefixLength: prefix, isNetwork: isNetwork)
    }

    /// The address alone, as `inet_ntop` writes it (`10.0.0.7`, `fd00::1`).
    public var addressText: String {
        var buffer = [CChar](repeating: 0, count: 64)
        let family = isIPv6 ? AF_INET6 : AF_INET
        let written = address.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// As PostgreSQL prints it: an `inet` host without its prefix (`10.0.0.7`), any other
    /// value with it (`10.0.0.0/8`).
    public var description: String {
        !isNetwork && prefixLength == address.count * 8 ? addressText : "\(addressText)/\(prefixLength)"
    }
}

extension PostgresInet: PostgresArrayElement {
    /// `PostgresInet` is sent as `inet` (see ``postgresValueType``).
    public static var postgresType: PostgresType { .inet }
    /// `PostgresInet` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[PostgresInet]` is sent as `inet[]`.
    public static var postgresArrayType: PostgresType { .inetArray }
    /// `cidr` for a network, `inet` otherwise.
    public var postgresValueType: PostgresType { isNetwork ? .cidr : .inet }

    // The address families as `inet_send` numbers them (not the system's AF_ values).
    private static let familyIPv4: UInt8 = 2
    private static let familyIPv6: UInt8 = 3

    /// Appends the family, the prefix length, the `cidr` flag, the address's length and its
    /// bytes, as `inet_send` writes them.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: A ``PostgresEncodingError`` for an address that is neither 4 nor 16 bytes.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        guard address.count == 4 || address.count == 16, (0...(address.count * 8)).contains(prefixLength) else {
            throw PostgresEncodingError("an IP address has 4 or 16 bytes and a prefix no longer than them")
        }
        buffer.append(isIPv6 ? Self.familyIPv6 : Self.familyIPv4)
        buffer.append(UInt8(prefixLength))
        buffer.append(isNetwork ? 1 : 0)
        buffer.append(UInt8(address.count))
        buffer.append(contentsOf: address)
    }

    /// Appends the value's text form (``description``).
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: "\(addressText)/\(prefixLength)".utf8)
    }

    /// Reads an `inet` or `cidr` cell in either form.
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value; `isNetwork` is set for a `cidr`.
    /// - Throws: A ``PostgresDecodingError`` when the cell is neither type, or its bytes are
    ///   malformed.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> PostgresInet {
        switch (format, type) {
        case (.binary, .inet), (.binary, .cidr):
            guard bytes.count >= 4, Int(bytes[3]) == bytes.count - 4, bytes[0] == (bytes[3] == 16 ? familyIPv6 : familyIPv4),
                let value = try? PostgresInet(address: Array(bytes[4...]), prefixLength: Int(bytes[1]), isNetwork: bytes[2] == 1)
            else { throw .malformed(type, format) }
            return value
        case (.text, .inet), (.text, .cidr):
            guard let value = try? PostgresInet(bytes.utf8String, isNetwork: type == .cidr) else { throw .malformed(type, format) }
            return value
        default:
            throw .mismatch(PostgresInet.self, type, format)
        }
    }
}
