/// A time of day, as PostgreSQL's `time` and `timetz` hold it: microseconds since
/// midnight, and for `timetz` the UTC offset it was written with. Not a `Date`: a time of
/// day has no date, and turning it into one would invent it.
///
/// ```swift
/// let opening = PostgresTime(hour: 9, minute: 30)                          // time
/// let call = PostgresTime(hour: 9, minute: 30, utcOffset: 2 * 3600)        // timetz, 09:30:00+02
/// ```
public struct PostgresTime: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Microseconds since midnight: 0 through 86,400,000,000 (`24:00:00` is a valid time).
    public var microseconds: Int64
    /// The offset from UTC in seconds, east positive (`+02` is 7200), for a `timetz`;
    /// `nil` for a `time`.
    public var utcOffset: Int32?

    /// Creates a time from microseconds since midnight.
    ///
    /// - Parameters:
    ///   - microseconds: Microseconds since midnight.
    ///   - utcOffset: The offset from UTC in seconds, east positive, for a `timetz`; `nil`
    ///     for a `time`.
    public init(microseconds: Int64, utcOffset: Int32? = nil) {
        self.microseconds = microseconds
        self.utcOffset = utcOffset
    }

    /// Creates a time from its fields.
    ///
    /// - Parameters:
    ///   - hour: 0 through 24.
    ///   - minute: 0 through 59.
    ///   - second: 0 through 59.
    ///   - microsecond: 0 through 999,999.
    ///   - utcOffset: The offset from UTC in seconds, east positive, for a `timetz`; `nil`
    ///     for a `time`.
    public init(hour: Int, minute: Int, second: Int = 0, microsecond: Int = 0, utcOffset: Int32? = nil) {
        self.init(microseconds: Int64(((hour * 60 + minute) * 60 + second) * 1_000_000 + microsecond), utcOffset: utcOffset)
    }

    /// The hour, 0 through 24.
    public var hour: Int { Int(microseconds / 3_600_000_000) }
    /// The minute, 0 through 59.
    public var minute: Int { Int(microseconds / 60_000_000 % 60) }
    /// The second, 0 through 59.
    public var second: Int { Int(microseconds / 1_000_000 % 60) }
    /// The microseconds of the second, 0 through 999,999.
    public var microsecond: Int { Int(microseconds % 1_000_000) }

    /// The time as PostgreSQL prints it: `09:30:00`, `09:30:00.5+02`, `09:30:00-03:30`.
    public var description: String {
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text = pad(hour) + ":" + pad(minute) + ":" + pad(second)
        if microsecond != 0 {
            var digits = String(microsecond)
            digits = String(repeating: "0", count: 6 - digits.count) + digits
            while digits.last == "0" { digits.removeLast() }
            text += "." + digits
        }
        if let utcOffset {
            let magnitude = Int(utcOffset.magnitude)
            text += (utcOffset < 0 ? "-" : "+") + pad(magnitude / 3600)
            if magnitude % 3600 != 0 { text += ":" + pad(magnitude / 60 % 60) }
            if magnitude % 60 != 0 { text += ":" + pad(magnitude % 60) }
        }
        return text
    }
}

extension PostgresTime: PostgresArrayElement {
    /// `PostgresTime` is sent as `time` (see ``postgresValueType``).
    public static var postgresType: PostgresType { .time }
    /// `PostgresTime` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[PostgresTime]` is sent as `time[]`.
    public static var postgresArrayType: PostgresType { .timeArray }
    /// `timetz` for a time with a UTC offset, `time` for one without.
    public var postgresValueType: PostgresType { utcOffset == nil ? .time : .timetz }

    /// Appends the microseconds since midnight (64 bits), then for a `timetz` the offset in
    /// seconds west of UTC (32 bits), as `time_send` and `timetz_send` write them.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: A ``PostgresEncodingError`` for a time outside `00:00:00` through `24:00:00`,
    ///   or an offset of 16 hours or more.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        guard (0...86_400_000_000).contains(microseconds) else {
            throw PostgresEncodingError("a time of day is 00:00:00 through 24:00:00, not \(microseconds) microseconds")
        }
        // The server takes offsets within 16 hours either way (`timetz_recv`); the check
        // also keeps `Int32.min`, which has no negation, from trapping.
        if let utcOffset, utcOffset.magnitude >= 16 * 3600 {
            throw PostgresEncodingError("a time zone's offset is less than 16 hours either way, not \(utcOffset) seconds")
        }
        buffer.appendBigEndian(microseconds)
        // PostgreSQL counts the zone west positive, the opposite of ISO 8601.
        if let utcOffset { buffer.appendBigEndian(-utcOffset) }
    }

    /// Appends the time's text form (``description``).
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: description.utf8)
    }

    /// Reads a `time` or `timetz` cell in either form (the text form as the server prints
    /// it: `HH:MM:SS[.ffffff][+HH[:MM[:SS]]]`).
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value; `utcOffset` is set for a `timetz`.
    /// - Throws: A ``PostgresDecodingError`` when the cell is neither type, or its bytes are
    ///   malformed.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> PostgresTime {
        switch (format, type) {
        case (.binary, .time) where bytes.count == 8:
            return PostgresTime(microseconds: bytes.bigEndian(Int64.self))
        case (.binary, .timetz) where bytes.count == 12:
            // Seconds west of UTC; Int32.min has no east (a server sends at most ±15:59:59).
            let west = bytes.bigEndian(Int32.self, at: 8)
            guard west != .min else { throw .malformed(type, format) }
            return PostgresTime(microseconds: bytes.bigEndian(Int64.self), utcOffset: -west)
        case (.text, .time), (.text, .timetz):
            guard let value = parse(bytes.utf8String), (value.utcOffset != nil) == (type == .timetz) else {
                throw .malformed(type, format)
            }
            return value
        default:
            throw .mismatch(PostgresTime.self, type, format)
        }
    }

    private static func parse(_ text: String) -> PostgresTime? {
        var clock = Substring(text)
        var offset: Int32?
        if let sign = clock.lastIndex(where: { $0 == "+" || $0 == "-" }) {
            let fields = clock[clock.index(after: sign)...].split(separator: ":", omittingEmptySubsequences: false).map { Int32($0) }
            // Hours of two digits at most, minutes and seconds under 60: the sum fits.
            guard (1...3).contains(fields.count), fields.allSatisfy({ $0 != nil && $0! >= 0 }),
                fields[0]! < 100, fields.dropFirst().allSatisfy({ $0! < 60 })
            else { return nil }
            let seconds = fields.enumerated().reduce(Int32(0)) { $0 + $1.element! * [3600, 60, 1][$1.offset] }
            offset = clock[sign] == "-" ? -seconds : seconds
            clock = clock[..<sign]
        }
        let parts = clock.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let hour = Int(parts[0]), let minute = Int(parts[1]) else { return nil }
        let secondParts = parts[2].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let second = Int(secondParts[0]), (0...24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second) else {
            return nil
        }
        var microsecond = 0
        if secondParts.count == 2 {
            let digits = secondParts[1]
            guard (1...6).contains(digits.count), let fraction = Int(digits), fraction >= 0 else { return nil }
            microsecond = fraction * [100_000, 10_000, 1000, 100, 10, 1][digits.count - 1]
        }
        return PostgresTime(hour: hour, minute: minute, second: second, microsecond: microsecond, utcOffset: offset)
    }
}
