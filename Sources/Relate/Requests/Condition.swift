/// A condition on the objects of an entity, built as a value from key paths: never parsed,
/// never pasted into SQL. Values are bound parameters and identifiers are quoted when the
/// condition becomes SQL, against the model of the context that runs it; an unknown key or
/// a value of the wrong type is an error then, before anything is sent.
///
/// ```swift
/// Key("surname") == "Hopper"
/// Key("person.surname").hasPrefix("Lo") && !(Key("address") == nil)
/// Key("email").any(Key("address").hasSuffix("@navy.mil"))    // people with such an email
/// Key("person").isEmpty                                       // titles held by nobody
/// ```
///
/// Comparisons follow Swift, not SQL's three-valued logic where the two differ: `== nil`
/// is `IS NULL`, `!=` is `IS DISTINCT FROM` (a missing value differs from every value),
/// and `!c` holds wherever `c` does not (`(c) IS NOT TRUE`). A key path may cross to-one
/// relationships anywhere; it crosses a to-many relationship only through
/// ``Key/any(_:)``, ``Key/all(_:)`` or ``Key/none(_:)``, which say how many of its members
/// must match.
public struct Condition: Sendable {
    indirect enum Node: Sendable {
        case comparison(keyPath: String, Comparison, value: (any Sendable)?)
        case isIn(keyPath: String, values: [(any Sendable)?])
        case pattern(keyPath: String, Pattern, text: String, caseInsensitive: Bool)
        case json(keyPath: String, JSONTest)
        case quantified(keyPath: String, Quantifier, Node?)
        case and([Node])
        case or([Node])
        case not(Node)
        case constant(Bool)
    }

    enum Comparison: String, Sendable {
        case equal = "="
        case notEqual = "IS DISTINCT FROM"
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
    }

    enum Pattern: Sendable {
        case prefix, suffix, contains
        /// A `LIKE` pattern as given: `%` and `_` are wildcards.
        case like
    }

    enum Quantifier: Sendable {
        case any, all, none
    }

    /// A test of a JSON document (see `Key.jsonContains(_:)`, `Key.jsonText(at:equals:)`).
    enum JSONTest: Sendable {
        /// `@>`: the document contains the value.
        case contains(JSONValue)
        /// `#>>`: the text at the path is the text (`nil`: there is nothing there, or JSON null).
        case text(path: [String], equals: String?)
        /// The document equals the value as `jsonb` (`nil`: it is NULL); `negated`: differs
        /// from it (`IS DISTINCT FROM`).
        case equals(JSONValue?, negated: Bool)
    }

    let node: Node

    init(_ node: Node) {
        self.node = node
    }

    /// Holds for every object.
    public static let always = Condition(.constant(true))
    /// Holds for no object.
    public static let never = Condition(.constant(false))

    /// Holds where both conditions hold.
    ///
    /// - Parameters:
    ///   - lhs: A condition.
    ///   - rhs: Another condition.
    /// - Returns: The conjunction (`AND`), flattened with any conjunction on either side.
    public static func && (lhs: Condition, rhs: Condition) -> Condition {
        switch (lhs.node, rhs.node) {
        case (.and(let left), .and(let right)): Condition(.and(left + right))
        case (.and(let left), let right): Condition(.and(left + [right]))
        case (let left, .and(let right)): Condition(.and([left] + right))
        case (let left, let right): Condition(.and([left, right]))
        }
    }

    /// Holds where either condition holds.
    ///
    /// - Parameters:
    ///   - lhs: A condition.
    ///   - rhs: Another condition.
    /// - Returns: The disjunction (`OR`), flattened with any disjunction on either side.
    public static func || (lhs: Condition, rhs: Condition) -> Condition {
        switch (lhs.node, rhs.node) {
        case (.or(let left), .or(let right)): Condition(.or(left + right))
        case (.or(let left), let right): Condition(.or(left + [right]))
        case (let left, .or(let right)): Condition(.or([left] + right))
        case (let left, let right): Condition(.or([left, right]))
        }
    }

    /// Holds wherever `condition` does not, a missing value included (`(c) IS NOT TRUE`).
    ///
    /// - Parameter condition: The condition to negate.
    /// - Returns: The negation.
    public static prefix func ! (condition: Condition) -> Condition {
        Condition(.not(condition.node))
    }

    /// All of `conditions` (``always`` when there are none).
    ///
    /// - Parameter conditions: The conditions, all of which must hold.
    /// - Returns: Their conjunction.
    public static func all(_ conditions: [Condition]) -> Condition {
        conditions.isEmpty ? .always : Condition(.and(conditions.map(\.node)))
    }

    /// Any of `conditions` (``never`` when there are none).
    ///
    /// - Parameter conditions: The conditions, one of which must hold.
    /// - Returns: Their disjunction.
    public static func any(_ conditions: [Condition]) -> Condition {
        conditions.isEmpty ? .never : Condition(.or(conditions.map(\.node)))
    }
}

/// A dotted key path from an entity (`"surname"`, `"person.surname"`, `"email"`), to build
/// ``Condition``s and sort orders from.
///
/// ```swift
/// let hoppers = try context.fetch("person", where: Key("surname") == "Hopper")
/// let navy = try context.fetch("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil")))
/// let theirEmails = try context.fetch("email", where: Key("person.surname").in(["Hopper", "Lovelace"]))
/// ```
///
/// A key path crosses to-one relationships with dots; a to-many relationship is crossed
/// only by ``any(_:)``, ``all(_:)`` or ``none(_:)``.
public struct Key: Sendable, ExpressibleByStringLiteral {
    /// The dotted key path, as given.
    public let path: String

    /// Creates a key from a dotted key path; `"person.surname"` crosses the `person` relationship.
    ///
    /// - Parameter path: The key path: keys of the entity and, after a dot, of the entity a
    ///   to-one relationship leads to.
    public init(_ path: String) {
        self.path = path
    }

    /// Creates a key from a string literal, so that a `String` literal can stand where a `Key` is expected.
    ///
    /// - Parameter path: The dotted key path.
    public init(stringLiteral path: String) {
        self.path = path
    }

    /// Holds where the value at `key` equals `value`; `key == nil` holds where it is NULL (`IS NULL`),
    /// and for a to-one relationship where there is no related object.
    ///
    /// ```swift
    /// let request = FetchRequest("person", where: Key("surname") == "Hopper")
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key path of an attribute, or of a to-one relationship compared with `nil`.
    ///   - value: A value of the attribute's Swift type, or `nil`.
    /// - Returns: The condition.
    public static func == (key: Key, value: (any Sendable)?) -> Condition {
        Condition(.comparison(keyPath: key.path, .equal, value: value))
    }

    /// Holds where the value at `key` differs from `value`, a missing value included
    /// (`IS DISTINCT FROM`); `key != nil` holds where there is a value.
    ///
    /// - Parameters:
    ///   - key: The key path of an attribute, or of a to-one relationship compared with `nil`.
    ///   - value: A value of the attribute's Swift type, or `nil`.
    /// - Returns: The condition.
    public static func != (key: Key, value: (any Sendable)?) -> Condition {
        Condition(.comparison(keyPath: key.path, .notEqual, value: value))
    }

    /// Holds where the value at `key` is less than `value` (never where it is NULL).
    ///
    /// - Parameters:
    ///   - key: The key path of an attribute.
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func < (key: Key, value: any Sendable) -> Condition {
        Condition(.comparison(keyPath: key.path, .less, value: value))
    }

    /// Holds where the value at `key` is less than or equal to `value` (never where it is NULL).
    ///
    /// - Parameters:
    ///   - key: The key path of an attribute.
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func <= (key: Key, value: any Sendable) -> Condition {
        Condition(.comparison(keyPath: key.path, .lessOrEqual, value: value))
    }

    /// Holds where the value at `key` is greater than `value` (never where it is NULL).
    ///
    /// - Parameters:
    ///   - key: The key path of an attribute.
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func > (key: Key, value: any Sendable) -> Condition {
        Condition(.comparison(keyPath: key.path, .greater, value: value))
    }

    /// Holds where the value at `key` is greater than or equal to `value` (never where it is NULL).
    ///
    /// - Parameters:
    ///   - key: The key path of an attribute.
    ///   - value: A value of the attribute's Swift type.
    /// - Returns: The condition.
    public static func >= (key: Key, value: any Sendable) -> Condition {
        Condition(.comparison(keyPath: key.path, .greaterOrEqual, value: value))
    }

    /// The value is one of `values` (`nil` among them matches a missing value).
    ///
    /// ```swift
    /// Key("surname").in(["Hopper", "Lovelace", nil])
    /// ```
    ///
    /// - Parameter values: The values to match, of the attribute's Swift type, `nil` for NULL.
    /// - Returns: The condition (`= ANY($1)`, the values bound as one array).
    public func `in`(_ values: [(any Sendable)?]) -> Condition {
        Condition(.isIn(keyPath: path, values: values))
    }

    /// Holds where the text at the key starts with `prefix`, taken literally (`%` and `_` are
    /// not wildcards here).
    ///
    /// - Parameters:
    ///   - prefix: The text the value starts with.
    ///   - caseInsensitive: Whether case is ignored (`ILIKE`); `false` by default.
    /// - Returns: The condition.
    public func hasPrefix(_ prefix: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.pattern(keyPath: path, .prefix, text: prefix, caseInsensitive: caseInsensitive))
    }

    /// Holds where the text at the key ends with `suffix`, taken literally.
    ///
    /// - Parameters:
    ///   - suffix: The text the value ends with.
    ///   - caseInsensitive: Whether case is ignored (`ILIKE`); `false` by default.
    /// - Returns: The condition.
    public func hasSuffix(_ suffix: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.pattern(keyPath: path, .suffix, text: suffix, caseInsensitive: caseInsensitive))
    }

    /// Holds where the text at the key contains `text`, taken literally.
    ///
    /// ```swift
    /// Key("surname").contains("opp", caseInsensitive: true)
    /// ```
    ///
    /// - Parameters:
    ///   - text: The text the value contains.
    ///   - caseInsensitive: Whether case is ignored (`ILIKE`); `false` by default.
    /// - Returns: The condition.
    public func contains(_ text: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.pattern(keyPath: path, .contains, text: text, caseInsensitive: caseInsensitive))
    }

    /// SQL's `LIKE` (or `ILIKE`) with `pattern` as given: `%` matches any text, `_` one character.
    ///
    /// - Parameters:
    ///   - pattern: The `LIKE` pattern, wildcards and all.
    ///   - caseInsensitive: Whether case is ignored (`ILIKE`); `false` by default.
    /// - Returns: The condition.
    public func like(_ pattern: String, caseInsensitive: Bool = false) -> Condition {
        Condition(.pattern(keyPath: path, .like, text: pattern, caseInsensitive: caseInsensitive))
    }

    /// For a to-many key path: some member matches `condition` (some member at all, without one).
    ///
    /// ```swift
    /// Key("email").any(Key("address").hasSuffix("@navy.mil"))   // someone with a navy address
    /// Key("email").any()                                        // someone with an email at all
    /// ```
    ///
    /// - Parameter condition: A condition on the members' entity; `nil` for "there is one".
    /// - Returns: The condition (`EXISTS (…)`).
    public func any(_ condition: Condition? = nil) -> Condition {
        Condition(.quantified(keyPath: path, .any, condition?.node))
    }

    /// For a to-many key path: every member matches `condition` (true when there are none).
    ///
    /// - Parameter condition: A condition on the members' entity.
    /// - Returns: The condition (`NOT EXISTS (… WHERE NOT …)`).
    public func all(_ condition: Condition) -> Condition {
        Condition(.quantified(keyPath: path, .all, condition.node))
    }

    /// For a to-many key path: no member matches `condition` (no member at all, without one).
    ///
    /// - Parameter condition: A condition on the members' entity; `nil` for "there is none".
    /// - Returns: The condition (`NOT EXISTS (…)`).
    public func none(_ condition: Condition? = nil) -> Condition {
        Condition(.quantified(keyPath: path, .none, condition?.node))
    }

    /// For a to-many key path: there is no member.
    public var isEmpty: Condition { none() }
}
