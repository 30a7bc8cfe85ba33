import Foundation

/// How a `json` or `jsonb` column given a `Codable` type in the generator's configuration
/// (`relate-generate.json`, or `relate generate --type table.column=Type`) turns values into
/// documents and back. ``DefaultJSONCoder`` unless the configuration's `jsonCoder` names
/// another type conforming to this protocol.
///
/// ```swift
/// enum AppJSON: TypedJSONCoder {
///     static func encode<Value: Encodable>(_ value: Value) throws -> Data {
///         let encoder = JSONEncoder(); encoder.dateEncodingStrategy = .iso8601; return try encoder.encode(value)
///     }
///     static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
///         let decoder = JSONDecoder(); decoder.dateDecodingStrategy = .iso8601; return try decoder.decode(type, from: data)
///     }
/// }
/// ```
public protocol TypedJSONCoder {
    /// The document for `value`, as JSON text.
    ///
    /// - Parameter value: The value to write.
    /// - Returns: The JSON text's UTF-8 bytes.
    /// - Throws: What the encoder throws.
    static func encode<Value: Encodable>(_ value: Value) throws -> Data

    /// The value a document holds.
    ///
    /// - Parameters:
    ///   - type: The column's Swift type.
    ///   - data: The document as JSON text.
    /// - Returns: The value.
    /// - Throws: What the decoder throws when the document is not a `Value`.
    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value
}

/// Foundation's `JSONEncoder` (keys sorted) and `JSONDecoder` with their default strategies:
/// the coder of a JSON column given a `Codable` type when the configuration names none.
public enum DefaultJSONCoder: TypedJSONCoder {
    /// `JSONEncoder` with sorted keys.
    ///
    /// - Parameter value: The value to write.
    /// - Returns: The JSON text's bytes.
    /// - Throws: What `JSONEncoder` throws.
    public static func encode<Value: Encodable>(_ value: Value) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// `JSONDecoder`.
    ///
    /// - Parameters:
    ///   - type: The Swift type.
    ///   - data: The JSON text.
    /// - Returns: The value.
    /// - Throws: What `JSONDecoder` throws.
    public static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        try JSONDecoder().decode(type, from: data)
    }
}

/// The conversions generated code makes for a JSON column given a `Codable` type: its values
/// enter the dynamic layer as `JSONValue` (what the column reads as without a type), each
/// encoded once, by the column's coder.
public enum TypedJSON {
    /// `value` as the document it is written as: a `JSONValue` (the coder's text, parsed
    /// once), `nil` for `nil`. A value the coder cannot encode becomes a placeholder the
    /// write or condition refuses with `RelateError` kind `.typeMismatch` naming the column
    /// (a setter cannot throw).
    ///
    /// - Parameters:
    ///   - value: The value, or an optional of it.
    ///   - coder: The column's coder.
    /// - Returns: The document, `nil`, or the placeholder.
    public static func encoded<Value: Encodable & Sendable>(_ value: Value, coder: (some TypedJSONCoder).Type) -> (any Sendable)? {
        guard let wrapped = TypedValue.flattened(value) else { return nil }
        guard let encodable = wrapped as? any Encodable else { return wrapped }
        return document(encodable, coder: coder)
    }

    private static func document<Wrapped: Encodable>(_ value: Wrapped, coder: (some TypedJSONCoder).Type) -> any Sendable {
        do {
            return try JSONValue(json: try coder.encode(value))
        } catch {
            // The coding path, never the value (an `EncodingError` carries it).
            var reason = "\(type(of: error))"
            if case EncodingError.invalidValue(_, let context) = error {
                let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
                reason = "invalid value " + (path.isEmpty ? "at the top" : "at \(path)")
            }
            return TypedJSONFailure(swiftType: "\(Wrapped.self)", reason: reason)
        }
    }

    /// The value a draft holds for a JSON column, decoded back (`nil` when none was set, or
    /// it does not decode).
    ///
    /// - Parameters:
    ///   - assignments: The draft's values.
    ///   - key: The column's key.
    ///   - type: The column's Swift type.
    ///   - coder: The column's coder.
    /// - Returns: The value, or `nil`.
    public static func value<Value: Decodable>(
        in assignments: TypedAssignments, forKey key: String, as type: Value.Type, coder: (some TypedJSONCoder).Type
    ) -> Value? {
        guard let document = assignments.value(forKey: key, as: JSONValue.self), let text = try? document.jsonText() else { return nil }
        return try? coder.decode(type, from: Data(text.utf8))
    }
}

/// A value a JSON column's coder could not encode, carried to where the write or condition
/// throws.
struct TypedJSONFailure: Sendable {
    /// The Swift type that was encoded.
    var swiftType: String
    /// What the encoder said.
    var reason: String
}

extension DatabaseObject {
    /// The attribute at `index`, a `json` or `jsonb` column given the `Codable` type
    /// `Value`, decoded by `coder`; `nil` for NULL.
    ///
    /// - Parameters:
    ///   - index: The attribute's index in its entity.
    ///   - type: The column's Swift type.
    ///   - coder: The column's coder.
    /// - Returns: The value, or `nil` for NULL.
    /// - Throws: `RelateError` as ``generatedOptionalValue(at:as:)`` does, and
    ///   `.typeMismatch` naming the column and `Value` for a document that does not decode.
    public func generatedOptionalJSON<Value: Decodable>(at index: Int, as type: Value.Type, coder: (some TypedJSONCoder).Type) throws -> Value? {
        // A document as read, or (a pending write to a `json` column) its text.
        guard let stored = try generatedOptionalValue(at: index, as: (any Sendable).self) else { return nil }
        let text: String
        if let pending = stored as? String {
            text = pending
        } else {
            guard let document = try generatedOptionalValue(at: index, as: JSONValue.self) else { return nil }
            text = try document.jsonText()
        }
        let attribute = entity.attributes[index]
        do {
            return try coder.decode(type, from: Data(text.utf8))
        } catch {
            // The decoder's error names the coding path, never the document's values.
            throw RelateError(
                kind: .typeMismatch,
                message: "column \"\(attribute.name)\" of \"\(entity.name)\" holds JSON that does not decode as \(Value.self): "
                    + Self.decodingFailure(error),
                entity: entity.name, key: attribute.key)
        }
    }

    /// The attribute at `index` of a NOT NULL JSON column given the `Codable` type `Value`.
    ///
    /// - Parameters:
    ///   - index: The attribute's index in its entity.
    ///   - type: The column's Swift type.
    ///   - coder: The column's coder.
    /// - Returns: The value.
    /// - Throws: `RelateError` as ``generatedOptionalJSON(at:as:coder:)`` does, and for a NULL.
    public func generatedJSON<Value: Decodable>(at index: Int, as type: Value.Type, coder: (some TypedJSONCoder).Type) throws -> Value {
        if let value = try generatedOptionalJSON(at: index, as: type, coder: coder) { return value }
        throw unexpectedNull(at: index)
    }

    /// A `DecodingError` as a sentence with its coding path and no value.
    static func decodingFailure(_ error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "at the top" : "at \(path)"
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context): return "key \"\(key.stringValue)\" missing \(path(context))"
        case DecodingError.typeMismatch(let type, let context): return "not a \(type) \(path(context))"
        case DecodingError.valueNotFound(let type, let context): return "no \(type) \(path(context))"
        case DecodingError.dataCorrupted(let context): return "invalid \(path(context))"
        default: return "\(type(of: error))"
        }
    }
}

/// A `json` or `jsonb` column given a `Codable` type, typed: comparisons with values of that
/// type (encoded by the column's coder) and the JSON conditions make ``Condition``s. `Value`
/// is optional for a nullable column, so `== nil` compiles only there.
///
/// ```swift
/// try context.fetch(Account.self, where: { $0.settings == Settings(theme: "dark") || $0.settings.jsonContains(["beta": true]) })
/// ```
public struct TypedJSONColumn<Value: Encodable & Sendable, Coder: TypedJSONCoder>: Sendable {
    /// The key path from the entity the request is for.
    public let key: Key

    /// - Parameter path: The dotted key path (`settings`, `account.settings`).
    public init(_ path: String) {
        key = Key(path)
    }

    /// The document equals `value`'s (as `jsonb`: key order and spacing do not count; `== nil`: it is NULL).
    ///
    /// - Parameters:
    ///   - column: The column, from the request's closure.
    ///   - value: A value of the column's Swift type.
    /// - Returns: The condition.
    public static func == (column: Self, value: Value) -> Condition {
        column.equals(value, negated: false)
    }

    /// The document differs from `value`'s (`IS DISTINCT FROM`: NULL differs from every value).
    ///
    /// - Parameters:
    ///   - column: The column, from the request's closure.
    ///   - value: A value of the column's Swift type.
    /// - Returns: The condition.
    public static func != (column: Self, value: Value) -> Condition {
        column.equals(value, negated: true)
    }

    /// The JSON equality test, as `jsonb` (a `json` column has no `=`); a value the coder
    /// refuses goes as a comparison whose binding throws the error.
    private func equals(_ value: Value, negated: Bool) -> Condition {
        switch TypedJSON.encoded(value, coder: Coder.self) {
        case nil: return Condition(.json(keyPath: key.path, .equals(nil, negated: negated)))
        case let document as JSONValue: return Condition(.json(keyPath: key.path, .equals(document, negated: negated)))
        case let failure?: return negated ? key != failure : key == failure
        }
    }

    /// Holds where the document contains `value` (see ``Key/jsonContains(_:)``).
    ///
    /// - Parameter value: The JSON the document contains: part of a `Value`'s document.
    /// - Returns: The condition.
    public func jsonContains(_ value: JSONValue) -> Condition {
        key.jsonContains(value)
    }

    /// Holds where the value at `path` is, as text, `text` (see ``Key/jsonText(at:equals:)``).
    ///
    /// - Parameters:
    ///   - path: The keys (and array positions) that lead to the value.
    ///   - text: The value's text, or `nil`.
    /// - Returns: The condition.
    public func jsonText(at path: String..., equals text: String?) -> Condition {
        Condition(.json(keyPath: key.path, .text(path: path, equals: text)))
    }
}
