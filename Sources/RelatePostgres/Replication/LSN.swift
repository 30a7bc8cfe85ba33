/// A position in the server's write-ahead log (`pg_lsn`), written `16/B374D848`.
public struct LSN: RawRepresentable, Comparable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let zero = LSN(rawValue: 0)

    /// Reads the server's text form, two hexadecimal halves around a slash.
    public init?(_ text: String) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, let high = UInt32(halves[0], radix: 16), let low = UInt32(halves[1], radix: 16) else { return nil }
        rawValue = UInt64(high) << 32 | UInt64(low)
    }

    public var description: String {
        String(rawValue >> 32, radix: 16, uppercase: true) + "/" + String(rawValue & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    public static func < (left: LSN, right: LSN) -> Bool { left.rawValue < right.rawValue }
}
