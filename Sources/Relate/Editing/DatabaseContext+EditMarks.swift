import RelatePostgres

/// Edit marks: a context that does not autocommit and ``DatabaseContext/marksEdits`` holds
/// a session-level advisory lock on each row it has a pending change for, and says so on
/// the `relate_edits` channel; other contexts read the locks and answer
/// ``DatabaseObject/isBeingEdited``. A lock dies with its session, so a crashed editor
/// leaves no row marked; the notification is only the hint to look.
extension DatabaseContext {
    /// The channel an editing context notifies when it takes or lets go of marks.
    public static let editMarksChannel = "relate_edits"

    /// The two keys of the advisory lock that marks `object`'s row: 32-bit FNV-1a hashes of
    /// its table's qualified name and of its primary key's text form. Every context of the
    /// model computes the same; two rows whose hashes collide mark each other too.
    static func editMarkKey(of object: DatabaseObject) -> EditMarkKey {
        let key = object.primaryKeyValues.map(\.arrayElementText).joined(separator: "\u{1F}")
        return EditMarkKey(table: fnv1a(object.table.layout.table), row: fnv1a(key))
    }

    private static func fnv1a(_ text: String) -> Int32 {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return Int32(bitPattern: hash)
    }

    /// Marks the rows of `objects` (those the database holds: not new ones) this context
    /// does not mark yet, in one round trip: the locks, then the hint. A row another client
    /// marks stays theirs (the write is not refused: ``DatabaseObject/beginEditing()`` is
    /// the one that refuses).
    func markEdits(of objects: ArraySlice<DatabaseObject>) {
        guard marksEdits, !autocommits else { return }
        var keys: [(ObjectIdentifier, EditMarkKey)] = []
        var seen = Set<ObjectIdentifier>()
        // Once each: a session's advisory locks stack, and one unlock lets go of one.
        for object in objects where pending.marks[ObjectIdentifier(object)] == nil && !object.table.primaryKey.isEmpty
            && seen.insert(ObjectIdentifier(object)).inserted
        {
            guard !object.primaryKeyValues.contains(where: { $0.isNull || $0.isPendingKey }) else { continue }
            keys.append((ObjectIdentifier(object), Self.editMarkKey(of: object)))
        }
        guard !keys.isEmpty else { return }
        do {
            let results = try ownLocks { try connection.pipeline([
                PostgresStatement(
                    "SELECT pg_try_advisory_lock(k.t, k.r) FROM unnest($1::int4[], $2::int4[]) WITH ORDINALITY AS k(t, r, n) ORDER BY k.n",
                    [keys.map(\.1.table), keys.map(\.1.row)]),
                PostgresStatement("SELECT pg_notify($1, '')", [Self.editMarksChannel]),
            ]) }
            for (row, (id, key)) in zip(results[0], keys) where try row.decode(Bool.self, at: 0) { pending.marks[id] = key }
        } catch {
            // A mark is a courtesy to other clients: the edit stands without it.
            connection.logger.debug("edit marks could not be taken", metadata: ["relate.error": "\(error)"])
        }
    }

    /// Lets go of every mark this context holds (after a save or a roll-back, at the end of
    /// a unit of work) but those of `kept` (objects an undo left with pending changes).
    func releaseEditMarks(except kept: Set<ObjectIdentifier> = []) {
        let released = kept.isEmpty ? pending.marks : pending.marks.filter { !kept.contains($0.key) }
        guard !released.isEmpty else { return }
        for id in released.keys { pending.marks[id] = nil }
        let keys = Array(released.values)
        do {
            try connection.pipeline([
                PostgresStatement(
                    "SELECT pg_advisory_unlock(k.t, k.r) FROM unnest($1::int4[], $2::int4[]) AS k(t, r)",
                    [keys.map(\.table), keys.map(\.row)]),
                PostgresStatement("SELECT pg_notify($1, '')", [Self.editMarksChannel]),
            ])
        } catch {
            // Locks die with their session: a connection that is gone holds none, and one
            // still open must not be lent to another unit with them.
            connection.sessionMayHaveChanged = true
            connection.logger.debug("edit marks could not be let go of", metadata: ["relate.error": "\(error)"])
        }
    }

    /// Runs `body`, which takes marks (advisory locks of the session): they are the
    /// context's own, let go of at a save, a roll-back, an undo and a unit's end, so they do
    /// not count as a change of the session that would cost a pooled connection.
    func ownLocks<Result>(_ body: () throws -> Result) rethrows -> Result {
        let changed = connection.sessionMayHaveChanged
        defer { connection.sessionMayHaveChanged = changed }
        return try body()
    }

    /// Reads which rows other sessions mark as being edited, and sets
    /// ``DatabaseObject/isBeingEdited`` of this context's objects to match (Observation is
    /// told of each that changes). ``processChanges()`` does it when another context
    /// notified `relate_edits`, and while any object here is marked (so that a mark whose
    /// session died clears); call it yourself with logical decoding, which brings no hint.
    ///
    /// - Throws: A ``RelateError`` when the locks cannot be read.
    public func refreshEditMarks() throws {
        let result = try send(
            Statement(
                sql: "SELECT classid::int8, objid::int8 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND granted "
                    + "AND pid <> pg_backend_pid() AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                parameters: []),
            entity: nil)
        var marked = Set<EditMarkKey>()
        for row in result {
            marked.insert(EditMarkKey(
                table: Int32(truncatingIfNeeded: try row.decode(Int.self, at: 0)), row: Int32(truncatingIfNeeded: try row.decode(Int.self, at: 1))))
        }
        let tables = Set(marked.map(\.table))
        var now = Set<ObjectIdentifier>()
        for registry in graph.registries {
            for object in registry.all where !object.isDeleted && !object.table.primaryKey.isEmpty {
                let key = Self.editMarkKey(of: object)
                guard tables.contains(key.table), marked.contains(key) else { continue }
                now.insert(ObjectIdentifier(object))
                if !graph.editMarked.contains(ObjectIdentifier(object)) { graph.setEditMarked(object, true) }
            }
        }
        for registry in graph.registries {
            for object in registry.all where graph.editMarked.contains(ObjectIdentifier(object)) && !now.contains(ObjectIdentifier(object)) {
                graph.setEditMarked(object, false)
            }
        }
        graph.editMarked = now
    }
}

/// The two keys of the advisory lock that marks a row as being edited.
struct EditMarkKey: Hashable {
    let table: Int32
    let row: Int32
}

extension ObjectGraph {
    /// Sets whether `object` is being edited elsewhere, telling Observation.
    func setEditMarked(_ object: DatabaseObject, _ marked: Bool) {
        let change = {
            if marked { self.editMarked.insert(ObjectIdentifier(object)) } else { self.editMarked.remove(ObjectIdentifier(object)) }
        }
        if let observation = object.table.observation { observation.change(editMarkOf: object, change) } else { change() }
    }
}

extension DatabaseObject {
    /// Whether another client marks this object's row as being edited: a context of its
    /// with ``DatabaseContext/marksEdits`` holds a pending change for it. Observable (with
    /// ``DatabaseContext/isObservable``); brought up to date by ``DatabaseContext/processChanges()``
    /// and ``DatabaseContext/refreshEditMarks()``.
    public var isBeingEdited: Bool {
        table.observation?.readEditMark(of: self)
        return graph?.editMarked.contains(ObjectIdentifier(self)) ?? false
    }

    /// Marks this object's row as being edited by this context, or refuses at once when
    /// another client marks it (BaseTen's `FOR UPDATE NOWAIT`, without holding a row lock).
    /// The mark lasts until ``DatabaseContext/save()`` or ``DatabaseContext/rollback()``.
    ///
    /// ```swift
    /// context.autocommits = false
    /// context.marksEdits = true
    /// try ada.beginEditing()          // throws when someone else is editing Ada
    /// ```
    ///
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/conflict`` when
    ///   another client marks the row, ``RelateError/Kind-swift.struct/invalidRequest``
    ///   for a context that autocommits or does not mark edits, or the database's error.
    public func beginEditing() throws {
        let context = try liveContext()
        guard !context.autocommits, context.marksEdits else {
            throw RelateError(
                kind: .invalidRequest, message: "beginEditing() needs a context that does not autocommit and marks edits",
                entity: entity.name)
        }
        guard context.pending.marks[ObjectIdentifier(self)] == nil, !primaryKeyValues.contains(where: \.isPendingKey) else { return }
        let key = DatabaseContext.editMarkKey(of: self)
        let results = try context.read(entity: entityIndex) {
            try context.ownLocks {
                try context.connection.pipeline([
                    PostgresStatement("SELECT pg_try_advisory_lock($1, $2)", [key.table, key.row]),
                    PostgresStatement("SELECT pg_notify($1, '')", [DatabaseContext.editMarksChannel]),
                ])
            }
        }
        guard try results[0][0].decode(Bool.self, at: 0) else {
            throw RelateError.conflict(self, "is being edited by another client")
        }
        context.pending.marks[ObjectIdentifier(self)] = key
    }
}
