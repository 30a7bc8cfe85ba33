import Foundation
import Logging
import RelatePostgres
import Synchronization
import Tracing

/// A database for Swift concurrency: the model read once, and a pool of connections that
/// units of work borrow. `Sendable`: share one `Database` across tasks and requests.
///
/// ```swift
/// let database = try Database(url: "postgresql://me@localhost/app", maxConnections: 4)
/// let name = try await database.read { context in
///     try context.object("person", primaryKey: 1)?.value(forKey: "firstname", as: String.self)
/// }
/// try await database.write { context in                 // one transaction
///     try context.object("person", primaryKey: 1)?.setValue("King", forKey: "surname")
/// }
/// ```
///
/// Each unit of work gets a fresh ``DatabaseContext`` (no catalog query: the contexts
/// share the model's SQL pieces) on a pooled connection, and runs on a thread the pool
/// owns: libpq's blocking calls never hold a thread of Swift's cooperative pool. Objects
/// stay inside their unit; results leave it as values (``DatabaseObject/decode(_:keyDecodingStrategy:)``,
/// ``DatabaseObject/snapshot()``).
public final class Database: Sendable {
    let pool: ConnectionPool
    /// The replicas `read` units run on; `nil` without any.
    let replicaSet: ReplicaSet?
    private let options: ModelOptions
    private let schemas: [String]?
    let layout: Locked<ModelLayout>
    let conninfo: String
    /// The libpq defaults (the password, the connect timeout) and the session's set-up
    /// (its query log level, statement timeout) of every connection Relate opens: the
    /// pool's, and a change feed's own (``Configuration/connectionDefaults``, ``Configuration/setUp``).
    let connectionDefaults: [String: String]
    let sessionSetUp: @Sendable (Connection) throws -> Void
    let logger: Logger
    /// The live queries observed on this database (``observe(_:)``), sharing one feed.
    let observation = ObservationHub()
    /// The units of work under way, which a shutdown drains (``run()``).
    let units = UnitsInFlight()
    /// The change feeds running, which a shutdown stops.
    let changeFeeds = ChangeFeedRegistry()
    /// The database's background work (pool housekeeping and timers, the live queries'
    /// feed, the change feeds' ends): children of ``run()``'s task group while it runs.
    let background: BackgroundTasks
    /// How long a graceful shutdown waits for running units (``Configuration/shutdownGracePeriod``).
    let shutdownGracePeriod: Duration
    /// Where units and statements are traced; `nil` when no tracer is set (nothing traced).
    let tracer: (any Tracer)?

    /// Opens a connection (URL or conninfo; PG* environment honoured), reads the catalog of
    /// the configuration's schemas (default: the search path) and builds the model; that
    /// connection joins the pool. Blocks while it does (call it at start-up).
    ///
    /// - Parameters:
    ///   - url: a `postgresql://` URL or a conninfo string; what it leaves out comes from
    ///     the PG* environment variables, `~/.pgpass` and the service file.
    ///   - configuration: the schemas, the many-to-many rule, overrides, the pool's bound,
    ///     timeouts and logger (see ``Configuration``).
    /// - Throws: ``RelateError`` when the server cannot be reached, the catalog cannot be
    ///   read, an override does not fit the schema, or `maxConnections` is below 1.
    public init(url: String, configuration: Configuration) throws {
        guard configuration.maxConnections > 0 else {
            throw RelateError(
                kind: .invalidRequest, message: "maxConnections must be at least 1, not \(configuration.maxConnections)",
                key: "maxConnections")
        }
        let setUp = configuration.setUp
        let defaults = configuration.connectionDefaults
        let logger = configuration.logger
        let background = BackgroundTasks()
        self.background = background
        options = configuration.modelOptions
        conninfo = url
        connectionDefaults = defaults
        sessionSetUp = setUp
        self.logger = logger
        schemas = configuration.schemas
        shutdownGracePeriod = configuration.shutdownGracePeriod
        let anyTracer = configuration.tracer ?? InstrumentationSystem.tracer
        let tracer = anyTracer is NoOpTracer ? nil : anyTracer
        self.tracer = tracer
        // Replica pools run on the primary pool's threads, one more per replica connection.
        let replicaURLs = configuration.replicas
        let primaryOptions = configuration.poolOptions(pool: "primary")
        let primarySetUp = Self.setUp(setUp, metrics: primaryOptions.metrics, tracer: tracer)
        let pool = ConnectionPool(
            conninfo: url, defaults: defaults, maxConnections: configuration.maxConnections, logger: logger, background: background,
            extraThreads: configuration.maxConnections * replicaURLs.count, options: primaryOptions, setUp: primarySetUp)
        self.pool = pool
        replicaSet = replicaURLs.isEmpty ? nil : ReplicaSet(
            replicas: replicaURLs.enumerated().map { index, replicaURL in
                let options = configuration.poolOptions(pool: "replica\(index)")
                return ReplicaSet.Replica(
                    index: index,
                    pool: ConnectionPool(
                        conninfo: replicaURL, defaults: defaults, maxConnections: configuration.maxConnections, logger: logger,
                        background: background, executor: pool.executor, options: options,
                        setUp: Self.setUp(setUp, metrics: options.metrics, tracer: tracer)))
            },
            wait: configuration.replicaWait, retry: configuration.replicaRetry, logger: logger)
        let connection = try DatabaseContext.wrappingErrors { try Connection(conninfo: url, defaults: defaults, logger: logger) }
        let layout = try Self.readLayout(connection, options: configuration.modelOptions, schemas: configuration.schemas)
        self.layout = Locked(layout)
        try DatabaseContext.wrappingErrors {
            try primarySetUp(connection)
            try pool.adopt(connection)
        }
        for replica in replicaSet?.replicas ?? [] { replica.pool.openAhead() }
    }

    /// `setUp`, and the statement timer when there are metrics, and spans when there is a tracer.
    private static func setUp(
        _ setUp: @escaping @Sendable (Connection) throws -> Void, metrics: PoolMetrics?, tracer: (any Tracer)?
    ) -> @Sendable (Connection) throws -> Void {
        if metrics == nil, tracer == nil { return setUp }
        return { connection in
            try setUp(connection)
            if let metrics { connection.statementTimer = { metrics.recordStatement($0) } }
            if let tracer { connection.roundTripObserver = StatementSpans(tracer: tracer, connection: connection) }
        }
    }

    /// ``init(url:configuration:)`` with the options most often given; the others at
    /// their defaults (see ``Configuration``).
    ///
    /// ```swift
    /// let database = try Database(url: "postgresql://me@localhost/app", maxConnections: 8)
    /// ```
    ///
    /// - Parameters:
    ///   - url: A `postgresql://` URL or a conninfo string.
    ///   - manyToMany: The many-to-many rule; ``ManyToManyRule/keyed`` by default.
    ///   - overrides: Corrections to the catalog; none by default.
    ///   - schemas: The schemas whose tables become entities; `nil` for the `search_path`.
    ///   - maxConnections: The most connections the pool keeps open; 4 by default.
    ///   - statementTimeout: How long a statement may run; no limit by default.
    ///   - connectTimeout: How long opening a connection may take; 10 seconds by default.
    ///   - logger: Where Relate logs.
    /// - Throws: ``RelateError`` when the server cannot be reached, the catalog cannot be
    ///   read, an override does not fit the schema, or `maxConnections` is below 1.
    public convenience init(
        url: String, manyToMany: ManyToManyRule = .keyed, overrides: [Override] = [], schemas: [String]? = nil,
        maxConnections: Int = 4, statementTimeout: Duration? = nil, connectTimeout: Duration? = .seconds(10),
        logger: Logger = Logger(label: "relate")
    ) throws {
        try self.init(
            url: url,
            configuration: Configuration(
                schemas: schemas, manyToMany: manyToMany, overrides: overrides, maxConnections: maxConnections,
                connectTimeout: connectTimeout, statementTimeout: statementTimeout, logger: logger))
    }

    deinit {
        replicaSet?.close()
        pool.close()
        background.close()
    }

    /// The model the contexts use.
    public var model: Model { layout.withLock { $0.model } }

    /// Reads the catalog again (after the schema changed) and builds a new model; units of
    /// work that start afterwards use it.
    ///
    /// - Throws: A ``RelateError`` when the catalog cannot be read or an override no longer
    ///   fits the schema; the model in use stays.
    public func reloadModel() async throws {
        let (options, schemas) = (self.options, self.schemas)
        let fresh = try await unit("relate.reloadModel") {
            try await self.withConnection { connection, _ in
                try Self.readLayout(connection, options: options, schemas: schemas)
            }
        }
        layout.withLock { $0 = fresh }
    }

    /// Runs `body` with a fresh context on a pooled connection and returns what it returns.
    /// Cancelling the task cancels the statement running on the server (libpq's cancel
    /// request), and the unit throws `CancellationError`.
    ///
    /// ```swift
    /// let names = try await database.read { context in
    ///     try context.fetch("person", where: Key("surname") == "Hopper").map {
    ///         try $0.value(forKey: "firstname", as: String.self)
    ///     }
    /// }
    /// ```
    ///
    /// With ``Configuration/replicas``, the unit runs on a replica that has replayed the
    /// last ``write(_:)`` unit's commit (of any task of this `Database`), so it sees what
    /// that unit wrote: one already known to be there, else the next in turn, waited on for
    /// at most ``Configuration/replicaWait``; then, or when no replica answers, on the
    /// primary (a replica that kept a read waiting so is not waited on again for
    /// ``Configuration/replicaRetry``). A replica that fails to connect or loses the connection while `body`
    /// runs is left out for ``Configuration/replicaRetry``, and `body` runs again elsewhere:
    /// keep a read's `body` free of effects outside its context.
    ///
    /// - Parameter body: the unit's work, given a fresh context; it may run more than once
    ///   when a replica is lost under it.
    /// - Returns: what `body` returned.
    /// - Throws: what `body` threw, as a ``RelateError``; `CancellationError` when the task
    ///   was cancelled; ``RelateError/Kind-swift.struct/shuttingDown`` during a shutdown
    ///   (``run()``).
    public func read<Result: Sendable>(_ body: @escaping @Sendable (DatabaseContext) throws -> Result) async throws -> Result {
        try await run(UnitOfWork(.read), body)
    }

    /// Runs `unit`: admitted (refused during a shutdown) and traced, then on a replica
    /// when it is a read that may run there, else on the primary, in one transaction when
    /// it is one (``UnitOfWork/isTransaction``). The one path every unit of work takes.
    func run<Result: Sendable>(_ unit: UnitOfWork, _ body: @escaping @Sendable (DatabaseContext) throws -> Result) async throws -> Result {
        try unit.principal?.validate()
        return try await self.unit(unit.spanName) {
            let layout = self.layout.withLock { $0 }
            if unit.access == .read, unit.replicas == .allowed, let replicaSet = self.replicaSet {
                let needed = replicaSet.lastWrite
                var tried: [ReplicaSet.Replica] = []
                replicas: while let choice = replicaSet.choose(for: needed, excluding: tried) {
                    tried.append(choice.replica)
                    do {
                        let after = choice.mayWait ? needed : nil
                        switch try await self.read(unit, on: choice.replica, of: replicaSet, after: after, layout: layout, body) {
                        case .done(let result): return result
                        case .notCaughtUp:
                            // Waited enough: the primary.
                            replicaSet.markLagging(choice.replica)
                            break replicas
                        }
                    } catch where ReplicaSet.isUnavailable(error) {
                        replicaSet.markDown(choice.replica, because: error)
                    }
                }
            }
            let (pool, replicaSet) = (self.pool, self.replicaSet)
            return try await self.withConnection { connection, cancel in
                try Self.perform(unit, on: connection, cancel: cancel, layout: layout, primary: pool, replicaSet: replicaSet, body)
            }
        }
    }

    /// Runs `body` on `connection` as `unit` says, with a fresh context: in one transaction
    /// when the unit is one, opened by ``Statements/opening(of:learnsTransactionID:learnsCommitPosition:)``
    /// (a principal's role and settings in the same pipeline, so they end with it).
    /// `primary` and `replicaSet` are given for a unit on the primary: a write whose
    /// `COMMIT` lost its reply asks `primary` what became of it, and tells `replicaSet`
    /// where it committed.
    private static func perform<Result: Sendable>(
        _ unit: UnitOfWork, on connection: Connection, cancel cancelRequest: CancelRequest, layout: ModelLayout,
        primary pool: ConnectionPool?, replicaSet: ReplicaSet?, _ body: @escaping @Sendable (DatabaseContext) throws -> Result
    ) throws -> Result {
        let context = DatabaseContext(connection: connection, layout: layout)
        defer {
            // Marks are the session's advisory locks: they would outlive the unit on a pooled connection.
            context.releaseEditMarks()
            context.reset(keepingSpares: false)
        }
        guard unit.isTransaction else {
            // A write without a transaction committed statement by statement, whether the
            // body then returned or threw: later reads on replicas wait for all of it.
            defer { if unit.access == .write, let replicaSet { Self.noteLogEnd(on: connection, in: replicaSet, orAsking: pool) } }
            return try body(context)
        }
        let writes = unit.access == .write
        let learnsPosition = writes && replicaSet != nil
        let options = Statements.opening(of: unit, learnsTransactionID: writes, learnsCommitPosition: learnsPosition)
        let backend = connection.backendProcessID
        var finished: Result?
        do {
            let result = try context.transaction(options: options) {
                let result = try body(context)
                // Cancelled while the body ran without a statement to fail: no commit.
                if cancelRequest.wasSent { throw CancellationError() }
                finished = result
                return result
            }
            if learnsPosition, let replicaSet { Self.noteCommit(on: connection, in: replicaSet, orAsking: pool) }
            return result
        } catch {
            guard writes, let pool, let result = finished, let transaction = connection.unconfirmedCommit else { throw error }
            switch Self.outcome(of: transaction, lostBy: backend, asking: pool, learnsPosition: replicaSet) {
            case .committed: return result
            case .aborted: throw error
            case .unknown(let reason):
                throw RelateError(
                    kind: .commitOutcomeUnknown,
                    message: "the connection was lost during COMMIT of transaction \(transaction), and whether it committed is unknown "
                        + "(\(reason)): check the database before doing the work again",
                    postgresError: (error as? RelateError)?.postgresError ?? (error as? PostgresError))
            }
        }
    }

    /// What a read on a replica came to.
    private enum ReplicaRead<Result: Sendable>: Sendable {
        case done(Result)
        /// The replica had not replayed the last write within ``Configuration/replicaWait``.
        case notCaughtUp
    }

    /// Runs a read on `replica`, once it has replayed `position` (when given; polled, at
    /// most the set's `wait`).
    private func read<Result: Sendable>(
        _ unit: UnitOfWork, on replica: ReplicaSet.Replica, of replicaSet: ReplicaSet, after position: LSN?, layout: ModelLayout,
        _ body: @escaping @Sendable (DatabaseContext) throws -> Result
    ) async throws -> ReplicaRead<Result> {
        let wait = replicaSet.wait
        return try await withConnection(pool: replica.pool) { connection, cancel in
            if let position {
                let deadline = ContinuousClock.now + wait
                var pause = Duration.microseconds(200)
                while true {
                    guard let replayed = try connection.replayedPosition() else {
                        // Not in recovery: promoted, no replica any more.
                        throw RelateError(
                            kind: .invalidRequest, message: "replica \(replica.index) is not in recovery (promoted?)",
                            postgresError: PostgresError(kind: .connectionFailed, message: "not a replica"))
                    }
                    replica.noteReplayed(replayed)
                    if replayed >= position { break }
                    if cancel.wasSent { throw CancellationError() }
                    if ContinuousClock.now + pause > deadline { return .notCaughtUp }
                    Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18)
                    pause = min(pause * 2, .milliseconds(5))
                }
            }
            return .done(try Self.perform(unit, on: connection, cancel: cancel, layout: layout, primary: nil, replicaSet: nil, body))
        }
    }

    /// As ``read(_:)``, in one transaction: committed when `body` returns, rolled back when it
    /// throws or the task is cancelled (objects in memory roll back with it).
    ///
    /// The unit learns its transaction's id with its first write, in the same pipeline (no
    /// round trip more). When the connection is lost during `COMMIT`, a new connection asks
    /// the server `txid_status`: committed, the unit returns its result; aborted, it throws
    /// `connectionClosed` as any lost connection does; when the server cannot be reached or
    /// cannot say, it throws ``RelateError/Kind-swift.struct/commitOutcomeUnknown`` naming
    /// the transaction. A unit that wrote nothing has nothing to lose: `connectionClosed`.
    ///
    /// - Parameter body: The unit of work, given a context of its own, in a transaction.
    /// - Returns: What `body` returns, once the transaction committed.
    /// - Throws: What `body` throws, after the rollback; `CancellationError` when the task is
    ///   cancelled; a ``RelateError`` when the commit fails, or of kind
    ///   ``RelateError/Kind-swift.struct/commitOutcomeUnknown`` when its outcome cannot be known,
    ///   or ``RelateError/Kind-swift.struct/shuttingDown`` during a shutdown (``run()``): refused
    ///   before it began, or cancelled and rolled back when the grace period ended.
    @discardableResult
    public func write<Result: Sendable>(_ body: @escaping @Sendable (DatabaseContext) throws -> Result) async throws -> Result {
        try await run(UnitOfWork(.write), body)
    }

    /// As ``write(_:)``, outside any transaction: each statement the context sends commits
    /// by itself (PostgreSQL's autocommit), as one `UPDATE` sent through postgres-nio's
    /// `PostgresClient` does. A unit whose work is one statement then costs one round trip,
    /// where ``write(_:)`` costs two (its `COMMIT` waits for the body); GRDB names the same
    /// choice `writeWithoutTransaction`.
    ///
    /// ```swift
    /// let author = try await database.writeWithoutTransaction { context in
    ///     try context.update(Author.self, primaryKey: id) { $0.score = score }   // one round trip
    /// }
    /// ```
    ///
    /// A statement, or the pipeline one write call sends (a set's replace: its `DELETE` and
    /// `INSERT`), still commits whole or not at all, and memory follows what the database
    /// did. What is not atomic: a body that writes twice
    /// and then throws, or is cancelled, leaves its first write committed. Wrap such work in
    /// ``DatabaseContext/transaction(_:)``, or use ``write(_:)``. Reads on replicas after the
    /// unit see its writes, as after ``write(_:)``: the unit asks the primary where its log
    /// ends (one round trip more, only with ``Configuration/replicas``; on a new connection
    /// when the unit's own was lost; when the primary cannot be reached at all, a read may
    /// miss them until a later write passes them).
    ///
    /// - Parameter body: The unit of work, given a context of its own, outside a transaction.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (its writes before it stay committed);
    ///   `CancellationError` when the task is cancelled (the statement running is cancelled
    ///   on the server); ``RelateError/Kind-swift.struct/shuttingDown`` during a shutdown.
    @discardableResult
    public func writeWithoutTransaction<Result: Sendable>(
        _ body: @escaping @Sendable (DatabaseContext) throws -> Result
    ) async throws -> Result {
        try await run(.writeWithoutTransaction, body)
    }

    /// Tells the replicas where the commit just made on `connection` ended; when the server
    /// could not say with the commit, asks it (one round trip, a rare case).
    private static func noteCommit(on connection: Connection, in replicaSet: ReplicaSet, orAsking pool: ConnectionPool? = nil) {
        if let position = connection.lastCommitPosition {
            replicaSet.noteCommit(at: position)
        } else {
            noteLogEnd(on: connection, in: replicaSet, orAsking: pool)
        }
    }

    /// Tells the replicas where the server's log ends now (one round trip): at or past the
    /// end of every commit made on `connection` so far. When `connection` cannot say (lost,
    /// or its question cancelled), a new connection of `pool` asks: the end it sees is past
    /// those commits too. When neither can, the replicas are not told, and a read may miss
    /// those writes until a later write's position passes them.
    private static func noteLogEnd(on connection: Connection, in replicaSet: ReplicaSet, orAsking pool: ConnectionPool? = nil) {
        let question = "SELECT pg_current_wal_insert_lsn()::text"
        func logEnd(_ connection: Connection) -> LSN? {
            (try? connection.query(question)[0].decode(String.self, at: 0)).flatMap(LSN.init)
        }
        let position =
            logEnd(connection)
            ?? pool.flatMap { pool in
                guard let other = try? pool.openOutside() else { return nil }
                defer { other.close() }
                return logEnd(other)
            }
        if let position { replicaSet.noteCommit(at: position) }
    }

    /// What became of a transaction whose `COMMIT` reply was lost.
    enum CommitOutcome: Equatable {
        case committed, aborted
        case unknown(String)
    }

    /// Asks a new connection `txid_status(transaction)`. While the lost connection's backend
    /// still holds the transaction open ("in progress": it has not noticed its client is
    /// gone), that backend is ended — it is this unit's own — and the question asked again.
    static func outcome(
        of transaction: Int, lostBy backend: Int, asking pool: ConnectionPool, learnsPosition replicaSet: ReplicaSet? = nil
    ) -> CommitOutcome {
        let connection: Connection
        do {
            connection = try pool.openOutside()
        } catch {
            return .unknown("the server cannot be reached: \((error as? PostgresError)?.message ?? "\(error)")")
        }
        defer { connection.close() }
        do {
            // A busy server may take a while to end the backend: asked again for up to 10 s
            // (the backend told again every second), then the answer is "unknown".
            let deadline = ContinuousClock.now + .seconds(10)
            var attempt = 0
            while ContinuousClock.now < deadline {
                let status = try connection.query("SELECT txid_status($1)", [transaction])[0].decode(String?.self, at: 0)
                switch status {
                case "committed":
                    // Replicas serve later reads only once they have replayed this far.
                    if let replicaSet { noteCommit(on: connection, in: replicaSet) }
                    return .committed
                case "aborted": return .aborted
                case "in progress":
                    if attempt % 50 == 0 {
                        _ = try connection.query("SELECT pg_terminate_backend($1::int4)", [backend])
                    }
                    attempt += 1
                    Thread.sleep(forTimeInterval: 0.02)
                default:
                    return .unknown("the server no longer knows the transaction")
                }
            }
            return .unknown("the transaction is still in progress on the server")
        } catch {
            return .unknown("txid_status failed: \((error as? PostgresError)?.message ?? "\(error)")")
        }
    }

    /// Closes idle connections now and the others when their units end; later units throw.
    /// Ends the background work too: the streams of ``observe(_:)`` and
    /// ``changes(using:)`` finish, and the feeds close their connections.
    ///
    /// Called while ``run()`` runs, it ends `run()` as cancelling it would.
    public func close() {
        replicaSet?.close()
        pool.close()
        background.close()
    }

    /// How many connections the pool holds open now (at most `maxConnections`), on the
    /// primary.
    public var openConnections: Int { pool.openConnections }

    /// How many of the primary's open connections are idle now (none is lent to a unit).
    public var idleConnections: Int { pool.idleConnections }

    /// The threads units of work run on (libpq blocks them; Swift's cooperative threads
    /// never). A unit called from a task that does not prefer them hops there and back;
    /// one that does runs where it is. So work that runs unit after unit (a loop, a
    /// request's handler) saves the hops by preferring them:
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(database.executor) {
    ///     for id in ids { try await database.read { … } }   // no thread switch per unit
    /// }
    /// ```
    ///
    /// Code that runs there between units takes a thread that a unit, or a task leaving
    /// the line, could use: so do the child tasks such a task makes (they inherit the
    /// preference) and any actor without an executor of its own that it calls (the actor
    /// then runs there for every caller). Keep long computations and other blocking calls
    /// out of such a scope, and leave it before `close()`.
    public var executor: any TaskExecutor { pool.executor }

    /// Runs `body` as one unit of work: refused during a shutdown, counted until it ends so
    /// that a shutdown can wait for it, and cancelled by a shutdown whose grace period ended;
    /// with a tracer, one span named `name` around its statements.
    func unit<Result: Sendable>(_ name: String, _ body: () async throws -> Result) async throws -> Result {
        let id = try units.enter()
        defer { units.leave(id) }
        guard let tracer else { return try await UnitsInFlight.$current.withValue(id) { try await body() } }
        let span = tracer.startSpan(name, context: ServiceContext.current ?? .topLevel, ofKind: .internal)
        defer { span.end() }
        span.updateAttributes { $0["db.system.name"] = "postgresql" }
        do {
            return try await ServiceContext.$current.withValue(span.context) {
                try await UnitsInFlight.$current.withValue(id) { try await body() }
            }
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    /// Borrows a connection, runs `work` on a thread of the pool, gives it back. An idle
    /// connection the server closed meanwhile (a restart, a failover) is replaced before
    /// `work` sees it.
    func withConnection<Result: Sendable>(
        pool: ConnectionPool? = nil, _ work: @escaping @Sendable (Connection, CancelRequest) throws -> Result
    ) async throws -> Result {
        let pool = pool ?? self.pool
        // The whole unit runs its task on the pool's threads: checkout, `work` and the
        // release on one thread, with no hop between them.
        return try await withTaskExecutorPreference(pool.executor) {
            // Every connection of the pool may have died at once (the server restarted):
            // each is found so and replaced, then a new one serves.
            for _ in 0..<pool.maxConnections {
                do {
                    return try await withConnection(try await pool.checkout(), of: pool, probing: true, work)
                } catch is StaleConnection {
                    continue
                }
            }
            return try await withConnection(try await pool.checkout(), of: pool, probing: false, work)
        }
    }

    /// Asks the server to cancel what the unit's connection runs. A request that reaches the
    /// server between the unit's check and its statement (a busy machine may put seconds
    /// between them) is ignored: while the unit runs, it is sent again, every 200 ms, then
    /// every second.
    ///
    /// On a thread, not a job of ``background``: sending blocks (libpq connects to the
    /// server), which no task of Swift's cooperative pool may, and the thread ends with the
    /// unit, which a shutdown waits for.
    private static func cancelOnServer(_ cancel: CancelRequest, until unitEnded: UnitEnded) {
        cancel.sendInBackground()
        Thread.detachNewThread {
            var pause = 0.2
            while true {
                Thread.sleep(forTimeInterval: pause)
                if unitEnded.flag.load(ordering: .acquiring) { return }
                try? cancel.send()
                pause = min(1, pause * 1.5)
            }
        }
    }

    /// A pooled connection the server had closed while it was idle; `work` did not run.
    private struct StaleConnection: Error {}

    /// Set when a unit's work is over, so that a cancel request is no longer sent again.
    private final class UnitEnded: Sendable {
        let flag = Atomic<Bool>(false)
    }

    /// Runs `work` with `pooled` on a thread of the pool and gives it back.
    private func withConnection<Result: Sendable>(
        _ pooled: PooledConnection, of pool: ConnectionPool, probing: Bool, _ work: @escaping @Sendable (Connection, CancelRequest) throws -> Result
    ) async throws -> Result {
        if Task.isCancelled {
            pool.release(pooled, reusable: true)
            throw CancellationError()
        }
        let cancel = pooled.cancelRequest
        let unitEnded = UnitEnded()
        defer { unitEnded.flag.store(true, ordering: .releasing) }
        // A shutdown whose grace period ends cancels the unit as the task's cancellation would.
        let unit = UnitsInFlight.current
        if let unit { units.setCanceller(unit) { Self.cancelOnServer(cancel, until: unitEnded) } }
        defer { if let unit { units.setCanceller(unit, nil) } }
        // The pool's thread may not be this task's: the unit's trace context goes along by hand.
        let traced = tracer != nil
        let traceContext = traced ? ServiceContext.current : nil
        // One job answers both what the unit gave and whether its connection may serve again.
        let ran: Swift.Result<(outcome: Swift.Result<Result, any Error>, reusable: Bool), any Error> = await withTaskCancellationHandler {
            do {
                return .success(try await pool.onPoolThread {
                    let connection = pooled.connection
                    if probing, !connection.probe() { throw StaleConnection() }
                    let spans = traced ? connection.roundTripObserver as? StatementSpans : nil
                    spans?.context = traceContext
                    defer { spans?.context = nil }
                    // Cancelled before it started: the server would ignore the request.
                    let outcome = cancel.wasSent ? .failure(CancellationError()) : Swift.Result { try work(connection, cancel) }
                    // One whose unit changed the session for good (`SET ROLE`, a setting made
                    // for the session) is replaced: the next unit would run with its role or
                    // settings, another tenant's.
                    return (outcome, connection.isOpen && !connection.isInTransaction && !connection.sessionMayHaveChanged)
                })
            } catch {
                return .failure(error)
            }
        } onCancel: {
            Self.cancelOnServer(cancel, until: unitEnded)
        }
        unitEnded.flag.store(true, ordering: .releasing)
        switch ran {
        case .failure(let error):
            // The connection was found closed before the unit ran.
            pool.release(pooled, reusable: false)
            throw error
        case .success(let (outcome, reusable)):
            // A connection a cancel request went to may see it arrive late: never reused.
            pool.release(pooled, reusable: reusable && !cancel.wasSent)
            switch outcome {
            case .success(let result):
                // The unit completed (a write committed before the request): its result
                // stands, as a caller must not take a committed write for a failed one.
                return result
            case .failure(let error):
                if cancel.wasSent || error is CancellationError {
                    // Not the task's cancellation: the shutdown's.
                    if !Task.isCancelled, units.isCancelling { throw UnitsInFlight.cancelled }
                    throw CancellationError()
                }
                throw DatabaseContext.relateError(error)
            }
        }
    }

    private static func readLayout(_ connection: Connection, options: ModelOptions, schemas: [String]?) throws -> ModelLayout {
        let catalog = try DatabaseContext.wrappingErrors { try Catalog.introspect(connection, schemas: schemas) }
        let model = try Model(catalog: catalog, options: options)
        return try DatabaseContext.wrappingErrors { try ModelLayout(model: model, quote: connection.quoteIdentifier) }
    }
}
