extension DatabaseObject {
    /// An attribute as `Value`, `nil` for NULL, without the cast from `Any` that
    /// ``value(forKey:)`` leaves to the caller:
    ///
    /// ```swift
    /// let name = try ada.value(forKey: "firstname", as: String.self)   // String?
    /// let id = try ada.value(forKey: "id", as: Int.self)               // every integer column is Int
    /// ```
    ///
    /// `Value` is the Swift type the column's type maps to (`PostgresValueMapping`; or a protocol it conforms
    /// to, or `Any`); another type throws ``RelateError/Kind-swift.struct/typeMismatch``
    /// naming the key, the column's type and `Value`. A relationship key answers as
    /// ``value(forKey:)`` does, cast to `Value`.
    ///
    /// Inlinable, so that the cast is decided where `Value` is known: reading an `Int` is
    /// then a check of the stored case, not a dynamic cast. The common case (the key is the
    /// attribute after the one read last, the object is not deleted, the stored case is
    /// `Value`) is inlined whole; anything else takes `typedValue(forKey:as:)`.
    ///
    /// - Parameters:
    ///   - key: Any name an attribute or relationship of the entity answers to.
    ///   - type: The Swift type to read the value as.
    /// - Returns: The value, or `nil` for NULL (or an empty to-one).
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/typeMismatch`` when
    ///   the value is not a `Value`, or what ``value(forKey:)`` throws.
    @inlinable @inline(__always)
    public func value<Value>(forKey key: String, as type: Value.Type) throws -> Value? {
        if let index = table.guessedAttributeIndex(forKey: key), !isDeleted, let value = unboxedValue(at: index, as: type) {
            return value
        }
        return try typedValue(forKey: key, as: type)
    }

    /// ``value(forKey:as:)`` in full: any key, the casts and the errors.
    @usableFromInline @inline(never)
    func typedValue<Value>(forKey key: String, as type: Value.Type) throws -> Value? {
        guard let index = try attributeIndex(forReading: key) else {
            guard let value = try value(forKey: key) else { return nil }
            if let value = value as? Value { return value }
            throw typeMismatch(reading: key, as: Value.self, found: Swift.type(of: value))
        }
        observeRead(attribute: index)
        if let value = anyValue(at: index) {
            if let value = value as? Value { return value }
            throw typeMismatch(reading: key, as: Value.self, found: nil)
        }
        return nil
    }

    @usableFromInline
    func typeMismatch(reading key: String, as wanted: Any.Type, found: Any.Type?) -> RelateError {
        let what: String
        if let index = table.attributeIndex(forKey: key) {
            let attribute = entity.attributes[index]
            let stored = storedValue(at: index).value.map { Swift.type(of: $0) }.map { "\($0)" } ?? "?"
            what = "column \"\(attribute.name)\" of type \(attribute.type), read as \(stored)"
        } else {
            what = "a relationship, read as \(found.map { "\($0)" } ?? "?")"
        }
        return RelateError(
            kind: .typeMismatch, message: "key \"\(key)\" of \"\(entity.name)\" is \(what), not as \(wanted)",
            entity: entity.name, key: key)
    }
}
