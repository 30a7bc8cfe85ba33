import Foundation

/// `date`, `timestamp` and `timestamptz` read as `Date`; a `Date` is sent as `timestamptz`.
/// The session runs in UTC (see `Connection`), so a `timestamp` column stores and returns
/// the UTC wall-clock time of the instant. `infinity` reads as an infinite `Date`, which
/// is sent back as `infinity`.
extension Date: PostgresArrayElement {
    /// `Date` is sent as `timestamptz`.
    public static var postgresType: PostgresType { .timestamptz }
    /// `Date` is sent in binary form.
    public static var postgresFormat: PostgresFormat { .binary }
    /// `[Date]` is sent as `timestamptz[]`.
    public static var postgresArrayType: PostgresType { .timestamptzArray }

    /// 2000-01-01 00:00:00 UTC, PostgreSQL's epoch, in seconds since 1970.
    static let postgresEpoch: Double = 946_684_800

    /// Appends the microseconds since 2000-01-01 UTC (rounded), as a `timestamptz`; infinite
    /// dates are `infinity` and `-infinity`.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: A ``PostgresEncodingError`` when PostgreSQL cannot take the value.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        let seconds = timeIntervalSince1970
        if seconds.isNaN { throw PostgresEncodingError("the date is not a number") }
        if seconds.isInfinite {
            buffer.appendBigEndian(seconds > 0 ? Int64.max : Int64.min)
            return
        }
        let micros = ((seconds - Self.postgresEpoch) * 1_000_000).rounded()
        // The two extreme values are the server's ±infinity, which a finite Date is not.
        guard let value = Int64(exactly: micros), value != .min, value != .max else {
            throw PostgresEncodingError("the date is out of range")
        }
        buffer.appendBigEndian(value)
    }

    /// Appends the ISO 8601 text form of the instant in UTC.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        let seconds = timeIntervalSince1970
        if seconds.isInfinite {
            buffer.append(contentsOf: (seconds > 0 ? "infinity" : "-infinity").utf8)
            return
        }
        // Whole seconds and microseconds apart: the server's latest timestamp counted in
        // microseconds since 1970 does not fit in 64 bits. A Date far beyond the server's
        // range (year 5874897) goes as text the server refuses, naming it.
        var whole = seconds.rounded(.down)
        guard abs(whole) < 1e15 else {
            buffer.append(contentsOf: "\(seconds) seconds since 1970 (out of range)".utf8)
            return
        }
        var microOfSecond = Int(((seconds - whole) * 1_000_000).rounded())
        if microOfSecond == 1_000_000 {
            whole += 1
            microOfSecond = 0
        }
        let (days, secondOfDay) = Int(whole).floorDivided(by: 86_400)
        let (year, month, day) = CivilDate.fromDays(days)
        var text = CivilDate.format(year: year, month: month, day: day, withEra: false)
        text += " " + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        text += "." + pad(microOfSecond, 6) + "+00"
        if year <= 0 { text += " BC" }
        buffer.append(contentsOf: text.utf8)
    }

    /// Reads a `timestamptz`, `timestamp` (taken as UTC) or `date` (midnight UTC) cell in
    /// either form; `infinity` reads as an infinite time interval. A cell of another type throws.
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value.
    /// - Throws: A ``PostgresDecodingError`` when the cell's type cannot be read as this
    ///   type, or its bytes are malformed.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> Date {
        switch (format, type) {
        case (.binary, .timestamptz) where bytes.count == 8, (.binary, .timestamp) where bytes.count == 8:
            let micros = bytes.bigEndian(Int64.self)
            if micros == .max { return Date(timeIntervalSince1970: .infinity) }
            if micros == .min { return Date(timeIntervalSince1970: -.infinity) }
            return Date(timeIntervalSince1970: Double(micros) / 1_000_000 + postgresEpoch)
        case (.binary, .date) where bytes.count == 4:
            let days = bytes.bigEndian(Int32.self)
            if days == .max { return Date(timeIntervalSince1970: .infinity) }
            if days == .min { return Date(timeIntervalSince1970: -.infinity) }
            return Date(timeIntervalSince1970: Double(days) * 86_400 + postgresEpoch)
        case (.text, .timestamptz), (.text, .timestamp), (.text, .date):
            guard let date = parseISO(bytes.utf8String) else { throw .malformed(type, format) }
            return date
        default:
            throw .mismatch(Date.self, type, format)
        }
    }

    /// The ISO output style: `2024-05-06[ 07:08:09[.123456]][+02[:30[:15]]][ BC]`.
    private static func parseISO(_ text: String) -> Date? {
        if text == "infinity" { return Date(timeIntervalSince1970: .infinity) }
        if text == "-infinity" { return Date(timeIntervalSince1970: -.infinity) }
        var scanner = DigitScanner(Array(text.utf8))
        var bc = false
        if scanner.bytes.count > 3, scanner.bytes.suffix(3) == Array(" BC".utf8) {
            bc = true
            scanner.bytes.removeLast(3)
        }
        guard var year = scanner.number(), scanner.skip("-"), let month = scanner.number(),
            scanner.skip("-"), let day = scanner.number(), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        if bc { year = 1 - year }
        var micros = 0
        if scanner.skip(" ") {
            guard let hour = scanner.number(), scanner.skip(":"), let minute = scanner.number(),
                scanner.skip(":"), let second = scanner.number(), hour <= 24, minute <= 59, second <= 60
            else { return nil }
            micros = ((hour * 60 + minute) * 60 + second) * 1_000_000
            if scanner.skip(".") {
                let start = scanner.position
                guard let fraction = scanner.number() else { return nil }
                let digits = scanner.position - start
                guard digits <= 6 else { return nil }
                micros += fraction * Int(pow(10, Double(6 - digits)))
            }
            if let sign = scanner.peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                scanner.position += 1
                guard let hours = scanner.number(), hours <= 24 else { return nil }
                var offset = hours * 3600
                if scanner.skip(":") { guard let minutes = scanner.number() else { return nil }; offset += minutes * 60 }
                if scanner.skip(":") { guard let seconds = scanner.number() else { return nil }; offset += seconds }
                micros -= (sign == UInt8(ascii: "+") ? offset : -offset) * 1_000_000
            }
        }
        guard scanner.atEnd else { return nil }
        let days = CivilDate.days(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days) * 86_400 + Double(micros) / 1_000_000)
    }
}

/// Proleptic Gregorian dates and day numbers since 1970-01-01 (astronomical years: 0 is 1 BC).
enum CivilDate {
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func fromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func format(year: Int, month: Int, day: Int, withEra: Bool) -> String {
        let shownYear = year <= 0 ? 1 - year : year
        return pad(shownYear, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + (withEra && year <= 0 ? " BC" : "")
    }
}

private func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

private struct DigitScanner {
    var bytes: [UInt8]
    var position = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var atEnd: Bool { position == bytes.count }
    func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }
    mutating func skip(_ character: Character) -> Bool {
        guard peek() == character.asciiValue else { return false }
        position += 1
        return true
    }
    /// At most nine digits (the server's longest field is a seven-digit year, or a
    /// six-digit fraction), so that no field, nor the microseconds made of them, overflows.
    mutating func number() -> Int? {
        var value = 0
        let start = position
        while let byte = peek(), byte >= 48, byte <= 57 {
            guard position - start < 9 else { return nil }
            value = value * 10 + Int(byte - 48)
            position += 1
        }
        return position > start ? value : nil
    }
}

extension Int {
    /// Division rounding toward negative infinity, so times before 1970 split into a day
    /// and a non-negative time of day.
    func floorDivided(by divisor: Int) -> (quotient: Int, remainder: Int) {
        let (q, r) = quotientAndRemainder(dividingBy: divisor)
        return r < 0 ? (q - 1, r + divisor) : (q, r)
    }
}
