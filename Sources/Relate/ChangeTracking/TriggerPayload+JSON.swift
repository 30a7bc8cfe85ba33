import RelatePostgres

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

    private var scanner: JSONScanner

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        scanner = JSONScanner(UnsafeRawBufferPointer(bytes))
    }

    mutating func payload() -> TriggerPayload? {
        var payload = TriggerPayload()
        guard scanner.skip("{") else { return nil }
        if !scanner.skip("}") {
            repeat {
                guard let name = scanner.string(), scanner.skip(":"), let value = value(depth: 1) else { return nil }
                payload.take(name, value)
            } while scanner.skip(",")
            guard scanner.skip("}") else { return nil }
        }
        return scanner.isAtEnd() ? payload : nil
    }

    private mutating func value(depth: Int) -> Value? {
        guard depth <= Self.maxDepth, let next = scanner.peek() else { return nil }
        switch next {
        case UInt8(ascii: "\""): return scanner.string().map(Value.string)
        case UInt8(ascii: "["):
            _ = scanner.skip("[")
            var values: [Value] = []
            if scanner.skip("]") { return .array(values) }
            repeat {
                guard let value = value(depth: depth + 1) else { return nil }
                values.append(value)
            } while scanner.skip(",")
            return scanner.skip("]") ? .array(values) : nil
        case UInt8(ascii: "{"):
            _ = scanner.skip("{")
            if scanner.skip("}") { return .object }
            repeat {
                guard scanner.string() != nil, scanner.skip(":"), value(depth: depth + 1) != nil else { return nil }
            } while scanner.skip(",")
            return scanner.skip("}") ? .object : nil
        case UInt8(ascii: "t"): return scanner.word("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return scanner.word("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return scanner.word("null") ? .null : nil
        default: return scanner.number().map { Value.number(String(decoding: $0, as: UTF8.self)) }
        }
    }
}
