import Foundation
import RelatePostgres

/// A generated struct for a PostgreSQL composite type (`CREATE TYPE address AS (…)`): its
/// fields as optional properties (a composite's fields all take NULL), read from the
/// record's binary form and written as one.
///
/// ```swift
/// public struct Address: TypedComposite { public var street: String?; public var zip: Int?; … }
/// try context.insert(Person.self) { $0.home = Address(street: "Main St", zip: 12345) }
/// ```
public protocol TypedComposite: Sendable, Codable, Hashable {
    /// Reads the fields of `record`, in the type's order.
    ///
    /// - Parameter record: The value as the server sent it.
    /// - Throws: A `PostgresDecodingError` when a field cannot be read as its property's type.
    init(record: PostgresRecord) throws

    /// The fields' values, in the type's order: `nil` for NULL, a nested composite as its
    /// ``TypedComposite``, an array of them as an array.
    var compositeFieldValues: [(any Sendable)?] { get }
}

/// What generated composite structs call to read the fields that are not one typed decode.
public enum TypedCompositeFields {
    /// The field at `index` as its bytes: for a field of a type without a Swift mapping.
    ///
    /// - Parameters:
    ///   - record: The record.
    ///   - index: The field's position.
    /// - Returns: The binary form, `nil` for NULL.
    /// - Throws: A `PostgresDecodingError` for a position the record lacks.
    public static func bytes(_ record: PostgresRecord, at index: Int) throws -> Data? {
        guard record.fields.indices.contains(index) else {
            throw PostgresDecodingError("a record of \(record.fields.count) fields has no field at position \(index)")
        }
        return record.fields[index].bytes.map { Data($0) }
    }

    /// The field at `index`, of an enum type, as the generated enum `T`.
    ///
    /// - Parameters:
    ///   - type: The generated enum.
    ///   - record: The record.
    ///   - index: The field's position.
    /// - Returns: The case, `nil` for NULL.
    /// - Throws: ``RelateError`` of kind ``RelateError/Kind-swift.struct/typeMismatch`` naming the
    ///   label and `T` for a label `T` lacks (added after generation), or a
    ///   `PostgresDecodingError` for a position the record lacks.
    public static func enumeration<T: TypedEnum>(_ type: T.Type, in record: PostgresRecord, at index: Int) throws -> T? {
        // An enum's binary form is its label's text.
        guard let bytes = try Self.bytes(record, at: index) else { return nil }
        let label = String(decoding: bytes, as: UTF8.self)
        if let value = T(rawValue: label) { return value }
        throw RelateError(
            kind: .typeMismatch,
            message: "field \(index + 1) of a record holds label \"\(label)\", which \(T.self) lacks (added after generation?); "
                + "regenerate the typed models (relate generate)",
            detail: "label \(label)")
    }

    /// The field at `index`, a nested composite, as `T`.
    ///
    /// - Parameters:
    ///   - type: The nested composite's generated struct.
    ///   - record: The record.
    ///   - index: The field's position.
    /// - Returns: The value, `nil` for NULL.
    /// - Throws: What reading the nested record throws.
    public static func composite<T: TypedComposite>(_ type: T.Type, in record: PostgresRecord, at index: Int) throws -> T? {
        try record.record(at: index).map { try T(record: $0) }
    }

    /// The field at `index`, an array of a nested composite, as `[T]`.
    ///
    /// - Parameters:
    ///   - type: The nested composite's generated struct.
    ///   - record: The record.
    ///   - index: The field's position.
    /// - Returns: The values, `nil` for NULL.
    /// - Throws: What reading the nested records throws, and for a NULL element.
    public static func composites<T: TypedComposite>(_ type: T.Type, in record: PostgresRecord, at index: Int) throws -> [T]? {
        try record.records(at: index).map { records in
            try records.map { element in
                guard let element else { throw PostgresDecodingError("an array of \(T.self) holds a NULL element, which [\(T.self)] cannot hold") }
                return try T(record: element)
            }
        }
    }
}

extension DatabaseObject {
    /// The attribute at `index`, a composite column, as its generated struct `Value`; `nil`
    /// for NULL.
    ///
    /// - Parameters:
    ///   - index: The attribute's index in its entity.
    ///   - type: The generated struct.
    /// - Returns: The value, or `nil` for NULL.
    /// - Throws: `RelateError` as ``generatedOptionalValue(at:as:)`` does, and
    ///   `.typeMismatch` naming the column when a field does not read as its property's type.
    public func generatedOptionalComposite<Value: TypedComposite>(at index: Int, as type: Value.Type) throws -> Value? {
        guard let record = try generatedOptionalValue(at: index, as: PostgresRecord.self) else { return nil }
        return try compositeValue(at: index) { try Value(record: record) }
    }

    /// The attribute at `index` of a NOT NULL composite column.
    ///
    /// - Parameters:
    ///   - index: The attribute's index in its entity.
    ///   - type: The generated struct.
    /// - Returns: The value.
    /// - Throws: As ``generatedOptionalComposite(at:as:)``, and for a NULL.
    public func generatedComposite<Value: TypedComposite>(at index: Int, as type: Value.Type) throws -> Value {
        if let value = try generatedOptionalComposite(at: index, as: type) { return value }
        throw unexpectedNull(at: index)
    }

    /// The attribute at `index`, an array of a composite type, as `[Value]`; `nil` for NULL.
    ///
    /// - Parameters:
    ///   - index: The attribute's index in its entity.
    ///   - type: The generated struct of the elements.
    /// - Returns: The values, or `nil` for NULL.
    /// - Throws: As ``generatedOptionalComposite(at:as:)``, and for a NULL element.
    public func generatedOptionalCompositeArray<Value: TypedComposite>(at index: Int, as type: Value.Type) throws -> [Value]? {
        guard let records = try generatedOptionalValue(at: index, as: [PostgresRecord?].self) else { return nil }
        return try compositeValue(at: index) {
            try records.map { record in
                guard let record else { throw PostgresDecodingError("an element is NULL, which [\(Value.self)] cannot hold") }
                return try Value(record: record)
            }
        }
    }

    /// The attribute at `index` of a NOT NULL column of an array of a composite type.
    ///
    /// - Parameters:
    ///   - index: The attribute's index in its entity.
    ///   - type: The generated struct of the elements.
    /// - Returns: The values.
    /// - Throws: As ``generatedOptionalCompositeArray(at:as:)``, and for a NULL.
    public func generatedCompositeArray<Value: TypedComposite>(at index: Int, as type: Value.Type) throws -> [Value] {
        if let value = try generatedOptionalCompositeArray(at: index, as: type) { return value }
        throw unexpectedNull(at: index)
    }

    /// `body`'s value, its decoding error as `RelateError` naming the column.
    private func compositeValue<T>(at index: Int, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresDecodingError {
            let attribute = entity.attributes[index]
            throw RelateError(
                kind: .typeMismatch,
                message: "column \"\(attribute.name)\" of \"\(entity.name)\" (\(attribute.type)) does not read as its generated type: "
                    + "\(error.reason); regenerate the typed models (relate generate)",
                entity: entity.name, key: attribute.key)
        } catch var error as RelateError where error.kind == .typeMismatch && error.entity == nil {
            // A field's label the generated enum lacks: the column it came from named too.
            let attribute = entity.attributes[index]
            error.message = "column \"\(attribute.name)\" of \"\(entity.name)\": " + error.message
            error.entity = entity.name
            error.key = attribute.key
            throw error
        }
    }
}
