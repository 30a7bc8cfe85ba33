/// A relationship as seen from one entity: to-one or to-many, the columns joined on, and
/// the rule that made it. Every relationship has an inverse on the other entity, with the
/// ends swapped.
public struct Relationship: Sendable, Hashable {
    /// How many objects are at each end; the raw value is how `relate inspect` writes it.
    ///
    /// - `manyToOne`: the foreign key is in this entity; one object at the other end.
    /// - `oneToMany`: the foreign key is in the other entity; a set of objects.
    /// - `oneToOne`: a unique foreign key; one object at either end.
    /// - `manyToMany`: through a helper table with two foreign keys; a set of objects.
    public enum Kind: String, Sendable, Codable, Hashable {
        /// Many-to-one, one-to-many, one-to-one, many-to-many: see ``Relationship/Kind``.
        case manyToOne = "many-to-one", oneToMany = "one-to-many", oneToOne = "one-to-one", manyToMany = "many-to-many"
    }

    /// What made the relationship; the raw value is how `relate inspect` writes it.
    ///
    /// - `foreignKey`: a foreign key (many-to-one here, one-to-many on the inverse).
    /// - `uniqueForeignKey`: a foreign key whose columns are a unique key: one-to-one.
    /// - `anyTwoForeignKeys`, `keyed`, `strict`: a many-to-many helper table, recognised
    ///   by that ``ManyToManyRule``.
    /// - `override`: an ``Override/foreignKey(_:_:references:_:name:)`` of the ``ModelOptions``.
    public enum Rule: String, Sendable, Codable, Hashable {
        /// A foreign key, or a unique one: see ``Relationship/Rule``.
        case foreignKey = "foreign-key", uniqueForeignKey = "unique-foreign-key"
        /// A many-to-many rule, or an override: see ``Relationship/Rule``.
        case anyTwoForeignKeys = "any-two-foreign-keys", keyed, strict, override
    }

    /// Which side holds the foreign key.
    ///
    /// - `from`: this relationship's entity (many-to-one, or the holding side of a one-to-one).
    /// - `to`: the entity it leads to (one-to-many, or the other side of a one-to-one).
    /// - `via`: the helper table of a many-to-many relationship.
    public enum Side: String, Sendable, Codable, Hashable {
        /// This entity, the other one, or a helper table: see ``Relationship/Side``.
        case from, to, via
    }

    /// One end of a relationship: a table and the columns the join uses there.
    public struct End: Sendable, Codable, Hashable {
        /// The table's schema.
        public var schema: String
        /// The table's name.
        public var table: String
        /// The columns joined on at this end: the foreign key's columns, or the key it refers to.
        public var columns: [String]
    }

    /// The helper table of a many-to-many relationship.
    public struct Via: Sendable, Codable, Hashable {
        /// The helper table's schema.
        public var schema: String
        /// The helper table's name.
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
    /// How many objects are at each end.
    public let kind: Kind
    /// The end at this relationship's entity.
    public let from: End
    /// The end at the entity the relationship leads to.
    public let to: End
    /// The helper table, for a many-to-many relationship; `nil` otherwise.
    public let via: Via?
    /// Which side holds the foreign key: `from` (many-to-one, or the holding side of a
    /// one-to-one), `to` (one-to-many) or `via` (many-to-many).
    public let foreignKeyIn: Side
    /// The foreign key constraint: for many-to-many, the helper's key that refers to `to`.
    public let constraint: String
    /// What made the relationship: a foreign key, a unique foreign key, one of the
    /// many-to-many rules, or an override.
    public let rule: Rule
    /// The foreign key's `ON DELETE` action: for many-to-many, of the helper's key that
    /// refers to `from`.
    public let onDelete: Catalog.ForeignKey.Action
    /// The key's partitions disagree on `ON DELETE`, or it is a parent's key a child table
    /// carries unenforced (see ``Catalog/ForeignKey/onDeleteVaries``): after a delete, the
    /// object layer reads the dependants again instead of guessing.
    public let onDeleteVaries: Bool
    /// The columns of the key that `ON DELETE SET NULL (…)` or `SET DEFAULT (…)` names
    /// (see ``Catalog/ForeignKey/onDeleteSetColumns``); `nil` for all of them.
    public let onDeleteSetColumns: [String]?
    /// The foreign key's `ON UPDATE` action, mirrored in memory when a key it refers to is
    /// written: for many-to-many, of the helper's key that refers to `from`.
    public let onUpdate: Catalog.ForeignKey.Action
    /// The inverse's name in the target entity (its ``key``).
    public internal(set) var inverseKey: String = ""
    /// Whether the foreign key is checked at `COMMIT` unless a transaction says otherwise
    /// (`DEFERRABLE INITIALLY DEFERRED`): a save may delete a row and insert another under
    /// its key while rows still refer to it.
    var isInitiallyDeferred = false

    /// Pairs a relationship with its inverse while the model is built.
    let pairID: Int
    /// The inverse's index in the target entity's ``Entity/relationships``; the model
    /// builder sets it for every relationship it makes (they come in pairs).
    var inverseIndex: Int?

    /// Whether `to` can be many rows for each `from` row: one-to-many and many-to-many, read
    /// as a ``RelationshipSet``.
    public var isToMany: Bool { kind == .oneToMany || kind == .manyToMany }

    /// Whether `to` is at most one row for each `from` row.
    public var isToOne: Bool { !isToMany }

    init(
        name: String, qualifiedName: String, aliases: [String], kind: Kind, from: End, to: End, via: Via?,
        foreignKeyIn: Side, constraint: String, rule: Rule, onDelete: Catalog.ForeignKey.Action, onDeleteVaries: Bool = false,
        onDeleteSetColumns: [String]? = nil, onUpdate: Catalog.ForeignKey.Action = .noAction, pairID: Int
    ) {
        self.onDeleteVaries = onDeleteVaries
        self.onDeleteSetColumns = onDeleteSetColumns
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
