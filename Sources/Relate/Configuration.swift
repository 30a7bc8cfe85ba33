import CoreMetrics
import Logging
import Tracing

/// How a ``Database`` or a ``DatabaseContext`` reads its model and talks to the server:
/// every option in one value, each with its default.
///
/// ```swift
/// var configuration = Configuration()
/// configuration.schemas = ["app", "billing"]
/// configuration.manyToMany = .anyTwoForeignKeys
/// configuration.statementTimeout = .seconds(5)
/// let database = try Database(url: "postgresql://me@localhost/app", configuration: configuration)
/// ```
public struct Configuration: Sendable {
    /// The schemas whose tables become entities, the first one's without a schema prefix.
    /// Default `nil`: the connection's `search_path`.
    public var schemas: [String]?
    /// How helper tables with two foreign keys make many-to-many relationships. Default
    /// ``ManyToManyRule/keyed``.
    public var manyToMany: ManyToManyRule
    /// Relationships declared where the schema has no foreign key, keys renamed, tables
    /// left out. Default none.
    public var overrides: [Override]
    /// The most connections a ``Database`` keeps open; tasks beyond it wait in line.
    /// Default 4. A context has one connection and ignores it.
    public var maxConnections: Int
    /// How long opening a connection may take (libpq's `connect_timeout`, per host tried),
    /// unless the URL or `PGCONNECT_TIMEOUT` says otherwise; `nil` waits as long as the
    /// network does. Default 10 seconds. libpq counts whole seconds, at least 2.
    public var connectTimeout: Duration?
    /// When given, every statement that runs longer fails (`statement_timeout`, SQLSTATE
    /// 57014) and so does the call that sent it. Default `nil`: none. Set on each
    /// connection Relate opens; a connection handed to a context is left as it is.
    public var statementTimeout: Duration?
    /// Where Relate logs. Default: a logger labelled `relate`.
    public var logger: Logger
    /// How many idle connections a ``Database`` keeps open ahead of need (within
    /// ``maxConnections``), on the primary and on each replica: opened when the `Database` is
    /// made, and again whenever a unit takes one or one closes. Default 0: connections open
    /// when a unit needs one.
    public var minIdleConnections: Int
    /// When given, a connection idle longer is closed (down to ``minIdleConnections``).
    /// Default `nil`: idle connections stay open.
    public var idleTimeout: Duration?
    /// When given, a unit of work that waits longer for a connection throws
    /// ``RelateError/Kind-swift.struct/checkoutTimeout``, whose message says how many
    /// connections were busy and how many other tasks waited. Default `nil`: it waits as
    /// long as it takes (or until its task is cancelled).
    public var checkoutTimeout: Duration?
    /// Where a ``Database`` reports its pools and statements through swift-metrics:
    /// connections in use and idle and tasks waiting (gauges `relate.pool.connections.in_use`,
    /// `relate.pool.connections.idle`, `relate.pool.waiting`), the time each checkout and each
    /// statement took (timers `relate.pool.checkout.duration`, `relate.statement.duration`),
    /// each with the dimension `pool` (`primary`, `replica0`, …) and ``metricsDimensions``.
    /// Default `nil`: the factory `MetricsSystem.bootstrap` set; when none was set, nothing is
    /// recorded and no clock is read.
    public var metricsFactory: (any MetricsFactory)?
    /// Dimensions added to every metric (`[("database", "orders")]`), to tell several
    /// `Database`s apart. Default none.
    public var metricsDimensions: [(String, String)]
    /// Streaming replicas of the server (URLs or conninfo strings, as the ``Database``'s
    /// own) that `read` units run on; `write` units always run on the primary. A read runs
    /// on a replica only once it has replayed the last write unit's commit, so it sees what
    /// the ``Database``'s units wrote (see ``replicaWait``). Default none: every unit runs on
    /// the primary. A context ignores it.
    ///
    /// ```swift
    /// var configuration = Configuration()
    /// configuration.replicas = ["postgresql://me@replica1/app", "postgresql://me@replica2/app"]
    /// ```
    public var replicas: [String]
    /// How long a `read` unit waits for a replica to replay the last write unit's commit;
    /// then it reads on the primary. Default 500 milliseconds.
    public var replicaWait: Duration
    /// How long a replica that stopped answering (it refused a connection, lost one, or is
    /// shutting down) is left out before reads try it again. Default 5 seconds.
    public var replicaRetry: Duration
    /// Whether the statements the object layer sends again and again (an object read, updated
    /// or deleted by primary key) are prepared on the server once per connection and run by
    /// name after (`Connection.queryPrepared(_:_:format:)`): the server then parses and
    /// plans each once. Default `true`. Turn it off behind PgBouncer in transaction mode
    /// before 1.21 (or with `max_prepared_statements = 0`), which lends each transaction
    /// another server session: a connection that finds a statement lost stops preparing
    /// and runs it again unprepared, but inside a transaction the transaction fails first.
    /// Set on each connection Relate opens; a connection handed to a context keeps its own
    /// `Connection.preparesStatements`.
    public var preparesStatements: Bool
    /// How long a graceful shutdown of the ``Database``'s service (``Database/run()`` in a
    /// `ServiceGroup`) lets units of work already running finish and commit; units still
    /// running then are cancelled (their statements cancelled on the server) and throw
    /// ``RelateError/Kind-swift.struct/shuttingDown``. Default 10 seconds.
    public var shutdownGracePeriod: Duration = .seconds(10)
    /// The level at which each statement's SQL (placeholders only, never a bound value) is
    /// logged. Default `.debug`; `.trace` keeps statements out of a debug log.
    public var queryLogLevel: Logger.Level = .debug
    /// For debugging only, never in production: logs each statement's bound values beside
    /// its SQL and the text of the server's notices, which can hold row data (passwords,
    /// personal data). Default `false`: no log line or its metadata holds a bound or a row
    /// value, at any level.
    public var logsValuesForDebugging = false
    /// Where a ``Database`` sends its spans (swift-distributed-tracing): each unit of work
    /// one span (`relate.read`, `relate.write`, …), a child of the task's
    /// `ServiceContext.current`, and each round trip a span of kind `client` in it, named
    /// `"<operation> <table>"`, with OpenTelemetry's `db.*` attributes. Default `nil`: the
    /// tracer `InstrumentationSystem.bootstrap` set when the `Database` is made; when none
    /// was set, no span is made and nothing is timed for one.
    public var tracer: (any Tracer)?
    /// The password used when neither the URL nor the environment gives one; set only by
    /// RelateConfiguration's `Configuration(config:)` (its `password` key, a secret), so
    /// that no `Configuration` a program builds or prints holds one.
    package var password: String?

    /// A configuration with every option at its default, but those given.
    ///
    /// - Parameters:
    ///   - schemas: ``schemas``.
    ///   - manyToMany: ``manyToMany``.
    ///   - overrides: ``overrides``.
    ///   - maxConnections: ``maxConnections``.
    ///   - connectTimeout: ``connectTimeout``.
    ///   - statementTimeout: ``statementTimeout``.
    ///   - logger: ``logger``.
    ///   - replicas: ``replicas``.
    ///   - replicaWait: ``replicaWait``.
    ///   - replicaRetry: ``replicaRetry``.
    ///   - minIdleConnections: ``minIdleConnections``.
    ///   - idleTimeout: ``idleTimeout``.
    ///   - checkoutTimeout: ``checkoutTimeout``.
    ///   - metricsFactory: ``metricsFactory``.
    ///   - metricsDimensions: ``metricsDimensions``.
    ///   - preparesStatements: ``preparesStatements``.
    public init(
        schemas: [String]? = nil, manyToMany: ManyToManyRule = .keyed, overrides: [Override] = [], maxConnections: Int = 4,
        connectTimeout: Duration? = .seconds(10), statementTimeout: Duration? = nil, logger: Logger = Logger(label: "relate"),
        replicas: [String] = [], replicaWait: Duration = .milliseconds(500), replicaRetry: Duration = .seconds(5),
        minIdleConnections: Int = 0, idleTimeout: Duration? = nil, checkoutTimeout: Duration? = nil,
        metricsFactory: (any MetricsFactory)? = nil, metricsDimensions: [(String, String)] = [], preparesStatements: Bool = true
    ) {
        self.preparesStatements = preparesStatements
        self.minIdleConnections = minIdleConnections
        self.idleTimeout = idleTimeout
        self.checkoutTimeout = checkoutTimeout
        self.metricsFactory = metricsFactory
        self.metricsDimensions = metricsDimensions
        self.replicas = replicas
        self.replicaWait = replicaWait
        self.replicaRetry = replicaRetry
        self.schemas = schemas
        self.manyToMany = manyToMany
        self.overrides = overrides
        self.maxConnections = maxConnections
        self.connectTimeout = connectTimeout
        self.statementTimeout = statementTimeout
        self.logger = logger
    }

    /// The pool options for the pool named `pool` (`primary`, `replica0`, …).
    func poolOptions(pool: String) -> PoolOptions {
        PoolOptions(
            minIdleConnections: min(max(0, minIdleConnections), maxConnections), idleTimeout: idleTimeout,
            checkoutTimeout: checkoutTimeout,
            metrics: PoolMetrics.make(pool: pool, dimensions: metricsDimensions, factory: metricsFactory))
    }

    /// What the model is built from besides the catalog.
    var modelOptions: ModelOptions { ModelOptions(manyToMany: manyToMany, overrides: overrides) }

    /// libpq's defaults for connections Relate opens (the URL's own values win).
    var connectionDefaults: [String: String] {
        var defaults: [String: String] = [:]
        // libpq counts whole seconds, and takes less than 2 as 2, and an int: past that,
        // as long as it counts.
        if let connectTimeout { defaults["connect_timeout"] = String(min(max(1, connectTimeout.components.seconds), Int64(Int32.max))) }
        if let password { defaults["password"] = password }
        return defaults
    }

    /// Prepares a connection Relate opened: whether it prepares statements, its statement timeout.
    var setUp: @Sendable (Connection) throws -> Void {
        let statementTimeout = self.statementTimeout
        let preparesStatements = self.preparesStatements
        let (queryLogLevel, logsValues) = (self.queryLogLevel, self.logsValuesForDebugging)
        return { connection in
            connection.preparesStatements = preparesStatements
            connection.queryLogLevel = queryLogLevel
            connection.logsValuesForDebugging = logsValues
            guard let statementTimeout else { return }
            // PostgreSQL takes 1 ms to Int32.max ms; a longer timeout is as good as none.
            let seconds = min(max(statementTimeout.components.seconds, 0), Int64(Int32.max) / 1000)
            let milliseconds = seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000
            try connection.execute("SET statement_timeout = \(min(max(1, milliseconds), Int64(Int32.max)))")
        }
    }
}

/// A configuration printed, logged or dumped names no secret: the password is "set" or not,
/// and the replicas are counted (their URLs may hold passwords).
extension Configuration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The settings but the secrets, on one line.
    public var description: String {
        "Configuration(" + customMirror.children.map { "\($0.label ?? ""): \($0.value)" }.joined(separator: ", ") + ")"
    }

    /// ``description``.
    public var debugDescription: String { description }

    /// The settings `dump(_:)` and `Mirror` show: the password as whether one is set, the
    /// replicas as how many.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                ("schemas", schemas as Any), ("manyToMany", manyToMany), ("overrides", overrides.count),
                ("maxConnections", maxConnections), ("minIdleConnections", minIdleConnections),
                ("connectTimeout", connectTimeout as Any), ("statementTimeout", statementTimeout as Any),
                ("idleTimeout", idleTimeout as Any), ("checkoutTimeout", checkoutTimeout as Any), ("replicas", replicas.count),
                ("replicaWait", replicaWait), ("replicaRetry", replicaRetry), ("preparesStatements", preparesStatements),
                ("shutdownGracePeriod", shutdownGracePeriod), ("queryLogLevel", queryLogLevel),
                ("logsValuesForDebugging", logsValuesForDebugging), ("password", password == nil ? "not set" : "set"),
            ],
            displayStyle: .struct)
    }
}
