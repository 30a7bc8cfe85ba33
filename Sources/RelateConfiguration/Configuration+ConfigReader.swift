import Configuration
import Logging
import Relate

extension Configuration {
    /// Reads the options from swift-configuration's `ConfigReader` (environment variables,
    /// a JSON file, command-line arguments, …); an option the reader does not have keeps its
    /// default. Scope the reader to a prefix of your own: `config.scoped(to: "database")`.
    ///
    /// ```swift
    /// import Configuration
    /// let config = ConfigReader(provider: EnvironmentVariablesProvider())   // DATABASE_MAX_CONNECTIONS=16
    /// let configuration = try Relate.Configuration(config: config.scoped(to: "database"))
    /// ```
    ///
    /// (The module `Configuration` and this type share a name: write `Relate.Configuration`
    /// where both are imported.)
    ///
    /// ## Keys
    /// Durations are in seconds (a double); a duration of 0 or less means "none" where the
    /// option may be `nil`.
    /// - `password` (string, **secret**): the password, when neither the URL nor the
    ///   environment (`PGPASSWORD`, `~/.pgpass`) gives one.
    /// - `schemas` (string array): ``schemas``; default the `search_path`.
    /// - `manyToMany` (string: `keyed`, `anyTwoForeignKeys` or `strict`): ``manyToMany``.
    /// - `maxConnections` (int, default 4), `minIdleConnections` (int, default 0).
    /// - `connectTimeout` (default 10), `statementTimeout`, `idleTimeout`, `checkoutTimeout`
    ///   (default none), `replicaWait` (default 0.5), `replicaRetry` (default 5),
    ///   `shutdownGracePeriod` (default 10): durations.
    /// - `replicas` (string array, **secret**: URLs may hold passwords): ``replicas``.
    /// - `preparesStatements` (bool, default `true`), `logsValuesForDebugging` (bool,
    ///   default `false`).
    /// - `queryLogLevel` (string: `trace`, `debug`, `info`, `notice`, `warning`, `error`,
    ///   `critical`; default `debug`).
    ///
    /// ``overrides``, ``logger``, ``metricsFactory``, ``metricsDimensions`` and ``tracer``
    /// are code, not settings: set them on the result.
    ///
    /// - Parameter config: Where the settings are read.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/invalidRequest``
    ///   naming the key, for a many-to-many rule or log level it does not know.
    public init(config: ConfigReader) throws {
        self.init()
        password = config.string(forKey: "password", isSecret: true)
        schemas = config.stringArray(forKey: "schemas")
        if let rule = config.string(forKey: "manyToMany") {
            let rules: [String: ManyToManyRule] = ["keyed": .keyed, "anyTwoForeignKeys": .anyTwoForeignKeys, "strict": .strict]
            guard let known = rules[rule] else {
                throw RelateError(
                    kind: .invalidRequest, message: "manyToMany is \"\(rule)\"; use one of keyed, anyTwoForeignKeys, strict",
                    key: "manyToMany", candidates: rules.keys.sorted())
            }
            manyToMany = known
        }
        maxConnections = config.int(forKey: "maxConnections", default: maxConnections)
        minIdleConnections = config.int(forKey: "minIdleConnections", default: minIdleConnections)
        connectTimeout = Self.duration(config, "connectTimeout", default: connectTimeout)
        statementTimeout = Self.duration(config, "statementTimeout", default: statementTimeout)
        idleTimeout = Self.duration(config, "idleTimeout", default: idleTimeout)
        checkoutTimeout = Self.duration(config, "checkoutTimeout", default: checkoutTimeout)
        replicas = config.stringArray(forKey: "replicas", isSecret: true, default: replicas)
        replicaWait = Self.duration(config, "replicaWait", default: replicaWait) ?? .zero
        replicaRetry = Self.duration(config, "replicaRetry", default: replicaRetry) ?? .zero
        shutdownGracePeriod = Self.duration(config, "shutdownGracePeriod", default: shutdownGracePeriod) ?? .zero
        preparesStatements = config.bool(forKey: "preparesStatements", default: preparesStatements)
        logsValuesForDebugging = config.bool(forKey: "logsValuesForDebugging", default: logsValuesForDebugging)
        if let level = config.string(forKey: "queryLogLevel") {
            guard let known = Logger.Level(rawValue: level) else {
                throw RelateError(
                    kind: .invalidRequest, message: "queryLogLevel is \"\(level)\"; use a swift-log level (trace, debug, info, …)",
                    key: "queryLogLevel", candidates: Logger.Level.allCases.map(\.rawValue))
            }
            queryLogLevel = known
        }
    }

    /// The duration under `key`, in seconds; `nil` for 0 or less; `defaultValue` when absent.
    private static func duration(_ config: ConfigReader, _ key: ConfigKey, default defaultValue: Duration?) -> Duration? {
        guard let seconds = config.double(forKey: key) else { return defaultValue }
        return seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded())) : nil
    }
}

extension Database {
    /// Opens a database with the URL and options a `ConfigReader` holds: `url` (string,
    /// **secret**, required: a `postgresql://` URL or a conninfo string; the empty string
    /// takes everything from the PG* environment) and the keys ``Configuration/init(config:)``
    /// reads.
    ///
    /// ```swift
    /// let config = ConfigReader(provider: EnvironmentVariablesProvider())   // DATABASE_URL=postgresql://…
    /// let database = try Database(config: config.scoped(to: "database"))
    /// ```
    ///
    /// - Parameters:
    ///   - config: Where the settings are read.
    ///   - logger: Where Relate logs.
    /// - Throws: A ``RelateError`` when `url` is missing, a setting is invalid, or as
    ///   ``init(url:configuration:)`` throws.
    public convenience init(config: ConfigReader, logger: Logger = Logger(label: "relate")) throws {
        guard let url = config.string(forKey: "url", isSecret: true) else {
            throw RelateError(kind: .invalidRequest, message: "the configuration has no url (a postgresql:// URL or conninfo)", key: "url")
        }
        var configuration = try Configuration(config: config)
        configuration.logger = logger
        try self.init(url: url, configuration: configuration)
    }
}
