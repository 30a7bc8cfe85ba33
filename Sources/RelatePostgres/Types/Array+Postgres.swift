import Foundation

/// One-dimensional arrays: `[T]`, or `[T?]` when elements may be NULL. Sent as the array
/// type of `T`: in binary form when `T` is sent in binary (no text to print and parse, a
/// key list of 1,000 integers costs a tenth of the work), otherwise in text form
/// (`{"a","b"}`); read from either form.
public protocol PostgresArrayMember {
    /// The array type a Swift array of this element is sent as.
    static var arrayType: PostgresType { get }
    /// The element's type and form inside the array.
    static var arrayElementType: PostgresType { get }
    /// The form of each element inside the array, which is the array's own form.
    static var arrayElementFormat: PostgresFormat { get }
    /// Appends the element's text form, or returns `false` for NULL.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the element's text is appended.
    /// - Returns: `false` for a NULL element, whose text is not written.
    func appendArrayElementText(into buffer: inout [UInt8]) -> Bool
    /// Appends the element's binary form, or returns `false` for NULL.
    ///
    /// - Parameter buffer: The array's bytes so far; the element's are appended.
    /// - Returns: `false` for a NULL element, whose bytes are not written.
    /// - Throws: A ``PostgresEncodingError`` when PostgreSQL cannot take the element.
    func appendArrayElementBinary(into buffer: inout [UInt8]) throws(PostgresEncodingError) -> Bool
    /// Reads one element; `bytes` is `nil` for NULL.
    ///
    /// - Parameters:
    ///   - bytes: The element's bytes, `nil` for NULL; valid only during the call.
    ///   - type: The element's PostgreSQL type.
    ///   - format: The form the element came in.
    /// - Returns: The element.
    /// - Throws: A ``PostgresDecodingError`` when the element cannot be read as this type.
    static func decodeArrayElement(
        _ bytes: UnsafeRawBufferPointer?, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> Self
}

extension PostgresArrayElement {
    /// The element's ``PostgresArrayElement/postgresArrayType``.
    public static var arrayType: PostgresType { postgresArrayType }
    /// The element's ``PostgresEncodable/postgresType``.
    public static var arrayElementType: PostgresType { postgresType }
    /// The element's ``PostgresEncodable/postgresFormat``.
    public static var arrayElementFormat: PostgresFormat { postgresFormat }

    /// Appends the element's binary form; never NULL, so always returns `true`.
    ///
    /// - Parameter buffer: The array's bytes so far; the element's are appended.
    /// - Returns: `false` for a NULL element, whose bytes are not written.
    /// - Throws: A ``PostgresEncodingError`` when PostgreSQL cannot take the element.
    public func appendArrayElementBinary(into buffer: inout [UInt8]) throws(PostgresEncodingError) -> Bool {
        try encode(into: &buffer)
        return true
    }

    /// Appends the element's text form; never NULL, so always returns `true`.
    ///
    /// - Parameter buffer: The array literal's bytes so far; the element's text is appended.
    /// - Returns: `false` for a NULL element, whose text is not written.
    public func appendArrayElementText(into buffer: inout [UInt8]) -> Bool {
        encodeText(into: &buffer)
        return true
    }

    /// Reads one element; a NULL element throws, with a reason that says to read the array
    /// as `[T?]`.
    ///
    /// - Parameters:
    ///   - bytes: The element's bytes, `nil` for NULL; valid only during the call.
    ///   - type: The element's PostgreSQL type.
    ///   - format: The form the element came in.
    /// - Returns: The element.
    /// - Throws: A ``PostgresDecodingError`` when the element cannot be read as this type.
    public static func decodeArrayElement(
        _ bytes: UnsafeRawBufferPointer?, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> Self {
        guard let bytes else {
            throw PostgresDecodingError("the array holds NULL; read it as [\(Self.self)?]")
        }
        return try decode(from: bytes, type: type, format: format)
    }
}

extension Optional: PostgresArrayMember where Wrapped: PostgresArrayElement {
    /// The array type of `Wrapped`: an optional element is sent in the same array type.
    public static var arrayType: PostgresType { Wrapped.postgresArrayType }
    /// The type of `Wrapped` inside an array.
    public static var arrayElementType: PostgresType { Wrapped.arrayElementType }
    /// The form of `Wrapped` inside an array.
    public static var arrayElementFormat: PostgresFormat { Wrapped.arrayElementFormat }

    /// Appends the wrapped value's binary form, or returns `false` for `nil` (a NULL element).
    ///
    /// - Parameter buffer: The array's bytes so far; the element's are appended.
    /// - Returns: `false` for a NULL element, whose bytes are not written.
    /// - Throws: A ``PostgresEncodingError`` when PostgreSQL cannot take the element.
    public func appendArrayElementBinary(into buffer: inout [UInt8]) throws(PostgresEncodingError) -> Bool {
        guard let self else { return false }
        try self.encode(into: &buffer)
        return true
    }

    /// Appends the wrapped value's text form, or returns `false` for `nil` (a NULL element).
    ///
    /// - Parameter buffer: The array literal's bytes so far; the element's text is appended.
    /// - Returns: `false` for a NULL element, whose text is not written.
    public func appendArrayElementText(into buffer: inout [UInt8]) -> Bool {
        guard let self else { return false }
        self.encodeText(into: &buffer)
        return true
    }

    /// Reads one element, NULL as `nil`.
    ///
    /// - Parameters:
    ///   - bytes: The element's bytes, `nil` for NULL; valid only during the call.
    ///   - type: The element's PostgreSQL type.
    ///   - format: The form the element came in.
    /// - Returns: The element.
    /// - Throws: A ``PostgresDecodingError`` when the element cannot be read as this type.
    public static func decodeArrayElement(
        _ bytes: UnsafeRawBufferPointer?, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> Wrapped? {
        guard let bytes else { return nil }
        return try Wrapped.decode(from: bytes, type: type, format: format)
    }
}

extension Array: PostgresEncodable where Element: PostgresArrayMember {
    /// The array type of `Element` (`int8[]` for `[Int]`).
    public static var postgresType: PostgresType { Element.arrayType }
    /// Binary when the elements are sent in binary, text otherwise.
    public static var postgresFormat: PostgresFormat { Element.arrayElementFormat }

    /// Appends the array as a one-dimensional array, NULL elements included.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: A ``PostgresEncodingError`` when PostgreSQL cannot take the value.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        switch Element.arrayElementFormat {
        case .binary: try encodeBinary(into: &buffer)
        case .text: try encodeText(into: &buffer)
        }
    }

    /// Dimensions, a has-NULL flag, the element type, then each element as its length
    /// (-1 for NULL) and bytes. An empty array has no dimension.
    private func encodeBinary(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.reserveCapacity(buffer.count + 20 + count * 12)
        buffer.appendBigEndian(Int32(isEmpty ? 0 : 1))
        let flagsOffset = buffer.count
        buffer.appendBigEndian(Int32(0))
        buffer.appendBigEndian(Element.arrayElementType.rawValue)
        if isEmpty { return }
        buffer.appendBigEndian(Int32(count))
        buffer.appendBigEndian(Int32(1))
        // Integer keys, the common array (an int4[] of 10,000 keys for a many-to-many
        // attach): every element's length and value written in place, without a call
        // through the protocol and a length patched afterwards per element.
        if Element.self == Int32.self { return Self.appendIntegers(unsafeBitCast(self, to: [Int32].self), into: &buffer) }
        if Element.self == Int.self, MemoryLayout<Int>.size == 8 { return Self.appendIntegers(unsafeBitCast(self, to: [Int].self), into: &buffer) }
        if Element.self == Int16.self { return Self.appendIntegers(unsafeBitCast(self, to: [Int16].self), into: &buffer) }
        // Arrays made from objects' values (a save's keys and new values) may hold NULL:
        // their common types written in place too. Through the protocol, each element cost
        // a witness call and a dynamic cast: 1,100 instructions, three times a save's rows.
        let hasNull: Bool
        if Element.self == String?.self {
            hasNull = try Self.appendStrings(unsafeBitCast(self, to: [String?].self), into: &buffer)
        } else if Element.self == String.self {
            hasNull = try Self.appendStrings(unsafeBitCast(self, to: [String].self), into: &buffer)
        } else if Element.self == Int32?.self {
            hasNull = Self.appendIntegers(unsafeBitCast(self, to: [Int32?].self), into: &buffer)
        } else if Element.self == Int?.self, MemoryLayout<Int>.size == 8 {
            hasNull = Self.appendIntegers(unsafeBitCast(self, to: [Int?].self), into: &buffer)
        } else {
            hasNull = try appendMembers(into: &buffer)
        }
        if hasNull {
            buffer[flagsOffset + 3] = 1
        }
    }

    /// Each member as its length (-1 for NULL) and its bytes, through ``PostgresArrayMember``;
    /// answers whether one was NULL.
    private func appendMembers(into buffer: inout [UInt8]) throws(PostgresEncodingError) -> Bool {
        var hasNull = false
        for member in self {
            let lengthOffset = buffer.count
            buffer.appendBigEndian(Int32(-1))
            guard try member.appendArrayElementBinary(into: &buffer) else {
                hasNull = true
                continue
            }
            let length = Int32(buffer.count - lengthOffset - 4)
            Swift.withUnsafeBytes(of: length.bigEndian) { bytes in
                buffer.replaceSubrange(lengthOffset..<lengthOffset + 4, with: bytes)
            }
        }
        return hasNull
    }

    /// Each of `values` as its length and bytes (`append` writes both), `nil` as length -1;
    /// answers whether one was `nil`.
    @inline(__always)
    private static func appendOptionals<Values: Sequence, Wrapped, Failure: Error>(
        _ values: Values, into buffer: inout [UInt8], _ append: (Wrapped, inout [UInt8]) throws(Failure) -> Void
    ) throws(Failure) -> Bool where Values.Element == Wrapped? {
        var hasNull = false
        for value in values {
            guard let value else {
                buffer.appendBigEndian(Int32(-1))
                hasNull = true
                continue
            }
            try append(value, &buffer)
        }
        return hasNull
    }

    /// Each of `values` as its length (-1 for `nil`) and its UTF-8 bytes, as
    /// ``Swift/String/encode(into:)`` writes one; answers whether one was `nil`.
    @inline(__always)
    private static func appendStrings<Strings: Sequence>(_ values: Strings, into buffer: inout [UInt8]) throws(PostgresEncodingError) -> Bool
    where Strings.Element == String? {
        try appendOptionals(values, into: &buffer) { (value: String, buffer: inout [UInt8]) throws(PostgresEncodingError) in
            let bytes = value.utf8
            // A native string's bytes at once: memchr for a NUL, then one copy, where a
            // byte-by-byte `contains` cost 340 instructions a name and an append through
            // the view 140.
            let appended = bytes.withContiguousStorageIfAvailable { bytes in
                if let base = bytes.baseAddress, memchr(base, 0, bytes.count) != nil { return false }
                buffer.appendBigEndian(Int32(bytes.count))
                buffer.append(contentsOf: bytes)
                return true
            }
            if appended == true { return }
            guard appended == nil, !bytes.contains(0) else {
                throw PostgresEncodingError("the string contains a NUL byte, which PostgreSQL text cannot store")
            }
            buffer.appendBigEndian(Int32(bytes.count))
            buffer.append(contentsOf: bytes)
        }
    }

    private static func appendStrings(_ values: [String], into buffer: inout [UInt8]) throws(PostgresEncodingError) -> Bool {
        try appendStrings(values.lazy.map { Optional($0) }, into: &buffer)
    }

    /// Each of `values` as its length (the integer's width, -1 for `nil`) and its
    /// big-endian bytes; answers whether one was `nil`.
    @inline(__always)
    private static func appendIntegers<Integer: FixedWidthInteger>(_ values: [Integer?], into buffer: inout [UInt8]) -> Bool {
        appendOptionals(values, into: &buffer) { (value: Integer, buffer: inout [UInt8]) in
            buffer.appendBigEndian(Int32(MemoryLayout<Integer>.size))
            buffer.appendBigEndian(value)
        }
    }

    /// Each of `values` as its length (the integer's width) and its big-endian bytes.
    @inline(__always)
    private static func appendIntegers<Integer: FixedWidthInteger>(_ values: [Integer], into buffer: inout [UInt8]) {
        let width = MemoryLayout<Integer>.size
        var offset = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: values.count * (4 + width)))
        buffer.withUnsafeMutableBytes { bytes in
            let length = Int32(width).bigEndian
            for value in values {
                bytes.storeBytes(of: length, toByteOffset: offset, as: Int32.self)
                bytes.storeBytes(of: value.bigEndian, toByteOffset: offset + 4, as: Integer.self)
                offset += 4 + width
            }
        }
    }

    /// Appends the array's text form, `{"a","b",NULL}`, whatever form its elements are
    /// sent in: an array literal for a statement that takes one as text (a key list of a
    /// type without a Swift array, which the server reads as the column's type).
    ///
    /// - Parameter buffer: The literal's bytes so far; the array's are appended.
    /// - Throws: A ``PostgresEncodingError`` when an element holds a NUL byte.
    public func encodeText(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.append(UInt8(ascii: "{"))
        var element: [UInt8] = []
        for (index, member) in enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            element.removeAll(keepingCapacity: true)
            guard member.appendArrayElementText(into: &element) else {
                buffer.append(contentsOf: "NULL".utf8)
                continue
            }
            guard !element.contains(0) else {
                throw PostgresEncodingError("array element \(index) contains a NUL byte, which PostgreSQL text cannot store")
            }
            buffer.append(UInt8(ascii: "\""))
            for byte in element {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { buffer.append(UInt8(ascii: "\\")) }
                buffer.append(byte)
            }
            buffer.append(UInt8(ascii: "\""))
        }
        buffer.append(UInt8(ascii: "}"))
    }
}

extension Array: PostgresDecodable where Element: PostgresArrayMember {
    /// Reads a one-dimensional array in either form; a NULL element needs `[T?]`, and an
    /// array of more than one dimension throws.
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
    ) throws(PostgresDecodingError) -> [Element] {
        switch format {
        case .binary: return try decodeBinary(bytes, type: type)
        case .text: return try decodeText(bytes, type: type)
        }
    }

    private static func decodeBinary(_ bytes: UnsafeRawBufferPointer, type: PostgresType) throws(PostgresDecodingError) -> [Element] {
        guard bytes.count >= 12 else { throw .mismatch(Self.self, type, .binary) }
        let dimensions = bytes.bigEndian(Int32.self, at: 0)
        let elementType = PostgresType(bytes.bigEndian(UInt32.self, at: 8))
        if dimensions == 0 { return [] }
        guard dimensions == 1 else {
            throw PostgresDecodingError("a \(dimensions)-dimensional array cannot be read as \(Self.self)")
        }
        guard bytes.count >= 20 else { throw .malformed(type, .binary) }
        let count = Int(bytes.bigEndian(Int32.self, at: 12))
        // Every element takes at least its 4-byte length: a count beyond that is not an
        // array, and must not size the result before the first element is read.
        guard count >= 0, count <= (bytes.count - 20) / 4 else { throw .malformed(type, .binary) }
        var offset = 20
        var result: [Element] = []
        result.reserveCapacity(count)
        for _ in 0..<count {
            guard offset + 4 <= bytes.count else { throw .malformed(type, .binary) }
            let length = Int(bytes.bigEndian(Int32.self, at: offset))
            offset += 4
            if length < 0 {
                result.append(try Element.decodeArrayElement(nil, type: elementType, format: .binary))
                continue
            }
            guard offset + length <= bytes.count else { throw .malformed(type, .binary) }
            let element = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
            result.append(try Element.decodeArrayElement(element, type: elementType, format: .binary))
            offset += length
        }
        return result
    }

    /// `box[]`'s OID: the one built-in array whose elements are separated by `;`.
    static var boxArrayOID: UInt32 { 1020 }

    /// The text form `{a,"b c",NULL}`, with an optional `[1:3]=` bounds prefix.
    private static func decodeText(_ bytes: UnsafeRawBufferPointer, type: PostgresType) throws(PostgresDecodingError) -> [Element] {
        // An array of a type this library does not name (an enum's, say) still parses; its
        // elements then read as their text form.
        let elementType = type.arrayElement ?? .unknown
        // Elements are separated by their type's `typdelim`: `;` for `box` (whose own text
        // holds commas, `(1,1),(0,0)`), `,` for every other built-in type.
        let delimiter = type.rawValue == Self.boxArrayOID ? UInt8(ascii: ";") : UInt8(ascii: ",")
        var index = 0
        if bytes.first == UInt8(ascii: "[") {
            while index < bytes.count, bytes[index] != UInt8(ascii: "=") { index += 1 }
            index += 1
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else {
            throw .malformed(type, .text)
        }
        index += 1
        let end = bytes.count - 1
        var result: [Element] = []
        if index == end { return result }
        var element: [UInt8] = []
        while index <= end {
            element.removeAll(keepingCapacity: true)
            while index < end, bytes[index] == UInt8(ascii: " ") { index += 1 }
            var quoted = false
            if index < end, bytes[index] == UInt8(ascii: "{") {
                throw PostgresDecodingError("a multidimensional array cannot be read as \(Self.self)")
            }
            if index < end, bytes[index] == UInt8(ascii: "\"") {
                quoted = true
                index += 1
                while index < end, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") { index += 1 }
                    guard index < end else { throw .malformed(type, .text) }
                    element.append(bytes[index])
                    index += 1
                }
                // The closing quote, not the closing brace.
                guard index < end else { throw .malformed(type, .text) }
                index += 1
            } else {
                while index < end, bytes[index] != delimiter {
                    if bytes[index] == UInt8(ascii: "\\") { index += 1 }
                    guard index < end else { throw .malformed(type, .text) }
                    element.append(bytes[index])
                    index += 1
                }
                while element.last == UInt8(ascii: " ") { element.removeLast() }
            }
            guard index == end || bytes[index] == delimiter else { throw .malformed(type, .text) }
            index += 1
            if !quoted, element.count == 4, String(decoding: element, as: UTF8.self).uppercased() == "NULL" {
                result.append(try Element.decodeArrayElement(nil, type: elementType, format: .text))
                continue
            }
            // Some readers (strtod) rely on a NUL after the value, as libpq gives for cells.
            element.append(0)
            let decoded = element.withUnsafeBytes { buffer in
                Result { () throws(PostgresDecodingError) -> Element in
                    try Element.decodeArrayElement(UnsafeRawBufferPointer(rebasing: buffer.dropLast()), type: elementType, format: .text)
                }
            }
            result.append(try decoded.get())
        }
        return result
    }
}

extension Array where Element: PostgresArrayMember {
    /// The text of an array a Swift array cannot hold as it is — of more than one
    /// dimension, or whose first index is not 1 — as the server prints it, bounds and all
    /// (`[0:1]={1,2}`, `{{1,2},{3,4}}`): a value ``PostgresValue/decode(from:type:format:)``
    /// answers as a `String`, which goes back to the column as the same array. `nil` for an
    /// array a Swift array holds (one dimension from index 1, or none).
    ///
    /// - Throws: A ``PostgresDecodingError`` for malformed bytes, or an element that cannot
    ///   be read as `Element`.
    static func shapedText(from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat) throws(PostgresDecodingError) -> String? {
        switch format {
        case .text:
            // The server prints bounds only where an index does not start at 1.
            var index = 0
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
            if index < bytes.count, bytes[index] == UInt8(ascii: "[") { return bytes.utf8String }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
            index += 1
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
            return index < bytes.count && bytes[index] == UInt8(ascii: "{") ? bytes.utf8String : nil
        case .binary:
            guard bytes.count >= 12 else { throw .mismatch(Self.self, type, .binary) }
            let dimensions = Int(bytes.bigEndian(Int32.self, at: 0))
            guard dimensions > 0 else { return nil }
            // PostgreSQL's MAXDIM.
            guard dimensions <= 6, bytes.count >= 12 + 8 * dimensions else { throw .malformed(type, .binary) }
            var lengths: [Int] = []
            var lowerBounds: [Int] = []
            var count = 1
            for dimension in 0..<dimensions {
                let length = Int(bytes.bigEndian(Int32.self, at: 12 + 8 * dimension))
                let lower = Int(bytes.bigEndian(Int32.self, at: 16 + 8 * dimension))
                // An empty array has no dimension: a dimension of no element is malformed (and
                // would make the text's braces, which the elements bound, unbounded).
                guard length > 0, case let (product, false) = count.multipliedReportingOverflow(by: length) else { throw .malformed(type, .binary) }
                count = product
                lengths.append(length)
                lowerBounds.append(lower)
            }
            guard dimensions > 1 || lowerBounds[0] != 1 else { return nil }
            // Every element takes at least its 4-byte length.
            let header = 12 + 8 * dimensions
            guard count <= (bytes.count - header) / 4 else { throw .malformed(type, .binary) }
            let elementType = PostgresType(bytes.bigEndian(UInt32.self, at: 8))
            var elements: [[UInt8]?] = []
            elements.reserveCapacity(count)
            var offset = header
            var text: [UInt8] = []
            for _ in 0..<count {
                guard offset + 4 <= bytes.count else { throw .malformed(type, .binary) }
                let length = Int(bytes.bigEndian(Int32.self, at: offset))
                offset += 4
                let element: Element
                if length < 0 {
                    element = try Element.decodeArrayElement(nil, type: elementType, format: .binary)
                } else {
                    guard offset + length <= bytes.count else { throw .malformed(type, .binary) }
                    element = try Element.decodeArrayElement(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)]), type: elementType, format: .binary)
                    offset += length
                }
                text.removeAll(keepingCapacity: true)
                elements.append(element.appendArrayElementText(into: &text) ? text : nil)
            }
            var literal = ""
            if lowerBounds.contains(where: { $0 != 1 }) {
                for (lower, length) in zip(lowerBounds, lengths) { literal += "[\(lower):\(lower + length - 1)]" }
                literal += "="
            }
            var next = 0
            func append(dimension: Int) {
                literal += "{"
                for position in 0..<lengths[dimension] {
                    if position > 0 { literal += "," }
                    if dimension + 1 < dimensions {
                        append(dimension: dimension + 1)
                        continue
                    }
                    defer { next += 1 }
                    guard let element = elements[next] else {
                        literal += "NULL"
                        continue
                    }
                    var quoted: [UInt8] = [UInt8(ascii: "\"")]
                    for byte in element {
                        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { quoted.append(UInt8(ascii: "\\")) }
                        quoted.append(byte)
                    }
                    quoted.append(UInt8(ascii: "\""))
                    literal += String(decoding: quoted, as: UTF8.self)
                }
                literal += "}"
            }
            append(dimension: 0)
            return literal
        }
    }
}
