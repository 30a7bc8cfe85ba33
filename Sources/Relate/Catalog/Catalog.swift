/// What the PostgreSQL catalog says about a set of schemas: tables and views, their
/// columns, keys and foreign keys. A plain value, read once by
/// ``Catalog/introspect(_:schemas:)`` (or built by hand in tests) and turned into a
/// ``Model`` by a pure function.
public struct Catalog: Sendable, Codable, Hashable {
    /// The schemas read, in search order; the first one's tables are named without schema.
    public var schemas: [String]
    public var tables: [Table]

    public init(schemas: [String], tables: [Table]) {
        self.schemas = schemas
        self.tables = tables
    }

    public struct Table: Sendable, Codable, Hashable {
        public var schema: String
        public var name: String
        public var kind: Kind
        public var columns: [Column]
        /// Primary key columns in key order; empty when there is none.
        public var primaryKey: [String]
        /// Unique constraints and unique indexes that are neither partial nor on expressions
        /// (the primary key is not repeated here).
        public var uniqueKeys: [UniqueKey]
        public var foreignKeys: [ForeignKey]

        public init(
            schema: String = "public", name: String, kind: Kind = .table, columns: [Column],
            primaryKey: [String] = [], uniqueKeys: [UniqueKey] = [], foreignKeys: [ForeignKey] = []
        ) {
            self.schema = schema
            self.name = name
            self.kind = kind
            self.columns = columns
            self.primaryKey = primaryKey
            self.uniqueKeys = uniqueKeys
            self.foreignKeys = foreignKeys
        }

        public enum Kind: String, Sendable, Codable, Hashable {
            case table, partitionedTable = "partitioned-table", view, materializedView = "materialized-view"
            case foreignTable = "foreign-table"
        }

        /// Every unique key: the primary key first, then the others.
        public var allUniqueKeys: [[String]] {
            (primaryKey.isEmpty ? [] : [primaryKey]) + uniqueKeys.map(\.columns)
        }

        public func column(named name: String) -> Column? {
            columns.first { $0.name == name }
        }
    }

    public struct Column: Sendable, Codable, Hashable {
        public var name: String
        /// The type's name: `int4`, `varchar`, `text[]`, or a user type's name.
        public var type: String
        /// The OID results report for this column (a domain's base type).
        public var typeOID: UInt32
        public var isNullable: Bool
        public var defaultValue: String?
        public var isIdentity: Bool
        public var isGenerated: Bool
        /// For an enum type (or a domain over one): its labels, in order.
        public var enumLabels: [String]? = nil

        public init(
            name: String, type: String, typeOID: UInt32 = 0, isNullable: Bool = true,
            defaultValue: String? = nil, isIdentity: Bool = false, isGenerated: Bool = false, enumLabels: [String]? = nil
        ) {
            self.enumLabels = enumLabels
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

    public struct UniqueKey: Sendable, Codable, Hashable {
        public var name: String
        public var columns: [String]
        public init(name: String, columns: [String]) {
            self.name = name
            self.columns = columns
        }
    }

    public struct ForeignKey: Sendable, Codable, Hashable {
        public var name: String
        /// Columns of the table that holds the key, paired in order with `referencedColumns`.
        public var columns: [String]
        public var referencedSchema: String
        public var referencedTable: String
        public var referencedColumns: [String]
        public var onDelete: Action
        public var onUpdate: Action
        public var isDeferrable: Bool
        public var isInitiallyDeferred: Bool
        /// A partitioned table's key declared on its partitions with differing `ON DELETE`
        /// actions: what deleting a referenced row does depends on the partition a
        /// referencing row is in (`onDelete` is the first declaration's).
        public var onDeleteVaries: Bool

        public init(
            name: String, columns: [String], referencedSchema: String = "public", referencedTable: String,
            referencedColumns: [String], onDelete: Action = .noAction, onUpdate: Action = .noAction,
            isDeferrable: Bool = false, isInitiallyDeferred: Bool = false, onDeleteVaries: Bool = false
        ) {
            self.onDeleteVaries = onDeleteVaries
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

        public enum Action: String, Sendable, Codable, Hashable {
            case noAction = "no action", restrict, cascade, setNull = "set null", setDefault = "set default"
        }
    }
}
