/// A generated type's attributes and relationships as typed key paths: what the closures
/// of the typed requests get, so that an unknown key or a value of the wrong type is a
/// compile error.
///
/// ```swift
/// try context.fetch(Person.self, where: { $0.surname == "Hopper" && $0.email.any { $0.address.hasSuffix("@navy.mil") } },
///                   orderBy: { [$0.surname.ascending] })
/// try context.fetch(Email.self, where: { $0.person.surname == "Lovelace" })   // through a to-one
/// ```
public protocol TypedColumns {
    /// Columns reached through the key path `prefix` (`""`, or `"person."`).
    ///
    /// - Parameter prefix: The key path from the request's entity, with a trailing dot, or `""`.
    init(prefix: String)
}

/// An attribute, typed: comparisons with values of its Swift type make ``Condition``s,
/// ``ascending`` and ``descending`` make ``Ordering``s. `Value` is optional for a nullable
/// column, so `== nil` compiles only there.
public struct AttributeColumn<Value: Sendable>: Sendable {
    /// The key path from the entity the request is for.
    public let key: Key

    /// - Parameter path: the dotted key path (`surname`, `person.surname`).
    public init(_ path: String) {
        key = Key(path)
    }

    /// Ascending, NULLs where PostgreSQL puts them (last).
    public var ascending: Ordering { .ascending(key.path) }
    /// Descending, NULLs where PostgreSQL puts them (first).
    public var descending: Ordering { .descending(key.path) }

    /// Ascending or descending, with NULLs where asked.
    ///
    /// - Parameters:
    ///   - ascending: the direction.
    ///   - nulls: where NULLs go.
    /// - Returns: the sort key.
    public func ordered(ascending: Bool = true, nulls: Ordering.Nulls) -> Ordering {
        Ordering(key.path, ascending: ascending, nulls: nulls)
    }
}

extension AttributeColumn where Value: Equatable {
    /// The attribute equals `value` (`== nil`: it is NULL).
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func == (column: Self, value: Value) -> Condition {
        column.key == TypedValue.flattened(value)
    }

    /// The attribute differs from `value` (`IS DISTINCT FROM`: NULL differs from every value).
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func != (column: Self, value: Value) -> Condition {
        column.key != TypedValue.flattened(value)
    }

    /// The attribute is one of `values`.
    ///
    /// - Parameter values: the values to match (`nil` among them matches NULL).
    /// - Returns: the condition.
    public func `in`(_ values: [Value]) -> Condition {
        key.in(values.map(TypedValue.flattened))
    }
}

extension AttributeColumn where Value: Comparable {
    /// The attribute is less than `value`.
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func < (column: Self, value: Value) -> Condition { column.key < value }
    /// The attribute is at most `value`.
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func <= (column: Self, value: Value) -> Condition { column.key <= value }
    /// The attribute is greater than `value`.
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func > (column: Self, value: Value) -> Condition { column.key > value }
    /// The attribute is at least `value`.
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func >= (column: Self, value: Value) -> Condition { column.key >= value }
}

extension AttributeColumn {
    /// For a nullable column: less than `value` (NULL is not).
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func < <Wrapped: Comparable & Sendable>(column: Self, value: Wrapped) -> Condition where Value == Wrapped? {
        column.key < value
    }
    /// For a nullable column: at most `value` (NULL is not).
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func <= <Wrapped: Comparable & Sendable>(column: Self, value: Wrapped) -> Condition where Value == Wrapped? {
        column.key <= value
    }
    /// For a nullable column: greater than `value` (NULL is not).
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func > <Wrapped: Comparable & Sendable>(column: Self, value: Wrapped) -> Condition where Value == Wrapped? {
        column.key > value
    }
    /// For a nullable column: at least `value` (NULL is not).
    ///
    /// - Parameters:
    ///   - column: The attribute, from the request's closure (`$0.surname`).
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func >= <Wrapped: Comparable & Sendable>(column: Self, value: Wrapped) -> Condition where Value == Wrapped? {
        column.key >= value
    }
}

/// `String` and `String?`: the values text patterns apply to.
public protocol TypedText: Sendable {}
extension String: TypedText {}
extension Optional: TypedText where Wrapped == String {}

extension AttributeColumn where Value: TypedText {
    /// The text starts with `prefix` (`%` and `_` in it are matched literally).
    ///
    /// - Parameters:
    ///   - prefix: The text the value starts with.
    ///   - caseInsensitive: Whether case is ignored (`ILIKE`); `false` by default.
    /// - Returns: The condition.
    public func hasPrefix(_ prefix: String, caseInsensitive: Bool = false) -> Condition {
        key.hasPrefix(prefix, caseInsensitive: caseInsensitive)
    }

    /// The text ends with `suffix`.
    ///
    /// - Parameters:
    ///   - suffix: The text the value ends with, matched literally.
    ///   - caseInsensitive: Whether case is ignored (`ILIKE`); `false` by default.
    /// - Returns: The condition.
    public func hasSuffix(_ suffix: String, caseInsensitive: Bool = false) -> Condition {
        key.hasSuffix(suffix, caseInsensitive: caseInsensitive)
    }

    /// The text contains `text`.
    ///
    /// - Parameters:
    ///   - text: The text the value contains, matched literally.
    ///   - caseInsensitive: Whether case is ignored (`ILIKE`); `false` by default.
    /// - Returns: The condition.
    public func contains(_ text: String, caseInsensitive: Bool = false) -> Condition {
        key.contains(text, caseInsensitive: caseInsensitive)
    }

    /// SQL's `LIKE` (or `ILIKE`) with `pattern` as given.
    ///
    /// - Parameters:
    ///   - pattern: The `LIKE` pattern: `%` matches any text, `_` one character.
    ///   - caseInsensitive: Whether case is ignored (`ILIKE`); `false` by default.
    /// - Returns: The condition.
    public func like(_ pattern: String, caseInsensitive: Bool = false) -> Condition {
        key.like(pattern, caseInsensitive: caseInsensitive)
    }
}

/// A to-many or many-to-many relationship, typed: says how many of its members must meet
/// a condition on `Element`'s columns.
public struct ToManyColumn<Element: TypedObject>: Sendable {
    /// The key path from the entity the request is for.
    public let key: Key

    /// - Parameter path: the dotted key path (`email`, `person.email`).
    public init(_ path: String) {
        key = Key(path)
    }

    /// Some member meets `condition` (without one: there is some member).
    ///
    /// - Parameter condition: a condition on a member's columns.
    /// - Returns: the condition on the owner.
    public func any(_ condition: ((Element.Columns) -> Condition)? = nil) -> Condition {
        key.any(condition.map { $0(Element.Columns(prefix: "")) })
    }

    /// Every member meets `condition` (true when there is none).
    ///
    /// - Parameter condition: a condition on a member's columns.
    /// - Returns: the condition on the owner.
    public func all(_ condition: (Element.Columns) -> Condition) -> Condition {
        key.all(condition(Element.Columns(prefix: "")))
    }

    /// No member meets `condition` (without one: there is no member).
    ///
    /// - Parameter condition: a condition on a member's columns.
    /// - Returns: the condition on the owner.
    public func none(_ condition: ((Element.Columns) -> Condition)? = nil) -> Condition {
        key.none(condition.map { $0(Element.Columns(prefix: "")) })
    }

    /// There is no member.
    public var isEmpty: Condition { key.isEmpty }
}
