/// Conditions on a `json` or `jsonb` column's document, every value bound.
///
/// ```swift
/// Key("settings").jsonContains(["theme": "dark"])          // settings @> '{"theme":"dark"}'
/// Key("settings").jsonText(at: "font", "size", equals: "14")  // settings #>> '{font,size}' = '14'
/// ```
extension Key {
    /// Holds where the document contains `value` (`@>`): every member of an object in
    /// `value` is in the document's object, every element of an array in its array.
    ///
    /// - Parameter value: The JSON the document contains.
    /// - Returns: The condition.
    public func jsonContains(_ value: JSONValue) -> Condition {
        Condition(.json(keyPath: path, .contains(value)))
    }

    /// Holds where the value at `path` (object keys, or array positions as digits) is, as
    /// text, `text` (`#>>`, which is `->>` for a path of one key). A string is compared
    /// without its quotes, a number or bool as written (`14`, `true`). `nil`: there is no
    /// value at the path, or it is JSON `null`.
    ///
    /// - Parameters:
    ///   - path: The keys (and array positions) that lead to the value.
    ///   - text: The value's text, or `nil`.
    /// - Returns: The condition.
    public func jsonText(at path: String..., equals text: String?) -> Condition {
        Condition(.json(keyPath: self.path, .text(path: path, equals: text)))
    }
}

extension AttributeColumn where Value == JSONValue {
    /// Holds where the document contains `value` (see ``Key/jsonContains(_:)``).
    ///
    /// - Parameter value: The JSON the document contains.
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

extension AttributeColumn where Value == JSONValue? {
    /// Holds where the document contains `value` (see ``Key/jsonContains(_:)``); a NULL
    /// column does not.
    ///
    /// - Parameter value: The JSON the document contains.
    /// - Returns: The condition.
    public func jsonContains(_ value: JSONValue) -> Condition {
        key.jsonContains(value)
    }

    /// Holds where the value at `path` is, as text, `text` (see ``Key/jsonText(at:equals:)``).
    ///
    /// - Parameters:
    ///   - path: The keys (and array positions) that lead to the value.
    ///   - text: The value's text, or `nil` (which a NULL column also meets).
    /// - Returns: The condition.
    public func jsonText(at path: String..., equals text: String?) -> Condition {
        Condition(.json(keyPath: key.path, .text(path: path, equals: text)))
    }
}
