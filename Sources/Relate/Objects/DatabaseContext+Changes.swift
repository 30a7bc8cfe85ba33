import Foundation
import RelatePostgres

/// What another client's committed statement changed, as a context applied it.
public struct Change: Sendable, CustomStringConvertible {
    /// What the statement did to the row.
    ///
    /// - `insert`: a row was inserted.
    /// - `update`: a row was updated; ``Change/changedKeys`` says which attributes, for an
    ///   object the context holds.
    /// - `delete`: a row was deleted.
    public enum Kind: String, Sendable {
        /// An insert, an update or a delete: see ``Change/Kind-swift.enum``.
        case insert, update, delete
    }

    /// The entity's name in the model.
    public var entity: String
    /// What the statement did to the row.
    public var kind: Kind
    /// The row's key values (``Entity/primaryKey``); empty for a table without a key.
    public var primaryKey: [(any Sendable)?]
    /// For an update of an object this context holds: the attribute keys whose values changed.
    public var changedKeys: [String]
    /// The row's primary key as the feed sent it (text, in key order), and for an update
    /// that changed the key, the key before: what a live query finds its rows by.
    var keyTexts: [[String?]] = []
    /// For an update of one row, the columns whose values it changed, when the feed knows
    /// (``ChangeNotice/changedColumns``): what a live query's answers read of them tells
    /// whether the row can have come or gone.
    var changedColumns: [String]? = nil
    /// For an update of one row whose changed columns the feed does not know: the row
    /// after it (``ChangeNotice/newRow``), which a live query compares with what it found
    /// of the columns its policies read. Only the live queries' hub receives it:
    /// ``Database/changes(using:)`` leaves it out (``CommittedChanges/withoutRows``).
    var newRow: RowAfter? = nil

    /// The kind, the entity and the changed keys (`update person (surname)`); never row data.
    public var description: String {
        "\(kind) \(entity)" + (changedKeys.isEmpty ? "" : " (\(changedKeys.joined(separator: ", ")))")
    }
}

extension DatabaseContext {
    /// Starts reading the changes other clients commit, on a connection of its own;
    /// called by ``processChanges()`` the first time. Call it before fetching, so that
    /// nothing committed in between is missed. `mechanism` `nil` takes the triggers when
    /// `relate enable` installed them, else logical decoding when `relate enable --logical`
    /// created its publication.
    ///
    /// - Parameter mechanism: ``ChangeTracking/Mechanism/triggers`` or
    ///   ``ChangeTracking/Mechanism/logicalDecoding``; `nil` (the default) to take what the
    ///   database has enabled.
    /// - Throws: A ``RelateError`` when neither mechanism is enabled in the database (run
    ///   `relate enable`), the one asked for is not, the context already tracks changes by
    ///   the other one, or the feed's connection cannot be opened.
    public func startTrackingChanges(using mechanism: ChangeTracking.Mechanism? = nil) throws {
        if let changeFeed {
            guard mechanism == nil || mechanism == changeFeed.mechanism else {
                throw RelateError(kind: .invalidRequest, message: "this context already tracks changes by \(changeFeed.mechanism.rawValue)")
            }
            return
        }
        changeFeed = try Self.wrappingErrors { try makeChangeFeed(on: connection, layout: layout, mechanism: mechanism) }
    }

    /// Which mechanism this context tracks changes by, once started.
    public var changeTrackingMechanism: ChangeTracking.Mechanism? { changeFeed?.mechanism }

    /// Applies what other clients committed since the last call, whole transactions only
    /// (never one that rolled back). Updated rows of objects in memory are read again
    /// (attributes, and moves between loaded sets), deleted ones are marked deleted and
    /// leave every set, inserted or moved rows join the loaded sets they now belong to,
    /// helper rows added or removed refill the loaded many-to-many sets. When the feed lost
    /// its connection, everything in memory is read again (``refreshAll()``). Answers the
    /// changes, in commit order, and hands each to the object's observer
    /// (``observe(_:_:)``).
    ///
    /// With triggers, what this context wrote itself is skipped. With logical decoding it
    /// comes back in the stream; memory already agrees, so it changes nothing and is not
    /// answered, except a delete of a row the context no longer holds.
    ///
    /// ```swift
    /// for change in try context.processChanges() { print(change) }   // "update person (surname)"
    /// ```
    ///
    /// - Returns: The changes applied, in commit order; empty when there were none.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/schemaChanged`` once a
    ///   tracked table's definition changed (and on every call after), or the database's error.
    @discardableResult
    public func processChanges() throws -> [Change] {
        // A live context outlives its server: after a restart or a failover its connection
        // is opened again (a multi-host conninfo finds the new primary), and the feed's gap
        // reads everything again there. Not inside a transaction of the context's: that is
        // gone with the connection, and the transaction's own error says so.
        if changeFeed != nil, !graph.isRecordingUndo, !connection.probe() {
            try Self.wrappingErrors { try connection.reconnect() }
            gapPending = true
        }
        try startTrackingChanges()
        if let schemaChange { throw schemaChange }
        guard let changeFeed else { return [] }
        var changes: [AppliedChange] = []
        if gapPending {
            graph.noteChangeOfEverything()
            changes += try changesAfterGap()
            gapPending = false
        }
        let events = try Self.wrappingErrors { try changeFeed.receive() }
        var notices: [ChangeNotice] = []
        // Marks are read when another context said it changed some, and while any is
        // shown (a mark whose session died sends no word).
        if events.contains(where: { if case .editMarks = $0 { true } else { false } }) || !graph.editMarked.isEmpty {
            try refreshEditMarks()
        }
        for event in events {
            switch event {
            case .editMarks:
                continue
            case .changes(let more, _):
                notices += more
            case .gap:
                // Whatever was committed meanwhile is unknown: every live answer is stale.
                graph.noteChangeOfEverything()
                gapPending = true
                changes += try apply(notices) + changesAfterGap()
                gapPending = false
                notices = []
            case .schemaChanged(let schema, let table, let what):
                guard let entity = layout.entityIndex(schema: schema, table: table) else { continue }
                changes += try apply(notices)
                notices = []
                let error = RelateError(
                    kind: .schemaChanged,
                    message: "table \(model.entities[entity].name) changed since the model was read (\(what)): reload the model "
                        + "(a new DatabaseContext, or Database.reloadModel()) before going on",
                    entity: model.entities[entity].name)
                schemaChange = error
                notifyObservers(changes)
                throw error
            }
        }
        changes += try apply(notices)
        notifyObservers(changes)
        return changes.map(\.change)
    }

    /// ``processChanges()``, waiting at most `timeout` for the next change when none is there.
    ///
    /// - Parameter timeout: How long to wait at most.
    /// - Returns: The changes applied, as ``processChanges()`` answers them; empty when none
    ///   came in time.
    /// - Throws: What ``processChanges()`` throws.
    @discardableResult
    public func waitForChanges(timeout: Duration) throws -> [Change] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let changes = try processChanges()
            if !changes.isEmpty { return changes }
            let left = deadline - ContinuousClock.now
            guard left > .zero, let changeFeed else { return [] }
            try Self.wrappingErrors { try changeFeed.waitForInput(timeout: left) }
        }
    }

    /// Calls `handler` with every change ``processChanges()`` applies to `object`, until
    /// ``stopObserving(_:)`` or the object is let go (the context holds it weakly).
    ///
    /// ```swift
    /// context.observe(ada) { change in print("Ada changed: \(change.changedKeys)") }
    /// ```
    ///
    /// - Parameters:
    ///   - object: An object of this context.
    ///   - handler: Called, on the thread that calls ``processChanges()``, with each change to
    ///     the object's row.
    public func observe(_ object: DatabaseObject, _ handler: @escaping (Change) -> Void) {
        observers[ObjectIdentifier(object)] = (Weak(object), handler)
    }

    /// Stops calling the handler ``observe(_:_:)`` gave for `object`.
    ///
    /// - Parameter object: The object observed.
    public func stopObserving(_ object: DatabaseObject) {
        observers[ObjectIdentifier(object)] = nil
    }

    private func notifyObservers(_ changes: [AppliedChange]) {
        guard !observers.isEmpty else { return }
        for applied in changes {
            guard let object = applied.object, let (reference, handler) = observers[ObjectIdentifier(object)] else { continue }
            if reference.value === object { handler(applied.change) }
        }
        observers = observers.filter { $0.value.0.value != nil }
    }

    /// After a gap in the feed: everything in memory read again, and what that changed
    /// answered as updates and deletes.
    private func changesAfterGap() throws -> [AppliedChange] {
        let objects = graph.registries.flatMap(\.all)
        let before = objects.map { Array($0.values) }
        try refreshAll()
        return zip(objects, before).compactMap { object, old in
            let key = graph.tables[object.entityIndex].primaryKey.map { old[$0].value }
            let entity = model.entities[object.entityIndex].name
            if object.isDeleted {
                return AppliedChange(change: Change(entity: entity, kind: .delete, primaryKey: key, changedKeys: []), object: object)
            }
            let changed = changedKeys(of: object, from: old)
            guard !changed.isEmpty else { return nil }
            return AppliedChange(change: Change(entity: entity, kind: .update, primaryKey: key, changedKeys: changed), object: object)
        }
    }

    /// The attributes whose values differ, as the server tells values apart
    /// (``StoredValue/isSame(as:)``): as they print, a `Date` is to the second, `Data` its
    /// length, and text by Swift's `==`, and those changes were left out.
    private func changedKeys(of object: DatabaseObject, from old: [StoredValue]) -> [String] {
        zip(graph.tables[object.entityIndex].layout.attributeKeys, zip(old, object.values)).compactMap { key, pair in
            pair.0.isSame(as: pair.1) ? nil : key
        }
    }

    // MARK: - Applying

    /// A change as applied, with the object it concerns when the context holds one.
    struct AppliedChange {
        var change: Change
        var object: DatabaseObject?
    }

    private func apply(_ notices: [ChangeNotice]) throws -> [AppliedChange] {
        guard !notices.isEmpty else { return [] }
        defer { graph.membershipsMayChange() }
        // What another client committed: rows of these entities changed, in memory or not.
        for notice in notices {
            if let entity = layout.entityIndex(schema: notice.schema, table: notice.table) { graph.noteChange(of: entity) }
        }
        let notices = notices.compactMap { notice -> (entity: Int, kind: Change.Kind, keys: [[String?]]?, oldKeys: [[String?]]?)? in
            layout.entityIndex(schema: notice.schema, table: notice.table).map { ($0, notice.kind, notice.keys, notice.oldKeys) }
        }
        // Objects in memory to read again, with their values before; keys not in memory
        // that may join loaded sets; entities to read again whole (keys not given or not
        // matchable); what each notice names, for the answer.
        var inMemory: [DatabaseObject] = []
        var before: [ObjectIdentifier: [StoredValue]] = [:]
        var arrived: [Int: [[StoredValue]]] = [:]
        var whole = Set<Int>()
        var named: [(entity: Int, kind: Change.Kind, key: [StoredValue], object: DatabaseObject?)] = []
        // Objects already in memory before a notice of their insert: this context's own
        // (logical decoding hands them back), or arrived earlier in the same batch.
        var known = Set<ObjectIdentifier>()
        for notice in notices {
            guard let keys = notice.keys else {
                whole.insert(notice.entity)
                named.append((notice.entity, notice.kind, [], nil))
                continue
            }
            let given = keys.count
            for (position, key) in (keys + (notice.oldKeys ?? [])).enumerated() {
                guard let values = layout.entities[notice.entity].storedKey(key) else {
                    whole.insert(notice.entity)
                    continue
                }
                let object = ObjectKey(values).flatMap { graph.registries[notice.entity][$0] }
                if position < given { named.append((notice.entity, notice.kind, values, object)) }
                if let object {
                    if notice.kind == .insert { known.insert(ObjectIdentifier(object)) }
                    if before.updateValue(Array(object.values), forKey: ObjectIdentifier(object)) == nil { inMemory.append(object) }
                } else if notice.kind != .delete {
                    arrived[notice.entity, default: []].append(values)
                }
            }
        }

        // Rows in memory: read again (moved, changed or gone), a table at a time. A table
        // whose rows the server refuses to read by key for good (a grant revoked, 42501; a
        // key of a type that cannot be compared with what memory holds, as `money` or a
        // composite, 42883 or 0A000; classes 0A, 22 and 42) lets go of its objects, never
        // trusted again, and the other tables' changes go on: one table must not stop the
        // feed. A refusal that may pass (a timeout, a lock, a conflict) is thrown, as is any
        // inside a transaction, which the refusal aborted.
        for entity in whole { inMemory += graph.registries[entity].all }
        for (entity, members) in Self.byEntity(inMemory) {
            do {
                try reread(members, because: .stale)
            } catch let error as RelateError
                where ["0A", "22", "42"].contains(error.postgresError?.sqlState?.rawValue.prefix(2) ?? "") && connection.isOpen
                && !connection.isInTransaction
            {
                connection.logger.warning(
                    "change feed: rows of a changed table cannot be read again; its objects are let go of",
                    metadata: ["relate.entity": "\(model.entities[entity].name)", "relate.error": "\(error)"])
                var ignored: [DatabaseObject] = []
                for member in members where !member.isDeleted { graph.forget(member, applyingDeleteRules: false, settingDefaults: &ignored) }
            }
        }
        // Rows not in memory that loaded sets may now hold: read and attached.
        for (entity, keys) in arrived.sorted(by: { $0.key < $1.key }) where mayJoinLoadedSets(entity) {
            for object in try graph.materialize(entity: entity, result: try rows(of: entity, keys: keys), rowsAreDistinct: false) {
                graph.didChange(object, from: nil)
            }
        }
        // Helper rows, and graph.tables read whole: their loaded sets are loaded again.
        try reloadSets(touching: Set(notices.map(\.entity)), whole: whole)
        settleLinks()

        return named.compactMap { entity, kind, key, object in
            var changed: [String] = []
            if let object, let old = before[ObjectIdentifier(object)], !object.isDeleted {
                changed = changedKeys(of: object, from: old)
                // Memory already had it (an insert or update this context made itself, which
                // logical decoding hands back): nothing to tell.
                if changed.isEmpty && (kind == .update || known.contains(ObjectIdentifier(object))) { return nil }
                if kind == .insert { changed = [] }
            }
            return AppliedChange(
                change: Change(entity: model.entities[entity].name, kind: kind, primaryKey: key.map(\.value), changedKeys: changed),
                object: object)
        }
    }

    /// Whether rows of `entity` can be members of a loaded set through their foreign key
    /// (a one-to-many, or a one-to-one whose key they hold).
    private func mayJoinLoadedSets(_ entity: Int) -> Bool {
        graph.tables[entity].foreignKeys.contains { relationship, _ in
            graph.loadedRelationships.contains(graph.inverse(of: entity, relationship))
        }
    }

    /// Loads again the loaded sets that go through a helper among `touched`, and every
    /// loaded set whose members are of an entity in `whole`.
    private func reloadSets(touching touched: Set<Int>, whole: Set<Int>) throws {
        for address in graph.loadedRelationships.sorted(by: { ($0.entity, $0.relationship) < ($1.entity, $1.relationship) }) {
            let owner = layout.entities[address.entity]
            guard owner.isToMany[address.relationship] else { continue }
            let helper = owner.helpers[address.relationship]
            let throughTouchedHelper = helper.map { touched.contains($0) } ?? false
            guard throughTouchedHelper || whole.contains(owner.targets[address.relationship]) else { continue }
            let owners = graph.registries[address.entity].all.filter { !$0.isDeleted && $0.sets[address.relationship] != nil }
            if !owners.isEmpty { try load(relationship: address.relationship, for: owners) }
        }
    }
}
