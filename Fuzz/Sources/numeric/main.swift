import FuzzSupport
import Foundation
import RelatePostgres

/// numeric read as `Decimal` (header byte 0), and integers read as `Decimal`. Beyond the
/// round trips every target checks, each value read is written in numeric's binary form
/// by an encoder of this target's own and must read back the same, so that the binary
/// decoder is checked against the text one on every value the fuzzer reaches.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNumeric(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzz(data, size, [.scalar(Decimal.self, alsoChecking: expectBinaryRoundTrip)])
}

func expectBinaryRoundTrip(_ value: Decimal) {
    let binary = value.isNaN ? nanNumeric : numericBinary(plainText: value.description)
    do {
        let again = try withCell(binary, format: .binary) { cell throws(PostgresDecodingError) in
            try Decimal.decode(from: cell, type: .numeric, format: .binary)
        }
        if !again.isSame(as: value) {
            finding("Decimal \(value), in numeric's binary form \(binary), reads back as \(again)")
        }
    } catch {
        finding("Decimal \(value), in numeric's binary form \(binary), does not read back: \(error.reason)")
    }
}

/// ndigits 0, weight 0, the NaN sign, dscale 0.
let nanNumeric: [UInt8] = [0, 0, 0, 0, 0xC0, 0, 0, 0]

/// numeric's binary form of a plain decimal text such as `-12.05`, as the server's
/// `numeric_send` writes it: the digits in groups of four aligned on the decimal point
/// (base 10000), `weight` the power of 10000 of the first group, no zero group at either
/// end, `dscale` the number of digits after the point.
func numericBinary(plainText text: String) -> [UInt8] {
    let negative = text.hasPrefix("-")
    let unsigned = negative ? text.dropFirst() : Substring(text)
    // The library's own check that a value fits (`Decimal.sameNumber`) assumes this form too.
    guard unsigned.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }) else {
        finding("Decimal's description \(text) is not a plain decimal")
    }
    let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    let whole = parts[0]
    let fraction = parts.count > 1 ? parts[1] : ""
    let paddedWhole = String(repeating: "0", count: (4 - whole.count % 4) % 4) + whole
    let paddedFraction = fraction + String(repeating: "0", count: (4 - fraction.count % 4) % 4)
    let digits = Array((paddedWhole + paddedFraction).utf8).map { Int16($0 - UInt8(ascii: "0")) }
    var groups = stride(from: 0, to: digits.count, by: 4).map { start in
        digits[start..<start + 4].reduce(Int16(0)) { $0 * 10 + $1 }
    }
    var weight = paddedWhole.count / 4 - 1
    while groups.first == 0 {
        groups.removeFirst()
        weight -= 1
    }
    while groups.last == 0 { groups.removeLast() }
    if groups.isEmpty { weight = 0 }
    var bytes: [UInt8] = []
    for field in [Int16(groups.count), Int16(weight), negative ? 0x4000 : 0, Int16(fraction.count)] + groups {
        bytes.append(UInt8(truncatingIfNeeded: field >> 8))
        bytes.append(UInt8(truncatingIfNeeded: field))
    }
    return bytes
}
