import Foundation

/// A value of one of PostgreSQL 14's built-in multirange types: `int4multirange` and
/// `int8multirange` as `PostgresMultirange<Int>`, `nummultirange` as
/// `PostgresMultirange<Decimal>`, `datemultirange`, `tsmultirange` and `tstzmultirange` as
/// `PostgresMultirange<Date>`.
///
/// The server keeps a multirange's ranges sorted, without empty ones, and merges those that
/// overlap or touch: `{[1,3), [2,5)}` reads back as `{[1,5)}`.
///
/// ```swift
/// let open = PostgresMultirange<Int>([PostgresRange(1..<3), PostgresRange(5..<8)])   // {[1,3),[5,8)}
/// let none = PostgresMultirange<Int>([])                                            // {}
/// ```
public struct PostgresMultirange<Bound: PostgresRangeBound>: Hashable, Sendable, CustomStringConvertible {
    /// The ranges, in the order given (as read: sorted, disjoint, none empty).
    public var ranges: [PostgresRange<Bound>]
    /// The multirange type the value is sent as: by default the bound type's range type's
    /// multirange; a value read from a cell keeps the cell's. Not part of equality.
    public var multirangeType: PostgresType

    /// Creates a multirange of `ranges`.
    ///
    /// - Parameters:
    ///   - ranges: Its ranges.
    ///   - multirangeType: The multirange type to send it as; `nil` for the bound type's.
    public init(_ ranges: [PostgresRange<Bound>], multirangeType: PostgresType? = nil) {
        self.ranges = ranges
        self.multirangeType = multirangeType ?? Bound.postgresRangeType.multirange ?? .int8multirange
    }

    /// Compares the ranges, not ``multirangeType``.
    ///
    /// - Parameters:
    ///   - left: A multirange.
    ///   - right: Another multirange.
    /// - Returns: Whether both hold the same ranges in the same order.
    public static func == (left: PostgresMultirange, right: PostgresMultirange) -> Bool {
        left.ranges == right.ranges
    }

    /// Hashes the ranges.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ranges)
    }

    /// The text form, as PostgreSQL reads it: `{[1,3),[5,8)}`, `{}`.
    public var description: String {
        "{" + ranges.map(\.description).joined(separator: ",") + "}"
    }
}

extension PostgresMultirange: Codable where Bound: Codable {
    /// Decodes the ranges, as an array (the type is the bound type's).
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: What decoding the ranges throws.
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([PostgresRange<Bound>].self))
    }

    /// Encodes the ranges, as an array.
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: What encoding the ranges throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(ranges)
    }
}

extension PostgresMultirange: PostgresCodable {
    /// The multirange of the bound type's range type (see ``postgresValueType``).
    public static var postgresType: PostgresType { Bound.postgresRangeType.multirange ?? .int8multirange }
    /// As the ranges are sent: binary unless the bounds go as text (`Decimal`).
    public static var postgresFormat: PostgresFormat { PostgresRange<Bound>.postgresFormat }
    /// ``multirangeType``.
    public var postgresValueType: PostgresType { multirangeType }

    /// Appends `multirange_send`'s form (the number of ranges, then each range's length and
    /// binary form), or the text form when the bounds go as text.
    ///
    /// - Parameter buffer: The parameter's bytes so far; the value's are appended.
    /// - Throws: A ``PostgresEncodingError`` when ``multirangeType`` is not a multirange
    ///   `Bound` is read from, or a bound does not fit.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        guard let rangeType = multirangeType.multirangeRange, Bound.readsRange(of: rangeType) else {
            throw PostgresEncodingError("a PostgresMultirange<\(Bound.self)> cannot be sent as \(multirangeType)")
        }
        guard Self.postgresFormat == .binary else { return buffer.append(contentsOf: description.utf8) }
        buffer.appendBigEndian(Int32(ranges.count))
        for range in ranges {
            let lengthOffset = buffer.count
            buffer.appendBigEndian(Int32(0))
            try range.sent(as: rangeType).encode(into: &buffer)
            let length = Int32(buffer.count - lengthOffset - 4).bigEndian
            withUnsafeBytes(of: length) { buffer.replaceSubrange(lengthOffset..<lengthOffset + 4, with: $0) }
        }
    }

    /// Reads a cell of a multirange type whose bounds are `Bound`, in either form.
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value, whose ``multirangeType`` is the cell's type.
    /// - Throws: A ``PostgresDecodingError`` when the cell is not such a multirange, or its
    ///   bytes are malformed.
    public static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> PostgresMultirange {
        guard let rangeType = type.multirangeRange, Bound.readsRange(of: rangeType) else {
            throw .mismatch(PostgresMultirange.self, type, format)
        }
        var ranges: [PostgresRange<Bound>] = []
        switch format {
        case .binary:
            guard bytes.count >= 4 else { throw .malformed(type, format) }
            let count = Int(bytes.bigEndian(Int32.self))
            var offset = 4
            guard count >= 0, count <= bytes.count else { throw .malformed(type, format) }
            for _ in 0..<count {
                guard offset + 4 <= bytes.count else { throw .malformed(type, format) }
                let length = Int(bytes.bigEndian(Int32.self, at: offset))
                offset += 4
                guard length >= 0, offset + length <= bytes.count else { throw .malformed(type, format) }
                ranges.append(try PostgresRange<Bound>.decode(
                    from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), type: rangeType, format: .binary))
                offset += length
            }
            guard offset == bytes.count else { throw .malformed(type, format) }
        case .text:
            // `{` ranges separated by commas `}`; a range ends at its closing bracket outside
            // double quotes (a bound may be quoted, with backslash escapes).
            let text = Array(bytes)
            guard text.first == UInt8(ascii: "{"), text.last == UInt8(ascii: "}") else { throw .malformed(type, format) }
            var index = 1
            while index < text.count - 1 {
                if text[index] == UInt8(ascii: ",") || text[index] == UInt8(ascii: " ") {
                    index += 1
                    continue
                }
                let start = index
                var quoted = false
                while index < text.count - 1 {
                    let byte = text[index]
                    index += 1
                    if byte == UInt8(ascii: "\\") { index += 1 }
                    else if byte == UInt8(ascii: "\"") { quoted.toggle() }
                    else if !quoted, byte == UInt8(ascii: "]") || byte == UInt8(ascii: ")") { break }
                }
                var range = Array(text[start..<min(index, text.count - 1)])
                range.append(0)
                let decoded = range.withUnsafeBytes { buffer in
                    Result { () throws(PostgresDecodingError) -> PostgresRange<Bound> in
                        try PostgresRange<Bound>.decode(from: UnsafeRawBufferPointer(rebasing: buffer.dropLast()), type: rangeType, format: .text)
                    }
                }
                ranges.append(try decoded.get())
            }
        }
        return PostgresMultirange(ranges, multirangeType: type)
    }
}

extension PostgresType {
    /// `int4multirange` (OID 4451), read and written as `PostgresMultirange<Int>`.
    @inlinable public static var int4multirange: PostgresType { PostgresType(rawValue: 4451) }
    /// `nummultirange` (OID 4532), read and written as `PostgresMultirange<Decimal>`.
    @inlinable public static var nummultirange: PostgresType { PostgresType(rawValue: 4532) }
    /// `tsmultirange` (OID 4533), read and written as `PostgresMultirange<Date>` (bounds taken as UTC).
    @inlinable public static var tsmultirange: PostgresType { PostgresType(rawValue: 4533) }
    /// `tstzmultirange` (OID 4534), read and written as `PostgresMultirange<Date>`.
    @inlinable public static var tstzmultirange: PostgresType { PostgresType(rawValue: 4534) }
    /// `datemultirange` (OID 4535), read and written as `PostgresMultirange<Date>` (bounds at midnight UTC).
    @inlinable public static var datemultirange: PostgresType { PostgresType(rawValue: 4535) }
    /// `int8multirange` (OID 4536), read and written as `PostgresMultirange<Int>`.
    @inlinable public static var int8multirange: PostgresType { PostgresType(rawValue: 4536) }

    private static let multiranges: [PostgresType: PostgresType] = [
        .int4multirange: .int4range, .nummultirange: .numrange, .tsmultirange: .tsrange,
        .tstzmultirange: .tstzrange, .datemultirange: .daterange, .int8multirange: .int8range,
    ]

    /// The range type of the ranges when this is one of the built-in multirange types
    /// (`int4range` for `int4multirange`).
    public var multirangeRange: PostgresType? { Self.multiranges[self] }

    /// The multirange type of this built-in range type (`int4multirange` for `int4range`).
    public var multirange: PostgresType? { Self.multiranges.first { $0.value == self }?.key }

    /// The multirange types' names, for ``description``.
    static let multirangeNames: [PostgresType: String] = [
        .int4multirange: "int4multirange", .nummultirange: "nummultirange", .tsmultirange: "tsmultirange",
        .tstzmultirange: "tstzmultirange", .datemultirange: "datemultirange", .int8multirange: "int8multirange",
    ]
}

/// A ``PostgresMultirange`` of any bound type: what a write to a multirange column takes.
public protocol PostgresAnyMultirange: PostgresEncodable, Sendable {
    /// The multirange sent as the multirange type `type`, when its bounds are read from it.
    ///
    /// - Parameter type: A multirange type (`int4multirange`…).
    /// - Returns: The multirange as that type, or `nil`.
    func encodable(as type: PostgresType) -> (any PostgresEncodable)?
}

extension PostgresMultirange: PostgresAnyMultirange {
    /// The multirange, sent as `type`; `nil` when `Bound` is not read from that type.
    ///
    /// - Parameter type: A multirange type.
    /// - Returns: The multirange as that type, or `nil`.
    public func encodable(as type: PostgresType) -> (any PostgresEncodable)? {
        guard let range = type.multirangeRange, Bound.readsRange(of: range) else { return nil }
        var sent = self
        sent.multirangeType = type
        return sent
    }
}
