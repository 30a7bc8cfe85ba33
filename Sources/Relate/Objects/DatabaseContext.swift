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
    /// The objects in memory: the one place they change (see ``ObjectGraph``).
    let graph: ObjectGraph
    /// Names the cursors of batched fetches apart.
    var cursorCount = 0
    /// Where other clients' changes come from, once tracking started (see `processChanges()`).
    var changeFeed: (any ChangeFeed)?
    /// Set when a tracked table's definition changed: every later `processChanges()` throws it.
    var schemaChange: RelateError?
    /// The feed reported a gap that memory has not caught up with yet (reading everything
    /// again failed: the server went away meanwhile); the next `processChanges()` does it.
    var gapPending = false
    /// Handlers of ``observe(_:_:)``, by object, each with the object held weakly.
    var observers: [ObjectIdentifier: (Weak<DatabaseObject>, (Change) -> Void)] = [:]
    /// The text of each `UPDATE` by primary key sent so far, by entity and columns set (see
    /// ``updateStatement(_:setting:to:key:expecting:)``).
    var updateTexts: [UpdateShape: String] = [:]
    /// The writes a context that does not autocommit holds until ``save()``, as the undo
    /// stack keeps them.
    let pending = PendingChanges()
    /// Whether each write goes to the database at once (`true`, the default: BaseTen's
    /// write-through), or changes memory only until ``save()`` (BaseTen's manual commit,
    /// Core Data's editing).
    ///
    /// ```swift
    /// context.autocommits = false
    /// try ada.setValue("King", forKey: "surname")     // memory only; Observation fires
    /// try context.save()                               // one transaction
    /// ```
    ///
    /// Set to `false`, every write — `setValue`, `update`, `insert`, `delete`, a set's
    /// `insert`, `remove` and replace, generated setters — changes the objects, both sides
    /// of every relationship and the delete rules' dependants in memory, and sends nothing.
    /// Reads answer as if the changes were saved. ``save()`` sends them, ``rollback()``
    /// forgets them, ``undo()`` and ``redo()`` step through them. Set it back to `true`
    /// only once nothing is pending: a write-through write while changes are pending
    /// throws.
    public var autocommits = true
    /// Whether a context that does not autocommit marks the rows it holds pending changes
    /// for, so that other contexts see ``DatabaseObject/isBeingEdited`` (`false` by default).
    ///
    /// ```swift
    /// context.autocommits = false
    /// context.marksEdits = true
    /// try ada.setValue("King", forKey: "surname")   // elsewhere: ada.isBeingEdited == true
    /// try context.save()                             // … and false again
    /// ```
    ///
    /// A mark is a session-level advisory lock (`pg_try_advisory_lock`) on the context's
    /// connection, so it goes with `save()`, `rollback()`, or the connection's end — a
    /// crashed program leaves no row marked — and a `NOTIFY relate_edits` tells other
    /// contexts to look (see ``refreshEditMarks()``). Taking marks costs one round trip
    /// per write that touches rows not marked yet. Needs a direct connection (not PgBouncer
    /// in transaction mode).
    public var marksEdits = false
    /// The undo stack this context tells of each undo step of its pending writes, besides
    /// its own (``undo()``, ``redo()``): a user interface's (see ``UndoRegistrar``; on
    /// Darwin, `undoManager` sets it to Foundation's `UndoManager`). `nil` by default.
    public var undoRegistrar: (any UndoRegistrar)?
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
    ///
    /// - Parameters:
    ///   - connection: An open connection; the context uses it from now on.
    ///   - configuration: The schemas, the many-to-many rule and the overrides (its timeouts
    ///     and pool size do not apply to a connection handed over).
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
    ///
    /// - Parameters:
    ///   - url: A `postgresql://` URL or a conninfo string.
    ///   - manyToMany: The many-to-many rule; ``ManyToManyRule/keyed`` by default.
    ///   - overrides: Corrections to the catalog; none by default.
    ///   - schemas: The schemas whose tables become entities; `nil` for the `search_path`.
    ///   - logger: Where Relate logs.
    /// - Throws: ``RelateError`` when the server cannot be reached, the catalog cannot be read,
    ///   or an override does not fit the schema.
    public convenience init(
        url: String, manyToMany: ManyToManyRule = .keyed, overrides: [Override] = [], schemas: [String]? = nil,
        logger: Logger = Logger(label: "relate")
    ) throws {
        try self.init(
            url: url, configuration: Configuration(schemas: schemas, manyToMany: manyToMany, overrides: overrides, logger: logger))
    }

    /// ``init(connection:configuration:)`` with the options most often given.
    ///
    /// - Parameters:
    ///   - connection: An open connection; the context uses it from now on.
    ///   - manyToMany: The many-to-many rule; ``ManyToManyRule/keyed`` by default.
    ///   - overrides: Corrections to the catalog; none by default.
    ///   - schemas: The schemas whose tables become entities; `nil` for the `search_path`.
    /// - Throws: ``RelateError`` when the catalog cannot be read or an override does not fit
    ///   the schema.
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
    ///
    /// - Parameters:
    ///   - connection: An open connection to the database the model was read from.
    ///   - model: The model, as ``Database/model`` or another context's ``model`` holds it.
    /// - Throws: ``RelateError`` when a name of the model cannot be quoted on this connection.
    public convenience init(connection: Connection, model: Model) throws {
        let layout = try Self.wrappingErrors { try ModelLayout(model: model, quote: connection.quoteIdentifier) }
        self.init(connection: connection, layout: layout)
    }

    /// A context for a layout already made (shared by the contexts of one model).
    init(connection: Connection, layout: ModelLayout) {
        self.connection = connection
        self.layout = layout
        graph = ObjectGraph(layout: layout)
        for table in graph.tables { table.context = self }
    }

    // MARK: - Entities

    func entityIndex(named name: String) throws(RelateError) -> Int {
        try layout.entityIndex(named: name)
    }


    /// Forgets every object: the next fetch reads fresh ones.
    ///
    /// The objects nothing else refers to (no variable, array, set, weak or unowned
    /// reference holds them) are kept, emptied, for the next fetch of their entity to make
    /// its rows' objects, with the memory their values took: at most 131,072 objects and
    /// the room for 1,048,576 values in all. Which instances a fetch answers is not
    /// something a program can see; it saves the allocations (a fetch of 100,000 rows, read
    /// and reset, took about 15 % less time). The values themselves, and the result they
    /// were read from, are let go of at once.
    public func reset() {
        graph.reset()
    }

    /// ``reset()``, keeping no spare objects when `keepingSpares` is false: for a context
    /// about to be let go of.
    func reset(keepingSpares: Bool) {
        graph.reset(keepingSpares: keepingSpares)
    }

    deinit {
        reset(keepingSpares: false)
    }

    // MARK: - Transactions

    /// Runs `body` in one transaction (a savepoint when nested, or when the connection is
    /// already in a transaction begun by other means). When it throws, the database rolls
    /// back and so do the objects in memory.
    ///
    /// ```swift
    /// try context.transaction {
    ///     try ada.setValue("King", forKey: "surname")
    ///     try ada.objects(forKey: "email").insert(newEmail)
    /// }                    // both, or neither (in the database and in memory)
    /// ```
    ///
    /// - Parameter body: The work of the transaction, on this context.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, once the database and memory have rolled back (a
    ///   `PostgresError` comes out as a ``RelateError`` that holds it); or a ``RelateError``
    ///   when `BEGIN` or `COMMIT` fails.
    @discardableResult
    public func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try transaction(options: TransactionOptions(), body)
    }

    /// ``transaction(_:)``, opened as `options` say when it is the outermost (a unit of
    /// work's `BEGIN READ ONLY` and settings, what it learns).
    func transaction<Result>(options: TransactionOptions, _ body: () throws -> Result) throws -> Result {
        graph.beginTransaction()
        do {
            let result = try inDatabaseTransaction(options, body)
            graph.commitTransaction()
            return result
        } catch {
            let (registered, learnt) = graph.rollBackTransaction()
            rereadAfterRollback(registered: registered, learnt: learnt)
            graph.stillFirstSeenInEnclosingTransaction(registered, learnt)
            throw Self.relateError(error)
        }
    }

    /// Reads again what a rolled-back transaction leaves memory unsure of. The objects it
    /// first registered: the database may no longer hold their rows (an insert of the
    /// transaction) or hold them otherwise; an object whose row is gone is marked deleted.
    /// What memory learnt from the database there (see ``AfterRollback``), which the undo
    /// put back as memory believed it before: the corrected objects with their loaded sets,
    /// and the owners of sets first loaded there (which stay the sets handed out, refilled
    /// in place). When they cannot be read (the connection is lost), an object is marked
    /// unusable rather than trusted, and a set first loaded there is let go of, to be loaded
    /// again when next asked for: never two live objects for one row, never one that may be wrong.
    func rereadAfterRollback(registered: [DatabaseObject], learnt: [AfterRollback]) {
        let live = registered.filter { !$0.isDeleted }
        var unusable: [DatabaseObject] = []
        do {
            try reread(live, because: .stale)
        } catch {
            unusable += live
        }
        var seen = Set<ObjectIdentifier>()
        let relearnt = learnt.map(\.object).filter { seen.insert(ObjectIdentifier($0)).inserted && !$0.isDeleted }
        do {
            if !relearnt.isEmpty { try reread(relearnt, because: .rolledBack) }
        } catch {
            for entry in learnt {
                switch entry {
                case .corrected(let object): unusable.append(object)
                case .loadedSet(let owner, let relationship): graph.letGo(relationship: relationship, of: owner)
                }
            }
        }
        var ignored: [DatabaseObject] = []
        for object in unusable where !object.isDeleted {
            graph.forget(object, applyingDeleteRules: false, settingDefaults: &ignored)
        }
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
