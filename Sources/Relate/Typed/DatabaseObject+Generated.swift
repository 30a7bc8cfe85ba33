extension DatabaseObject {
    /// The attribute at `index` (its column's position) as `Value`, `nil` for NULL: the read
    /// path of generated getters, which know the position from the generated type (checked
    /// against the live model on the type's first use). No key is looked up.
    ///
    /// The common case (an object not deleted, a value stored as `Value`) is inlined whole,
    /// so that reading an `Int` is a check of the stored case.
    ///
    /// - Parameters:
    ///   - index: the attribute's index in its entity.
    ///   - type: the Swift type the column maps to.
    /// - Returns: the value, or `nil` for NULL.
    /// - Throws: `RelateError` for a deleted object, a position the entity lacks, or a value
    ///   of another type.
    @inlinable @inline(__always)
    public func generatedOptionalValue<Value>(at index: Int, as type: Value.Type) throws -> Value? {
        if !isDeleted, index >= 0, index < table.directlyReadable, let value = unboxedValue(at: index, as: type) {
            return value
        }
        return try generatedValueInFull(at: index, as: type)
    }

    /// The attribute at `index` of a NOT NULL column, as `Value` (see
    /// ``generatedOptionalValue(at:as:)``).
    ///
    /// - Parameters:
    ///   - index: the attribute's index in its entity.
    ///   - type: the Swift type the column maps to.
    /// - Returns: the value.
    /// - Throws: `RelateError` as ``generatedOptionalValue(at:as:)`` does, and for a NULL.
    @inlinable @inline(__always)
    public func generatedValue<Value>(at index: Int, as type: Value.Type) throws -> Value {
        if let value = try generatedOptionalValue(at: index, as: type) { return value }
        throw unexpectedNull(at: index)
    }

    /// ``generatedOptionalValue(at:as:)`` in full: the errors and the boxed values.
    @usableFromInline @inline(never)
    func generatedValueInFull<Value>(at index: Int, as type: Value.Type) throws -> Value? {
        if isDeleted { throw deletedError() }
        guard index >= 0, index < table.columns.count else {
            throw RelateError(
                kind: .schemaChanged, message: "\"\(entity.name)\" has no attribute at position \(index); regenerate its type",
                entity: entity.name)
        }
        observeRead(attribute: index)
        guard let value = anyValue(at: index) else { return nil }
        if let value = value as? Value { return value }
        let attribute = entity.attributes[index]
        throw RelateError(
            kind: .typeMismatch,
            message: "key \"\(attribute.key)\" of \"\(entity.name)\" is column \"\(attribute.name)\" of type \(attribute.type), "
                + "read as \(Swift.type(of: value)), not as \(Value.self)",
            entity: entity.name, key: attribute.key)
    }

    @usableFromInline @inline(never)
    func unexpectedNull(at index: Int) -> RelateError {
        let attribute = index >= 0 && index < entity.attributes.count ? entity.attributes[index].name : "#\(index)"
        return RelateError(
            kind: .schemaChanged,
            message: "column \"\(attribute)\" of \"\(entity.name)\" holds NULL, but its generated type says NOT NULL; regenerate it",
            entity: entity.name, key: attribute)
    }
}

/// A generated enum: the labels of a PostgreSQL enum type as a `String`-backed Swift enum.
///
/// ```swift
/// public enum Mood: String, TypedEnum, CaseIterable { case happy, sad, soSo = "so-so" }
/// ```
public protocol TypedEnum: RawRepresentable<String>, Sendable, Codable, Hashable {}

extension DatabaseObject {
    /// The attribute at `index`, an enum column's label, as the generated enum `Value`;
    /// `nil` for NULL.
    ///
    /// - Parameters:
    ///   - index: the attribute's index in its entity.
    ///   - type: the generated enum.
    /// - Returns: the case, or `nil` for NULL.
    /// - Throws: `RelateError` as ``generatedOptionalValue(at:as:)`` does, and
    ///   `.typeMismatch` naming the label and the type for a label the enum lacks (one
    ///   added after generation: regenerate).
    public func generatedOptionalEnum<Value: TypedEnum>(at index: Int, as type: Value.Type) throws -> Value? {
        guard let label = try generatedOptionalValue(at: index, as: String.self) else { return nil }
        return try enumCase(label, at: index, as: type)
    }

    /// The attribute at `index`, an array of enum labels, as an array of the generated enum
    /// `Value`; `nil` for NULL.
    ///
    /// - Parameters:
    ///   - index: the attribute's index in its entity.
    ///   - type: the generated enum.
    /// - Returns: the cases, or `nil` for NULL.
    /// - Throws: `RelateError` as ``generatedOptionalEnum(at:as:)`` does, and
    ///   `.typeMismatch` for a NULL element (the generated type has no optional elements).
    public func generatedOptionalEnumArray<Value: TypedEnum>(at index: Int, as type: Value.Type) throws -> [Value]? {
        guard let labels = try generatedOptionalValue(at: index, as: [String?].self) else { return nil }
        return try labels.map { label in
            guard let label else {
                let attribute = entity.attributes[index]
                throw RelateError(
                    kind: .typeMismatch,
                    message: "column \"\(attribute.name)\" of \"\(entity.name)\" holds an array with a NULL element, which [\(Value.self)] cannot hold",
                    entity: entity.name, key: attribute.key)
            }
            return try enumCase(label, at: index, as: type)
        }
    }

    /// The attribute at `index` of a NOT NULL column of an array of enum labels.
    ///
    /// - Parameters:
    ///   - index: the attribute's index in its entity.
    ///   - type: the generated enum.
    /// - Returns: the cases.
    /// - Throws: `RelateError` as ``generatedOptionalEnumArray(at:as:)`` does, and for a NULL.
    public func generatedEnumArray<Value: TypedEnum>(at index: Int, as type: Value.Type) throws -> [Value] {
        if let value = try generatedOptionalEnumArray(at: index, as: type) { return value }
        throw unexpectedNull(at: index)
    }

    /// `label` as a case of `Value`, or the error that names the label and both types.
    private func enumCase<Value: TypedEnum>(_ label: String, at index: Int, as type: Value.Type) throws -> Value {
        if let value = Value(rawValue: label) { return value }
        let attribute = entity.attributes[index]
        let enumType = attribute.type.hasSuffix("[]") ? String(attribute.type.dropLast(2)) : attribute.type
        throw RelateError(
            kind: .typeMismatch,
            message: "column \"\(attribute.name)\" of \"\(entity.name)\" holds label \"\(label)\" of enum \(enumType), "
                + "which \(Value.self) lacks (added after generation?); regenerate the typed models (relate generate)",
            entity: entity.name, key: attribute.key, detail: "label \(label)")
    }

    /// The attribute at `index` of a NOT NULL enum column, as the generated enum `Value`.
    ///
    /// - Parameters:
    ///   - index: the attribute's index in its entity.
    ///   - type: the generated enum.
    /// - Returns: the case.
    /// - Throws: `RelateError` as ``generatedOptionalEnum(at:as:)`` does, and for a NULL.
    public func generatedEnum<Value: TypedEnum>(at index: Int, as type: Value.Type) throws -> Value {
        if let value = try generatedOptionalEnum(at: index, as: type) { return value }
        throw unexpectedNull(at: index)
    }
}
