/// A Swift value that can be bound as a statement parameter.
///
/// Each conforming type says which PostgreSQL type it is sent as and in which form, and
/// writes its bytes. `String` is sent untyped, so the server reads it as whatever the
/// context needs (`uuid`, `date`, an enum label…).
public protocol PostgresEncodable {
    /// The PostgreSQL type the value is sent as; ``PostgresType/unspecified`` lets the server
    /// infer it from the statement (as for `String`).
    static var postgresType: PostgresType { get }
    /// The form ``encode(into:)`` writes: text or binary.
    static var postgresFormat: PostgresFormat { get }
    /// The PostgreSQL type this value is sent as: ``postgresType`` unless the value knows
    /// better (a range read from an `int4range` column goes back as one, an address
    /// marked as a network as `cidr`). The binary form ``encode(into:)`` writes is this type's.
    var postgresValueType: PostgresType { get }
    /// Appends the value's bytes, in `postgresFormat`, to `buffer`.
    ///
    /// - Parameter buffer: The parameter's bytes so far; append to it.
    /// - Throws: A ``PostgresEncodingError`` for a value PostgreSQL cannot take (a NUL byte
    ///   in text, a date out of range).
    func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError)
}

extension PostgresEncodable {
    /// The type's ``postgresType``: the values of most types are all sent as one type.
    public var postgresValueType: PostgresType { Self.postgresType }
}

/// A Swift value that can be read from a result cell.
public protocol PostgresDecodable {
    /// Reads a non-NULL cell. `bytes` is the cell as the server sent it: the text form
    /// without its terminating NUL, or the binary form.
    ///
    /// - Parameters:
    ///   - bytes: The cell's bytes; valid only during the call.
    ///   - type: The cell's PostgreSQL type.
    ///   - format: The form the cell came in.
    /// - Returns: The value.
    /// - Throws: A ``PostgresDecodingError`` when the type cannot be read as `Self` or the
    ///   bytes are malformed.
    static func decode(
        from bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat
    ) throws(PostgresDecodingError) -> Self
}

/// A type that can be both bound as a parameter and read from a cell: `Int`, `String`,
/// `Date`, `UUID`, arrays of them and the other types listed in ``PostgresValueMapping``.
public typealias PostgresCodable = PostgresEncodable & PostgresDecodable

/// A type that can be an element of a PostgreSQL array, sent as that array type.
public protocol PostgresArrayElement: PostgresCodable, PostgresArrayMember {
    /// The array type an array of this type is sent as (`int8[]` for `Int`).
    static var postgresArrayType: PostgresType { get }
    /// Appends the value's text form, as it appears inside an array literal before quoting.
    ///
    /// - Parameter buffer: The array literal's bytes so far; append to it.
    func encodeText(into buffer: inout [UInt8])
}

/// Why a value could not be bound; the connection turns it into a ``PostgresError`` that
/// names the parameter.
public struct PostgresEncodingError: Error, Sendable {
    /// Why: the text the ``PostgresError`` that reports it quotes.
    public var reason: String
    /// Creates the error with the reason it gives.
    ///
    /// - Parameter reason: Why the value could not be bound.
    public init(_ reason: String) { self.reason = reason }
}

/// Why a cell could not be read; the row turns it into a ``PostgresError`` that names the
/// column, its type and the Swift type asked for.
public struct PostgresDecodingError: Error, Sendable {
    /// Why: the text the ``PostgresError`` that reports it quotes.
    public var reason: String
    /// Creates the error with the reason it gives.
    ///
    /// - Parameter reason: Why the cell could not be read.
    public init(_ reason: String) { self.reason = reason }

    @usableFromInline
    static func mismatch(_ swiftType: Any.Type, _ type: PostgresType, _ format: PostgresFormat) -> Self {
        Self("a \(type) value in \(format) form cannot be read as \(swiftType)")
    }

    @usableFromInline
    static func malformed(_ type: PostgresType, _ format: PostgresFormat) -> Self {
        Self("malformed \(type) value in \(format) form")
    }
}

extension UnsafeRawBufferPointer {
    /// A big-endian integer at `offset`; callers check the length first.
    @inlinable
    func bigEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int = 0) -> T {
        T(bigEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    @inlinable
    var utf8String: String {
        String(decoding: self, as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    @inlinable
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
