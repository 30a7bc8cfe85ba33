/// The one error type of the `Relate` layer: the model (unknown names, ambiguous keys,
/// bad overrides) and the objects. Each case names what was asked for and, where it helps,
/// the names that do exist.
///
/// `description` never holds row data (key values, the value a column refused): those are
/// in ``detail`` and ``debugDescription`` only, as with `PostgresError`.
public struct RelateError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, as an open set: new kinds never break a `switch` with a `default`.
    ///
    /// ```swift
    /// do {
    ///     let person = try context.object("person", primaryKey: 42)
    /// } catch let error as RelateError where error.kind == .database {
    ///     print(error.postgresError?.sqlState ?? "?")
    /// }
    /// ```
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name, which ``RelateError/description`` prints first: `"unknown key"`.
        public let description: String
        private init(_ description: String) { self.description = description }

        /// A schema the server does not have.
        public static let unknownSchema = Kind("unknown schema")
        /// An entity (table or view) the model does not have; the error lists the nearest names.
        public static let unknownEntity = Kind("unknown entity")
        /// A key the entity does not answer to (or an attribute asked for as a relationship, or the
        /// reverse); the error lists the nearest names.
        public static let unknownKey = Kind("unknown key")
        /// A key several relationships answer to; ``RelateError/candidates`` lists the qualified
        /// names to use instead.
        public static let ambiguousKey = Kind("ambiguous key")
        /// An ``Override`` that names a table, column or key the catalog does not have, or
        /// contradicts it.
        public static let invalidOverride = Kind("invalid override")
        /// A value of a Swift type the column cannot take, or out of the column's range.
        public static let typeMismatch = Kind("type mismatch")
        /// An object of another context, or one already deleted.
        public static let invalidObject = Kind("invalid object")
        /// A delete that a `RESTRICT` / `NO ACTION` foreign key forbids.
        public static let deleteDenied = Kind("delete denied")
        /// A primary-key change that a `RESTRICT` / `NO ACTION` foreign key forbids: rows
        /// still refer to the old key.
        public static let updateDenied = Kind("update denied")
        /// A write the schema cannot take: a NOT NULL foreign key emptied, a helper's required
        /// column without a value, a table without a primary key.
        public static let invalidWrite = Kind("invalid write")
        /// A relationship that is not in memory where no query may load it (decoding an
        /// object into a value): prefetch it or read it first.
        public static let notLoaded = Kind("not loaded")
        /// The database refused a statement; ``RelateError/postgresError`` has the details.
        public static let database = Kind("database error")
        /// The database no longer holds what memory believed (another client changed or
        /// deleted the row): nothing was written, and memory took the database's state.
        public static let conflict = Kind("conflict")
        /// A request that cannot be run as given: a fetch request's negative limit, a batch
        /// size of 0, a pool of no connections, a lookup by key in a table without one.
        public static let invalidRequest = Kind("invalid request")
        /// No connection of a `Database`'s pool came free within
        /// ``Configuration/checkoutTimeout``; the message says how many were busy and how
        /// many tasks waited.
        public static let checkoutTimeout = Kind("checkout timeout")
        /// A table changed (`ALTER TABLE`, …) since the model was read: reload the model.
        public static let schemaChanged = Kind("schema changed")
        /// The connection was lost while a `write` unit's `COMMIT` was under way, and the
        /// server could not be asked (or could not say) whether the transaction committed:
        /// check the database before doing the work again.
        public static let commitOutcomeUnknown = Kind("commit outcome unknown")
        /// Pending changes of a context that does not autocommit break what the schema
        /// says (`validateChanges()`, `save()`): the message names every problem, nothing was sent.
        public static let validationFailed = Kind("validation failed")
        /// The ``Database`` is shutting down (its service's graceful shutdown began, or its
        /// `run()` was cancelled): a unit asked for now is refused at once, and one still
        /// running when the grace period ended was cancelled (a `write` rolled back).
        public static let shuttingDown = Kind("shutting down")
    }

    /// What went wrong.
    public var kind: Kind
    /// What went wrong, in words: what was asked for and what exists. Holds no row data.
    public var message: String
    /// The entity concerned, by its name in the model.
    public var entity: String?
    /// The key or name that was asked for.
    public var key: String?
    /// The nearest existing names, or for an ambiguous key the qualified names to use instead.
    public var candidates: [String]
    /// The database's error, for ``Kind/database`` and ``Kind/deleteDenied``: SQLSTATE,
    /// constraint, table, the SQL sent.
    public var postgresError: PostgresError?
    /// Row data that explains the error (the object's primary key, the value refused), kept
    /// out of ``description`` so that logs of errors hold no data.
    public var detail: String?

    /// Creates an error; the library makes these, tests and wrappers may too.
    ///
    /// - Parameters:
    ///   - kind: What went wrong.
    ///   - message: The message, without row data.
    ///   - entity: The entity concerned.
    ///   - key: The key or name asked for.
    ///   - candidates: The nearest existing names.
    ///   - postgresError: The database's error, when it refused a statement.
    ///   - detail: Row data that explains the error, kept out of ``description``.
    public init(
        kind: Kind, message: String, entity: String? = nil, key: String? = nil, candidates: [String] = [],
        postgresError: PostgresError? = nil, detail: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.entity = entity
        self.key = key
        self.candidates = candidates
        self.postgresError = postgresError
        self.detail = detail
    }

    /// The kind and the message; never row data.
    public var description: String { "\(kind): \(message)" }

    /// The kind, the message and the ``detail`` (row data): for logs that may hold data.
    public var debugDescription: String {
        var text = description
        if let detail { text += " (\(detail))" }
        if let postgresError { text += "\n  " + postgresError.debugDescription }
        return text
    }

    /// A database error, as the Relate layer reports it.
    init(_ error: PostgresError, entity: String? = nil) {
        self.init(kind: .database, message: error.description, entity: entity, postgresError: error)
    }

    static func unknownEntity(_ name: String, existing: [String]) -> RelateError {
        let nearest = nearestNames(to: name, in: existing)
        return RelateError(
            kind: .unknownEntity,
            message: "there is no entity \"\(name)\"" + suggestion(nearest, all: existing),
            key: name, candidates: nearest)
    }

    static func unknownKey(_ key: String, entity: String, existing: [String]) -> RelateError {
        let nearest = nearestNames(to: key, in: existing)
        return RelateError(
            kind: .unknownKey,
            message: "entity \"\(entity)\" has no key \"\(key)\"" + suggestion(nearest, all: existing),
            entity: entity, key: key, candidates: nearest)
    }

    static func ambiguousKey(_ key: String, entity: String, candidates: [String]) -> RelateError {
        RelateError(
            kind: .ambiguousKey,
            message: "key \"\(key)\" of entity \"\(entity)\" names \(candidates.count) things; use one of: "
                + candidates.joined(separator: ", "),
            entity: entity, key: key, candidates: candidates)
    }

    private static func suggestion(_ nearest: [String], all: [String]) -> String {
        if !nearest.isEmpty { return "; did you mean " + nearest.map { "\"\($0)\"" }.joined(separator: " or ") + "?" }
        if all.isEmpty { return " (there are none)" }
        return "; it has: " + all.prefix(20).joined(separator: ", ") + (all.count > 20 ? ", …" : "")
    }

    /// Up to five names within a small edit distance of `name`, nearest first.
    static func nearestNames(to name: String, in names: [String]) -> [String] {
        let target = Array(name.lowercased())
        let limit = max(2, target.count / 3)
        return names
            .map { ($0, editDistance(target, Array($0.lowercased()))) }
            .filter { $0.1 <= limit || $0.0.lowercased().contains(name.lowercased()) }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
            .prefix(5)
            .map(\.0)
    }

    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
