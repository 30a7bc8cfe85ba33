/// What the PostgreSQL catalog says about a set of schemas: tables and views, their
/// columns, keys and foreign keys. A plain value, read once by
/// ``Catalog/introspect(_:schemas:)`` (or built by hand in tests) and turned into a
/// ``Model`` by a pure function.
public struct Catalog: Sendable, Codable, Hashable {
    /// The schemas read, in search order; the first one's tables are named without schema.
    public var schemas: [String]
    /// The tables, views, materialized views and foreign tables of those schemas.
    public var tables: [Table]

    /// Creates a catalog by hand: for tests of inference and naming without a server.
    ///
    /// ```swift
    /// let catalog = Catalog(schemas: ["public"], tables: [
    ///     .init(name: "author", columns: [.init(name: "id", type: "int4", isNullable: false)],
    ///           primaryKey: ["id"]),
    ///     .init(name: "book", columns: [.init(name: "id", type: "int4", isNullable: false),
    ///                                   .init(name: "author_id", type: "int4")],
    ///           primaryKey: ["id"],
    ///           foreignKeys: [.init(name: "book_author_id_fkey", columns: ["author_id"],
    ///                               referencedTable: "author", referencedColumns: ["id"])]),
    /// ])
    /// let model = try Model(catalog: catalog)
    /// ```
    ///
    /// - Parameters:
    ///   - schemas: The schemas read, in search order.
    ///   - tables: Their tables.
    public init(schemas: [String], tables: [Table]) {
        self.schemas = schemas
        self.tables = tables
    }

    /// A table, view, materialized view or foreign table: its columns and keys.
    public struct Table: Sendable, Codable, Hashable {
        /// The schema that holds the table.
        public var schema: String
        /// The table's name, as in the catalog (unquoted, case kept).
        public var name: String
        /// Whether it is a table, a view, a materialized view…
        public var kind: Kind
        /// The columns, in their order in the table (dropped columns left out).
        public var columns: [Column]
        /// Primary key columns in key order; empty when there is none.
        public var primaryKey: [String]
        /// Unique constraints and unique indexes that are neither partial nor on expressions
        /// (the primary key is not repeated here).
        public var uniqueKeys: [UniqueKey]
        /// The foreign keys this table holds, each referencing another (or the same) table.
        public var foreignKeys: [ForeignKey]
        /// For a table that `INHERITS` from others: the first one it names (a partition's
        /// partitioned table is not a parent); `nil` otherwise.
        public var parent: TableName? = nil
        /// The tables that `INHERITS` from this one, directly, wherever they are (not a
        /// partitioned table's partitions, which are its rows); `nil` when not read.
        public var children: [TableName]? = nil
        /// What PostgreSQL lets a statement do to the relation (`pg_relation_is_updatable`,
        /// `INSTEAD OF` triggers and rules counted): all of it for a table, what the view
        /// allows for a view, nothing for a materialized view; `nil` when not known (a
        /// catalog made by hand, or read before this was), taken as all.
        public var allowedWrites: WriteOperations? = nil
        /// The writes a `DO INSTEAD` rule (a view's, most often) takes without a `RETURNING` clause,
        /// which the server refuses with one (`cannot perform UPDATE RETURNING`), as every
        /// insert and update of Relate's reads its row back; `nil` when not read.
        public var writesWithoutReturning: WriteOperations? = nil
        /// Its partial unique indexes (`CREATE UNIQUE INDEX … WHERE …`), on columns: no key,
        /// as a row outside the predicate may share their values, but `save()` orders a
        /// delete that frees their values before the insert that takes them; `nil` when not read.
        public var partialUniqueKeys: [UniqueKey]? = nil
        /// For a view or materialized view: where its rows and columns come from, as the
        /// server parsed its query; `nil` for a table, or when it could not be read.
        public var viewSource: ViewSource? = nil
        /// Whether the database may store other than what an `UPDATE` of the relation sends:
        /// it has an enabled `BEFORE UPDATE` row trigger or a rule, other tables inherit from
        /// it or it is partitioned (their triggers run too), or it is not a plain table (a
        /// view, a foreign table). `nil` when not known (a catalog made by hand, or read
        /// before this was), taken as yes. `save()` reads an updated row back only when the
        /// database may have stored other than what was sent.
        public var rewritesUpdates: Bool? = nil
        /// Whether an `INSERT` may store fewer rows than it sends: the table or one of its
        /// partitions has an enabled `BEFORE INSERT` row trigger (which may return NULL), or
        /// it has a rule. `nil` when not known (a catalog made by hand, or read before this
        /// was), taken as yes. A bulk insert into such a table is sent in a transaction, and
        /// rolled back when a row did not come back.
        public var dropsInserts: Bool? = nil

        /// Creates a table by hand.
        ///
        /// - Parameters:
        ///   - schema: The schema that holds it; `public` by default.
        ///   - name: The table's name.
        ///   - kind: What kind of relation it is; a table by default.
        ///   - columns: Its columns, in order.
        ///   - primaryKey: The primary key's columns, in key order; none by default.
        ///   - uniqueKeys: Its unique keys other than the primary key.
        ///   - foreignKeys: The foreign keys it holds.
        ///   - parent: The table it inherits from (`INHERITS`), if any.
        ///   - allowedWrites: What PostgreSQL lets a statement do to it; `nil` (not known) by default.
        ///   - viewSource: For a view, where its rows and columns come from; `nil` by default.
        public init(
            schema: String = "public", name: String, kind: Kind = .table, columns: [Column],
            primaryKey: [String] = [], uniqueKeys: [UniqueKey] = [], foreignKeys: [ForeignKey] = [], parent: TableName? = nil,
            allowedWrites: WriteOperations? = nil, viewSource: ViewSource? = nil
        ) {
            self.viewSource = viewSource
            self.parent = parent
            self.allowedWrites = allowedWrites
            self.schema = schema
            self.name = name
            self.kind = kind
            self.columns = columns
            self.primaryKey = primaryKey
            self.uniqueKeys = uniqueKeys
            self.foreignKeys = foreignKeys
        }

        /// What kind of relation a ``Catalog/Table`` is (`pg_class.relkind`); the raw value is how
        /// `relate inspect --format json` writes it.
        ///
        /// - `table`: an ordinary table.
        /// - `partitionedTable`: a partitioned table, read and written through its parent.
        /// - `view`: a view; written only when the server can update it.
        /// - `materializedView`: a materialized view, read-only.
        /// - `foreignTable`: a foreign table.
        public enum Kind: String, Sendable, Codable, Hashable {
            /// A table, a partitioned table, a view or a materialized view: see ``Catalog/Table/Kind``.
            case table, partitionedTable = "partitioned-table", view, materializedView = "materialized-view"
            /// A foreign table (a foreign data wrapper's table).
            case foreignTable = "foreign-table"

            /// Whether every row the relation returns holds its primary key: a table's
            /// (partitioned or not) does, where a view's key is an override or inferred, and a
            /// row an `INSTEAD OF` trigger returns may lack it.
            var keysEveryRow: Bool { self == .table || self == .partitionedTable }
        }

        /// Every unique key: the primary key first, then the others.
        public var allUniqueKeys: [[String]] {
            (primaryKey.isEmpty ? [] : [primaryKey]) + uniqueKeys.map(\.columns)
        }

        /// The column named `name`, if the table has one.
        ///
        /// - Parameter name: The column's name, case-sensitive as in the catalog.
        /// - Returns: The column, or `nil`.
        public func column(named name: String) -> Column? {
            columns.first { $0.name == name }
        }
    }

    /// The statements a relation takes: inserts, updates, deletes.
    public struct WriteOperations: OptionSet, Sendable, Codable, Hashable {
        /// The operations' bits, as `pg_relation_is_updatable` gives them (8 insert, 4 update, 16 delete).
        public let rawValue: Int

        /// Makes a set of operations from their bits.
        ///
        /// - Parameter rawValue: The bits: 8 insert, 4 update, 16 delete; others are ignored.
        public init(rawValue: Int) {
            self.rawValue = rawValue & 28
        }

        /// `INSERT`.
        public static let insert = WriteOperations(rawValue: 8)
        /// `UPDATE`.
        public static let update = WriteOperations(rawValue: 4)
        /// `DELETE`.
        public static let delete = WriteOperations(rawValue: 16)
        /// All three.
        public static let all: WriteOperations = [.insert, .update, .delete]
    }

    /// A table's schema and name.
    public struct TableName: Sendable, Codable, Hashable {
        /// The schema that holds the table.
        public var schema: String
        /// The table's name, as in the catalog.
        public var name: String

        /// Names a table.
        ///
        /// - Parameters:
        ///   - schema: The schema that holds it; `public` by default.
        ///   - name: The table's name.
        public init(schema: String = "public", name: String) {
            self.schema = schema
            self.name = name
        }
    }

    /// A column of a ``Catalog/Table``.
    public struct Column: Sendable, Codable, Hashable {
        /// The column's name, as in the catalog.
        public var name: String
        /// The type's name: `int4`, `varchar`, `text[]`, or a user type's name.
        public var type: String
        /// The OID results report for this column (a domain's base type; for an array of a
        /// domain, the array of its base type, as the column is read).
        public var typeOID: UInt32
        /// Whether the column accepts NULL (no `NOT NULL` constraint).
        public var isNullable: Bool
        /// The column's default expression as the server prints it (`nextval('person_id_seq'::regclass)`),
        /// or `nil` when it has none.
        public var defaultValue: String?
        /// Whether the column is an identity column (`GENERATED … AS IDENTITY`).
        public var isIdentity: Bool
        /// Whether the column is a stored generated column (`GENERATED ALWAYS AS (…) STORED`),
        /// which is never written.
        public var isGenerated: Bool
        /// For an enum type (a domain over one, or an array of one): its labels, in order.
        public var enumLabels: [String]? = nil
        /// The type's modifier as the catalog keeps it (`atttypmod`, or the domain's
        /// `typtypmod`): a `varchar(n)`'s length plus 4, a `numeric(p, s)`'s precision and
        /// scale; `nil` when the type has none.
        public var typeModifier: Int32? = nil
        /// For a composite type (or an array of one): its fields, read and written in binary.
        public var composite: CompositeType? = nil
        /// For an array of a domain: the array of the domain's base type (`integer[]`), which
        /// a select list casts the column to. Results would report the domain's own array,
        /// whose elements name the domain; ``typeOID`` is the base type's array.
        var readsAs: String? = nil
        /// For an array: its type by its element's qualified, quoted name (`"pg_catalog"."int4"[]`),
        /// which a value compared with the column is cast to: the server has no `=` between
        /// arrays of two types (`integer[] = bigint[]`), as it has between their elements.
        var arrayType: String? = nil
        /// The collation the column's text compares by, qualified and quoted (`"pg_catalog"."en-x-icu"`,
        /// `pg_catalog."default"`); `nil` where that is by code points (`C`, `POSIX`) or the
        /// type has none. Pending rows are judged in memory by it (see `ServerRanks`).
        var collation: String? = nil
        /// Whether the type (an array's element, a domain's bottom type) has no B-tree
        /// equality of its own (`xml`, `point`, the geometric types; `box`, whose `=`
        /// compares areas): a save's check that a row still holds what memory read compares
        /// text forms. Optional, so that a catalog encoded before it decodes (`nil`: no).
        var comparesAsText: Bool? = nil
        /// Whether ``collation`` tells texts apart by their bytes alone (`collisdeterministic`):
        /// then equal text is equal bytes, and only an order needs the server. `nil`: yes.
        var collationIsDeterministic: Bool? = nil
        /// Whether two values the column's equality takes for one are stored alike, so that
        /// memory may tell them apart by their bytes: not under a nondeterministic collation,
        /// nor for a type whose B-tree equality has no `equalimage` support (`numeric`'s 1.0
        /// and 1.00, an `interval`'s day and 24 hours, `citext`, `float8`, `jsonb`, ranges,
        /// records). A relationship over such a column is linked by the server
        /// (``EntityLayout/linksByServer``). `nil` (a catalog encoded before): yes.
        var equalityIsByImage: Bool? = nil
        /// The collation the column compares by, whichever it is (`"pg_catalog"."C"` too),
        /// qualified and quoted; `nil` for a type without one. A join of a relationship the
        /// server links compares under the referenced column's, as the foreign key does.
        var collationName: String? = nil

        /// Creates a column by hand.
        ///
        /// - Parameters:
        ///   - name: The column's name.
        ///   - type: Its type's name (`int4`, `text`, `text[]`).
        ///   - typeOID: The OID results report for it; `0` when unknown.
        ///   - isNullable: Whether it accepts NULL; `true` by default.
        ///   - defaultValue: Its default expression, if any.
        ///   - isIdentity: Whether it is an identity column.
        ///   - isGenerated: Whether it is a generated column.
        ///   - enumLabels: For an enum type, its labels in order.
        ///   - typeModifier: The type's modifier (`atttypmod`); none by default.
        public init(
            name: String, type: String, typeOID: UInt32 = 0, isNullable: Bool = true,
            defaultValue: String? = nil, isIdentity: Bool = false, isGenerated: Bool = false, enumLabels: [String]? = nil,
            typeModifier: Int32? = nil
        ) {
            self.enumLabels = enumLabels
            self.typeModifier = typeModifier
            self.name = name
            self.type = type
            self.typeOID = typeOID
            self.isNullable = isNullable
            self.defaultValue = defaultValue
            self.isIdentity = isIdentity
            self.isGenerated = isGenerated
        }

        /// Whether the server fills the column when an INSERT leaves it out.
        public var hasDefault: Bool { defaultValue != nil || isIdentity || isGenerated }
    }

    /// A unique constraint, or a unique index that is neither partial nor on expressions.
    public struct UniqueKey: Sendable, Codable, Hashable {
        /// The constraint's (or index's) name.
        public var name: String
        /// The key's columns, in key order.
        public var columns: [String]
        /// Whether a `UNIQUE` constraint declares the key; `false` for a unique index made
        /// with `CREATE UNIQUE INDEX`. A table without a primary key takes a constraint
        /// before an index as its key (see <doc:Relationships>).
        public var isConstraint: Bool
        /// Whether the key counts NULLs as equal (`UNIQUE NULLS NOT DISTINCT`, PostgreSQL 15):
        /// two rows may not both hold NULL in it; `nil` when not read (a NULL taken by no other).
        public var nullsNotDistinct: Bool? = nil
        /// For a partial index: the columns its predicate reads (a row whose change of them
        /// may take it into the index, or out of it); `nil` for a key, or when not read.
        public var predicateColumns: [String]? = nil

        /// Creates a unique key by hand.
        ///
        /// - Parameters:
        ///   - name: The constraint's name.
        ///   - columns: The key's columns, in key order.
        ///   - isConstraint: Whether a constraint declares it (`true`, the default) or only
        ///     a unique index.
        public init(name: String, columns: [String], isConstraint: Bool = true) {
            self.name = name
            self.columns = columns
            self.isConstraint = isConstraint
        }

        private enum CodingKeys: String, CodingKey {
            case name, columns, isConstraint
        }

        /// Decodes a unique key; one encoded before `isConstraint` existed counts as a constraint.
        ///
        /// - Parameter decoder: The decoder to read from.
        /// - Throws: A `DecodingError` when the name or the columns are missing.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            columns = try container.decode([String].self, forKey: .columns)
            isConstraint = try container.decodeIfPresent(Bool.self, forKey: .isConstraint) ?? true
        }
    }

    /// A foreign key constraint, as the table that holds it declares it.
    public struct ForeignKey: Sendable, Codable, Hashable {
        /// The constraint's name, which relationship overrides and error messages use.
        public var name: String
        /// Columns of the table that holds the key, paired in order with `referencedColumns`.
        public var columns: [String]
        /// The schema of the referenced table.
        public var referencedSchema: String
        /// The referenced table.
        public var referencedTable: String
        /// The referenced columns (a primary or unique key), paired in order with ``columns``.
        public var referencedColumns: [String]
        /// What deleting a referenced row does to the rows that refer to it.
        public var onDelete: Action
        /// What changing a referenced key does to the rows that refer to it.
        public var onUpdate: Action
        /// Whether the constraint is `DEFERRABLE`.
        public var isDeferrable: Bool
        /// Whether the constraint is `INITIALLY DEFERRED`: checked at commit, not per statement.
        public var isInitiallyDeferred: Bool
        /// A partitioned table's key declared on its partitions with differing `ON DELETE`
        /// actions: what deleting a referenced row does depends on the partition a
        /// referencing row is in (`onDelete` is the first declaration's). Also set on the
        /// model's copy of a parent's key on a child table (`INHERITS`), which the database
        /// does not enforce there.
        public var onDeleteVaries: Bool
        /// The columns of ``columns`` that `ON DELETE SET NULL (…)` or `SET DEFAULT (…)`
        /// names (PostgreSQL 15 and later): the action sets those alone, and the others keep
        /// their values. `nil`: every column of the key, as before PostgreSQL 15.
        public var onDeleteSetColumns: [String]?

        /// Creates a foreign key by hand.
        ///
        /// - Parameters:
        ///   - name: The constraint's name.
        ///   - columns: The columns of the table that holds the key.
        ///   - referencedSchema: The referenced table's schema; `public` by default.
        ///   - referencedTable: The referenced table.
        ///   - referencedColumns: The referenced columns, paired in order with `columns`.
        ///   - onDelete: The `ON DELETE` action; `NO ACTION` by default.
        ///   - onUpdate: The `ON UPDATE` action; `NO ACTION` by default.
        ///   - isDeferrable: Whether the constraint is deferrable.
        ///   - isInitiallyDeferred: Whether it is initially deferred.
        ///   - onDeleteVaries: Whether a partitioned table's partitions declare differing `ON DELETE` actions.
        ///   - onDeleteSetColumns: The columns `ON DELETE SET NULL (…)` or `SET DEFAULT (…)`
        ///     names; `nil` (the default) for all of `columns`.
        public init(
            name: String, columns: [String], referencedSchema: String = "public", referencedTable: String,
            referencedColumns: [String], onDelete: Action = .noAction, onUpdate: Action = .noAction,
            isDeferrable: Bool = false, isInitiallyDeferred: Bool = false, onDeleteVaries: Bool = false,
            onDeleteSetColumns: [String]? = nil
        ) {
            self.onDeleteVaries = onDeleteVaries
            self.onDeleteSetColumns = onDeleteSetColumns
            self.name = name
            self.columns = columns
            self.referencedSchema = referencedSchema
            self.referencedTable = referencedTable
            self.referencedColumns = referencedColumns
            self.onDelete = onDelete
            self.onUpdate = onUpdate
            self.isDeferrable = isDeferrable
            self.isInitiallyDeferred = isInitiallyDeferred
        }

        /// A foreign key's `ON DELETE` or `ON UPDATE` action; the raw value is the SQL spelling.
        ///
        /// - `noAction`: `NO ACTION`, the default: the statement fails if rows still refer
        ///   (checked at the end of the statement, or at commit when deferred).
        /// - `restrict`: `RESTRICT`: the statement fails at once if rows still refer.
        /// - `cascade`: `CASCADE`: the referring rows are deleted (or their key updated) too.
        /// - `setNull`: `SET NULL`: the referring columns are set to NULL.
        /// - `setDefault`: `SET DEFAULT`: the referring columns are set to their defaults.
        public enum Action: String, Sendable, Codable, Hashable {
            /// `NO ACTION`, `RESTRICT`, `CASCADE`, `SET NULL` or `SET DEFAULT`: see ``Catalog/ForeignKey/Action``.
            case noAction = "no action", restrict, cascade, setNull = "set null", setDefault = "set default"
        }
    }
}
