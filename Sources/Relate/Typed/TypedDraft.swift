/// A row to insert, as a generated type's `Draft` builds it: only what is set is sent.
public protocol TypedDraft {
    /// An empty draft.
    init()
    /// What was set, by key.
    var assignments: TypedAssignments { get }
}

/// The values a ``TypedDraft`` was given, by key: attributes, and to-one relationships
/// given an object. What ``DatabaseContext/insert(_:values:)`` takes.
public struct TypedAssignments {
    /// By key; `.some(nil)` is an explicit NULL.
    public private(set) var values: [String: Any?] = [:]

    /// An empty set of values.
    public init() {}

    /// The value set for `key`, if it is a `Value`.
    ///
    /// - Parameters:
    ///   - key: the attribute's key.
    ///   - type: its Swift type.
    /// - Returns: the value, or `nil` when none (or NULL) was set.
    public func value<Value>(forKey key: String, as type: Value.Type) -> Value? {
        guard let value = values[key] else { return nil }
        return value as? Value
    }

    /// Sets `key` to `value`. `nil` is NULL for a nullable column, and leaves a NOT NULL
    /// column to its default.
    ///
    /// - Parameters:
    ///   - value: the value, or `nil`.
    ///   - key: the attribute's key.
    ///   - nullable: whether the column takes NULL.
    public mutating func set<Value>(_ value: Value?, forKey key: String, nullable: Bool) {
        if let value {
            values[key] = .some(value)
        } else if nullable {
            values[key] = .some(nil)
        } else {
            values[key] = nil
        }
    }

    /// The object set for to-one relationship `key`, as `Object`.
    ///
    /// - Parameters:
    ///   - key: the relationship's key.
    ///   - type: the generated type of its target.
    /// - Returns: the object, or `nil` when none was set.
    public func object<Object: TypedObject>(forKey key: String, as type: Object.Type) -> Object? {
        guard let object = values[key] as? DatabaseObject else { return nil }
        return Object(unchecked: object)
    }

    /// Sets to-one relationship `key` to `object` (`nil`: its foreign key NULL).
    ///
    /// - Parameters:
    ///   - object: the target's object.
    ///   - key: the relationship's key.
    public mutating func setObject(_ object: DatabaseObject?, forKey key: String) {
        values[key] = .some(object)
    }
}
