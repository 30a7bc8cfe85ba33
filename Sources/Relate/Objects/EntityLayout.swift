import Foundation
import RelatePostgres

/// The SQL pieces of one entity, quoted once per model: its table, its select list, how to
/// find a row by key, where each relationship's columns are. Immutable, so one layout
/// serves every context of a model, on any thread. Values are always bound; only quoted
/// identifiers appear here.
final class EntityLayout: Sendable {
    let entity: Entity
    /// The entity's index in the model.
    let index: Int
    /// `"schema"."table"`.
    let table: String
    /// What statements on the entity's own rows read and write: `ONLY "schema"."table"` for
    /// a table others inherit from (their rows are objects of their own entities), else
    /// ``table``. A fetch reads ``table``, children's rows included.
    let source: String
    /// Whether any table inherits from the entity's (whether the model has it or not).
    let hasChildren: Bool
    /// When a table under the entity's is none of the model's descendants of it (the model
    /// leaves it out, it is in a schema not searched, or its `INHERITS` names another table
    /// first): the quoted names of the entity's table and of those descendants, the tables
    /// whose rows a fetch of it keeps to (`tableoid = ANY(…)`); `nil` when every table under
    /// it is such a descendant. A row of another table is no object of this entity: one
    /// under its key would be two objects' values in one.
    let ownTables: [String]?

    /// The condition that keeps a statement to the rows of ``ownTables`` (`alias.tableoid`,
    /// or the bare column), their names bound by `bind`; `nil` when it needs none.
    func ownRows(alias: String?, bind: ([String]) -> String) -> String? {
        ownTables.map { "\(alias.map { $0 + "." } ?? "")tableoid = ANY(\(bind($0))::regclass[])" }
    }
    /// Quoted column names, by attribute index.
    let columns: [String]
    /// Each attribute's type, by attribute index.
    let types: [PostgresType]
    /// The cast each attribute is read through, by attribute index: `text` for types
    /// without a binary decoder, `numeric` for `money` (see `PostgresType.selectCast`).
    let selectCasts: [String?]
    /// The type a value compared with the column is cast to, where the server cannot infer
    /// it: a composite's (`record = record` would take the parameter as an anonymous record),
    /// an array's (`integer[] = bigint[]` has no operator).
    let parameterCasts: [String?]
    /// Whether a check that the row still holds a value compares text forms, by attribute
    /// index: a type without a B-tree equality of its own (`Catalog.Column.comparesAsText`).
    let comparedAsText: [Bool]
    /// By attribute index, whether a value goes to the column as a text the library makes
    /// of it (``AttributeValue/encodable(_:for:entity:use:)``: an enum array's literal, a
    /// `json` document, an array of a type sent as several), where memory holds it as a
    /// read gives it: `save()` encodes such a held value as a value given for the column.
    let sendsAsText: [Bool]
    /// Attribute indexes of the primary key, in key order.
    let primaryKey: [Int]
    /// The primary key's columns and each other unique key's, as attribute indexes: the
    /// values no two rows hold at once.
    let uniqueColumns: [[Int]]
    /// Each attribute's key, by attribute index.
    let attributeKeys: [String]
    /// `entity.keys`, kept here so that resolving a key does not copy the `Entity`.
    let keys: [String: Entity.KeyTarget]
    /// Whether each relationship is to-many, by relationship index.
    let isToMany: [Bool]
    /// Each relationship's key, by relationship index: for an entity's handful of
    /// relationships a scan of these short strings is cheaper than hashing the key.
    let relationshipKeys: [String]
    /// Each relationship's `from.columns` as attribute indexes, by relationship index.
    let fromColumns: [[Int]]
    /// Each relationship's `to.columns` as attribute indexes of the target, by relationship index.
    let targetColumns: [[Int]]
    /// Each relationship's target entity, by relationship index.
    let targets: [Int]
    /// Where each relationship's inverse is, by relationship index.
    let inverses: [RelationshipAddress]
    /// Each many-to-many relationship's helper entity, by relationship index (`nil` for others).
    let helpers: [Int?]
    /// For each many-to-many relationship, the helper's columns that refer to this entity
    /// and to the target, as the helper's attribute indexes (empty for others).
    let helperColumns: [(from: [Int], to: [Int])]
    /// Per relationship: whether the server may take a row's values for the target's key
    /// where their bytes differ (a column's ``Catalog/Column/equalityIsByImage`` is false:
    /// `citext`, a nondeterministic collation, `numeric`, `interval`). Memory cannot pair
    /// such rows by their bytes: loads ask the server which owner each row belongs to
    /// (``Statements/load(relationship:of:in:ownerKeys:)``), and a row memory cannot place
    /// has the sets it may belong to loaded again (``ObjectGraph/unsettled``).
    let linksByServer: [Bool]
    /// The columns in attribute order, as a select list: made once, sent with every query.
    let selectColumns: String
    /// `SELECT <columns> FROM <table> WHERE <key> = $1 …`: a row by primary key, the
    /// statement sent most often, made once (empty without a primary key).
    let selectByPrimaryKey: String
    /// The relationships whose foreign key this table holds, with the key's attribute indexes.
    let foreignKeys: [(relationship: Int, columns: [Int])]
    /// By attribute index, whether a relationship joins on the attribute (a foreign key of
    /// this table's, or a key another table's refers to): only a change of such an
    /// attribute can move an object between sets or change a to-one.
    let joinsOn: [Bool]
    /// By attribute index, whether another table's foreign key refers to the attribute (a
    /// primary key's column, or a unique one's): a change of one moves what refers to it
    /// as its `ON UPDATE` action says.
    let referenced: [Bool]

    /// Whether a write of `columns` changes the key or a column another table refers to:
    /// the object is then moved (``ObjectGraph/move(_:to:stale:reloads:)``), and what refers
    /// to it follows its `ON UPDATE` action.
    func movesReferences(writing columns: some Sequence<Int>) -> Bool {
        columns.contains { referenced[$0] || primaryKey.contains($0) }
    }
    /// By attribute index, whether the column takes NULL, and whether a value needs the
    /// attribute to be validated (enum labels, a length, a precision): validating 1,000
    /// changed cells reads these instead of copying each one's attribute (its strings).
    let isNullable: [Bool]
    let checksValue: [Bool]
    /// By attribute index, whether an `UPDATE` of the column stores what it sends, so that
    /// `save()` need not read the row back: the table rewrites nothing (no `BEFORE UPDATE`
    /// row trigger, rule, table below it or generated column) and the type keeps a value
    /// of its Swift kind as sent (integers, `float8`, `bool`, `text`, `varchar` within the
    /// length validation checks, `uuid`, `bytea`; not `numeric`, whose scale the column
    /// sets, nor a timestamp, which the server rounds to microseconds). See
    /// ``storesAsSent(_:_:)``.
    let storesAsSent: [Bool]
    /// By attribute index, whether a change of the column may order a save's writes: it is
    /// in a unique key or index, or in a foreign key (``DatabaseContext/saveSteps(_:)``).
    let ordersSave: [Bool]
    /// The columns of each unique index, partial ones too, as attribute indexes, with whether
    /// it counts NULLs as equal: the values a save frees before another row takes them
    /// (``Entity/valuesHeldOnce``).
    let heldOnce: [HeldOnce]

    /// Columns no two rows hold the same values in, as attribute indexes (``heldOnce``).
    struct HeldOnce {
        let columns: [Int]
        let nullsNotDistinct: Bool
        /// For a partial index, the columns its predicate reads (a change of them may take
        /// a row into the index or out of it); `nil` for a key.
        let predicate: [Int]?
    }

    /// `entityIndex` finds an entity of the model by schema and table.
    init(
        entity: Entity, index: Int, model: Model, entityIndex: [QualifiedName: Int], hasDescendants: Bool = false,
        ownTables: [String]? = nil, quote: (String) throws -> String
    ) throws {
        self.entity = entity
        self.index = index
        table = try quote(entity.schema) + "." + quote(entity.table)
        hasChildren = hasDescendants || !entity.children.isEmpty
        source = hasChildren ? "ONLY " + table : table
        self.ownTables = ownTables
        columns = try entity.attributes.map { try quote($0.name) }
        types = entity.attributes.map { PostgresType($0.typeOID) }
        // An array of enum labels reads as text[], so that it is [String] as a label is a String.
        // A composite reads in binary, as records (see StoredValue.Reader.readers(for:entity:)).
        // An array of a domain reads as its base type's array (its elements name the domain).
        selectCasts = entity.attributes.map { attribute in
            attribute.isEnumArray ? "text[]" : attribute.composite != nil ? nil : PostgresType(attribute.typeOID).selectCast ?? attribute.readsAs
        }
        parameterCasts = try entity.attributes.map { attribute in
            guard let composite = attribute.composite else { return attribute.arrayType }
            return try quote(composite.schema) + "." + quote(composite.name) + (attribute.type.hasSuffix("[]") ? "[]" : "")
        }
        // A composite's parameter is untyped (its cast names the type): it compares as itself.
        comparedAsText = entity.attributes.map { $0.comparesAsText && $0.composite == nil }
        sendsAsText = entity.attributes.map(\.sendsAsText)
        primaryKey = entity.primaryKey.compactMap { column in entity.attributes.firstIndex { $0.name == column } }
        uniqueColumns = ([entity.primaryKey] + entity.uniqueKeys).filter { !$0.isEmpty }.map { names in
            names.compactMap { column in entity.attributes.firstIndex { $0.name == column } }
        }
        attributeKeys = entity.attributes.map(\.key)
        keys = entity.keys
        isToMany = entity.relationships.map(\.isToMany)
        relationshipKeys = entity.relationships.map(\.key)
        let attributes = entity.attributes
        let fromColumns = entity.relationships.map { relationship in
            relationship.from.columns.compactMap { name in attributes.firstIndex { $0.name == name } }
        }
        self.fromColumns = fromColumns
        var joinsOn = [Bool](repeating: false, count: entity.attributes.count)
        for column in fromColumns.joined() { joinsOn[column] = true }
        self.joinsOn = joinsOn
        var referenced = [Bool](repeating: false, count: entity.attributes.count)
        for (relationship, columns) in zip(entity.relationships, fromColumns) where relationship.foreignKeyIn != .from {
            for column in columns { referenced[column] = true }
        }
        self.referenced = referenced
        isNullable = entity.attributes.map(\.isNullable)
        checksValue = entity.attributes.map { $0.enumLabels != nil || ($0.typeModifier ?? 0) >= 4 }
        let rewrites = entity.rewritesUpdates || entity.attributes.contains(where: \.isGenerated)
        storesAsSent = types.map { type in
            !rewrites && [.int2, .int4, .int8, .float8, .bool, .text, .varchar, .uuid, .bytea].contains(type)
        }
        foreignKeys = entity.relationships.indices.compactMap { index in
            entity.relationships[index].foreignKeyIn == .from ? (index, fromColumns[index]) : nil
        }
        func indexes(_ names: [String]) -> [Int] { names.compactMap { column in entity.attributes.firstIndex { $0.name == column } } }
        heldOnce = entity.valuesHeldOnce.map { key in
            HeldOnce(columns: indexes(key.columns), nullsNotDistinct: key.nullsNotDistinct, predicate: key.predicateColumns.map(indexes))
        }
        var ordersSave = [Bool](repeating: false, count: entity.attributes.count)
        for column in uniqueColumns.joined() { ordersSave[column] = true }
        for key in heldOnce { for column in key.columns + (key.predicate ?? []) { ordersSave[column] = true } }
        for (_, columns) in foreignKeys { for column in columns { ordersSave[column] = true } }
        self.ordersSave = ordersSave
        var targets: [Int] = []
        var targetColumns: [[Int]] = []
        var inverses: [RelationshipAddress] = []
        var helpers: [Int?] = []
        var helperColumns: [(from: [Int], to: [Int])] = []
        for relationship in entity.relationships {
            // The model builder relates only entities it has, and pairs every relationship
            // with its inverse; a model that breaks this was not made by it.
            let helper = relationship.via.flatMap { entityIndex[QualifiedName($0.schema, $0.table)] }
            guard let target = entityIndex[QualifiedName(relationship.to.schema, relationship.to.table)],
                let inverse = relationship.inverseIndex, (relationship.via == nil) == (helper == nil)
            else {
                throw RelateError(
                    kind: .invalidOverride,
                    message: "relationship \"\(relationship.key)\" of \"\(entity.name)\" lacks its inverse, target or helper in the model; "
                        + "build the model with Model(catalog:options:)",
                    entity: entity.name, key: relationship.key)
            }
            let targetAttributes = model.entities[target].attributes
            targets.append(target)
            targetColumns.append(relationship.to.columns.compactMap { name in targetAttributes.firstIndex { $0.name == name } })
            inverses.append(RelationshipAddress(entity: target, relationship: inverse))
            helpers.append(helper)
            if let helper, let via = relationship.via {
                let helperAttributes = model.entities[helper].attributes
                func indexes(_ names: [String]) -> [Int] { names.compactMap { name in helperAttributes.firstIndex { $0.name == name } } }
                helperColumns.append((indexes(via.fromColumns), indexes(via.toColumns)))
            } else {
                helperColumns.append(([], []))
            }
        }
        self.helpers = helpers
        self.helperColumns = helperColumns
        linksByServer = entity.relationships.indices.map { index in
            let own = fromColumns[index].map { attributes[$0] }
            let other = targetColumns[index].map { model.entities[targets[index]].attributes[$0] }
            // (referencing, referenced) column pairs: the foreign key compares by the latter's equality.
            let pairs: [(Attribute, Attribute)]
            if let helper = helpers[index] {
                let (from, to) = helperColumns[index]
                let helperAttributes = model.entities[helper].attributes
                pairs = Array(zip(from.map { helperAttributes[$0] }, own)) + Array(zip(to.map { helperAttributes[$0] }, other))
            } else if entity.relationships[index].foreignKeyIn == .from {
                pairs = Array(zip(own, other))
            } else {
                pairs = Array(zip(other, own))
            }
            return !pairs.allSatisfy(Self.pairsByBytes)
        }
        let (quoted, casts) = (columns, selectCasts)
        selectColumns = quoted.indices.map { index in casts[index].map { "\(quoted[index])::\($0)" } ?? quoted[index] }
            .joined(separator: ", ")
        self.targets = targets
        self.targetColumns = targetColumns
        self.inverses = inverses
        selectByPrimaryKey =
            primaryKey.isEmpty
            ? "" : Statements.rowByPrimaryKey(table: source, selectList: selectColumns, key: primaryKey.map { quoted[$0] })
    }

    /// Whether memory may pair a row whose `referencing` column holds a value with the row
    /// whose `referenced` column holds it by their bytes, as a foreign key from one to the
    /// other pairs them: the referenced column's equality is by image (its collation, when
    /// it has one, is deterministic: the key's is the one the foreign key compares by), and
    /// both sides store a value alike — one type (a `char(n)` of one length: it pads), or
    /// integers (held as one Swift `Int`), or `text` and `varchar`.
    static func pairsByBytes(_ referencing: Attribute, _ referenced: Attribute) -> Bool {
        guard referenced.equalityIsByImage else { return false }
        if referencing.typeOID == referenced.typeOID {
            return PostgresType(referenced.typeOID) != .bpchar || referencing.typeModifier == referenced.typeModifier
        }
        let kinds: [Set<PostgresType>] = [[.int2, .int4, .int8], [.text, .varchar]]
        return kinds.contains { $0.contains(PostgresType(referencing.typeOID)) && $0.contains(PostgresType(referenced.typeOID)) }
    }

    /// Whether an `UPDATE` that sets `column` to `value` stores `value` as memory holds it
    /// (``storesAsSent``, and the value of the column type's own Swift kind, or NULL).
    func storesAsSent(_ column: Int, _ value: StoredValue) -> Bool {
        guard storesAsSent[column] else { return false }
        switch (types[column], value) {
        case (_, .null), (.int2, .integer), (.int4, .integer), (.int8, .integer), (.float8, .double), (.bool, .bool),
            (.text, .string), (.varchar, .string), (.uuid, .uuid), (.bytea, .data):
            return true
        default:
            return false
        }
    }

    /// The relationship `key` names, `nil` when it names none: its own key found by
    /// comparing (hashing the key took 650 instructions a call of `objects(forKey:)`), other
    /// names for it (qualified ones) looked up.
    func relationshipIndex(forKey key: String) -> Int? {
        if relationshipKeys.count <= 16, let index = relationshipKeys.firstIndex(of: key) { return index }
        if case .relationship(let index)? = keys[key] { return index }
        return nil
    }

    /// The columns in attribute order, qualified by `alias` when given.
    func selectList(alias: String? = nil) -> String {
        guard let alias else { return selectColumns }
        return columns.indices.map { index in
            let column = "\(alias).\(columns[index])"
            return selectCasts[index].map { "\(column)::\($0)" } ?? column
        }.joined(separator: ", ")
    }

    func attributeIndexes(_ columnNames: [String]) -> [Int] {
        columnNames.compactMap { name in entity.attributes.firstIndex { $0.name == name } }
    }
}

/// Where a relationship is: its entity's index and its own among the entity's relationships.
struct RelationshipAddress: Hashable, Sendable {
    var entity: Int
    var relationship: Int
}

extension EntityLayout {
    /// A primary key in the server's text form (a change feed's) as the values an object
    /// stores, by the key columns' types; `nil` when a value cannot be matched that way.
    func storedKey(_ key: [String?]) -> [StoredValue]? {
        guard key.count == primaryKey.count else { return nil }
        var values: [StoredValue] = []
        for (text, column) in zip(key, primaryKey) {
            guard let text else { return nil }
            switch types[column].mapping {
            case .integer:
                guard let number = Int(text) else { return nil }
                values.append(.integer(number))
            case .string: values.append(.string(text))
            case .uuid:
                guard let uuid = UUID(uuidString: text) else { return nil }
                values.append(.uuid(uuid))
            default: return nil
            }
        }
        return values
    }
}

extension EntityLayout {
    /// A value memory holds for `column` as a statement sends it: as itself, but where the
    /// column takes values as a text the library makes (``sendsAsText``), encoded as a value
    /// given for the column is.
    func parameter(_ value: StoredValue, column: Int) -> (any PostgresEncodable)? {
        guard sendsAsText[column], let held = value.value else { return value.parameter }
        return (try? AttributeValue.encodable(held, for: entity.attributes[column], entity: entity)) ?? value.parameter
    }
}
