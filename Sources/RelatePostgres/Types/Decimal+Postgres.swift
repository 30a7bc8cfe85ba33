import Foundation

/// `numeric`, sent and read in its exact text form. The binary form (base-10000 digits) is
/// read too, for results fetched in binary.
extension Decimal: PostgresArrayElement {
    /// `Decimal` is sent as `numeric`.
    public static var postgresType: PostgresType { .numeric }
    /// `Decimal` is sent in text form.
    public static var postgresFormat: PostgresFormat { .text }
    /// `[Decimal]` is sent as `numeric[]`.
    public static var postgresArrayType: PostgresType { .numericArray }

    /// Appends the number's text form, which the server parses exactly.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: Never for this type: every value can be sent.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        encodeText(into: &buffer)
    }

    /// Appends the number's text form.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: (isNaN ? "NaN" : description).utf8)
    }

    /// Reads a `numeric` or integer cell in either form; `NaN` reads as `Decimal.nan`. A value
    /// with more digits than `Decimal` holds (38) throws rather than rounding.
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
    ) throws(PostgresDecodingError) -> Decimal {
        let text: String
        switch (format, type) {
        case (.text, _) where type == .numeric || type.isInteger:
            if let value = exact(text: bytes) { return value }
            text = bytes.utf8String
        case (.binary, .numeric):
            if let value = try exact(binary: bytes) { return value }
            text = try numericText(binary: bytes)
        case (.binary, _) where type.isInteger:
            return Decimal(try Int.decode(from: bytes, type: type, format: format))
        case (.text, .money):
            guard let plain = moneyText(bytes.utf8String) else {
                throw PostgresDecodingError("a money value in this lc_monetary's form cannot be read as Decimal; select it as numeric")
            }
            text = plain
        case (.binary, .money):
            throw PostgresDecodingError("money's binary form is scaled by the server's lc_monetary; select it as numeric")
        default:
            throw .mismatch(Decimal.self, type, format)
        }
        if text == "NaN" { return .nan }
        if text.hasSuffix("Infinity") { throw PostgresDecodingError("numeric infinity does not fit in Decimal") }
        // Decimal holds 38 digits and exponents -128...127; it would round a longer value
        // silently (or give up), so a value that does not read back the same is an error.
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
            Self.sameNumber(text, value.description)
        else {
            throw PostgresDecodingError("a numeric value of \(text.count) characters does not fit in Decimal (38 digits) without rounding")
        }
        return value
    }

    /// The value of a plain decimal text (`-12.3400`: a sign, digits, at most one point)
    /// whose significant digits fit in 64 bits, built from its digits: a twentieth of the
    /// time of Foundation's parse and the check that it read back the same, which a fetch of
    /// `numeric` columns spent most of its time in. `nil` for any other text (more digits,
    /// `NaN`, an exponent, a malformed one): the full path reads or refuses it.
    static func exact(text bytes: UnsafeRawBufferPointer) -> Decimal? {
        var index = bytes.startIndex
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            index += 1
        }
        var significand: UInt64 = 0
        // Zeros after the last nonzero digit, not yet in the significand: a trailing run
        // becomes the exponent, so that the value is compact, as Foundation's parse leaves it.
        var zeros = 0
        var fractionDigits = 0
        var digits = 0
        var point = false
        while index < bytes.endIndex {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: ".") {
                guard !point else { return nil }
                point = true
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            digits += 1
            if point { fractionDigits += 1 }
            let digit = UInt64(byte - UInt8(ascii: "0"))
            if digit == 0 {
                if significand != 0 { zeros += 1 }
                continue
            }
            for _ in 0...zeros {
                let (product, overflow) = significand.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                significand = product
            }
            let (sum, overflow) = significand.addingReportingOverflow(digit)
            guard !overflow else { return nil }
            significand = sum
            zeros = 0
        }
        guard digits > 0 else { return nil }
        return exact(negative: negative, significand: significand, exponent: zeros - fractionDigits)
    }

    /// ``exact(text:)`` of the binary form: base-10000 digits, whose significant digits fit
    /// in 64 bits; `nil` for more, and for `NaN` and the infinities (the full path's).
    static func exact(binary bytes: UnsafeRawBufferPointer) throws(PostgresDecodingError) -> Decimal? {
        guard bytes.count >= 8 else { throw .malformed(.numeric, .binary) }
        let count = Int(bytes.bigEndian(Int16.self, at: 0))
        let weight = Int(bytes.bigEndian(Int16.self, at: 2))
        let sign = bytes.bigEndian(UInt16.self, at: 4)
        guard count >= 0, bytes.count == 8 + 2 * count, sign == 0x0000 || sign == 0x4000 else { return nil }
        var significand: UInt64 = 0
        for index in 0..<count {
            let group = bytes.bigEndian(Int16.self, at: 8 + 2 * index)
            guard (0..<10000).contains(group) else { throw .malformed(.numeric, .binary) }
            let (product, overflow) = significand.multipliedReportingOverflow(by: 10000)
            guard !overflow else { return nil }
            let (sum, carry) = product.addingReportingOverflow(UInt64(group))
            guard !carry else { return nil }
            significand = sum
        }
        // The last group stands for 10000^(weight - count + 1).
        var exponent = 4 * (weight - count + 1)
        while significand != 0, significand % 10 == 0 {
            significand /= 10
            exponent += 1
        }
        return exact(negative: sign == 0x4000, significand: significand, exponent: exponent)
    }

    /// `significand` × 10^`exponent`, or `nil` past `Decimal`'s exponents (-128...127).
    private static func exact(negative: Bool, significand: UInt64, exponent: Int) -> Decimal? {
        if significand == 0 { return Decimal.zero }
        guard (-128...127).contains(exponent) else { return nil }
        return Decimal(sign: negative ? .minus : .plus, exponent: exponent, significand: Decimal(significand))
    }

    /// The number in `money`'s text form where `lc_monetary` writes it as C and English
    /// locales do (`$1,234.56`, `-$0.50`, `($0.50)`): a currency sign before the digits,
    /// `,` between thousands, `.` before the cents. `nil` for any other form.
    static func moneyText(_ text: String) -> String? {
        var negative = false
        var body = Substring(text)
        if body.hasPrefix("(") && body.hasSuffix(")") {
            negative = true
            body = body.dropFirst().dropLast()
        }
        if body.hasPrefix("-") {
            negative = true
            body = body.dropFirst()
        }
        body = body.drop { !$0.isNumber }
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "," || $0 == ".") }),
            body.filter({ $0 == "." }).count <= 1
        else { return nil }
        return (negative ? "-" : "") + body.filter { $0 != "," }
    }

    /// Whether two plain decimal texts (no exponent) name the same number.
    static func sameNumber(_ a: String, _ b: String) -> Bool {
        func normalized(_ text: String) -> String {
            var digits = Substring(text)
            var negative = false
            if digits.first == "-" || digits.first == "+" {
                negative = digits.first == "-"
                digits = digits.dropFirst()
            }
            let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            let whole = parts[0].drop { $0 == "0" }
            let fraction = parts.count > 1 ? parts[1].reversed().drop { $0 == "0" }.reversed() : []
            if whole.isEmpty, fraction.isEmpty { return "0" }
            return (negative ? "-" : "") + whole + "." + String(fraction)
        }
        return normalized(a) == normalized(b)
    }

    /// The binary numeric: ndigits, weight, sign, dscale (int16 each), then base-10000 digits.
    static func numericText(binary bytes: UnsafeRawBufferPointer) throws(PostgresDecodingError) -> String {
        guard bytes.count >= 8 else { throw .malformed(.numeric, .binary) }
        let count = Int(bytes.bigEndian(Int16.self, at: 0))
        let weight = Int(bytes.bigEndian(Int16.self, at: 2))
        let sign = bytes.bigEndian(UInt16.self, at: 4)
        guard bytes.count == 8 + 2 * count else { throw .malformed(.numeric, .binary) }
        switch sign {
        case 0xC000: return "NaN"
        case 0xD000: return "Infinity"
        case 0xF000: return "-Infinity"
        case 0x0000, 0x4000: break
        default: throw .malformed(.numeric, .binary)
        }
        var digits = ""
        for index in 0..<count {
            let value = bytes.bigEndian(Int16.self, at: 8 + 2 * index)
            // A base-10000 digit: anything else would print as more (or fewer) than four.
            guard (0..<10000).contains(value) else { throw .malformed(.numeric, .binary) }
            let group = String(value)
            digits += index == 0 ? group : String(repeating: "0", count: 4 - group.count) + group
        }
        if count == 0 { return "0" }
        // The first group's value is (group) * 10000^weight; append or place the point.
        let firstGroupLength = String(bytes.bigEndian(Int16.self, at: 8)).count
        let integerDigits = firstGroupLength + 4 * weight
        var text: String
        if integerDigits <= 0 {
            text = "0." + String(repeating: "0", count: -integerDigits) + digits
        } else if integerDigits >= digits.count {
            text = digits + String(repeating: "0", count: integerDigits - digits.count)
        } else {
            let split = digits.index(digits.startIndex, offsetBy: integerDigits)
            text = digits[..<split] + "." + digits[split...]
        }
        return (sign == 0x4000 ? "-" : "") + text
    }
}
