import Observation
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
/// A set handed out stays the owner's live set: loading the relationship again (a
/// `prefetch`) refills it in place.
public final class RelationshipSet: Sequence {
    /// Held strongly, so that a set handed out keeps working; the owner holds its loaded
    /// sets too, and the context breaks that cycle when it forgets the owner.
    let owner: DatabaseObject
    let relationshipIndex: Int
    /// Whether the relationship goes through a helper table.
    let isManyToMany: Bool
    /// Distinct members in the order they were loaded or added, and members of
    /// `pendingRemovals` not yet taken out.
    private var members: [DatabaseObject]
    /// Members held more than once (a helper table without a unique key), with their count.
    private var repeats: [ObjectIdentifier: Int] = [:]
    /// The members' identities for lookups in a large set: built on the first lookup,
    /// then kept up to date. Never holds a pending removal.
    private var identities: Set<ObjectIdentifier>?
    /// Members removed from a large set but still in `members`: taken out all at once when
    /// the members are next read, so that removing many costs one pass, not one each.
    private var pendingRemovals: Set<ObjectIdentifier> = []
    /// The set's observers; made on its first observed read (see ``observeMembersRead()``).
    var observation: ObservationRegistrar?

    /// `members` may name an object more than once only when `mayRepeat` (a join through
    /// a helper table); otherwise they are taken as they are.
    init(owner: DatabaseObject, relationship index: Int, members: [DatabaseObject], mayRepeat: Bool) {
        self.owner = owner
        relationshipIndex = index
        isManyToMany = owner.table.layout.helpers[index] != nil
        self.members = []
        fill(with: members, mayRepeat: mayRepeat)
    }

    /// The relationship the set stands for, seen from its owner.
    public var relationship: Relationship { owner.entity.relationships[relationshipIndex] }

    /// The number of distinct members (as `NSCountedSet.count`).
    public var count: Int {
        observeMembersRead()
        return members.count - pendingRemovals.count
    }
    /// Whether the set has no member.
    public var isEmpty: Bool { count == 0 }

    /// Members with their repeats: the helper rows (or children) the set stands for.
    var totalCount: Int {
        repeats.values.reduce(count) { $0 + $1 - 1 }
    }

    /// How many times `object` is a member: 0, 1, or more where a helper table without a
    /// unique key holds the same pair more than once.
    ///
    /// - Parameter object: An object of the relationship's target entity.
    /// - Returns: How many times it is a member; 0 when it is not one.
    public func count(for object: DatabaseObject) -> Int {
        guard contains(object) else { return 0 }
        return repeats[ObjectIdentifier(object)] ?? 1
    }

    /// Whether `object` is a member; reads memory only.
    ///
    /// - Parameter object: An object of the relationship's target entity.
    /// - Returns: `true` when it is a member.
    public func contains(_ object: DatabaseObject) -> Bool {
        observeMembersRead()
        // A short scan beats hashing for the few members most sets have.
        if members.count <= 16, pendingRemovals.isEmpty { return members.contains { $0 === object } }
        if identities == nil { identities = Set(members.lazy.map(ObjectIdentifier.init)) }
        return identities!.contains(ObjectIdentifier(object))
    }

    /// The distinct members, unobserved (for the library's own walks).
    var heldMembers: [DatabaseObject] {
        pendingRemovals.isEmpty ? members : members.filter { !pendingRemovals.contains(ObjectIdentifier($0)) }
    }

    /// The distinct members, in the order they were loaded or added.
    public var allObjects: [DatabaseObject] {
        observeMembersRead()
        takeOutPendingRemovals()
        return members
    }

    /// Iterates over the distinct members, in the order they were loaded or added.
    ///
    /// ```swift
    /// for email in try ada.objects(forKey: "email") {
    ///     print(try email.value(forKey: "address", as: String.self) ?? "")
    /// }
    /// ```
    ///
    /// - Returns: An iterator over the distinct members.
    public func makeIterator() -> IndexingIterator<[DatabaseObject]> {
        allObjects.makeIterator()
    }

    // MARK: - Writing through

    /// Adds `object`: an `UPDATE` of its foreign key (one-to-many), or an `INSERT` into the
    /// helper table (many-to-many) with `helperValues` for the helper's other columns.
    /// Adding a member of a keyed many-to-many again changes nothing.
    ///
    /// ```swift
    /// try ada.objects(forKey: "email").insert(email)       // UPDATE email SET person_id = …
    /// try ada.objects(forKey: "title").insert(countess)    // INSERT INTO person_title_rel …
    /// ```
    ///
    /// - Parameters:
    ///   - object: An object of the relationship's target entity, of the same context.
    ///   - helperValues: For a many-to-many, values of the helper table's other columns, by
    ///     column name; ignored otherwise.
    /// - Throws: A ``RelateError`` when the object is of another entity or context, a value
    ///   does not fit, or the database refuses (a one-to-one already taken, say); memory is
    ///   left as it was.
    public func insert(_ object: DatabaseObject, helperValues: [String: Any?] = [:]) throws {
        try owner.liveContext().insert(object, into: self, owner: owner, helperValues: helperValues)
    }

    /// Adds every one of `objects` as ``insert(_:helperValues:)`` adds each, in one
    /// statement: a many-to-many's pairs in one `INSERT … SELECT … FROM (SELECT unnest(…))` (the
    /// owner's key once, the members' keys as an array), a one-to-many's children by one
    /// `UPDATE … WHERE <key> = ANY(…)` (children it did not move, because the database
    /// links them already, are read again by one more statement: one may be gone).
    /// Members of a keyed many-to-many that the database links already change nothing;
    /// through a helper that may hold a pair twice, each object given adds a pair (one
    /// given twice, two). Nothing else in the set changes.
    ///
    /// ```swift
    /// try ada.objects(forKey: "title").insert(contentsOf: [countess, doctor])   // one INSERT
    /// ```
    ///
    /// - Parameter objects: Objects of the relationship's target entity, of the same context.
    /// - Throws: A ``RelateError`` when an object is of another entity or context, or deleted,
    ///   before anything is sent, or what the database refuses; memory is left as it was then.
    ///   A one-to-many child another client deleted meanwhile is marked deleted, and the
    ///   call throws ``RelateError/Kind-swift.struct/conflict`` naming it after the others
    ///   were added.
    public func insert(contentsOf objects: some Sequence<DatabaseObject>) throws {
        try owner.liveContext().insert(contentsOf: Array(objects), into: self, owner: owner)
    }

    /// Removes `object` once: `UPDATE … SET fk = NULL … AND fk = <owner>` (an error names the
    /// column when it is NOT NULL) or a `DELETE` of one helper row. Removing a non-member
    /// changes nothing; a member the database no longer links to the owner (another client
    /// moved it) is a ``RelateError/Kind-swift.struct/conflict`` error, and memory takes
    /// the database's state.
    ///
    /// - Parameter object: A member of the set.
    /// - Throws: A ``RelateError``: ``RelateError/Kind-swift.struct/invalidWrite`` when the
    ///   foreign key is `NOT NULL`, ``RelateError/Kind-swift.struct/conflict`` when the database
    ///   no longer links it, or the database's error; memory is left as it was then, except
    ///   after a conflict.
    public func remove(_ object: DatabaseObject) throws {
        try owner.liveContext().remove(object, from: self, owner: owner)
    }

    /// Removes every member, in one statement.
    ///
    /// - Throws: A ``RelateError``, as ``remove(_:)`` throws.
    public func removeAll() throws {
        try owner.liveContext().replace(members: [], of: self, owner: owner)
    }

    // MARK: - Memory

    /// Makes the set hold `members` in place of what it held (a relationship loaded again),
    /// so that whoever holds the set sees the new members.
    func refill(with newMembers: [DatabaseObject], mayRepeat: Bool) {
        // Kept without pending removals: the identities are rebuilt from `members` on undo.
        takeOutPendingRemovals()
        let previous = (members, repeats)
        let same = previous.0.count == newMembers.count && zip(previous.0, newMembers).allSatisfy { $0 === $1 }
        unlistMemberships()
        if same { fill(with: newMembers, mayRepeat: mayRepeat) } else { changeMembers { fill(with: newMembers, mayRepeat: mayRepeat) } }
        if let graph = owner.graph, graph.isRecordingUndo {
            graph.recordUndo { [weak self] in
                guard let self else { return }
                unlistMemberships()
                changeMembers {
                    (members, repeats) = previous
                    pendingRemovals = []
                    identities = nil
                }
                listMemberships()
            }
        }
    }

    private func fill(with newMembers: [DatabaseObject], mayRepeat: Bool) {
        identities = nil
        pendingRemovals = []
        repeats = [:]
        guard mayRepeat else {
            members = newMembers
            listMemberships()
            return
        }
        members = []
        members.reserveCapacity(newMembers.count)
        for member in newMembers { add(member, recordingUndo: false) }
    }

    func add(_ object: DatabaseObject, times: Int = 1, recordingUndo: Bool = true) {
        let id = ObjectIdentifier(object)
        if pendingRemovals.contains(id) { takeOutPendingRemovals() }
        let current = count(for: object)
        changeMembers {
            if current == 0 {
                members.append(object)
                identities?.insert(id)
            }
            repeats[id] = current + times > 1 ? current + times : nil
        }
        if current == 0, isManyToMany { owner.graph?.listMembership(of: object, in: self) }
        if recordingUndo, let graph = owner.graph, graph.isRecordingUndo {
            graph.recordUndo { [weak self] in self?.drop(object, times: times, recordingUndo: false) }
        }
    }

    /// Adds `objects`, each once: none of them may be a member already, nor appear twice
    /// (a replace's new members). One append and one undo for all, where ``add(_:times:recordingUndo:)``
    /// would look each up three times.
    func addNew(_ objects: [DatabaseObject]) {
        guard !objects.isEmpty else { return }
        takeOutPendingRemovals()
        changeMembers {
            members.append(contentsOf: objects)
            if identities != nil {
                for object in objects { identities!.insert(ObjectIdentifier(object)) }
            }
        }
        guard let graph = owner.graph else { return }
        if isManyToMany, graph.manyToManyMemberships != nil {
            for object in objects { graph.listMembership(of: object, in: self) }
        }
        if graph.isRecordingUndo {
            graph.recordUndo { [weak self] in
                guard let self else { return }
                for object in objects { drop(object, recordingUndo: false) }
            }
        }
    }

    /// Takes `object` out `times` times (all of them when `nil`).
    func drop(_ object: DatabaseObject, times: Int? = nil, recordingUndo: Bool = true) {
        let id = ObjectIdentifier(object)
        let current = count(for: object)
        guard current > 0 else { return }
        let removed = Swift.min(times ?? current, current)
        let remaining = current - removed
        changeMembers {
            repeats[id] = remaining > 1 ? remaining : nil
            guard remaining == 0 else { return }
            if members.count <= 16, pendingRemovals.isEmpty {
                members.removeAll { $0 === object }
                identities?.remove(id)
            } else {
                // `contains` built the identities.
                identities?.remove(id)
                pendingRemovals.insert(id)
            }
        }
        if remaining == 0, isManyToMany { owner.graph?.unlistMembership(of: object, in: self) }
        if recordingUndo, let graph = owner.graph, graph.isRecordingUndo {
            graph.recordUndo { [weak self] in self?.add(object, times: removed, recordingUndo: false) }
        }
    }

    private func takeOutPendingRemovals() {
        guard !pendingRemovals.isEmpty else { return }
        members.removeAll { pendingRemovals.contains(ObjectIdentifier($0)) }
        pendingRemovals = []
    }

    /// Lists every member in the context's many-to-many membership index, if it is built.
    private func listMemberships() {
        guard isManyToMany, let graph = owner.graph, graph.manyToManyMemberships != nil else { return }
        for member in allObjects { graph.listMembership(of: member, in: self) }
    }

    private func unlistMemberships() {
        guard isManyToMany, let graph = owner.graph, graph.manyToManyMemberships != nil else { return }
        for member in allObjects { graph.unlistMembership(of: member, in: self) }
    }
}

extension RelationshipSet: CustomStringConvertible {
    /// The relationship's key and the members (`email: [<email id=1>, <email id=2>]`), a member
    /// held more than once with its count; for debugging.
    public var description: String {
        "\(relationship.key): [" + allObjects.map { object in
            let count = count(for: object)
            return count > 1 ? "\(object) ×\(count)" : "\(object)"
        }.joined(separator: ", ") + "]"
    }
}
