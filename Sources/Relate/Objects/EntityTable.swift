import RelatePostgres

/// One entity as one context sees it: the shared ``EntityLayout`` and the context's own
/// state for it. Objects reach their context through here, so that they hold no reference
/// of their own to it (one weak reference per object costs a side-table update on every
/// fetch and free).
@usableFromInline
final class EntityTable {
    weak var context: DatabaseContext?
    /// The objects in memory of that context.
    weak var graph: ObjectGraph?
    let layout: EntityLayout
    /// Each attribute's key, by attribute index (the layout's, held here too so that the
    /// inlined read path reaches them in one step): for an entity's handful of columns a
    /// scan of these short strings is cheaper than hashing the key.
    @usableFromInline let attributeKeys: [String]

    /// What Observation is told of this entity's objects; `nil` unless the context
    /// ``DatabaseContext/isObservable``.
    var observation: ObjectObservation?
    /// How many attributes the inlined read paths of generated getters may read without
    /// telling anyone: all of them, or none while the context is observable.
    @exclusivity(unchecked) @usableFromInline var directlyReadable: Int

    init(layout: EntityLayout) {
        self.layout = layout
        attributeKeys = layout.attributeKeys
        directlyReadable = layout.attributeKeys.count
    }

    var entity: Entity { layout.entity }
    var index: Int { layout.index }
    var table: String { layout.table }
    var columns: [String] { layout.columns }
    var types: [PostgresType] { layout.types }
    var primaryKey: [Int] { layout.primaryKey }
    var isToMany: [Bool] { layout.isToMany }
    var fromColumns: [[Int]] { layout.fromColumns }
    var foreignKeys: [(relationship: Int, columns: [Int])] { layout.foreignKeys }
    var keys: [String: Entity.KeyTarget] { layout.keys }

    /// The attribute `key` names, if it names one. Inlinable: every typed read starts here.
    @inlinable @inline(__always)
    func attributeIndex(forKey key: String) -> Int? {
        guessedAttributeIndex(forKey: key) ?? searchAttributeIndex(forKey: key)
    }

    /// The attribute `key` names when it is the one after the attribute found last, else
    /// `nil`. Reads tend to go through the attributes in order, so this one comparison is
    /// usually all a read costs.
    @inlinable @inline(__always)
    func guessedAttributeIndex(forKey key: String) -> Int? {
        let guess = nextGuess
        guard guess < attributeKeys.count, attributeKeys[guess] == key else { return nil }
        nextGuess = guess + 1 < attributeKeys.count ? guess + 1 : 0
        return guess
    }

    @usableFromInline
    func searchAttributeIndex(forKey key: String) -> Int? {
        if attributeKeys.count <= 16 {
            guard let index = attributeKeys.firstIndex(of: key) else { return nil }
            // Observed, every read must miss the guess (see `setObservable(_:)`).
            if observation == nil { nextGuess = index + 1 < attributeKeys.count ? index + 1 : 0 }
            return index
        }
        if case .attribute(let index)? = layout.keys[key] { return index }
        return nil
    }

    /// Where ``attributeIndex(forKey:)`` looks first. The context's own state, never
    /// shared: a context and its tables are used from one thread at a time, never in
    /// overlapping accesses.
    @exclusivity(unchecked) @usableFromInline var nextGuess = 0

    func selectList(alias: String? = nil) -> String { layout.selectList(alias: alias) }

    func attributeIndexes(_ columnNames: [String]) -> [Int] { layout.attributeIndexes(columnNames) }
}
