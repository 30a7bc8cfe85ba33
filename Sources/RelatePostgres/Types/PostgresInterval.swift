/// A PostgreSQL `interval`: months, days and microseconds, kept apart as the server keeps
/// them. Never flattened to seconds: a month is 28 to 31 days and a day 23 to 25 hours
/// across a daylight-saving change, so `1 mon` added to a date is not any number of seconds.
///
/// ```swift
/// let grace = PostgresInterval(months: 1, days: 15, microseconds: 2 * 3_600_000_000)  // 1 mon 15 days 02:00:00
/// let due = try connection.query("SELECT now() + $1", [grace])
/// ```
public struct PostgresInterval: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Whole months (a year is 12).
    public var months: Int32
    /// Whole days.
    public var days: Int32
    /// The time part, in microseconds.
    public var microseconds: Int64

    /// Creates an interval from its three parts, as PostgreSQL stores them.
    ///
    /// - Parameters:
    ///   - months: Whole months (a year is 12).
    ///   - days: Whole days.
    ///   - microseconds: The time part, in microseconds.
    public init(months: Int32 = 0, days: Int32 = 0, microseconds: Int64 = 0) {
        self.months = months
        self.days = days
        self.microseconds = microseconds
    }

    /// The interval in PostgreSQL's default output style (`1 year 2 mons 3 days 04:05:06.5`).
    public var description: String {
        var parts: [String] = []
        let (years, months) = (self.months / 12, self.months % 12)
        func unit(_ value: Int32, _ singular: String, _ plural: String) {
            if value != 0 { parts.append("\(value) \(value.magnitude == 1 ? singular : plural)") }
        }
        unit(years, "year", "years")
        unit(months, "mon", "mons")
        unit(days, "day", "days")
        if microseconds != 0 || parts.isEmpty {
            let negative = microseconds < 0
            let magnitude = microseconds.magnitude
            let seconds = magnitude / 1_000_000
            let fraction = magnitude % 1_000_000
            var time = (negative ? "-" : "") + Self.pad(seconds / 3600) + ":" + Self.pad(seconds / 60 % 60) + ":" + Self.pad(seconds % 60)
            if fraction != 0 {
                var digits = String(fraction)
                digits = String(repeating: "0", count: 6 - digits.count) + digits
                while digits.last == "0" { digits.removeLast() }
                time += "." + digits
            }
            parts.append(time)
        }
        return parts.joined(separator: " ")
    }

    private static func pad(_ value: UInt64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}

extension PostgresInterval: PostgresArrayElement {
    /// `PostgresInterval` is sent as `interval`.
    public static var postgresType: PostgresType { .interval }
    /// `PostgresInterval` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[PostgresInterval]` is sent as `interval[]`.
    public static var postgresArrayType: PostgresType { .intervalArray }

    /// Appends the microseconds (64 bits), the days and the months (32 bits each), as
    /// `interval_send` writes them.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.appendBigEndian(microseconds)
        buffer.appendBigEndian(days)
        buffer.appendBigEndian(months)
    }

    /// Appends the interval as `N mons N days N microseconds`, which the server reads
    /// exactly whatever its `IntervalStyle`.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: "\(months) mons \(days) days \(microseconds) microseconds".utf8)
    }

    /// Reads an `interval` cell: the binary form, or the text form in the `postgres`
    /// `IntervalStyle` (the server's default: `1 year 2 mons -3 days +04:05:06.789`).
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value.
    /// - Throws: A ``PostgresDecodingError`` when the cell is not an `interval`, or its bytes
    ///   are malformed (or in another `IntervalStyle`).
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> PostgresInterval {
        switch (format, type) {
        case (.binary, .interval) where bytes.count == 16:
            return PostgresInterval(
                months: bytes.bigEndian(Int32.self, at: 12), days: bytes.bigEndian(Int32.self, at: 8),
                microseconds: bytes.bigEndian(Int64.self, at: 0))
        case (.text, .interval):
            guard let value = parse(bytes.utf8String) else { throw .malformed(type, format) }
            return value
        default:
            throw .mismatch(PostgresInterval.self, type, format)
        }
    }

    /// The `postgres` style: `N unit` pairs (years, mons, days) and an optional
    /// `[+-]HH:MM:SS[.ffffff]`. `infinity` (PostgreSQL 17) has no three-part value.
    static func parse(_ text: String) -> PostgresInterval? {
        var value = PostgresInterval()
        let words = text.split(separator: " ")
        var index = 0
        while index < words.count {
            let word = words[index]
            if word.contains(":") {
                guard let micros = parseTime(word) else { return nil }
                value.microseconds = micros
                index += 1
                continue
            }
            guard index + 1 < words.count, let number = Int32(word) else { return nil }
            switch words[index + 1] {
            case "year", "years":
                guard case let (months, false) = number.multipliedReportingOverflow(by: 12) else { return nil }
                value.months = value.months &+ months
            case "mon", "mons": value.months = value.months &+ number
            case "day", "days": value.days = number
            default: return nil
            }
            index += 2
        }
        return value
    }

    /// `[+-]HH:MM:SS[.ffffff]`, hours of any length.
    private static func parseTime(_ word: Substring) -> Int64? {
        var rest = word
        var negative = false
        if let sign = rest.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            rest = rest.dropFirst()
        }
        let fields = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 3, let hours = Int64(fields[0]), let minutes = Int64(fields[1]), hours >= 0, (0..<60).contains(minutes)
        else { return nil }
        let secondParts = fields[2].split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let seconds = Int64(secondParts[0]), (0..<60).contains(seconds) else { return nil }
        // Checked at every step: hours come in any length, and the server's own least
        // interval (-2562047788:00:54.775808) is Int64.min microseconds, whose magnitude
        // does not fit: the sign goes on before the fraction.
        guard case let (hourMinutes, false) = hours.multipliedReportingOverflow(by: 60),
            case let (totalMinutes, false) = hourMinutes.addingReportingOverflow(minutes),
            case let (minuteSeconds, false) = totalMinutes.multipliedReportingOverflow(by: 60),
            case let (totalSeconds, false) = minuteSeconds.addingReportingOverflow(seconds),
            case let (scaled, false) = totalSeconds.multipliedReportingOverflow(by: 1_000_000)
        else { return nil }
        var micros = negative ? -scaled : scaled
        if secondParts.count == 2 {
            let digits = secondParts[1]
            guard (1...6).contains(digits.count), let fraction = Int64(digits), fraction >= 0 else { return nil }
            var scale: Int64 = 1
            for _ in digits.count..<6 { scale *= 10 }
            guard case let (sum, false) = micros.addingReportingOverflow(negative ? -(fraction * scale) : fraction * scale) else { return nil }
            micros = sum
        }
        return micros
    }
}
