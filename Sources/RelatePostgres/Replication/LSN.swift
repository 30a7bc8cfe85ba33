/// A position in the server's write-ahead log (`pg_lsn`), written `16/B374D848`.
public struct LSN: RawRepresentable, Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The position as one 64-bit number: the high half before the slash, the low half after.
    public var rawValue: UInt64
    /// Creates the position from its 64-bit number.
    ///
    /// - Parameter rawValue: The position as one 64-bit number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The position `0/0`: before any WAL, as in "start from where the slot is".
    public static let zero = LSN(rawValue: 0)

    /// Reads the server's text form, two hexadecimal halves around a slash.
    ///
    /// - Parameter text: The text form, `16/B374D848`; `nil` when it is not one.
    public init?(_ text: String) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, let high = UInt32(halves[0], radix: 16), let low = UInt32(halves[1], radix: 16) else { return nil }
        rawValue = UInt64(high) << 32 | UInt64(low)
    }

    /// The server's text form, `16/B374D848`.
    public var description: String {
        String(rawValue >> 32, radix: 16, uppercase: true) + "/" + String(rawValue & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    /// Whether `left` comes before `right` in the log.
    ///
    /// - Parameters:
    ///   - left: A position.
    ///   - right: Another position.
    /// - Returns: `true` when `left` is earlier.
    public static func < (left: LSN, right: LSN) -> Bool { left.rawValue < right.rawValue }
}
