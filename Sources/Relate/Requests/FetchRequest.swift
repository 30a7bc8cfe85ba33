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
    public var condition: Condition?
    public var orderBy: [Ordering]
    public var limit: Int?
    public var offset: Int?

    public init(
        _ entity: String, where condition: Condition? = nil, orderBy: [Ordering] = [], limit: Int? = nil, offset: Int? = nil
    ) {
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
    public enum Nulls: Sendable {
        /// Where PostgreSQL puts them: after every value going up, before going down.
        case `default`
        case first
        case last
    }

    public var keyPath: String
    public var isAscending: Bool
    public var nulls: Nulls

    public init(_ keyPath: String, ascending: Bool = true, nulls: Nulls = .default) {
        self.keyPath = keyPath
        isAscending = ascending
        self.nulls = nulls
    }

    public static func ascending(_ keyPath: String, nulls: Nulls = .default) -> Ordering {
        Ordering(keyPath, ascending: true, nulls: nulls)
    }

    public static func descending(_ keyPath: String, nulls: Nulls = .default) -> Ordering {
        Ordering(keyPath, ascending: false, nulls: nulls)
    }
}
