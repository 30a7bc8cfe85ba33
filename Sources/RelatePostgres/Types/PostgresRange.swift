import Foundation

/// A value of one of PostgreSQL's built-in range types: `int4range` and `int8range` as
/// `PostgresRange<Int>`, `numrange` as `PostgresRange<Decimal>`, `daterange`, `tsrange` and
/// `tstzrange` as `PostgresRange<Date>`.
///
/// Each end is inclusive, exclusive or infinite (omitted), and a range may be empty. The
/// server keeps the ranges of discrete types (`int4range`, `int8range`, `daterange`) in
/// their canonical form, `[lower,upper)`: `[1,5]` reads back as `[1,6)`, the same range.
///
/// ```swift
/// let week = PostgresRange<Int>(lower: .inclusive(1), upper: .exclusive(8))   // [1,8)
/// let open = PostgresRange<Date>(lower: .inclusive(start), upper: .infinite)   // [start,)
/// let none = PostgresRange<Int>.empty
/// let same = PostgresRange(1..<8)
/// ```
public struct PostgresRange<Bound: PostgresRangeBound>: Hashable, Sendable, CustomStringConvertible {
    /// One end of a range.
    public enum End: Hashable, Sendable {
        /// The end includes the value (`[` or `]`).
        case inclusive(Bound)
        /// The end excludes the value (`(` or `)`).
        case exclusive(Bound)
        /// No end on this side: the range goes on forever (an omitted bound).
        case infinite

        /// The end's value, `nil` when infinite.
        public var value: Bound? {
            switch self {
            case .inclusive(let value), .exclusive(let value): value
            case .infinite: nil
            }
        }
    }

    /// The lower end; ``End/infinite`` for an empty range.
    public var lower: End
    /// The upper end; ``End/infinite`` for an empty range.
    public var upper: End
    /// Whether the range holds no value at all (`empty`).
    public var isEmpty: Bool
    /// The range type the value is sent as: by default the bound type's
    /// (``PostgresRangeBound/postgresRangeType``); a range read from a cell keeps the cell's,
    /// so that it goes back as the same type. Not part of equality.
    public var rangeType: PostgresType

    /// Creates a range between two ends.
    ///
    /// - Parameters:
    ///   - lower: The lower end.
    ///   - upper: The upper end.
    ///   - rangeType: The range type to send it as; `nil` for the bound type's.
    public init(lower: End, upper: End, rangeType: PostgresType? = nil) {
        self.lower = lower
        self.upper = upper
        isEmpty = false
        self.rangeType = rangeType ?? Bound.postgresRangeType
    }

    /// The empty range.
    public static var empty: PostgresRange {
        var range = PostgresRange(lower: .infinite, upper: .infinite)
        range.isEmpty = true
        return range
    }

    /// `lower..<upper` as `[lower,upper)`.
    ///
    /// - Parameter range: The half-open range.
    public init(_ range: Range<Bound>) where Bound: Comparable {
        self.init(lower: .inclusive(range.lowerBound), upper: .exclusive(range.upperBound))
    }

    /// `lower...upper` as `[lower,upper]`.
    ///
    /// - Parameter range: The closed range.
    public init(_ range: ClosedRange<Bound>) where Bound: Comparable {
        self.init(lower: .inclusive(range.lowerBound), upper: .inclusive(range.upperBound))
    }

    /// The same range sent as `type`.
    ///
    /// - Parameter type: A range type whose bounds `Bound` is read from (``PostgresRangeBound/readsRange(of:)``).
    /// - Returns: The range, sent as `type`.
    public func sent(as type: PostgresType) -> PostgresRange {
        var range = self
        range.rangeType = type
        return range
    }

    /// Compares the ends and emptiness, not ``rangeType``.
    ///
    /// - Parameters:
    ///   - left: A range.
    ///   - right: Another range.
    /// - Returns: Whether both hold the same values as written.
    public static func == (left: PostgresRange, right: PostgresRange) -> Bool {
        left.isEmpty == right.isEmpty && left.lower == right.lower && left.upper == right.upper
    }

    /// Hashes the ends and emptiness.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(isEmpty)
        hasher.combine(lower)
        hasher.combine(upper)
    }

    /// The range's text form, as PostgreSQL reads it: `[1,8)`, `(,5]`, `empty`.
    public var description: String {
        var bytes: [UInt8] = []
        appendText(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    fileprivate func appendText(into buffer: inout [UInt8]) {
        if isEmpty {
            buffer.append(contentsOf: "empty".utf8)
            return
        }
        func bound(_ value: Bound?) {
            guard let value else { return }
            var text: [UInt8] = []
            value.encodeText(into: &text)
            buffer.append(UInt8(ascii: "\""))
            for byte in text {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { buffer.append(UInt8(ascii: "\\")) }
                buffer.append(byte)
            }
            buffer.append(UInt8(ascii: "\""))
        }
        if case .inclusive = lower { buffer.append(UInt8(ascii: "[")) } else { buffer.append(UInt8(ascii: "(")) }
        bound(lower.value)
        buffer.append(UInt8(ascii: ","))
        bound(upper.value)
        if case .inclusive = upper { buffer.append(UInt8(ascii: "]")) } else { buffer.append(UInt8(ascii: ")")) }
    }
}

extension PostgresRange: Codable where Bound: Codable {
    private enum CodingKeys: String, CodingKey {
        case lower, upper, isEmpty
    }

    /// Decodes the ends and emptiness; the range is sent as the bound type's range type.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: A `DecodingError` when a field is missing or of another type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(lower: try container.decode(End.self, forKey: .lower), upper: try container.decode(End.self, forKey: .upper))
        isEmpty = try container.decode(Bool.self, forKey: .isEmpty)
    }

    /// Encodes the ends and emptiness (not ``rangeType``).
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: What the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lower, forKey: .lower)
        try container.encode(upper, forKey: .upper)
        try container.encode(isEmpty, forKey: .isEmpty)
    }
}
extension PostgresRange.End: Codable where Bound: Codable {}

/// A type that can be the bound of a ``PostgresRange``: `Int`, `Decimal`, `Date`.
public protocol PostgresRangeBound: PostgresArrayElement, Hashable, Sendable {
    /// The range type a range of this bound is sent as by default (`int8range` for `Int`).
    static var postgresRangeType: PostgresType { get }
    /// The array type of that range type (`int8range[]` for `Int`).
    static var postgresRangeArrayType: PostgresType { get }
    /// Whether the bounds of `rangeType` read as this type (`int4range` and `int8range` for
    /// `Int`).
    ///
    /// - Parameter rangeType: A range type.
    /// - Returns: Whether a range of that type can be a `PostgresRange<Self>`.
    static func readsRange(of rangeType: PostgresType) -> Bool
    /// Appends the bound's binary form as a bound of `element`, the element type of the
    /// range type it is sent as (`int4` inside an `int4range`).
    ///
    /// - Parameters:
    ///   - buffer: The range's bytes so far; the bound's are appended.
    ///   - element: The bound's PostgreSQL type.
    /// - Throws: A ``PostgresEncodingError`` when the value does not fit that type.
    func encodeBound(into buffer: inout [UInt8], as element: PostgresType) throws(PostgresEncodingError)
}

extension Int: PostgresRangeBound {
    /// `int8range`.
    public static var postgresRangeType: PostgresType { .int8range }
    /// `int8range[]`.
    public static var postgresRangeArrayType: PostgresType { .int8rangeArray }
    /// `int4range` and `int8range`.
    ///
    /// - Parameter rangeType: A range type.
    /// - Returns: Whether its bounds are integers.
    public static func readsRange(of rangeType: PostgresType) -> Bool { rangeType == .int4range || rangeType == .int8range }
    /// Appends the integer as 32 bits inside an `int4range`, else 64.
    ///
    /// - Parameters:
    ///   - buffer: The range's bytes so far; the bound's are appended.
    ///   - element: `int4` or `int8`.
    /// - Throws: A ``PostgresEncodingError`` when the value does not fit in `int4`.
    public func encodeBound(into buffer: inout [UInt8], as element: PostgresType) throws(PostgresEncodingError) {
        guard element == .int4 else { return buffer.appendBigEndian(Int64(self)) }
        guard let narrow = Int32(exactly: self) else { throw PostgresEncodingError("\(self) does not fit in an int4range") }
        buffer.appendBigEndian(narrow)
    }
}

extension Decimal: PostgresRangeBound {
    /// `numrange`.
    public static var postgresRangeType: PostgresType { .numrange }
    /// `numrange[]`.
    public static var postgresRangeArrayType: PostgresType { .numrangeArray }
    /// `numrange`.
    ///
    /// - Parameter rangeType: A range type.
    /// - Returns: Whether it is `numrange`.
    public static func readsRange(of rangeType: PostgresType) -> Bool { rangeType == .numrange }
    /// Never called: a `numrange` goes in text form, as `Decimal` does.
    ///
    /// - Parameters:
    ///   - buffer: The range's bytes so far.
    ///   - element: `numeric`.
    /// - Throws: Always: `numeric` has no binary writer here.
    public func encodeBound(into buffer: inout [UInt8], as element: PostgresType) throws(PostgresEncodingError) {
        throw PostgresEncodingError("a numrange is sent in text form")
    }
}

extension Date: PostgresRangeBound {
    /// `tstzrange`.
    public static var postgresRangeType: PostgresType { .tstzrange }
    /// `tstzrange[]`.
    public static var postgresRangeArrayType: PostgresType { .tstzrangeArray }
    /// `daterange`, `tsrange` and `tstzrange`.
    ///
    /// - Parameter rangeType: A range type.
    /// - Returns: Whether its bounds are dates or timestamps.
    public static func readsRange(of rangeType: PostgresType) -> Bool {
        rangeType == .daterange || rangeType == .tsrange || rangeType == .tstzrange
    }
    /// Appends the date as a `date` (days; it must be midnight UTC) inside a `daterange`,
    /// else as a timestamp.
    ///
    /// - Parameters:
    ///   - buffer: The range's bytes so far; the bound's are appended.
    ///   - element: `date`, `timestamp` or `timestamptz`.
    /// - Throws: A ``PostgresEncodingError`` for a `daterange` bound that is not a midnight
    ///   UTC, or a date out of range.
    public func encodeBound(into buffer: inout [UInt8], as element: PostgresType) throws(PostgresEncodingError) {
        guard element == .date else { return try encode(into: &buffer) }
        let seconds = timeIntervalSince1970
        if seconds.isInfinite { return buffer.appendBigEndian(seconds > 0 ? Int32.max : Int32.min) }
        let days = ((seconds - Date.postgresEpoch) / 86_400)
        guard days.rounded(.down) == days, let whole = Int32(exactly: days), whole != .min, whole != .max else {
            throw PostgresEncodingError("a daterange bound is a date at midnight UTC; \(self) is not one")
        }
        buffer.appendBigEndian(whole)
    }
}

/// What the object layer needs of a range whose bound type it does not know.
public protocol PostgresAnyRange: PostgresEncodable, Sendable {
    /// The range, sent as `type`; `nil` when its bounds are not of that range type's.
    ///
    /// - Parameter type: A range type (`int4range`…).
    /// - Returns: The range as that type, or `nil`.
    func encodable(as type: PostgresType) -> (any PostgresEncodable)?
}

extension PostgresRange: PostgresAnyRange {
    /// The range, sent as `type`; `nil` when `Bound` is not read from that range type.
    ///
    /// - Parameter type: A range type (`int4range`…).
    /// - Returns: The range as that type, or `nil`.
    public func encodable(as type: PostgresType) -> (any PostgresEncodable)? {
        Bound.readsRange(of: type) ? sent(as: type) : nil
    }
}

extension PostgresRange: PostgresArrayElement {
    /// The bound type's ``PostgresRangeBound/postgresRangeType`` (see ``postgresValueType``).
    public static var postgresType: PostgresType { Bound.postgresRangeType }
    /// Binary when the bounds are sent in binary (not `numrange`, as `Decimal` goes as text).
    public static var postgresFormat: PostgresFormat { Bound.postgresFormat }
    /// The bound type's ``PostgresRangeBound/postgresRangeArrayType``.
    public static var postgresArrayType: PostgresType { Bound.postgresRangeArrayType }
    /// ``rangeType``.
    public var postgresValueType: PostgresType { rangeType }

    // The flags byte of `range_send`.
    private static var flagEmpty: UInt8 { 0x01 }
    private static var flagLowerInclusive: UInt8 { 0x02 }
    private static var flagUpperInclusive: UInt8 { 0x04 }
    private static var flagLowerInfinite: UInt8 { 0x08 }
    private static var flagUpperInfinite: UInt8 { 0x10 }

    /// Appends `range_send`'s form (a flags byte, then each finite bound's length and
    /// binary form), or the text form for bounds sent as text.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: A ``PostgresEncodingError`` when a bound does not fit the range type, or
    ///   ``rangeType`` is not one `Bound` is read from.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        guard Bound.readsRange(of: rangeType), let element = rangeType.rangeElement else {
            throw PostgresEncodingError("a PostgresRange<\(Bound.self)> cannot be sent as \(rangeType)")
        }
        guard Self.postgresFormat == .binary else { return appendText(into: &buffer) }
        if isEmpty { return buffer.append(Self.flagEmpty) }
        var flags: UInt8 = 0
        switch lower {
        case .inclusive: flags |= Self.flagLowerInclusive
        case .exclusive: break
        case .infinite: flags |= Self.flagLowerInfinite
        }
        switch upper {
        case .inclusive: flags |= Self.flagUpperInclusive
        case .exclusive: break
        case .infinite: flags |= Self.flagUpperInfinite
        }
        buffer.append(flags)
        for value in [lower.value, upper.value] {
            guard let value else { continue }
            let lengthOffset = buffer.count
            buffer.appendBigEndian(Int32(0))
            try value.encodeBound(into: &buffer, as: element)
            let length = Int32(buffer.count - lengthOffset - 4).bigEndian
            withUnsafeBytes(of: length) { buffer.replaceSubrange(lengthOffset..<lengthOffset + 4, with: $0) }
        }
    }

    /// Appends the range's text form (``description``).
    ///
    /// - Parameter buffer: The array literal's bytes so far; the value's text is appended.
    public func encodeText(into buffer: inout [UInt8]) {
        appendText(into: &buffer)
    }

    /// Reads a cell of a range type whose bounds are `Bound` (``PostgresRangeBound/readsRange(of:)``),
    /// in either form.
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value, whose ``rangeType`` is the cell's type.
    /// - Throws: A ``PostgresDecodingError`` when the cell is not such a range, or its bytes
    ///   are malformed.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> PostgresRange {
        guard Bound.readsRange(of: type), let element = type.rangeElement else { throw .mismatch(PostgresRange.self, type, format) }
        var range: PostgresRange
        switch format {
        case .binary: range = try decodeBinary(bytes, type: type, element: element)
        case .text: range = try decodeText(bytes, type: type, element: element)
        }
        range.rangeType = type
        return range
    }

    private static func decodeBinary(
        _ bytes: UnsafeRawBufferPointer, type: PostgresType, element: PostgresType
    ) throws(PostgresDecodingError) -> PostgresRange {
        guard let flags = bytes.first else { throw .malformed(type, .binary) }
        if flags & flagEmpty != 0 { return .empty }
        var offset = 1
        func bound(infinite: UInt8, inclusive: UInt8) throws(PostgresDecodingError) -> End {
            if flags & infinite != 0 { return .infinite }
            guard offset + 4 <= bytes.count else { throw .malformed(type, .binary) }
            let length = Int(bytes.bigEndian(Int32.self, at: offset))
            offset += 4
            guard length >= 0, offset + length <= bytes.count else { throw .malformed(type, .binary) }
            let value = try Bound.decode(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), type: element, format: .binary)
            offset += length
            return flags & inclusive != 0 ? .inclusive(value) : .exclusive(value)
        }
        let lower = try bound(infinite: flagLowerInfinite, inclusive: flagLowerInclusive)
        let upper = try bound(infinite: flagUpperInfinite, inclusive: flagUpperInclusive)
        guard offset == bytes.count else { throw .malformed(type, .binary) }
        return PostgresRange(lower: lower, upper: upper)
    }

    /// `empty`, or `[`/`(`, a bound, `,`, a bound, `]`/`)`, each bound empty (infinite),
    /// plain or in double quotes with backslash escapes.
    private static func decodeText(
        _ bytes: UnsafeRawBufferPointer, type: PostgresType, element: PostgresType
    ) throws(PostgresDecodingError) -> PostgresRange {
        let text = Array(bytes)
        if text == Array("empty".utf8) { return .empty }
        guard text.count >= 3, let open = text.first, let close = text.last,
            open == UInt8(ascii: "[") || open == UInt8(ascii: "("), close == UInt8(ascii: "]") || close == UInt8(ascii: ")")
        else { throw .malformed(type, .text) }
        var index = 1
        let last = text.count - 1
        // The bound from `index` up to an unquoted comma (the lower one) or the closing
        // bracket (the upper one); `nil` when it is empty, an infinite end.
        func bound(lower: Bool) throws(PostgresDecodingError) -> [UInt8]? {
            var value: [UInt8] = []
            var quoted = false
            let start = index
            while index < last {
                let byte = text[index]
                if !quoted, lower, byte == UInt8(ascii: ",") { break }
                index += 1
                if byte == UInt8(ascii: "\\") {
                    guard index < last else { throw .malformed(type, .text) }
                    value.append(text[index])
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    quoted.toggle()
                } else {
                    value.append(byte)
                }
            }
            guard !quoted else { throw .malformed(type, .text) }
            let empty = index == start
            if lower {
                guard index < last else { throw .malformed(type, .text) }
                index += 1
            }
            return empty ? nil : value
        }
        func end(_ value: [UInt8]?, inclusive: Bool) throws(PostgresDecodingError) -> End {
            guard var value else { return .infinite }
            // Some readers (strtod) rely on a NUL after the value, as libpq gives for cells.
            value.append(0)
            let decoded = value.withUnsafeBytes { buffer in
                Result { () throws(PostgresDecodingError) -> Bound in
                    try Bound.decode(from: UnsafeRawBufferPointer(rebasing: buffer.dropLast()), type: element, format: .text)
                }
            }
            let bound = try decoded.get()
            return inclusive ? .inclusive(bound) : .exclusive(bound)
        }
        let lower = try end(try bound(lower: true), inclusive: open == UInt8(ascii: "["))
        let upper = try end(try bound(lower: false), inclusive: close == UInt8(ascii: "]"))
        return PostgresRange(lower: lower, upper: upper)
    }
}
