import Foundation

extension JSONValue {
    /// Why a document cannot be held as it is: a number past what `Decimal` keeps exactly
    /// (38 significant digits, an exponent of ±127), or an object with two members whose
    /// names differ in their bytes but not to Swift's `==` (a composed `é` and a decomposed
    /// one, which `jsonb` keeps apart). Foundation's decoder rounds the one and merges the
    /// other without a word; a value written back would then change the document.
    struct NotHeldExactly: Error, CustomStringConvertible {
        let description: String
    }

    /// Throws ``NotHeldExactly`` for what `JSONDecoder` would read other than it is; leaves
    /// malformed JSON to the decoder (reading past nothing).
    static func checkHeldExactly(_ text: UnsafeRawBufferPointer) throws {
        // Per open container: whether it is an object, whether a key comes next, and the
        // names its members had so far (by Swift's `==`, with their bytes).
        var containers: [(isObject: Bool, expectsKey: Bool, names: [String: [UInt8]])] = []
        var index = 0
        while index < text.count {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "{"):
                containers.append((true, true, [:]))
                index += 1
            case UInt8(ascii: "["):
                containers.append((false, false, [:]))
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !containers.isEmpty { containers.removeLast() }
                index += 1
            case UInt8(ascii: ":"):
                if !containers.isEmpty { containers[containers.count - 1].expectsKey = false }
                index += 1
            case UInt8(ascii: ","):
                if let last = containers.last, last.isObject { containers[containers.count - 1].expectsKey = true }
                index += 1
            case UInt8(ascii: "\""):
                // A value's string is only passed over; a member's name is compared.
                guard let last = containers.last, last.isObject, last.expectsKey else {
                    index = endOfString(text, from: index + 1)
                    continue
                }
                let (bytes, end) = unescapedString(text, from: index + 1)
                index = end
                let name = String(decoding: bytes, as: UTF8.self)
                if let earlier = last.names[name], earlier != bytes {
                    throw NotHeldExactly(description: "an object has two members whose names differ only in how a character is composed")
                }
                containers[containers.count - 1].names[name] = bytes
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                index = try checkNumber(text, from: index)
            default:
                index += 1
            }
        }
    }

    /// The index past the closing quote of the string that starts at `start` (just after
    /// its opening quote), or the end.
    private static func endOfString(_ text: UnsafeRawBufferPointer, from start: Int) -> Int {
        var index = start
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: "\""): return index + 1
            case UInt8(ascii: "\\"): index += 2
            default: index += 1
            }
        }
        return index
    }

    /// The string's bytes, its escapes undone, from just after its opening quote; and the
    /// index past its closing quote (or the end).
    private static func unescapedString(_ text: UnsafeRawBufferPointer, from start: Int) -> ([UInt8], Int) {
        var bytes: [UInt8] = []
        var index = start
        var pendingHigh: UInt32?
        func append(_ scalar: UInt32) {
            if let value = Unicode.Scalar(scalar) { UTF8.encode(value) { bytes.append($0) } }
        }
        while index < text.count {
            let byte = text[index]
            if byte == UInt8(ascii: "\"") { return (bytes, index + 1) }
            guard byte == UInt8(ascii: "\\"), index + 1 < text.count else {
                bytes.append(byte)
                index += 1
                continue
            }
            let escaped = text[index + 1]
            index += 2
            if escaped == UInt8(ascii: "u"), index + 4 <= text.count,
                let unit = UInt32(String(decoding: UnsafeRawBufferPointer(rebasing: text[index..<index + 4]), as: UTF8.self), radix: 16)
            {
                index += 4
                if (0xD800..<0xDC00).contains(unit) {
                    pendingHigh = unit
                } else if (0xDC00..<0xE000).contains(unit), let high = pendingHigh {
                    append(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
                    pendingHigh = nil
                } else {
                    append(unit)
                }
                continue
            }
            switch escaped {
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            default: bytes.append(escaped)
            }
        }
        return (bytes, index)
    }

    /// Checks the number that starts at `start`; answers the index past it.
    private static func checkNumber(_ text: UnsafeRawBufferPointer, from start: Int) throws -> Int {
        var index = start
        if text[index] == UInt8(ascii: "-") { index += 1 }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var inFraction = false
        while index < text.count {
            let byte = text[index]
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                digits.append(byte)
                if inFraction { fractionDigits += 1 }
            } else if byte == UInt8(ascii: "."), !inFraction {
                inFraction = true
            } else {
                break
            }
            index += 1
        }
        var exponent = 0
        if index < text.count, text[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var negative = false
            if index < text.count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
                negative = text[index] == UInt8(ascii: "-")
                index += 1
            }
            var magnitude = 0
            while index < text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[index]) {
                magnitude = min(magnitude * 10 + Int(text[index] - UInt8(ascii: "0")), 1_000_000)
                index += 1
            }
            exponent = negative ? -magnitude : magnitude
        }
        // The significant digits: no leading zeros; trailing zeros go into the exponent.
        let first = digits.firstIndex { $0 != UInt8(ascii: "0") }
        guard let first else { return index }
        let last = digits.lastIndex { $0 != UInt8(ascii: "0") }!
        let significant = last - first + 1
        let scale = exponent - fractionDigits + (digits.count - 1 - last)
        if significant > 38 || scale > 127 || scale < -128 {
            throw NotHeldExactly(description: "a number has more digits, or a larger exponent, than Decimal holds exactly (38 digits, ±127)")
        }
        return index
    }
}
