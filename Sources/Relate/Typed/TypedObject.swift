import RelatePostgres

/// A type generated from an entity (`relate generate`, or the `RelateGenerator` plugin): a
/// typed view of one ``DatabaseObject``, which ``object`` is.
///
/// ```swift
/// let ada: Person? = try context.object(Person.self, primaryKey: 1)
/// let name: String? = try ada!.firstname                 // attributes: throwing getters
/// let emails: RelatedObjects<Email> = try ada!.email     // written through
/// try ada!.update { $0.surname = "King"; $0.firstname = "Ada" }   // one UPDATE
/// let values: Person.Values = try ada!.values            // Sendable, Codable, Hashable
/// ```
///
/// Two values are equal when they view the same object. Generated code conforms; the
/// requirements are what it provides.
public protocol TypedObject: Hashable, CustomStringConvertible {
    /// The attributes as a value.
    associatedtype Values: Sendable, Codable, Hashable
    /// A row to insert.
    associatedtype Draft: TypedDraft
    /// The attributes and relationships as typed key paths, for conditions.
    associatedtype Columns: TypedColumns
    /// The primary key: its column's type, or `[any Sendable]` for a composite key.
    associatedtype PrimaryKey

    /// What the type was generated from.
    static var entity: TypedEntity { get }
    /// The object beneath.
    var object: DatabaseObject { get }
    /// Wraps `object` unchecked: for objects the typed API made itself.
    ///
    /// - Parameter object: An object of this type's entity.
    init(unchecked object: DatabaseObject)
    /// Every attribute, read at once.
    var values: Values { get throws }
    /// The attributes that differ between two values.
    ///
    /// - Parameters:
    ///   - old: The values before.
    ///   - new: The values after.
    /// - Returns: One change per attribute whose value differs.
    static func changes(from old: Values, to new: Values) -> [TypedChange]
}

extension TypedObject {
    /// Views `object` as this type, after checking that it is of this type's entity and that
    /// the type matches the model of the object's context (once per model).
    ///
    /// - Parameter object: an object of the entity the type was generated from.
    /// - Throws: `RelateError` (`.typeMismatch`) for an object of another entity,
    ///   (`.schemaChanged`) when the model no longer matches the generated type.
    public init(_ object: DatabaseObject) throws {
        let context = try object.liveContext()
        try context.check(Self.entity)
        guard object.entity.name == Self.entity.name else {
            throw RelateError(
                kind: .typeMismatch,
                message: "this object is of entity \"\(object.entity.name)\", not \"\(Self.entity.name)\" (\(Self.self))",
                entity: object.entity.name)
        }
        self.init(unchecked: object)
    }

    /// `objects`, made by the typed API, viewed as this type: one array written in place.
    /// A `map` here ran unspecialized in the caller's module, through the runtime's
    /// array functions for each element (see `Benchmarks/README.md`).
    @inlinable
    static func viewing(_ objects: [DatabaseObject]) -> [Self] {
        // None: the empty array as it is, not one made with capacity 0, which writes its
        // count into the standard library's shared empty array (a race to the thread
        // sanitizer; see `ObjectGraph.objects(of:count:in:aligned:)`).
        if objects.isEmpty { return [] }
        return [Self](unsafeUninitializedCapacity: objects.count) { typed, count in
            objects.withUnsafeBufferPointer { objects in
                for index in objects.indices { (typed.baseAddress.unsafelyUnwrapped + index).initialize(to: Self(unchecked: objects[index])) }
            }
            count = objects.count
        }
    }

    /// Whether both view the same object.
    ///
    /// - Parameters:
    ///   - lhs: A typed object.
    ///   - rhs: Another typed object.
    /// - Returns: `true` when both wrap the same ``DatabaseObject``.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.object === rhs.object
    }

    /// Hashes the object's identity.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(object))
    }

    /// The object's description: its entity and primary key.
    public var description: String { object.description }

    /// Changes attributes at once, in one `UPDATE … RETURNING` of the columns whose value
    /// `body` changed (none changed: nothing is sent); the object then holds the row as
    /// stored.
    ///
    /// ```swift
    /// try ada.update { $0.surname = "King"; $0.firstname = "Ada" }
    /// ```
    ///
    /// - Parameter body: changes the values it is given.
    /// A primary-key column may change too: the object keeps its identity under its new
    /// key, as with `setValue(_:forKey:)`.
    ///
    /// - Throws: what `body` throws (nothing is sent then); `RelateError` for a value the
    ///   column refuses, a key change a foreign key refuses, or a row gone.
    public func update(_ body: (inout Values) throws -> Void) throws {
        let old = try values
        var new = old
        try body(&new)
        let changes = Self.changes(from: old, to: new)
        guard !changes.isEmpty else { return }
        try object.writeTypedChanges(changes)
    }
}

extension DatabaseObject {
    /// Writes `changes` in one `UPDATE … RETURNING` (``TypedObject/update(_:)``).
    func writeTypedChanges(_ changes: [TypedChange]) throws {
        let context = try liveContext()
        let table = self.table
        var columns: SmallArray<Int> = []
        var parameters: SmallArray<(any PostgresEncodable)?> = []
        for change in changes {
            guard change.index < table.columns.count else {
                throw RelateError(
                    kind: .schemaChanged, message: "\"\(entity.name)\" has no attribute at position \(change.index); regenerate its type",
                    entity: entity.name)
            }
            let attribute = entity.attributes[change.index]
            columns.append(change.index)
            parameters.append(try AttributeValue.encodable(change.value, for: attribute, entity: entity))
        }
        try context.update(self, columns: columns, values: parameters)
    }
}
