extension Entity {
    /// Where an entity's key (``Entity/primaryKey``) comes from; the raw value is how
    /// `relate inspect --format json` writes it (`keySource`).
    ///
    /// - `primaryKey`: the table's `PRIMARY KEY`.
    /// - `uniqueConstraint`: a table without a primary key: a `UNIQUE` constraint whose
    ///   columns are all `NOT NULL`.
    /// - `uniqueIndex`: a table without a primary key nor such a constraint: a unique index,
    ///   neither partial nor on expressions, whose columns are all `NOT NULL`.
    /// - `override`: ``Override/primaryKey(of:columns:)`` declared it.
    /// - `view`: a view (or materialized view) carries, unchanged, the key of a table it
    ///   reads, every other table it reads joined to one row (``Entity/keyName`` says which
    ///   table's columns: `email.id`).
    public enum KeySource: String, Sendable, Codable, Hashable {
        /// The table's `PRIMARY KEY`, a unique constraint, a unique index or an override: see ``Entity/KeySource``.
        case primaryKey = "primary-key", uniqueConstraint = "unique-constraint", uniqueIndex = "unique-index"
        /// An ``Override/primaryKey(of:columns:)``.
        case override
        /// A view carrying the key of a table it reads: see ``Entity/KeySource``.
        case view
    }
}

/// The key that identifies an entity's rows, and where it came from.
struct IdentityKey: Sendable, Hashable {
    var columns: [String]
    var source: Entity.KeySource
    /// The unique constraint's or index's name; for a view's key, the columns it carries
    /// (`email.id`); `nil` for a primary key or an override.
    var name: String?

    /// The key of `table`, by one rule: its primary key; else, among its unique keys whose
    /// columns are all `NOT NULL` (a nullable column lets two rows share the key's values
    /// through NULL, so it identifies nothing), a constraint before an index (a constraint is
    /// the schema's declared intent; an index may be a detail of performance), then the
    /// fewest columns, then the name. The catalog holds only unique indexes that are neither
    /// partial nor on expressions. `nil` when nothing qualifies.
    init?(of table: Catalog.Table) {
        if !table.primaryKey.isEmpty {
            self.init(columns: table.primaryKey, source: .primaryKey, name: nil)
            return
        }
        let candidates = table.uniqueKeys.filter { key in
            !key.columns.isEmpty && key.columns.allSatisfy { table.column(named: $0)?.isNullable == false }
        }
        guard let best = candidates.min(by: { ($0.isConstraint ? 0 : 1, $0.columns.count, $0.name) < ($1.isConstraint ? 0 : 1, $1.columns.count, $1.name) })
        else { return nil }
        self.init(columns: best.columns, source: best.isConstraint ? .uniqueConstraint : .uniqueIndex, name: best.name)
    }

    init(columns: [String], source: Entity.KeySource, name: String?) {
        self.columns = columns
        self.source = source
        self.name = name
    }
}
