import Logging
import RelatePostgres

/// A connection, its model, and one ``DatabaseObject`` per row.
///
/// ```swift
/// let context = try DatabaseContext(url: "postgresql://me@localhost/app")
/// let ada = try context.object("person", primaryKey: 1)
/// let emails = try ada?.objects(forKey: "email")
/// ```
///
/// A context owns one libpq connection and is not `Sendable`: use it from one task.
/// Every write goes to the database at once; objects in memory follow only once the
/// database has accepted it, and a transaction that rolls back rolls them back too.
public final class DatabaseContext {
    /// The context's libpq connection: the escape hatch for SQL the object layer does not
    /// write (a report, a `COPY`, `SET LOCAL` inside a ``transaction(_:)``).
    ///
    /// Objects in memory know nothing of what is written through it. After such a write,
    /// tell the context: ``refreshAll()`` reads every object and loaded set again,
    /// ``refresh(_:)`` one object, ``reset()`` forgets them all so the next fetch reads
    /// fresh ones. A transaction begun on it directly is one the context joins (its
    /// ``transaction(_:)`` then uses savepoints).
    public let connection: Connection
    /// The model and its SQL pieces, shared with every context made from the same model.
    let layout: ModelLayout
    /// Each entity as this context sees it, by index in `model.entities`.
    let tables: [EntityTable]
    /// The identity map: one object per row, per entity index.
    let registries: [ObjectRegistry]
    /// The relationships `load` ever stored a set or a to-one answer for: only those have
    /// anything in memory for `didChange` to keep in step.
    var loadedRelationships = Set<RelationshipAddress>()
    /// Every object's box of loaded relationships made since the last `reset()`, which
    /// empties them to break the cycles they close (also for objects the identity map no
    /// longer holds: forgotten, without a key, fetched before a reset).
    var loadedBoxes: [LoadedRelationships] = []
    /// The loaded many-to-many sets each object is a member of, so that a deleted object
    /// leaves them without a scan of every registered object. Built when a delete first
    /// needs it, then kept up to date by the sets; dropped on `reset()`.
    var manyToManyMemberships: [ObjectIdentifier: [RelationshipSet]]?
    /// Counts of unloaded to-many relationships are kept with the generation they were
    /// read in; every write of this context (and every rollback, and every row read again
    /// whose foreign key moved) starts a new one, so that no count outlives a change.
    private(set) var membershipGeneration = 0
    /// Whether a count was kept in the current generation (else a new one is not needed).
    var hasCachedCounts = false
    /// Objects first registered in each batch of the batched fetches under way, innermost
    /// last: after each batch those nobody else holds are let go (see `fetch(_:batchSize:_:)`).
    @exclusivity(unchecked) var registeredInBatch: [[DatabaseObject]] = []
    /// Names the cursors of batched fetches apart.
    var cursorCount = 0
    /// Where other clients' changes come from, once tracking started (see `processChanges()`).
    var changeFeed: (any ChangeFeed)?
    /// Set when a tracked table's definition changed: every later `processChanges()` throws it.
    var schemaChange: RelateError?
    /// Handlers of ``observe(_:_:)``, by object, each with the object held weakly.
    var observers: [ObjectIdentifier: (Weak<DatabaseObject>, (Change) -> Void)] = [:]
    /// Memory changes to undo if the enclosing transactions roll back, innermost last.
    /// Read for every object a fetch makes, never in overlapping accesses: unchecked.
    @exclusivity(unchecked) private var undoLog: [[() -> Void]] = []
    /// Objects first registered inside each open transaction, innermost last: after a
    /// roll-back their rows are read again, since the transaction may have been what made
    /// them (or made them as they are).
    @exclusivity(unchecked) var registeredInTransaction: [[DatabaseObject]] = []
    /// What memory learnt from the database inside each open transaction, innermost last,
    /// that undoing the transaction's memory changes would unlearn: see ``AfterRollback``.
    private var afterRollback: [[AfterRollback]] = []

    /// The model: entities, attributes, relationships and the rules that made them.
    public var model: Model { layout.model }

    /// Opens a connection (URL or conninfo; PG* environment honoured), reads the catalog of
    /// the configuration's schemas (default: the search path) and builds the model.
    ///
    /// ```swift
    /// let context = try DatabaseContext(url: "postgresql://me@localhost/app", configuration: Configuration(schemas: ["app"]))
    /// ```
    ///
    /// - Parameters:
    ///   - url: a `postgresql://` URL or a conninfo string; what it leaves out comes from
    ///     the PG* environment variables, `~/.pgpass` and the service file.
    ///   - configuration: the schemas, the many-to-many rule, overrides, timeouts and
    ///     logger (see ``Configuration``; `maxConnections` is the pool's, not a context's).
    /// - Throws: ``RelateError`` when the server cannot be reached, the catalog cannot be
    ///   read, or an override does not fit the schema.
    public convenience init(url: String, configuration: Configuration) throws {
        let connection = try Self.wrappingErrors {
            let connection = try Connection(conninfo: url, defaults: configuration.connectionDefaults, logger: configuration.logger)
            try configuration.setUp(connection)
            return connection
        }
        try self.init(connection: connection, configuration: configuration)
    }

    /// Reads the catalog of the configuration's schemas over `connection` (which is used
    /// as it is: no timeout is set on it) and builds the model.
    ///
    /// - Throws: ``RelateError`` when the catalog cannot be read or an override does not
    ///   fit the schema.
    public convenience init(connection: Connection, configuration: Configuration) throws {
        let catalog = try Self.wrappingErrors { try Catalog.introspect(connection, schemas: configuration.schemas) }
        try self.init(connection: connection, model: try Model(catalog: catalog, options: configuration.modelOptions))
    }

    /// ``init(url:configuration:)`` with the options most often given; the others at their
    /// defaults (see ``Configuration``).
    ///
    /// ```swift
    /// let loose = try DatabaseContext(url: "postgresql://me@localhost/app", manyToMany: .anyTwoForeignKeys)
    /// ```
    public convenience init(
        url: String, manyToMany: ManyToManyRule = .keyed, overrides: [Override] = [], schemas: [String]? = nil,
        logger: Logger = Logger(label: "relate")
    ) throws {
        try self.init(
            url: url, configuration: Configuration(schemas: schemas, manyToMany: manyToMany, overrides: overrides, logger: logger))
    }

    /// ``init(connection:configuration:)`` with the options most often given.
    public convenience init(
        connection: Connection, manyToMany: ManyToManyRule = .keyed, overrides: [Override] = [], schemas: [String]? = nil
    ) throws {
        try self.init(
            connection: connection, configuration: Configuration(schemas: schemas, manyToMany: manyToMany, overrides: overrides))
    }

    /// A context over `connection` for a model already built: no catalog query.
    ///
    /// ```swift
    /// let context = try DatabaseContext(connection: connection, model: database.model)
    /// ```
    public convenience init(connection: Connection, model: Model) throws {
        let layout = try Self.wrappingErrors { try ModelLayout(model: model, quote: connection.quoteIdentifier) }
        self.init(connection: connection, layout: layout)
    }

    /// A context for a layout already made (shared by the contexts of one model).
    init(connection: Connection, layout: ModelLayout) {
        self.connection = connection
        self.layout = layout
        tables = layout.entities.map(EntityTable.init)
        registries = tables.map(ObjectRegistry.init)
        for table in tables { table.context = self }
    }

    // MARK: - Entities

    func entityIndex(named name: String) throws(RelateError) -> Int {
        try layout.entityIndex(named: name)
    }

    /// Where relationship `index` of `entity` leads: the target entity, the target's
    /// columns it joins on (as attribute indexes), its inverse.
    func target(of entity: Int, _ index: Int) -> Int { layout.entities[entity].targets[index] }
    func targetColumns(of entity: Int, _ index: Int) -> [Int] { layout.entities[entity].targetColumns[index] }
    func inverse(of entity: Int, _ index: Int) -> RelationshipAddress { layout.entities[entity].inverses[index] }

    // MARK: - Identity map

    /// The objects for the rows of `result`, each as ``materialize(entity:row:)``
    /// makes it. `rowsAreDistinct`: the result selects from the entity's table alone, so
    /// it holds each primary key once (a join through a helper table may repeat a row).
    /// `isBatch`: the rows are a batch of a batched fetch, whose objects that stay are
    /// noted as registered in the transaction once the batch is over, not before.
    /// `spare`: storage nothing holds any longer (a walk's previous batch), whose memory
    /// takes the new cells.
    func materialize(
        entity: Int, result: PostgresResult, rows: Range<Int>? = nil, rowsAreDistinct: Bool, isBatch: Bool = false,
        reusing spare: ValueStorage? = nil
    ) throws -> [DatabaseObject] {
        // A cell that cannot be read is a PostgresError naming the column: as every error
        // of the object layer, it comes out as a RelateError.
        try read(entity: entity) {
            try materializeRows(
                entity: entity, result: result, rows: rows ?? 0..<result.count, rowsAreDistinct: rowsAreDistinct, isBatch: isBatch,
                reusing: spare)
        }
    }

    private func materializeRows(
        entity: Int, result: PostgresResult, rows: Range<Int>, rowsAreDistinct: Bool, isBatch: Bool, reusing spare: ValueStorage?
    ) throws -> [DatabaseObject] {
        let readers = StoredValue.Reader.readers(for: result)
        let table = tables[entity]
        let registry = registries[entity]
        // A walk's batches write into the memory of the batch before: freed and allocated
        // again for every batch, the cells made the allocator hand the top of the heap back
        // to the system and take it again, a page fault per 4 KB, a third of a walk's time.
        let storage = spare?.table === table ? spare! : ValueStorage(table: table, capacity: 0)
        storage.cells.removeAll(keepingCapacity: true)
        storage.cells.reserveCapacity(rows.count * table.columns.count)
        guard rowsAreDistinct, registry.isEmpty, !table.primaryKey.isEmpty else {
            return try rows.map { try materializeRow(entity: entity, row: result[$0], readers: readers, storage: storage, isBatch: isBatch) }
        }
        // Taken out while written, so that appending neither copies nor goes through the class.
        var cells = storage.cells
        storage.cells = []
        defer { storage.cells = cells }
        // Nothing registered yet, and each key comes once: no lookups. The cells and the
        // objects are written in place, row after row.
        let width = table.columns.count
        let objects = try [DatabaseObject](unsafeUninitializedCapacity: rows.count) { objects, made in
            for row in rows {
                let base = cells.count
                for column in 0..<width {
                    cells.append(try readers[column].read(result, row: row, column: column))
                }
                (objects.baseAddress! + made).initialize(to: DatabaseObject(storage: storage, base: base))
                made += 1
            }
        }
        registry.registerUnindexed(objects)
        if !registeredInTransaction.isEmpty, !isBatch { registeredInTransaction[registeredInTransaction.count - 1] += objects }
        if !registeredInBatch.isEmpty { registeredInBatch[registeredInBatch.count - 1] += objects }
        return objects
    }

    /// The object for a row read from the database: the registered one, refreshed with the
    /// row's values, or a new one.
    func materialize(entity: Int, row: PostgresRow) throws -> DatabaseObject {
        try read(entity: entity) { try materializeRow(entity: entity, row: row) }
    }

    /// `readers` are the result's (see ``StoredValue/Reader``); a new object's values go to
    /// `storage`, shared by the objects of one result.
    private func materializeRow(
        entity: Int, row: PostgresRow, readers: [StoredValue.Reader]? = nil, storage: ValueStorage? = nil, isBatch: Bool = false
    ) throws -> DatabaseObject {
        let table = tables[entity]
        let storage = storage ?? ValueStorage(table: table, capacity: table.columns.count)
        let base = try Self.read(row, of: table, readers: readers ?? StoredValue.Reader.readers(for: row.result), into: storage)
        let values = ObjectValues(storage: storage, base: base, count: table.columns.count)
        guard let key = table.primaryKey.isEmpty ? nil : ObjectKey(values, at: table.primaryKey) else {
            return DatabaseObject(storage: storage, base: base)
        }
        let registry = registries[entity]
        let (object, isNew) = registry.object(forKey: key) { DatabaseObject(storage: storage, base: base) }
        if isNew {
            if !registeredInTransaction.isEmpty, !isBatch { registeredInTransaction[registeredInTransaction.count - 1].append(object) }
            if !registeredInBatch.isEmpty { registeredInBatch[registeredInBatch.count - 1].append(object) }
        } else {
            let old = Array(object.values)
            object.refresh(values)
            didChange(object, from: old)
            // The row's cells served only to refresh the registered object: let go of them.
            for offset in base..<base + table.columns.count { storage.cells[offset] = .null }
        }
        return object
    }

    /// The row's values as an object of `entity` stores them, without making an object.
    func storedValues(of row: PostgresRow, entity: Int) throws -> [StoredValue] {
        let readers = StoredValue.Reader.readers(for: row.result)
        return try read(entity: entity) { try (0..<tables[entity].columns.count).map { try readers[$0].read(row, at: $0) } }
    }

    /// Appends the row's first `table.columns.count` cells to `storage`; answers where they start.
    @inline(__always)
    private static func read(
        _ row: PostgresRow, of table: EntityTable, readers: [StoredValue.Reader], into storage: ValueStorage
    ) throws -> Int {
        let base = storage.cells.count
        for column in 0..<table.columns.count {
            storage.cells.append(try readers[column].read(row, at: column))
        }
        return base
    }

    func unregister(_ object: DatabaseObject) {
        guard let key = object.objectKey else { return }
        let registry = registries[object.entityIndex]
        registry.remove(object, key: key)
        recordUndo { registry.register(object, key: key) }
    }

    /// The registered object of `entity` whose attributes at `indexes` hold `values`,
    /// without a query.
    func registered(entity: Int, indexes: [Int], values: [StoredValue]) -> DatabaseObject? {
        guard let wanted = ObjectKey(values) else { return nil }
        if indexes == tables[entity].primaryKey {
            return registries[entity][wanted]
        }
        return registries[entity].objects(withValues: wanted, at: indexes).first
    }

    /// Registered objects of `entity` whose attributes at `indexes` hold `values`.
    func registeredObjects(entity: Int, indexes: [Int], values: [StoredValue]) -> [DatabaseObject] {
        guard let wanted = ObjectKey(values) else { return [] }
        return registries[entity].objects(withValues: wanted, at: indexes)
    }

    /// Forgets every object: the next fetch reads fresh ones.
    public func reset() {
        // Loaded relationships tie objects to each other (a person's emails, each email's
        // person): drop them, or the objects would keep each other alive.
        for box in loadedBoxes { _ = box.takeAll() }
        loadedBoxes = []
        manyToManyMemberships = nil
        for registry in registries { registry.removeAll() }
        // Forgotten: a batch under way must not register its objects again.
        registeredInBatch = registeredInBatch.map { _ in [] }
    }

    deinit {
        reset()
    }

    // MARK: - Transactions

    /// Runs `body` in one transaction (a savepoint when nested, or when the connection is
    /// already in a transaction begun by other means). When it throws, the database rolls
    /// back and so do the objects in memory.
    @discardableResult
    public func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        undoLog.append([])
        registeredInTransaction.append([])
        afterRollback.append([])
        do {
            let result = try inDatabaseTransaction(body)
            let log = undoLog.removeLast()
            let registered = registeredInTransaction.removeLast()
            let learnt = afterRollback.removeLast()
            if !undoLog.isEmpty {
                undoLog[undoLog.count - 1] += log
                registeredInTransaction[registeredInTransaction.count - 1] += registered
                afterRollback[afterRollback.count - 1] += learnt
            }
            return result
        } catch {
            membershipsMayChange()
            for undo in undoLog.removeLast().reversed() { undo() }
            let registered = registeredInTransaction.removeLast()
            let learnt = afterRollback.removeLast()
            rereadAfterRollback(registered)
            readAgainAfterRollback(learnt)
            // Still first seen in the enclosing transaction, should it roll back too.
            if !registeredInTransaction.isEmpty {
                registeredInTransaction[registeredInTransaction.count - 1] += registered
                afterRollback[afterRollback.count - 1] += learnt
            }
            throw Self.relateError(error)
        }
    }

    /// Objects first registered in a transaction that rolled back: the database may no
    /// longer hold their rows (an insert of the transaction) or hold them otherwise, so they
    /// are read again, one query per entity; an object whose row is gone is marked deleted.
    /// When they cannot be read (the connection is lost), each is marked unusable rather
    /// than trusted: never two live objects for one row, never one that may be wrong.
    private func rereadAfterRollback(_ objects: [DatabaseObject]) {
        let live = objects.filter { !$0.isDeleted }
        guard !live.isEmpty else { return }
        do {
            try reread(live)
        } catch {
            var ignored: [DatabaseObject] = []
            for object in live where !object.isDeleted {
                forget(object, applyingDeleteRules: false, settingDefaults: &ignored)
            }
        }
    }

    /// Remembers, when a transaction is open, what memory learnt from the database there
    /// and must learn again should the transaction roll back.
    func learntInTransaction(_ what: AfterRollback) {
        guard !afterRollback.isEmpty else { return }
        afterRollback[afterRollback.count - 1].append(what)
    }

    /// Reads again what a rolled-back transaction's undo put back as memory believed it
    /// before: the corrected objects and every loaded relationship of theirs, and the owners
    /// of sets first loaded there (which stay the sets handed out, refilled in place). When
    /// that cannot be read (the connection is lost), a corrected object is marked unusable
    /// and a set first loaded there is let go of, to be loaded again when next asked for.
    private func readAgainAfterRollback(_ learnt: [AfterRollback]) {
        guard !learnt.isEmpty else { return }
        var seen = Set<ObjectIdentifier>()
        var objects: [DatabaseObject] = []
        for entry in learnt where seen.insert(ObjectIdentifier(entry.object)).inserted {
            objects.append(entry.object)
        }
        do {
            // A row another client deleted took its dependants along by the database's rules.
            try refresh(objects.filter { !$0.isDeleted }, applyingDeleteRules: true)
        } catch {
            var ignored: [DatabaseObject] = []
            for entry in learnt {
                switch entry {
                case .corrected(let object):
                    if !object.isDeleted { forget(object, applyingDeleteRules: false, settingDefaults: &ignored) }
                case .loadedSet(let owner, let relationship):
                    owner.relations.sets[relationship] = nil
                }
            }
        }
    }

    /// Forgets the counts kept so far (see ``membershipGeneration``).
    func membershipsMayChange() {
        guard hasCachedCounts else { return }
        membershipGeneration += 1
        hasCachedCounts = false
    }

    /// Whether a transaction is open, so that memory changes must be undoable.
    var isRecordingUndo: Bool { !undoLog.isEmpty }

    /// Remembers how to undo a memory change, when a transaction is open.
    func recordUndo(_ undo: @escaping () -> Void) {
        guard !undoLog.isEmpty else { return }
        undoLog[undoLog.count - 1].append(undo)
    }

    func check(_ object: DatabaseObject) throws(RelateError) {
        guard object.table.context === self else {
            throw RelateError(
                kind: .invalidObject,
                message: "this \(object.entity.name) object belongs to another DatabaseContext; fetch it through this one",
                entity: object.entity.name)
        }
        guard !object.isDeleted else { throw object.deletedError() }
    }
}

@available(*, unavailable, message: "a context owns a libpq connection, which is not thread-safe")
extension DatabaseContext: Sendable {}

/// What memory learnt from the database inside a transaction, read again if it rolls back.
enum AfterRollback {
    /// A conflict corrected the object (read again, marked deleted, moved between sets).
    case corrected(DatabaseObject)
    /// The owner's set for the relationship was first loaded here.
    case loadedSet(owner: DatabaseObject, relationship: Int)

    var object: DatabaseObject {
        switch self {
        case .corrected(let object), .loadedSet(let object, _): object
        }
    }
}
