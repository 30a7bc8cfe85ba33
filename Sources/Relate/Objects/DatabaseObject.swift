import Foundation
import RelatePostgres

/// One row as an object: attributes and relationships by key.
///
/// ```swift
/// let name = try ada.value(forKey: "firstname") as? String
/// let emails = try ada.objects(forKey: "email")          // RelationshipSet, written through
/// let owner = try email.object(forKey: "person")          // DatabaseObject?
/// try ada.setValue("Lovelace", forKey: "surname")         // UPDATE at once
/// ```
///
/// A context keeps one object per row, so two fetches of a row give the same instance.
public final class DatabaseObject {
    /// Where the attribute values are, as the database last returned them: cells
    /// `base ..< base + table.columns.count` of `storage`, by attribute index.
    /// Variable only so that an object kept beyond its batch can move to storage of its
    /// own (see `fetch(_:batchSize:_:)`); unchecked like the cells.
    @exclusivity(unchecked) @usableFromInline private(set) var storage: ValueStorage
    /// `base`, in 32 bits: with `isDeleted` beside it the object takes 40 bytes instead of
    /// 48, a 48-byte block from malloc instead of a 64-byte one. A fetch refuses a result of
    /// more cells than that counts (`ObjectGraph.maximumCells`).
    @exclusivity(unchecked) @usableFromInline private(set) var storedBase: UInt32
    /// Read on every attribute access: unchecked for the same reason as the storage's cells.
    @exclusivity(unchecked) public internal(set) var isDeleted = false
    /// The relationships loaded so far; `nil` until the first. A set holds its owner
    /// strongly: the context empties the box on `reset()` (see ``LoadedRelationships``).
    @exclusivity(unchecked) var loaded: LoadedRelationships?

    /// Where the object's cells start in `storage`.
    @inlinable var base: Int { Int(storedBase) }

    init(storage: ValueStorage, base: Int) {
        self.storage = storage
        self.storedBase = UInt32(base)
        storage.objectsMade += 1
    }

    /// Makes a spare the object whose values start at `base` of `storage`: what
    /// `init(storage:base:)` makes, without an allocation. A spare is an object nothing
    /// refers to any more, made ready by ``readyAsSpare()`` (see `ObjectGraph.spareObjects`).
    @inline(__always)
    func reuse(storage: ValueStorage, base: Int) {
        // Most often the storage it had: then no release and retain.
        if self.storage !== storage { self.storage = storage }
        self.storedBase = UInt32(base)
        storage.objectsMade += 1
    }

    /// Points a spare to `empty`, a storage without values, letting go of the one it had.
    func letGoOfValues(for empty: ValueStorage) {
        storage = empty
        storedBase = 0
    }

    /// Forgets what the object was beyond its values (deleted, its loaded relationships
    /// and observers), as a new object has none of it.
    @inline(__always)
    func readyAsSpare() {
        // Written only when it changes: a line not written need not go back to memory.
        if isDeleted { isDeleted = false }
        if loaded != nil { loaded = nil }
    }

    /// Copies the values to storage of the object's own, letting go of the storage it
    /// shared with the other objects of its result.
    func moveToOwnStorage() {
        let width = table.columns.count
        guard storage.isRaw || storage.cells.count > width else { return }
        let own = ValueStorage(table: table, capacity: width)
        own.cells.append(contentsOf: values)
        own.objectsMade = 1
        storage = own
        storedBase = 0
    }

    /// The entity's SQL pieces, shared by its objects; it also knows the context, so that
    /// an object holds no reference of its own to it.
    @usableFromInline var table: EntityTable { storage.table }

    /// Loaded to-many collections, by relationship index.
    var sets: RelationshipSlots<RelationshipSet> { loaded?.sets ?? RelationshipSlots() }
    /// To-one objects found, by relationship index (`.some(nil)`: none).
    var toOne: RelationshipSlots<DatabaseObject?> { loaded?.toOne ?? RelationshipSlots() }

    /// Where to store a loaded relationship.
    var relations: LoadedRelationships {
        if let loaded { return loaded }
        let new = LoadedRelationships()
        loaded = new
        table.graph?.loadedBoxes.append(new)
        return new
    }

    /// The attribute values, by attribute index.
    var values: ObjectValues {
        ObjectValues(storage: storage, base: base, count: table.columns.count)
    }

    @inlinable @inline(__always)
    func storedValue(at index: Int) -> StoredValue {
        storage.value(base: base, column: index)
    }

    /// The attribute at `index` as a `Value`, as ``StoredValue/unboxed(as:)`` answers it:
    /// the typed reads' common case, inlined where `Value` is known.
    @inlinable @inline(__always)
    func unboxedValue<Value>(at index: Int, as type: Value.Type) -> Value?? {
        let storage = self.storage
        return storage.isRaw ? storage.rawCells[base + index].unboxed(as: type) : storage.cells[base + index].unboxed(as: type)
    }

    /// The attribute at `index` as ``value(forKey:)`` answers it.
    @inlinable @inline(__always)
    func anyValue(at index: Int) -> (any Sendable)? {
        let storage = self.storage
        return storage.isRaw ? storage.rawCells[base + index].anyValue : storage.cells[base + index].value
    }

    /// ``anyValue(at:)`` as `Any`: a raw cell's value boxed as `Any` straight away (see
    /// ``RawCell/boxed``).
    @inlinable @inline(__always)
    func boxedValue(at index: Int) -> Any? {
        let storage = self.storage
        return storage.isRaw ? storage.rawCells[base + index].boxed : storage.cells[base + index].value
    }

    /// The context the object belongs to, `nil` once it is gone.
    var context: DatabaseContext? { table.context }

    /// The objects in memory of that context, `nil` once it is gone.
    var graph: ObjectGraph? { table.graph }

    /// The entity the object is a row of: its attributes and relationships.
    public var entity: Entity { table.entity }

    var entityIndex: Int { table.index }

    /// The primary key's values, in key order.
    public var primaryKey: [(any Sendable)?] {
        table.primaryKey.map { values[$0].value }
    }

    /// The primary key's values as stored, in key order: what a statement finds the row by.
    var primaryKeyValues: [StoredValue] {
        table.primaryKey.map { values[$0] }
    }

    var objectKey: ObjectKey? {
        table.primaryKey.isEmpty ? nil : key(at: table.primaryKey)
    }

    /// The key of the values at the attribute `indexes`, as ``ObjectKey`` makes it from
    /// them; a one-integer key (the common one) read without a window on the values.
    @inline(__always)
    func key(at indexes: [Int]) -> ObjectKey? {
        if indexes.count == 1, case .some(.some(let integer)) = unboxedValue(at: indexes[0], as: Int.self) { return .integer(integer) }
        return ObjectKey(values, at: indexes)
    }

    func liveContext() throws(RelateError) -> DatabaseContext {
        guard let context else {
            throw RelateError(kind: .invalidObject, message: "the DatabaseContext of this object is gone")
        }
        // `check(self)` without its first test: this object's context is `context`.
        guard !isDeleted else {
            throw deletedError()
        }
        return context
    }

    // MARK: - Reading

    /// An attribute as a Swift value, a to-one key as `DatabaseObject?`, a to-many key as a
    /// ``RelationshipSet``. An unknown key throws an error with the nearest keys.
    ///
    /// Inlinable in its common case (the attribute after the one read last, of an object
    /// not deleted), so that a cast of the answer (`as? String`) can be decided where the
    /// stored case is known.
    ///
    /// - Parameter key: Any name an attribute or relationship of the entity answers to.
    /// - Returns: The attribute's value (`nil` for NULL), the to-one's object (`nil` for none)
    ///   or the to-many's set.
    /// - Throws: A ``RelateError`` of kind ``RelateError/Kind-swift.struct/unknownKey`` or
    ///   ``RelateError/Kind-swift.struct/ambiguousKey``, one for a deleted object
    ///   (``RelateError/Kind-swift.struct/invalidObject``), or the database's error when a
    ///   relationship is loaded.
    @inlinable @inline(__always)
    public func value(forKey key: String) throws -> Any? {
        if let index = table.guessedAttributeIndex(forKey: key), !isDeleted {
            return boxedValue(at: index)
        }
        return try anyValue(forKey: key)
    }

    /// ``value(forKey:)`` in full.
    @usableFromInline @inline(never)
    func anyValue(forKey key: String) throws -> Any? {
        if let index = try attributeIndex(forReading: key) {
            observeRead(attribute: index)
            return anyValue(at: index)
        }
        let context = try liveContext()
        switch try context.resolve(key, in: entityIndex) {
        case .attribute(let index):
            observeRead(attribute: index)
            return anyValue(at: index)
        case .relationship(let index):
            let relationship = entity.relationships[index]
            return relationship.isToMany ? try relationshipSet(index) : try toOneObject(index)
        }
    }

    /// The attribute `key` names, checked readable (the object is not deleted); `nil` when
    /// the key is not an attribute's. Needs no context: attributes stay readable after it.
    @inlinable @inline(__always)
    func attributeIndex(forReading key: String) throws -> Int? {
        guard let index = table.attributeIndex(forKey: key) else { return nil }
        if isDeleted { throw deletedError() }
        return index
    }

    @usableFromInline
    func deletedError() -> RelateError {
        RelateError(kind: .invalidObject, message: "this \(entity.name) object was deleted", entity: entity.name)
    }

    /// Follows a dotted path: `email.address` is every email's address (an array, from a
    /// to-many), `person.surname` the person's surname. The whole path is checked against
    /// the model first: an unknown key anywhere is an error, even past a missing value.
    ///
    /// ```swift
    /// let addresses = try ada.value(forKeyPath: "email.address") as? [String?]
    /// let surname = try email.value(forKeyPath: "person.surname") as? String
    /// ```
    ///
    /// - Parameter keyPath: Keys separated by dots, each of the entity the previous one leads to.
    /// - Returns: The value at the end of the path: one value through to-one keys, an array of
    ///   values once a to-many key is crossed; `nil` when a to-one on the way is empty.
    /// - Throws: A ``RelateError`` when a key on the path is unknown or ambiguous, or the
    ///   database's error when a relationship is loaded.
    public func value(forKeyPath keyPath: String) throws -> Any? {
        guard keyPath.contains(".") else { return try value(forKey: keyPath) }
        let context = try liveContext()
        return try value(following: try context.layout.steps(of: keyPath, from: entityIndex)[...])
    }

    private func value(following steps: ArraySlice<ModelLayout.KeyStep>) throws -> Any? {
        if isDeleted { throw deletedError() }
        let value: Any?
        switch steps.first {
        case .attribute(_, let index)?:
            observeRead(attribute: index)
            return anyValue(at: index)
        case .relationship(_, let index)?: value = table.isToMany[index] ? try relationshipSet(index) : try toOneObject(index)
        case nil: return self
        }
        let rest = steps.dropFirst()
        guard !rest.isEmpty else { return value }
        switch value {
        case let object as DatabaseObject: return try object.value(following: rest)
        case let set as RelationshipSet: return try set.map { try $0.value(following: rest) }
        default: return nil
        }
    }

    /// The object a to-one key leads to, or `nil`.
    ///
    /// ```swift
    /// let owner = try email.object(forKey: "person")
    /// ```
    ///
    /// - Parameter key: A to-one relationship key.
    /// - Returns: The related object, or `nil` when there is none.
    /// - Throws: A ``RelateError`` when the key is unknown or not to-one, or the database's
    ///   error when the object is loaded.
    public func object(forKey key: String) throws -> DatabaseObject? {
        try toOneObject(relationshipIndex(key, toMany: false))
    }

    /// The counted-set proxy of a to-many key; its members are loaded (one query) when it
    /// is first asked for.
    ///
    /// ```swift
    /// let emails = try ada.objects(forKey: "email")
    /// print(emails.count)
    /// ```
    ///
    /// - Parameter key: A to-many relationship key (one-to-many or many-to-many).
    /// - Returns: The live set of related objects; the same instance each time.
    /// - Throws: A ``RelateError`` when the key is unknown or not to-many, or the database's
    ///   error when the members are loaded.
    public func objects(forKey key: String) throws -> RelationshipSet {
        try relationshipSet(relationshipIndex(key, toMany: true))
    }

    /// The relationship `key` names, when it has the cardinality asked for.
    func relationshipIndex(_ key: String, toMany: Bool) throws -> Int {
        let index = try liveContext().relationshipIndex(key, in: entityIndex)
        guard table.isToMany[index] == toMany else {
            let (found, use) = toMany ? ("to-one", "object(forKey:)") : ("to-many", "objects(forKey:)")
            throw RelateError(
                kind: .unknownKey, message: "key \"\(key)\" of \"\(entity.name)\" is \(found): use \(use)",
                entity: entity.name, key: key)
        }
        return index
    }

    func relationshipSet(_ index: Int) throws -> RelationshipSet {
        if let set = sets[index] { return set }
        let context = try liveContext()
        try context.load(relationship: index, for: [self])
        context.settleLinks()
        guard let set = sets[index] else { throw context.notLoaded(index, of: self) }
        return set
    }

    func toOneObject(_ index: Int) throws -> DatabaseObject? {
        observeRead(relationship: index)
        if let found = toOne[index] { return found }
        let context = try liveContext()
        let relationship = entity.relationships[index]
        if relationship.foreignKeyIn == .from {
            let keyValues = table.fromColumns[index].map { values[$0] }
            if keyValues.contains(where: \.isNull) { return nil }
            if let registered = context.graph.registered(
                entity: context.graph.target(of: entityIndex, index), indexes: context.graph.targetColumns(of: entityIndex, index),
                values: keyValues)
            {
                return registered
            }
        }
        try context.load(relationship: index, for: [self])
        return toOne[index] ?? nil
    }

    /// New values from the database; cached to-one answers may no longer hold.
    func refresh<Values: Collection<StoredValue>>(_ newValues: Values) {
        let old = Array(values)
        let graph = self.graph
        graph?.touch(self)
        replaceValues(old, with: newValues, telling: graph)
        loaded?.toOne.removeAll()
        graph?.record(.values(self, old))
    }

    /// Puts back the values ``refresh(_:)`` replaced (undoing it: nothing is journaled).
    func restore(_ old: [StoredValue]) {
        replaceValues(Array(values), with: old, telling: graph)
        loaded?.toOne.removeAll()
    }

    /// The attributes at `columns` take `newValues`, the others stay: a write of a few
    /// columns, which copies neither the row before nor after. `journaling`: the values
    /// before are journaled, when a transaction or a pending write is open. `held`: what
    /// the caller read of those attributes just before (an update effect's `from`), kept
    /// as the values before when they are still the same, instead of another array.
    func write(_ newValues: SmallArray<StoredValue>, at columns: SmallArray<Int>, held: SmallArray<StoredValue>? = nil, journaling: Bool = true) {
        // Values read in place from a result cannot be written there.
        if storage.isRaw { moveToOwnStorage() }
        let graph = self.graph
        let registry = graph?.registries[entityIndex]
        // The row before only for the identity map's value indexes, when it has any.
        let oldRow = registry?.indexesValues == true ? Array(values) : nil
        let old =
            if let held, held.count == columns.count, zip(held, columns).allSatisfy({ $0.isSame(as: storage.cells[base + $1]) }) {
                held
            } else {
                columns.smallMap { storage.cells[base + $0] }
            }
        let write = {
            for (column, value) in zip(columns, newValues) { self.storage.cells[self.base + column] = value }
        }
        if let observation = table.observation {
            observation.change(attributes: zip(columns, zip(old, newValues)).filter { !$1.0.isSame(as: $1.1) }.map(\.0), of: self, write)
        } else {
            write()
        }
        if let oldRow { registry?.valuesChanged(of: self, from: oldRow) }
        if loaded != nil, columns.contains(where: { table.layout.joinsOn[$0] }) { loaded?.toOne.removeAll() }
        if journaling { graph?.record(.cells(self, columns: columns, values: old)) }
    }

    /// `old` are the values now held; `graph`'s identity map is told of the change.
    private func replaceValues<Values: Collection<StoredValue>>(
        _ old: [StoredValue], with newValues: Values, telling graph: ObjectGraph?
    ) {
        // Values read in place from a result cannot be written there.
        if storage.isRaw { moveToOwnStorage() }
        let write = {
            for (offset, value) in zip(self.base..., newValues) {
                self.storage.cells[offset] = value
            }
        }
        if let observation = table.observation {
            var changed: [Int] = []
            for (index, (before, after)) in zip(old, newValues).enumerated() where !before.isSame(as: after) { changed.append(index) }
            observation.change(attributes: changed, of: self, write)
        } else {
            write()
        }
        graph?.registries[entityIndex].valuesChanged(of: self, from: old)
    }
}

extension DatabaseObject: CustomStringConvertible {
    /// The entity and the primary key (`<person id=2>`, `deleted` once deleted), for
    /// debugging. It holds the primary key values, so keep it out of logs that must hold no data.
    public var description: String {
        // The identity map's placeholder for a removed object holds no values; a
        // debugger or a test's report reflecting on the map may still describe it.
        let hasValues = storage.isRaw || storage.cells.count >= base + table.columns.count
        let key = hasValues ? table.primaryKey.map { "\(table.entity.attributes[$0].name)=\(values[$0])" } : []
        return "<\(table.entity.name)" + (key.isEmpty ? "" : " " + key.joined(separator: " ")) + (isDeleted ? " deleted" : "") + ">"
    }
}

extension DatabaseContext {
    enum ResolvedKey {
        case attribute(Int)
        case relationship(Int)
    }

    func resolve(_ key: String, in entity: Int) throws(RelateError) -> ResolvedKey {
        switch layout.entities[entity].keys[key] {
        case .attribute(let index): return .attribute(index)
        case .relationship(let index): return .relationship(index)
        case .ambiguous(let candidates): throw .ambiguousKey(key, entity: model.entities[entity].name, candidates: candidates)
        case nil: throw .unknownKey(key, entity: model.entities[entity].name, existing: model.entities[entity].keyNames)
        }
    }

    func relationshipIndex(_ key: String, in entity: Int) throws(RelateError) -> Int {
        if let index = layout.entities[entity].relationshipIndex(forKey: key) { return index }
        // relationship(forKey:) explains what the key is when it is not a relationship.
        let relationship = try model.entities[entity].relationship(forKey: key)
        guard let index = model.entities[entity].relationships.firstIndex(of: relationship) else {
            throw RelateError(
                kind: .unknownKey, message: "key \"\(key)\" of \"\(model.entities[entity].name)\" names no relationship of this context's model",
                entity: model.entities[entity].name, key: key, candidates: model.entities[entity].relationships.map(\.key))
        }
        return index
    }

    /// A load that stored nothing for the owner: the model and the context disagree.
    func notLoaded(_ index: Int, of object: DatabaseObject) -> RelateError {
        let key = object.entity.relationships[index].key
        return RelateError(
            kind: .invalidObject, message: "relationship \"\(key)\" of this \(object.entity.name) object could not be loaded",
            entity: object.entity.name, key: key)
    }
}
