/// A relationship as seen from one entity: to-one or to-many, the columns joined on, and
/// the rule that made it. Every relationship has an inverse on the other entity, with the
/// ends swapped.
public struct Relationship: Sendable, Hashable {
    public enum Kind: String, Sendable, Codable, Hashable {
        case manyToOne = "many-to-one", oneToMany = "one-to-many", oneToOne = "one-to-one", manyToMany = "many-to-many"
    }

    /// What made the relationship.
    public enum Rule: String, Sendable, Codable, Hashable {
        case foreignKey = "foreign-key", uniqueForeignKey = "unique-foreign-key"
        case anyTwoForeignKeys = "any-two-foreign-keys", keyed, strict, override
    }

    /// Which side holds the foreign key.
    public enum Side: String, Sendable, Codable, Hashable {
        case from, to, via
    }

    public struct End: Sendable, Codable, Hashable {
        public var schema: String
        public var table: String
        public var columns: [String]
    }

    public struct Via: Sendable, Codable, Hashable {
        public var schema: String
        public var table: String
        /// The helper's columns that refer to `from`.
        public var fromColumns: [String]
        /// The helper's columns that refer to `to`.
        public var toColumns: [String]
    }

    /// The name this relationship answers to: its bare name when no other key of the entity
    /// claims it, else its qualified name.
    public internal(set) var key: String
    /// The name a person would use (`email`, `person`, `author`); may be shared, and then
    /// asking for it throws an error that lists the qualified names.
    public internal(set) var name: String
    /// A name unique in the entity: `book_by_authorId`, `title_via_person_title_rel`, or a
    /// to-one's constraint name.
    public internal(set) var qualifiedName: String
    /// Other names it answers to (a to-one's constraint name and derived name).
    public internal(set) var aliases: [String]
    public let kind: Kind
    public let from: End
    public let to: End
    public let via: Via?
    public let foreignKeyIn: Side
    /// The foreign key constraint: for many-to-many, the helper's key that refers to `to`.
    public let constraint: String
    public let rule: Rule
    /// The foreign key's `ON DELETE` action: for many-to-many, of the helper's key that
    /// refers to `from`.
    public let onDelete: Catalog.ForeignKey.Action
    /// The key's partitions disagree on `ON DELETE` (see ``Catalog/ForeignKey/onDeleteVaries``):
    /// after a delete, the object layer reads the dependants again instead of guessing.
    public let onDeleteVaries: Bool
    /// The foreign key's `ON UPDATE` action, mirrored in memory when a key it refers to is
    /// written: for many-to-many, of the helper's key that refers to `from`.
    public let onUpdate: Catalog.ForeignKey.Action
    /// The inverse's name in the target entity (its ``key``).
    public internal(set) var inverseKey: String = ""

    /// Pairs a relationship with its inverse while the model is built.
    let pairID: Int
    /// The inverse's index in the target entity's ``Entity/relationships``; the model
    /// builder sets it for every relationship it makes (they come in pairs).
    var inverseIndex: Int?

    public var isToMany: Bool { kind == .oneToMany || kind == .manyToMany }

    /// Whether `to` is at most one row for each `from` row.
    public var isToOne: Bool { !isToMany }

    init(
        name: String, qualifiedName: String, aliases: [String], kind: Kind, from: End, to: End, via: Via?,
        foreignKeyIn: Side, constraint: String, rule: Rule, onDelete: Catalog.ForeignKey.Action, onDeleteVaries: Bool = false,
        onUpdate: Catalog.ForeignKey.Action = .noAction, pairID: Int
    ) {
        self.onDeleteVaries = onDeleteVaries
        self.onUpdate = onUpdate
        self.key = name
        self.name = name
        self.qualifiedName = qualifiedName
        self.aliases = aliases
        self.kind = kind
        self.from = from
        self.to = to
        self.via = via
        self.foreignKeyIn = foreignKeyIn
        self.constraint = constraint
        self.rule = rule
        self.onDelete = onDelete
        self.pairID = pairID
    }
}
