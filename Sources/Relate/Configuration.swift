import Logging

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

    /// A configuration with every option at its default, but those given.
    ///
    /// - Parameters:
    ///   - schemas: The schemas whose tables become entities; `nil` for the `search_path`.
    ///   - manyToMany: The many-to-many rule; ``ManyToManyRule/keyed`` by default.
    ///   - overrides: Corrections to the catalog; none by default.
    ///   - maxConnections: The most connections a ``Database`` keeps open; 4 by default.
    ///   - connectTimeout: How long opening a connection may take; 10 seconds by default.
    ///   - statementTimeout: How long a statement may run; no limit by default.
    ///   - logger: Where Relate logs.
    public init(
        schemas: [String]? = nil, manyToMany: ManyToManyRule = .keyed, overrides: [Override] = [], maxConnections: Int = 4,
        connectTimeout: Duration? = .seconds(10), statementTimeout: Duration? = nil, logger: Logger = Logger(label: "relate")
    ) {
        self.schemas = schemas
        self.manyToMany = manyToMany
        self.overrides = overrides
        self.maxConnections = maxConnections
        self.connectTimeout = connectTimeout
        self.statementTimeout = statementTimeout
        self.logger = logger
    }

    /// What the model is built from besides the catalog.
    var modelOptions: ModelOptions { ModelOptions(manyToMany: manyToMany, overrides: overrides) }

    /// libpq's defaults for connections Relate opens (the URL's own values win).
    var connectionDefaults: [String: String] {
        // libpq counts whole seconds, and takes less than 2 as 2.
        connectTimeout.map { ["connect_timeout": String(max(1, $0.components.seconds))] } ?? [:]
    }

    /// Prepares a connection Relate opened: its statement timeout.
    var setUp: @Sendable (Connection) throws -> Void {
        let statementTimeout = self.statementTimeout
        return { connection in
            guard let statementTimeout else { return }
            // PostgreSQL takes 1 ms to Int32.max ms; a longer timeout is as good as none.
            let seconds = min(max(statementTimeout.components.seconds, 0), Int64(Int32.max) / 1000)
            let milliseconds = seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000
            try connection.execute("SET statement_timeout = \(min(max(1, milliseconds), Int64(Int32.max)))")
        }
    }
}
