/// The pieces of strict JSON text (RFC 8259), read byte by byte from a buffer: strings with
/// their escapes undone, numbers as written, literals and punctuation; no tree. The one
/// JSON reader of the package: ``JSONValue`` builds its documents on it, and Relate's trigger
/// payloads theirs. Strict because the text may be anyone's (a `NOTIFY` payload): a control
/// character in a string, a lone surrogate, a number with a leading zero or no digits, is
/// no JSON.
package struct JSONScanner {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    /// The next byte to read.
    @usableFromInline var at = 0

    /// A scanner at the start of `bytes`, which must outlive it.
    @inlinable package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The next byte after spaces, not taken; `nil` at the end.
    @inlinable package mutating func peek() -> UInt8? {
        skipSpace()
        return at < bytes.count ? bytes[at] : nil
    }

    /// Whether only spaces are left.
    @inlinable package mutating func isAtEnd() -> Bool {
        peek() == nil
    }

    /// Skips spaces, then takes `byte` if it is next.
    @inlinable package mutating func skip(_ byte: Unicode.Scalar) -> Bool {
        skipSpace()
        return skipByte(byte)
    }

    /// Takes `word` (`true`, `false`, `null`) if it is next, after spaces.
    @inlinable package mutating func word(_ word: StaticString) -> Bool {
        skipSpace()
        let count = word.utf8CodeUnitCount
        guard at + count <= bytes.count, UnsafeBufferPointer(start: word.utf8Start, count: count).elementsEqual(bytes[at..<at + count])
        else { return false }
        at += count
        return true
    }

    /// The number next, after spaces, as written:
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`; `nil` when none is.
    @inlinable package mutating func number() -> UnsafeRawBufferPointer? {
        skipSpace()
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
        return UnsafeRawBufferPointer(rebasing: bytes[start..<at])
    }

    /// The string next, after spaces, its escapes undone; `nil` when none is, or it is not
    /// strict JSON.
    @inlinable package mutating func string() -> String? {
        guard skip("\"") else { return nil }
        let start = at
        // Most strings have no escape: their bytes are the string's.
        while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\") {
            guard bytes[at] >= 0x20 else { return nil }
            at += 1
        }
        guard at < bytes.count else { return nil }
        if bytes[at] == UInt8(ascii: "\"") {
            at += 1
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<at - 1]), as: UTF8.self)
        }
        return escapedString(from: start)
    }

    /// The rest of a string with an escape at `at`, its bytes from `start` on.
    @usableFromInline mutating func escapedString(from start: Int) -> String? {
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
    @usableFromInline mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = hex4() else { return nil }
        guard (0xD800...0xDBFF).contains(high) else { return Unicode.Scalar(high) }
        guard skipByte("\\"), skipByte("u"), let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
        return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }

    @usableFromInline mutating func hex4() -> UInt32? {
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

    @inlinable mutating func digits() -> Int {
        let start = at
        while at < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) { at += 1 }
        return at - start
    }

    @inlinable mutating func skipByte(_ byte: Unicode.Scalar) -> Bool {
        guard at < bytes.count, bytes[at] == UInt8(ascii: byte) else { return false }
        at += 1
        return true
    }

    @inlinable mutating func skipSpace() {
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x09, 0x0A, 0x0D: at += 1
            default: return
            }
        }
    }
}
