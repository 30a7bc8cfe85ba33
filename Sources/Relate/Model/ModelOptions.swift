/// How many-to-many relationships are recognised in helper tables with exactly two
/// foreign keys (see <doc:Relationships>).
public enum ManyToManyRule: String, Sendable, Codable, Hashable, CaseIterable {
    /// BaseTen's documented rule: any two foreign keys make a helper, keyed or not.
    case anyTwoForeignKeys = "any-two-foreign-keys"
    /// The two keys' columns together are exactly a unique key of the helper (the default).
    case keyed
    /// `.keyed`, and the helper has no other column.
    case strict
}

/// What the model is built from besides the catalog.
public struct ModelOptions: Sendable, Hashable {
    /// How helper tables with two foreign keys are recognised as many-to-many; ``ManyToManyRule/keyed`` by default.
    public var manyToMany: ManyToManyRule
    /// Corrections to the catalog, applied in order after inference.
    public var overrides: [Override]

    /// Creates the options a ``Model`` is built with.
    ///
    /// - Parameters:
    ///   - manyToMany: The many-to-many rule; ``ManyToManyRule/keyed`` by default.
    ///   - overrides: Corrections to the catalog; none by default.
    public init(manyToMany: ManyToManyRule = .keyed, overrides: [Override] = []) {
        self.manyToMany = manyToMany
        self.overrides = overrides
    }
}

/// A correction to what the catalog says: a relationship the schema has no foreign key
/// for, a key the schema does not declare, a key renamed, a table left out. Tables are
/// named as the model names them (`person`, or `schema.table` outside the first schema).
///
/// ```swift
/// let options = ModelOptions(overrides: [
///     .primaryKey(of: "customer_list", columns: ["id"]),          // a view's rows, told apart
///     .foreignKey("book", ["authorId"], references: "person"),     // to its key
///     .rename("person", key: "book_by_authorId", to: "writtenBooks"),
///     .ignore("audit_log"),
/// ])
/// ```
public enum Override: Sendable, Hashable {
    /// `columns` of `table` refer to `referencedColumns` of `referencedTable` (its primary
    /// key when `nil`), as if a foreign key said so.
    case foreignKey(
        table: String, columns: [String], referencedTable: String, referencedColumns: [String]?, name: String?)
    /// The key `key` of `table` (any name it answers to) is called `newName`.
    case rename(table: String, key: String, newName: String)
    /// `table` is left out of the model, with every relationship to it.
    case ignore(table: String)
    /// `columns` identify the rows of `table` (a table or a view), whatever its catalog says.
    case primaryKey(table: String, columns: [String])

    /// A relationship the schema declares no foreign key for: `columns` of `table` refer to
    /// `referencedColumns` of `referencedTable`.
    ///
    /// - Parameters:
    ///   - table: The table that holds the columns, as the model names it.
    ///   - columns: Its columns that refer to the other table.
    ///   - referencedTable: The table they refer to.
    ///   - referencedColumns: The columns they refer to; its primary key when `nil`.
    ///   - name: The constraint name the relationship takes (errors, qualified names); made
    ///     from the table and columns when `nil`.
    /// - Returns: The override.
    public static func foreignKey(
        _ table: String, _ columns: [String], references referencedTable: String, _ referencedColumns: [String]? = nil,
        name: String? = nil
    ) -> Override {
        .foreignKey(table: table, columns: columns, referencedTable: referencedTable, referencedColumns: referencedColumns, name: name)
    }

    /// Gives the key `key` of `table` the name `newName`.
    ///
    /// - Parameters:
    ///   - table: The entity, as the model names it.
    ///   - key: Any name the attribute or relationship answers to.
    ///   - newName: The name it answers to instead.
    /// - Returns: The override.
    public static func rename(_ table: String, key: String, to newName: String) -> Override {
        .rename(table: table, key: key, newName: newName)
    }

    /// Declares the key of `table`: the columns that tell its rows apart, for a view (which
    /// has none in the catalog) or a table whose schema declares none that qualifies. The
    /// entity is then keyed everywhere: opened by key, written, kept one object per row.
    /// Relate trusts the declaration; a key that is not unique makes one object stand for
    /// several rows.
    ///
    /// ```swift
    /// let context = try DatabaseContext(url: url, overrides: [.primaryKey(of: "customer_list", columns: ["id"])])
    /// let customer = try context.object("customer_list", primaryKey: 7)
    /// ```
    ///
    /// - Parameters:
    ///   - table: The table or view, as the model names it.
    ///   - columns: The key's columns, in key order.
    /// - Returns: The override.
    public static func primaryKey(of table: String, columns: [String]) -> Override {
        .primaryKey(table: table, columns: columns)
    }

    /// Leaves `table` out of the model, with every relationship to it.
    ///
    /// - Parameter table: The table, as the model names it.
    /// - Returns: The override.
    public static func ignore(_ table: String) -> Override {
        .ignore(table: table)
    }
}
