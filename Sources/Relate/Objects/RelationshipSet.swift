/// The to-many side of a relationship: a counted set of objects whose every mutation is
/// written to the database at once (BaseTen's `NSCountedSet` proxy).
///
/// ```swift
/// let emails = try ada.objects(forKey: "email")
/// try emails.insert(newEmail)        // UPDATE email SET person_id = … (one-to-many)
/// try titles.insert(doctor)          // INSERT INTO person_title_rel … (many-to-many)
/// emails.count; emails.contains(e); titles.count(for: doctor)
/// ```
///
/// Its members are loaded when the owner hands it out, so reading never queries. The
/// other side of each change follows in memory: a moved email leaves its old person's set.
public final class RelationshipSet: Sequence {
    weak var owner: DatabaseObject?
    let relationshipIndex: Int
    public let relationship: Relationship
    /// Distinct members in the order they were loaded or added.
    private(set) var objects: [DatabaseObject]
    private var counts: [ObjectIdentifier: Int]

    init(owner: DatabaseObject, relationship index: Int, members: [DatabaseObject]) {
        self.owner = owner
        relationshipIndex = index
        relationship = owner.entity.relationships[index]
        objects = []
        counts = [:]
        objects.reserveCapacity(members.count)
        counts.reserveCapacity(members.count)
        for member in members { add(member, recordingUndo: false) }
    }

    /// The number of distinct members (as `NSCountedSet.count`).
    public var count: Int { objects.count }
    public var isEmpty: Bool { objects.isEmpty }

    /// How many times `object` is a member: 0, 1, or more where a helper table without a
    /// unique key holds the same pair more than once.
    public func count(for object: DatabaseObject) -> Int {
        counts[ObjectIdentifier(object)] ?? 0
    }

    public func contains(_ object: DatabaseObject) -> Bool {
        counts[ObjectIdentifier(object)] != nil
    }

    public var allObjects: [DatabaseObject] { objects }

    public func makeIterator() -> IndexingIterator<[DatabaseObject]> {
        objects.makeIterator()
    }

    // MARK: - Writing through

    /// Adds `object`: an `UPDATE` of its foreign key (one-to-many), or an `INSERT` into the
    /// helper table (many-to-many) with `helperValues` for the helper's other columns.
    /// Adding a member of a keyed many-to-many again changes nothing.
    public func insert(_ object: DatabaseObject, helperValues: [String: Any?] = [:]) throws {
        let (context, owner) = try live()
        try context.insert(object, into: self, owner: owner, helperValues: helperValues)
    }

    /// Removes `object` once: `UPDATE … SET fk = NULL` (an error names the column when it is
    /// NOT NULL) or a `DELETE` of one helper row. Removing a non-member changes nothing.
    public func remove(_ object: DatabaseObject) throws {
        let (context, owner) = try live()
        try context.remove(object, from: self, owner: owner)
    }

    /// Removes every member, in one statement.
    public func removeAll() throws {
        let (context, owner) = try live()
        try context.replace(members: [], of: self, owner: owner)
    }

    private func live() throws -> (DatabaseContext, DatabaseObject) {
        guard let owner else {
            throw RelateError(kind: .invalidObject, message: "the object that owns this \(relationship.key) set is gone")
        }
        return (try owner.liveContext(), owner)
    }

    // MARK: - Memory

    func add(_ object: DatabaseObject, times: Int = 1, recordingUndo: Bool = true) {
        let id = ObjectIdentifier(object)
        if counts[id] == nil { objects.append(object) }
        counts[id, default: 0] += times
        if recordingUndo, let context = owner?.context, context.isRecordingUndo {
            context.recordUndo { [weak self] in self?.drop(object, times: times, recordingUndo: false) }
        }
    }

    /// Takes `object` out `times` times (all of them when `nil`).
    func drop(_ object: DatabaseObject, times: Int? = nil, recordingUndo: Bool = true) {
        let id = ObjectIdentifier(object)
        guard let current = counts[id] else { return }
        let removed = Swift.min(times ?? current, current)
        if current - removed > 0 {
            counts[id] = current - removed
        } else {
            counts[id] = nil
            objects.removeAll { $0 === object }
        }
        if recordingUndo, let context = owner?.context, context.isRecordingUndo {
            context.recordUndo { [weak self] in self?.add(object, times: removed, recordingUndo: false) }
        }
    }
}

extension RelationshipSet: CustomStringConvertible {
    public var description: String {
        "\(relationship.key): [" + objects.map { object in
            let count = count(for: object)
            return count > 1 ? "\(object) ×\(count)" : "\(object)"
        }.joined(separator: ", ") + "]"
    }
}
