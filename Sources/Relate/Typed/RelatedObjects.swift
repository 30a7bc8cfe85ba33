/// A to-many or many-to-many relationship, typed: the ``RelationshipSet`` beneath, whose
/// members it hands out as `Element`. Every mutation is written to the database at once and
/// the other side follows in memory, as with the set.
///
/// ```swift
/// let emails: RelatedObjects<Email> = try ada.email
/// try emails.insert(work)            // UPDATE email SET person_id = … (one-to-many)
/// try titles.insert(doctor)          // INSERT INTO person_title_rel … (many-to-many)
/// for email in emails { print(try email.address ?? "") }
/// emails.count; emails.contains(work); try emails.remove(work); try emails.removeAll()
/// ```
public struct RelatedObjects<Element: TypedObject>: RandomAccessCollection {
    /// The untyped set beneath.
    public let relationshipSet: RelationshipSet

    /// Views `set` as a collection of `Element`, after checking that its relationship
    /// leads to `Element`'s entity and that `Element` matches the model (once per model).
    ///
    /// - Parameter set: a set whose members are of `Element`'s entity.
    /// - Throws: `RelateError` (`.typeMismatch` or `.schemaChanged`).
    public init(_ set: RelationshipSet) throws {
        let context = try set.owner.liveContext()
        try context.check(Element.entity)
        let target = context.model.entities[context.graph.target(of: set.owner.entityIndex, set.relationshipIndex)].name
        guard target == Element.entity.name else {
            throw RelateError(
                kind: .typeMismatch,
                message: "relationship \"\(set.relationship.key)\" of \"\(set.owner.entity.name)\" leads to \"\(target)\", not \"\(Element.entity.name)\"",
                entity: set.owner.entity.name, key: set.relationship.key)
        }
        relationshipSet = set
    }

    /// The first member's position: 0.
    public var startIndex: Int { 0 }
    /// One past the last member's position: the number of distinct members.
    public var endIndex: Int { relationshipSet.count }

    /// The member at `position`, in the order the members were loaded or added.
    ///
    /// - Parameter position: A position in `0..<count`.
    /// - Returns: The member, typed.
    public subscript(position: Int) -> Element {
        Element(unchecked: relationshipSet.allObjects[position])
    }

    /// The number of distinct members.
    public var count: Int { relationshipSet.count }
    /// Whether there is no member.
    public var isEmpty: Bool { relationshipSet.isEmpty }

    /// Iterates over the members as they are when it starts.
    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[DatabaseObject]>

        /// The next member, or `nil` after the last.
        ///
        /// - Returns: The next member, or `nil`.
        public mutating func next() -> Element? {
            base.next().map(Element.init(unchecked:))
        }
    }

    /// An iterator over the members as they are now.
    ///
    /// - Returns: The iterator.
    public func makeIterator() -> Iterator {
        Iterator(base: relationshipSet.allObjects.makeIterator())
    }

    /// Whether `element` is a member.
    ///
    /// - Parameter element: An object of the relationship's target type.
    /// - Returns: `true` when it is a member; reads memory only.
    public func contains(_ element: Element) -> Bool {
        relationshipSet.contains(element.object)
    }

    /// How many times `element` is a member: 0, 1, or more where a helper table without a
    /// unique key holds the pair more than once.
    ///
    /// - Parameter element: An object of the relationship's target type.
    /// - Returns: How many times it is a member; 0 when it is not one.
    public func count(for element: Element) -> Int {
        relationshipSet.count(for: element.object)
    }

    /// Adds `element` at once: an `UPDATE` of its foreign key (one-to-many) or an `INSERT`
    /// into the helper table (many-to-many).
    ///
    /// - Parameters:
    ///   - element: the object to add, of the same context.
    ///   - helperValues: for a many-to-many, values of the helper's other columns, by key.
    /// - Throws: `RelateError` when the database refuses the write.
    public func insert(_ element: Element, helperValues: [String: Any?] = [:]) throws {
        try relationshipSet.insert(element.object, helperValues: helperValues)
    }

    /// Adds every one of `elements` in one statement, as ``RelationshipSet/insert(contentsOf:)``
    /// does.
    ///
    /// ```swift
    /// try ada.titles.insert(contentsOf: [countess, doctor])   // one INSERT … unnest(…)
    /// ```
    ///
    /// - Parameter elements: objects of the relationship's target type, of the same context.
    /// - Throws: `RelateError` when an object is of another context or deleted, or the
    ///   database refuses the write.
    public func insert(contentsOf elements: some Sequence<Element>) throws {
        try relationshipSet.insert(contentsOf: elements.map(\.object))
    }

    /// Removes `element` once, at once: `UPDATE … SET fk = NULL` or a `DELETE` of one helper
    /// row. Removing a non-member changes nothing.
    ///
    /// - Parameter element: the member to remove.
    /// - Throws: `RelateError` when the foreign key is NOT NULL, or another client moved it.
    public func remove(_ element: Element) throws {
        try relationshipSet.remove(element.object)
    }

    /// Removes every member, in one statement.
    ///
    /// - Throws: `RelateError` when the database refuses the write.
    public func removeAll() throws {
        try relationshipSet.removeAll()
    }
}
