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
    /// Held strongly, so that a set handed out keeps working; the owner holds its loaded
    /// sets too, and the context breaks that cycle when it forgets the owner.
    let owner: DatabaseObject
    let relationshipIndex: Int
    /// Distinct members in the order they were loaded or added.
    private(set) var objects: [DatabaseObject]
    /// Members held more than once (a helper table without a unique key), with their count.
    private var repeats: [ObjectIdentifier: Int] = [:]
    /// The members' identities for lookups in a large set: built on the first lookup,
    /// then kept up to date.
    private var identities: Set<ObjectIdentifier>?

    /// `members` may name an object more than once only when `mayRepeat` (a join through
    /// a helper table); otherwise they are taken as they are.
    init(owner: DatabaseObject, relationship index: Int, members: [DatabaseObject], mayRepeat: Bool) {
        self.owner = owner
        relationshipIndex = index
        guard mayRepeat else {
            objects = members
            return
        }
        objects = []
        objects.reserveCapacity(members.count)
        for member in members { add(member, recordingUndo: false) }
    }

    public var relationship: Relationship { owner.entity.relationships[relationshipIndex] }

    /// The number of distinct members (as `NSCountedSet.count`).
    public var count: Int { objects.count }
    public var isEmpty: Bool { objects.isEmpty }

    /// How many times `object` is a member: 0, 1, or more where a helper table without a
    /// unique key holds the same pair more than once.
    public func count(for object: DatabaseObject) -> Int {
        guard contains(object) else { return 0 }
        return repeats[ObjectIdentifier(object)] ?? 1
    }

    public func contains(_ object: DatabaseObject) -> Bool {
        // A short scan beats hashing for the few members most sets have.
        if objects.count <= 16 { return objects.contains { $0 === object } }
        if identities == nil { identities = Set(objects.lazy.map(ObjectIdentifier.init)) }
        return identities!.contains(ObjectIdentifier(object))
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
        try owner.liveContext().insert(object, into: self, owner: owner, helperValues: helperValues)
    }

    /// Removes `object` once: `UPDATE … SET fk = NULL` (an error names the column when it is
    /// NOT NULL) or a `DELETE` of one helper row. Removing a non-member changes nothing.
    public func remove(_ object: DatabaseObject) throws {
        try owner.liveContext().remove(object, from: self, owner: owner)
    }

    /// Removes every member, in one statement.
    public func removeAll() throws {
        try owner.liveContext().replace(members: [], of: self, owner: owner)
    }

    // MARK: - Memory

    func add(_ object: DatabaseObject, times: Int = 1, recordingUndo: Bool = true) {
        let id = ObjectIdentifier(object)
        let current = count(for: object)
        if current == 0 {
            objects.append(object)
            identities?.insert(id)
        }
        repeats[id] = current + times > 1 ? current + times : nil
        if recordingUndo, let context = owner.context, context.isRecordingUndo {
            context.recordUndo { [weak self] in self?.drop(object, times: times, recordingUndo: false) }
        }
    }

    /// Takes `object` out `times` times (all of them when `nil`).
    func drop(_ object: DatabaseObject, times: Int? = nil, recordingUndo: Bool = true) {
        let id = ObjectIdentifier(object)
        let current = count(for: object)
        guard current > 0 else { return }
        let removed = Swift.min(times ?? current, current)
        let remaining = current - removed
        repeats[id] = remaining > 1 ? remaining : nil
        if remaining == 0 {
            objects.removeAll { $0 === object }
            identities?.remove(id)
        }
        if recordingUndo, let context = owner.context, context.isRecordingUndo {
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
