/// How many-to-many relationships are recognised in helper tables with exactly two
/// foreign keys (see DESIGN "Relationship inference").
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
    public var manyToMany: ManyToManyRule
    public var overrides: [Override]

    public init(manyToMany: ManyToManyRule = .keyed, overrides: [Override] = []) {
        self.manyToMany = manyToMany
        self.overrides = overrides
    }
}

/// A correction to what the catalog says: a relationship the schema has no foreign key
/// for, a key renamed, a table left out. Tables are named as the model names them
/// (`person`, or `schema.table` outside the first schema).
///
/// ```swift
/// let options = ModelOptions(overrides: [
///     .foreignKey("book", ["authorId"], references: "person"),     // to its primary key
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

    public static func foreignKey(
        _ table: String, _ columns: [String], references referencedTable: String, _ referencedColumns: [String]? = nil,
        name: String? = nil
    ) -> Override {
        .foreignKey(table: table, columns: columns, referencedTable: referencedTable, referencedColumns: referencedColumns, name: name)
    }

    public static func rename(_ table: String, key: String, to newName: String) -> Override {
        .rename(table: table, key: key, newName: newName)
    }

    public static func ignore(_ table: String) -> Override {
        .ignore(table: table)
    }
}
