import Foundation

/// A value of a composite type (`CREATE TYPE address AS (street text, zip int4)`) in its
/// binary form: its fields in order, each with its type's OID and its bytes (`nil` for
/// NULL). What a composite column reads as dynamically; generated structs read their
/// fields from it (``decode(_:at:)``, ``record(at:)``) and are written as one.
///
/// A field of a composite type (a nested one) or of an array of one stays in its bytes until
/// asked for with ``record(at:)`` or ``records(at:)``: the binary form does not say that a
/// field's type is composite.
///
/// ```swift
/// let home = try person.value(forKey: "home") as? PostgresRecord
/// let street = try home?.decode(String.self, at: 0)
/// ```
public struct PostgresRecord: Hashable, Sendable, CustomStringConvertible {
    /// One field: its type and its binary form.
    public struct Field: Hashable, Sendable {
        /// The field's type, as the record gives it (a domain's own OID for a domain field).
        public var type: PostgresType
        /// The field's binary form; `nil` for NULL.
        public var bytes: [UInt8]?

        /// - Parameters:
        ///   - type: The field's type.
        ///   - bytes: Its binary form, `nil` for NULL.
        public init(type: PostgresType, bytes: [UInt8]?) {
            self.type = type
            self.bytes = bytes
        }
    }

    /// The fields, in the composite type's order.
    public var fields: [Field]

    /// A record of `fields`.
    ///
    /// - Parameter fields: The fields, in the composite type's order.
    public init(fields: [Field]) {
        self.fields = fields
    }

    /// The number of fields and their types, never their values (a record holds row data).
    public var description: String {
        "record(" + fields.map { $0.bytes == nil ? "\($0.type) NULL" : "\($0.type)" }.joined(separator: ", ") + ")"
    }

    /// The field at `index` as the Swift value its type maps to (``PostgresValue``); a field
    /// whose type has no mapping (a nested composite) as its bytes, `Data`.
    ///
    /// - Parameter index: The field's position.
    /// - Returns: The value, `nil` for NULL.
    /// - Throws: A ``PostgresDecodingError`` for a position the record lacks or malformed bytes.
    public func value(at index: Int) throws(PostgresDecodingError) -> (any Sendable)? {
        guard let field = try field(at: index), let bytes = field.bytes else { return nil }
        let value: any Sendable = try Self.reading(bytes) { buffer throws(PostgresDecodingError) in
            try PostgresValue.decode(from: buffer, type: field.type, format: .binary)
        }
        return value
    }

    /// The field at `index` as `T`.
    ///
    /// - Parameters:
    ///   - type: The Swift type to read it as.
    ///   - index: The field's position.
    /// - Returns: The value, `nil` for NULL.
    /// - Throws: A ``PostgresDecodingError`` when the field cannot be read as `T`.
    public func decode<T: PostgresDecodable>(_ type: T.Type, at index: Int) throws(PostgresDecodingError) -> T? {
        guard let field = try field(at: index), let bytes = field.bytes else { return nil }
        return try Self.reading(bytes) { buffer throws(PostgresDecodingError) in
            try T.decode(from: buffer, type: field.type, format: .binary)
        }
    }

    /// The field at `index`, of a composite type, as a record.
    ///
    /// - Parameter index: The field's position.
    /// - Returns: The nested record, `nil` for NULL.
    /// - Throws: A ``PostgresDecodingError`` when the field is not a record.
    public func record(at index: Int) throws(PostgresDecodingError) -> PostgresRecord? {
        guard let field = try field(at: index), let bytes = field.bytes else { return nil }
        return try Self.reading(bytes) { buffer throws(PostgresDecodingError) in try Self.decodeRecord(buffer, type: field.type) }
    }

    /// The field at `index`, an array of a composite type, as records.
    ///
    /// - Parameter index: The field's position.
    /// - Returns: The records (`nil` elements for NULL ones), `nil` for NULL.
    /// - Throws: A ``PostgresDecodingError`` when the field is not an array of records.
    public func records(at index: Int) throws(PostgresDecodingError) -> [PostgresRecord?]? {
        guard let field = try field(at: index), let bytes = field.bytes else { return nil }
        return try Self.reading(bytes) { buffer throws(PostgresDecodingError) in try Self.decodeArray(buffer, type: field.type) }
    }

    /// `body` over `bytes`, its typed error kept (`withUnsafeBytes` rethrows `any Error`).
    private static func reading<T>(
        _ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(PostgresDecodingError) -> T
    ) throws(PostgresDecodingError) -> T {
        try bytes.withUnsafeBytes { buffer in Result { () throws(PostgresDecodingError) -> T in try body(buffer) } }.get()
    }

    private func field(at index: Int) throws(PostgresDecodingError) -> Field? {
        guard fields.indices.contains(index) else {
            throw PostgresDecodingError("a record of \(fields.count) fields has no field at position \(index)")
        }
        return fields[index]
    }

    // MARK: - Binary form

    /// Reads `record_send`'s form: the field count, then each field's type OID, length (-1
    /// for NULL) and bytes.
    ///
    /// - Parameters:
    ///   - bytes: The value's bytes.
    ///   - type: The composite type (for the error).
    /// - Returns: The record.
    /// - Throws: A ``PostgresDecodingError`` for malformed bytes.
    public static func decodeRecord(_ bytes: UnsafeRawBufferPointer, type: PostgresType) throws(PostgresDecodingError) -> PostgresRecord {
        guard bytes.count >= 4 else { throw .malformed(type, .binary) }
        let count = Int(bytes.bigEndian(Int32.self))
        guard count >= 0, count * 8 <= bytes.count - 4 else { throw .malformed(type, .binary) }
        var offset = 4
        var fields: [Field] = []
        fields.reserveCapacity(count)
        for _ in 0..<count {
            guard offset + 8 <= bytes.count else { throw .malformed(type, .binary) }
            let oid = bytes.bigEndian(UInt32.self, at: offset)
            let length = Int(bytes.bigEndian(Int32.self, at: offset + 4))
            offset += 8
            if length == -1 {
                fields.append(Field(type: PostgresType(oid), bytes: nil))
                continue
            }
            guard length >= 0, offset + length <= bytes.count else { throw .malformed(type, .binary) }
            fields.append(Field(type: PostgresType(oid), bytes: Array(bytes[offset..<offset + length])))
            offset += length
        }
        guard offset == bytes.count else { throw .malformed(type, .binary) }
        return PostgresRecord(fields: fields)
    }

    /// Reads `array_send`'s form of a one-dimensional array of records (an empty array has
    /// no dimension).
    ///
    /// - Parameters:
    ///   - bytes: The value's bytes.
    ///   - type: The array type (for the error).
    /// - Returns: The records, `nil` for NULL elements.
    /// - Throws: A ``PostgresDecodingError`` for malformed bytes or more than one dimension.
    public static func decodeArray(_ bytes: UnsafeRawBufferPointer, type: PostgresType) throws(PostgresDecodingError) -> [PostgresRecord?] {
        guard bytes.count >= 12 else { throw .malformed(type, .binary) }
        let dimensions = Int(bytes.bigEndian(Int32.self))
        if dimensions == 0 { return [] }
        guard dimensions == 1, bytes.count >= 20 else {
            throw PostgresDecodingError("a \(type) value of \(dimensions) dimensions cannot be read as an array of records")
        }
        let count = Int(bytes.bigEndian(Int32.self, at: 12))
        guard count >= 0, count * 4 <= bytes.count - 20 else { throw .malformed(type, .binary) }
        var offset = 20
        var records: [PostgresRecord?] = []
        records.reserveCapacity(count)
        for _ in 0..<count {
            guard offset + 4 <= bytes.count else { throw .malformed(type, .binary) }
            let length = Int(bytes.bigEndian(Int32.self, at: offset))
            offset += 4
            if length == -1 {
                records.append(nil)
                continue
            }
            guard length >= 0, offset + length <= bytes.count else { throw .malformed(type, .binary) }
            records.append(try decodeRecord(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), type: type))
            offset += length
        }
        guard offset == bytes.count else { throw .malformed(type, .binary) }
        return records
    }

    /// Appends `record_recv`'s form of the record.
    ///
    /// - Parameter buffer: The bytes so far; the record's are appended.
    public func appendBinary(into buffer: inout [UInt8]) {
        buffer.appendBigEndian(Int32(fields.count))
        for field in fields {
            buffer.appendBigEndian(field.type.rawValue)
            if let bytes = field.bytes {
                buffer.appendBigEndian(Int32(bytes.count))
                buffer.append(contentsOf: bytes)
            } else {
                buffer.appendBigEndian(Int32(-1))
            }
        }
    }

    /// `array_recv`'s form of a one-dimensional array of records of the composite type
    /// `elementType`.
    ///
    /// - Parameters:
    ///   - records: The elements, `nil` for NULL.
    ///   - elementType: The composite type's OID, which the array's header names.
    /// - Returns: The array's bytes.
    public static func arrayBinary(_ records: [PostgresRecord?], elementType: PostgresType) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.appendBigEndian(Int32(records.isEmpty ? 0 : 1))
        buffer.appendBigEndian(Int32(records.contains { $0 == nil } ? 1 : 0))
        buffer.appendBigEndian(elementType.rawValue)
        guard !records.isEmpty else { return buffer }
        buffer.appendBigEndian(Int32(records.count))
        buffer.appendBigEndian(Int32(1))
        for record in records {
            guard let record else {
                buffer.appendBigEndian(Int32(-1))
                continue
            }
            var element: [UInt8] = []
            record.appendBinary(into: &element)
            buffer.appendBigEndian(Int32(element.count))
            buffer.append(contentsOf: element)
        }
        return buffer
    }
}

extension PostgresRecord: PostgresEncodable {
    /// Sent without a type: the server takes the composite type the statement needs (a
    /// composite column's), whose `record_recv` checks each field's type.
    public static var postgresType: PostgresType { .unspecified }
    /// The binary form.
    public static var postgresFormat: PostgresFormat { .binary }

    /// Appends `record_recv`'s form (see ``appendBinary(into:)``).
    ///
    /// - Parameter buffer: The parameter's bytes so far; the record's are appended.
    /// - Throws: Never.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        appendBinary(into: &buffer)
    }
}

/// An array of records as one parameter, in binary, its header naming the composite type.
public struct PostgresRecordArray: PostgresEncodable, Sendable {
    /// The elements, `nil` for NULL.
    public var records: [PostgresRecord?]
    /// The composite type of the elements.
    public var elementType: PostgresType

    /// - Parameters:
    ///   - records: The elements.
    ///   - elementType: Their composite type's OID.
    public init(_ records: [PostgresRecord?], elementType: PostgresType) {
        self.records = records
        self.elementType = elementType
    }

    /// Sent without a type: the server takes the column's array type.
    public static var postgresType: PostgresType { .unspecified }
    /// The binary form.
    public static var postgresFormat: PostgresFormat { .binary }

    /// Appends `array_recv`'s form (see ``PostgresRecord/arrayBinary(_:elementType:)``).
    ///
    /// - Parameter buffer: The parameter's bytes so far.
    /// - Throws: Never.
    public func encode(into buffer: inout [UInt8]) throws(PostgresEncodingError) {
        buffer.append(contentsOf: PostgresRecord.arrayBinary(records, elementType: elementType))
    }
}
