import Foundation

extension Decimal {
    /// `numeric_send`'s form of the number: the count of base-10000 digits, the first one's
    /// weight, the sign, the number of decimal digits after the point, then the digits.
    /// Where a parameter goes as text, a field of a composite sent in binary cannot.
    ///
    /// - Returns: The bytes.
    public func numericBinary() -> [UInt8] {
        var buffer: [UInt8] = []
        if isNaN {
            for part: Int16 in [0, 0, Int16(bitPattern: 0xC000), 0] { buffer.appendBigEndian(part) }
            return buffer
        }
        let text = description
        let negative = text.hasPrefix("-")
        let unsigned = negative ? text.dropFirst() : Substring(text)
        let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        var integer = Array(parts[0].utf8).map { Int16($0 - UInt8(ascii: "0")) }
        var fraction = parts.count > 1 ? Array(parts[1].utf8).map { Int16($0 - UInt8(ascii: "0")) } : []
        let scale = Int16(fraction.count)
        while integer.count % 4 != 0 { integer.insert(0, at: 0) }
        while fraction.count % 4 != 0 { fraction.append(0) }
        func groups(_ digits: [Int16]) -> [Int16] {
            stride(from: 0, to: digits.count, by: 4).map { digits[$0] * 1000 + digits[$0 + 1] * 100 + digits[$0 + 2] * 10 + digits[$0 + 3] }
        }
        var digits = groups(integer) + groups(fraction)
        var weight = Int16(integer.count / 4) - 1
        while digits.first == 0 {
            digits.removeFirst()
            weight -= 1
        }
        while digits.last == 0 { digits.removeLast() }
        if digits.isEmpty { weight = 0 }
        buffer.appendBigEndian(Int16(digits.count))
        buffer.appendBigEndian(weight)
        buffer.appendBigEndian(negative && !digits.isEmpty ? Int16(0x4000) : Int16(0))
        buffer.appendBigEndian(scale)
        for digit in digits { buffer.appendBigEndian(digit) }
        return buffer
    }
}
