extension TriggerPayload {
    /// A notification's payload; `nil` when it is not one JSON object (with nothing after it).
    ///
    /// Read byte by byte, not by `JSONSerialization`: every notice of a table under
    /// row-level security is two payloads (the notification and its stored row), and making
    /// Foundation's objects of each and casting them back was an eighth of the listener
    /// process's CPU at 100 and 1,000 commits a second (`scripts/live-scaling`, 2026-11-28).
    /// Numbers keep the text the server wrote, which for an integer or `numeric` key is its
    /// text form (a `numeric` key's `1.50`, a `bigint` past 2⁵³); booleans are `t` and `f`.
    init?(json: String) {
        var json = json
        guard let payload = json.withUTF8({ bytes -> TriggerPayload? in
            var reader = PayloadJSON(bytes)
            return reader.payload()
        }) else { return nil }
        self = payload
    }

    /// Takes the payload's fields from its values, each `nil` when of another type.
    fileprivate mutating func take(_ name: String, _ value: PayloadJSON.Value) {
        switch name {
        case "x": transaction = value.integer
        case "r": relation = value.integer
        case "s": schema = value.string
        case "t": table = value.string
        case "k": kind = value.string
        case "keys": keys = value.keyTexts
        case "old": oldKeys = value.keyTexts
        case "c": changedColumns = value.strings
        case "n": comparedColumns = value.integer
        case "id": stored = value.integer
        case "ddl": isDefinitionChange = true
        default: break
        }
    }
}

/// A strict JSON reader (RFC 8259) of one payload's bytes: the top object's fields go
/// straight into a ``TriggerPayload``; nested values are read into ``Value``s. Anyone may
/// `NOTIFY`, so nothing is trusted: nesting deeper than ``maxDepth``, a control character
/// in a string, a lone surrogate or anything after the object makes the payload no payload.
private struct PayloadJSON {
    /// A value inside the payload's object; objects are checked but not kept (no field
    /// Relate reads holds one). Not `indirect`: an array holds its values already, and a
    /// box for each scalar would be one allocation more per value of a stored payload (a
    /// million keys, at most).
    enum Value {
        case string(String)
        /// The number's text as written.
        case number(String)
        case bool(Bool)
        case null
        case array([Value])
        case object

        var string: String? {
            if case .string(let text) = self { text } else { nil }
        }

        var integer: Int? {
            if case .number(let text) = self { Int(text) } else { nil }
        }

        /// An array of strings; `nil` when anything else is in it.
        var strings: [String]? {
            guard case .array(let values) = self else { return nil }
            var strings: [String] = []
            strings.reserveCapacity(values.count)
            for value in values {
                guard let string = value.string else { return nil }
                strings.append(string)
            }
            return strings
        }

        /// Keys, an array of arrays of strings, numbers and booleans, as the server's text
        /// forms; `nil` (the table read again) for anything else.
        var keyTexts: [[String?]]? {
            guard case .array(let keys) = self else { return nil }
            var texts: [[String?]] = []
            texts.reserveCapacity(keys.count)
            for key in keys {
                guard case .array(let parts) = key else { return nil }
                var row: [String?] = []
                row.reserveCapacity(parts.count)
                for part in parts {
                    switch part {
                    case .string(let text), .number(let text): row.append(text)
                    case .bool(let value): row.append(value ? "t" : "f")
                    default: return nil
                    }
                }
                texts.append(row)
            }
            return texts
        }
    }

    /// Deeper than any payload of Relate's (three levels); a hostile one goes no further.
    static let maxDepth = 16

    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func payload() -> TriggerPayload? {
        var payload = TriggerPayload()
        guard skip("{") else { return nil }
        if !skip("}") {
            repeat {
                guard let name = string(), skip(":"), let value = value(depth: 1) else { return nil }
                payload.take(name, value)
            } while skip(",")
            guard skip("}") else { return nil }
        }
        skipSpace()
        return at == bytes.count ? payload : nil
    }

    private mutating func value(depth: Int) -> Value? {
        guard depth <= Self.maxDepth else { return nil }
        skipSpace()
        guard at < bytes.count else { return nil }
        switch bytes[at] {
        case UInt8(ascii: "\""): return string().map(Value.string)
        case UInt8(ascii: "["):
            at += 1
            var values: [Value] = []
            if skip("]") { return .array(values) }
            repeat {
                guard let value = value(depth: depth + 1) else { return nil }
                values.append(value)
            } while skip(",")
            return skip("]") ? .array(values) : nil
        case UInt8(ascii: "{"):
            at += 1
            if skip("}") { return .object }
            repeat {
                guard string() != nil, skip(":"), value(depth: depth + 1) != nil else { return nil }
            } while skip(",")
            return skip("}") ? .object : nil
        case UInt8(ascii: "t"): return word("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return word("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return word("null") ? .null : nil
        default: return number().map(Value.number)
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as written.
    private mutating func number() -> String? {
        let start = at
        _ = skipByte("-")
        if skipByte("0") {
            // No digit may follow a leading zero.
        } else if digits() == 0 {
            return nil
        }
        if skipByte("."), digits() == 0 { return nil }
        if skipByte("e") || skipByte("E") {
            _ = skipByte("+") || skipByte("-")
            if digits() == 0 { return nil }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
    }

    private mutating func digits() -> Int {
        let start = at
        while at < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) { at += 1 }
        return at - start
    }

    /// A string at the next non-space byte, its escapes undone.
    private mutating func string() -> String? {
        guard skip("\"") else { return nil }
        let start = at
        // Most strings have no escape: their bytes are the string's (a Swift string's UTF-8 is valid).
        while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\") {
            guard bytes[at] >= 0x20 else { return nil }
            at += 1
        }
        guard at < bytes.count else { return nil }
        if bytes[at] == UInt8(ascii: "\"") {
            at += 1
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at - 1]), as: UTF8.self)
        }
        var decoded = Array(bytes[start..<at])
        while at < bytes.count {
            let byte = bytes[at]
            at += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard at < bytes.count else { return nil }
                let escaped = bytes[at]
                at += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    UTF8.encode(scalar) { decoded.append($0) }
                default: return nil
                }
            case ..<0x20: return nil
            default: decoded.append(byte)
            }
        }
        return nil
    }

    /// The scalar of a `\u` escape (its `\u` read), a surrogate pair's as one.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = hex4() else { return nil }
        guard (0xD800...0xDBFF).contains(high) else { return Unicode.Scalar(high) }
        guard skipByte("\\"), skipByte("u"), let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
        return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }

    private mutating func hex4() -> UInt32? {
        guard at + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[at..<at + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        at += 4
        return value
    }

    /// Skips spaces, then `byte` if it is next.
    private mutating func skip(_ byte: Unicode.Scalar) -> Bool {
        skipSpace()
        return skipByte(byte)
    }

    private mutating func skipByte(_ byte: Unicode.Scalar) -> Bool {
        guard at < bytes.count, bytes[at] == UInt8(ascii: byte) else { return false }
        at += 1
        return true
    }

    private mutating func word(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard at + count <= bytes.count, UnsafeBufferPointer(start: word.utf8Start, count: count).elementsEqual(bytes[at..<at + count])
        else { return false }
        at += count
        return true
    }

    private mutating func skipSpace() {
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x09, 0x0A, 0x0D: at += 1
            default: return
            }
        }
    }
}
