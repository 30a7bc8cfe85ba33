/// What to fetch: an entity's objects that meet a ``Condition``, in an order, a page of
/// them. A `Sendable` value: build it anywhere, run it on any context of the model.
///
/// ```swift
/// let request = FetchRequest("person", where: Key("email").any(Key("address").hasSuffix("@navy.mil")),
///                            orderBy: [.ascending("surname"), .descending("firstname")], limit: 20)
/// let sailors = try context.fetch(request)
/// let howMany = try context.count(request)
/// try context.fetch(request, batchSize: 1_000) { batch in … }    // bounded memory
/// ```
public struct FetchRequest: Sendable {
    /// The entity's name (`person`, or `schema.table`).
    public var entity: String
    /// Which objects: those that meet the condition; every object when `nil`.
    public var condition: Condition?
    /// The sort order, most significant key first; the server's order (none) when empty.
    public var orderBy: [Ordering]
    /// At most this many objects; all when `nil`. A negative limit throws when the request runs.
    public var limit: Int?
    /// Skips this many objects of the order first; none when `nil`.
    public var offset: Int?
    /// Only the entity's own rows: for a table others `INHERITS` from, leaves out their
    /// rows (`SELECT … FROM ONLY …`), which a fetch otherwise includes, as objects of their
    /// own entities. `false` by default.
    public var only = false

    /// Creates a request for the objects of an entity.
    ///
    /// ```swift
    /// let page = FetchRequest("person", where: Key("surname").hasPrefix("Ho"),
    ///                         orderBy: [.ascending("surname")], limit: 20, offset: 40)
    /// ```
    ///
    /// - Parameters:
    ///   - entity: The entity's name (`person`, or `schema.table`).
    ///   - condition: Which objects; every object when `nil`.
    ///   - orderBy: The sort order, most significant key first.
    ///   - limit: At most this many objects; all when `nil`.
    ///   - offset: How many objects of the order to skip first.
    ///   - only: Whether to leave out the rows of tables that inherit from the entity's.
    public init(
        _ entity: String, where condition: Condition? = nil, orderBy: [Ordering] = [], limit: Int? = nil, offset: Int? = nil,
        only: Bool = false
    ) {
        self.only = only
        self.entity = entity
        self.condition = condition
        self.orderBy = orderBy
        self.limit = limit
        self.offset = offset
    }
}

/// One key of a sort order: a key path to an attribute, through to-one relationships only
/// (`"surname"`, `"person.surname"`).
public struct Ordering: Sendable {
    /// Where objects whose sort key is NULL go.
    public enum Nulls: Sendable {
        /// Where PostgreSQL puts them: after every value going up, before going down.
        case `default`
        /// Before every value (`NULLS FIRST`).
        case first
        /// After every value (`NULLS LAST`).
        case last
    }

    /// The key path of the attribute sorted on, through to-one relationships only.
    public var keyPath: String
    /// Whether values go up (`ASC`) rather than down (`DESC`).
    public var isAscending: Bool
    /// Where NULLs go.
    public var nulls: Nulls

    /// Creates a sort key.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute's key path (`"surname"`, `"person.surname"`).
    ///   - ascending: Whether values go up; `true` by default.
    ///   - nulls: Where NULLs go; where PostgreSQL puts them by default.
    public init(_ keyPath: String, ascending: Bool = true, nulls: Nulls = .default) {
        self.keyPath = keyPath
        isAscending = ascending
        self.nulls = nulls
    }

    /// A sort key with values going up.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute's key path.
    ///   - nulls: Where NULLs go; where PostgreSQL puts them by default.
    /// - Returns: The sort key.
    public static func ascending(_ keyPath: String, nulls: Nulls = .default) -> Ordering {
        Ordering(keyPath, ascending: true, nulls: nulls)
    }

    /// A sort key with values going down.
    ///
    /// - Parameters:
    ///   - keyPath: The attribute's key path.
    ///   - nulls: Where NULLs go; where PostgreSQL puts them by default.
    /// - Returns: The sort key.
    public static func descending(_ keyPath: String, nulls: Nulls = .default) -> Ordering {
        Ordering(keyPath, ascending: false, nulls: nulls)
    }
}
