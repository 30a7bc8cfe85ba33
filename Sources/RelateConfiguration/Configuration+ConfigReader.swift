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
    ///   naming the key, for a many-to-many rule or log level it does not know, or a
    ///   duration that is not a finite number of seconds below 10¹⁵.
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
        connectTimeout = try Self.duration(config, "connectTimeout", default: connectTimeout)
        statementTimeout = try Self.duration(config, "statementTimeout", default: statementTimeout)
        idleTimeout = try Self.duration(config, "idleTimeout", default: idleTimeout)
        checkoutTimeout = try Self.duration(config, "checkoutTimeout", default: checkoutTimeout)
        replicas = config.stringArray(forKey: "replicas", isSecret: true, default: replicas)
        replicaWait = try Self.duration(config, "replicaWait", default: replicaWait) ?? .zero
        replicaRetry = try Self.duration(config, "replicaRetry", default: replicaRetry) ?? .zero
        shutdownGracePeriod = try Self.duration(config, "shutdownGracePeriod", default: shutdownGracePeriod) ?? .zero
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
    ///
    /// - Throws: A ``RelateError`` naming the key for a value that is not a number of
    ///   seconds a `Duration` holds (`inf`, `nan`, past a billion years' worth).
    private static func duration(_ config: ConfigReader, _ key: ConfigKey, default defaultValue: Duration?) throws -> Duration? {
        guard let seconds = config.double(forKey: key) else { return defaultValue }
        guard seconds.isFinite, seconds < maximumSeconds else {
            let name = key.components.joined(separator: ".")
            throw RelateError(
                kind: .invalidRequest, message: "\(name) is \(seconds) seconds; give a finite number of seconds below \(Int(maximumSeconds)) (0 for none)",
                key: name)
        }
        return seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded())) : nil
    }

    /// The most seconds a duration setting takes: its milliseconds fit an `Int64` with room.
    private static let maximumSeconds = 1e15
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
