import Foundation

extension JSONValue {
    /// Why a document cannot be held as it is: a number past what `Decimal` keeps exactly
    /// (38 significant digits, an exponent of ±127), or an object with two members whose
    /// names differ in their bytes but not to Swift's `==` (a composed `é` and a decomposed
    /// one, which `jsonb` keeps apart). Read anyway, a value written back would change the
    /// document.
    struct NotHeldExactly: Error, CustomStringConvertible {
        let description: String
    }

    /// Deeper than this a document is refused, before its nesting could exhaust the stack
    /// (as deep as Foundation's decoder goes).
    static let maxDepth = 512

    /// JSON's numbers: `.` before the fraction, whatever the process's locale.
    private static let numberLocale = Locale(identifier: "en_US_POSIX")

    /// The document `text` holds, any value at its top, read in one pass with
    /// ``JSONScanner``.
    ///
    /// - Throws: ``NotHeldExactly``; a `DecodingError` when `text` is not strict JSON.
    static func read(_ text: UnsafeRawBufferPointer) throws -> JSONValue {
        var scanner = JSONScanner(text)
        guard let value = try value(&scanner, depth: 0), scanner.isAtEnd() else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not JSON"))
        }
        return value
    }

    /// The value next in `scanner`; `nil` when none is.
    private static func value(_ scanner: inout JSONScanner, depth: Int) throws -> JSONValue? {
        guard depth < maxDepth, let next = scanner.peek() else { return nil }
        switch next {
        case UInt8(ascii: "\""): return scanner.string().map(JSONValue.string)
        case UInt8(ascii: "["):
            _ = scanner.skip("[")
            var elements: [JSONValue] = []
            if scanner.skip("]") { return .array(elements) }
            repeat {
                guard let element = try value(&scanner, depth: depth + 1) else { return nil }
                elements.append(element)
            } while scanner.skip(",")
            return scanner.skip("]") ? .array(elements) : nil
        case UInt8(ascii: "{"):
            _ = scanner.skip("{")
            if scanner.skip("}") { return .object([:]) }
            // Room for a small object's members at once: grown from empty, a dictionary of
            // four was allocated three times.
            var members = [String: JSONValue](minimumCapacity: 4)
            repeat {
                guard let name = scanner.string(), scanner.skip(":"), let member = try value(&scanner, depth: depth + 1) else { return nil }
                // Of a name given twice, the last value, as `jsonb` keeps it. The dictionary
                // keeps the first name's bytes: another that `==` takes for it but whose
                // bytes differ is a member of its own to `jsonb`.
                if members.updateValue(member, forKey: name) != nil, let index = members.index(forKey: name),
                    !members.keys[index].utf8.elementsEqual(name.utf8)
                {
                    throw NotHeldExactly(description: "an object has two members whose names differ only in how a character is composed")
                }
            } while scanner.skip(",")
            return scanner.skip("}") ? .object(members) : nil
        case UInt8(ascii: "t"): return scanner.word("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return scanner.word("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return scanner.word("null") ? .null : nil
        default:
            guard let text = scanner.number() else { return nil }
            try checkHeldExactly(number: text)
            // Most numbers are plain (no exponent) and short: built from their digits.
            if let plain = Decimal.exact(text: text) { return .number(plain) }
            return Decimal(string: String(decoding: text, as: UTF8.self), locale: numberLocale).map(JSONValue.number)
        }
    }

    /// Throws ``NotHeldExactly`` for a number (strict JSON) that `Decimal` cannot hold as it is.
    private static func checkHeldExactly(number text: UnsafeRawBufferPointer) throws {
        var index = text.first == UInt8(ascii: "-") ? 1 : 0
        // The significant digits: from the first that is not 0 to the last that is not 0.
        var first: Int?
        var last = 0
        var digits = 0
        var fractionDigits = 0
        var inFraction = false
        while index < text.count, text[index] | 0x20 != UInt8(ascii: "e") {
            if text[index] == UInt8(ascii: ".") {
                inFraction = true
            } else {
                if text[index] != UInt8(ascii: "0") {
                    if first == nil { first = digits }
                    last = digits
                }
                digits += 1
                if inFraction { fractionDigits += 1 }
            }
            index += 1
        }
        guard let first else { return }
        var exponent = 0
        if index < text.count {
            index += 1
            let negative = text[index] == UInt8(ascii: "-")
            if text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") { index += 1 }
            while index < text.count {
                exponent = min(exponent * 10 + Int(text[index] - UInt8(ascii: "0")), 1_000_000)
                index += 1
            }
            if negative { exponent = -exponent }
        }
        // Trailing zeros go into the exponent.
        let scale = exponent - fractionDigits + (digits - 1 - last)
        if last - first + 1 > 38 || scale > 127 || scale < -128 {
            throw NotHeldExactly(description: "a number has more digits, or a larger exponent, than Decimal holds exactly (38 digits, ±127)")
        }
    }
}
