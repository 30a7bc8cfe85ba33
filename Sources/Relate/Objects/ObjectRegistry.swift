/// The identity map of one entity: at most one object per primary key.
///
/// It owns its objects in the order they were registered and finds them by key through an
/// index of positions. Owning them in order frees them in the order they were allocated:
/// freed from a dictionary, in hash order, every free is a cache miss (100,000 objects
/// took five times as long).
///
/// Objects a fetch registers into an empty map join the index only when a lookup first
/// needs it: the rows of one table's result hold each primary key once, so registering
/// them needs no lookup, and a fetch whose objects are never looked up costs no hashing.
final class ObjectRegistry {
    /// Registered objects in registration order; `nil` where one was removed.
    private var objects: ContiguousArray<DatabaseObject?> = []
    /// Positions in `objects` by key, for `objects[..<indexedCount]`.
    private var positions: [ObjectKey: Int] = [:]
    private var indexedCount = 0
    private var removedCount = 0

    var isEmpty: Bool { objects.count == removedCount }

    /// Every registered object, in registration order.
    var all: [DatabaseObject] { objects.compactMap { $0 } }

    /// The object registered under `key`.
    subscript(key: ObjectKey) -> DatabaseObject? {
        indexPending()
        return positions[key].flatMap { objects[$0] }
    }

    /// The object registered under `key`, after registering `make()` under it when there
    /// is none; `isNew` says which.
    func object(forKey key: ObjectKey, orRegistering make: () -> DatabaseObject) -> (object: DatabaseObject, isNew: Bool) {
        indexPending()
        var isNew = false
        let position = positions.value(forKey: key) {
            isNew = true
            return objects.count
        }
        if isNew {
            let object = make()
            objects.append(object)
            indexedCount = objects.count
            return (object, true)
        }
        return (objects[position]!, false)
    }

    /// Registers the objects of one result into an empty map, without looking them up.
    func registerUnindexed(_ fetched: [DatabaseObject]) {
        precondition(isEmpty, "only an empty registry takes objects without lookups")
        removeAll()
        objects.append(contentsOf: fetched.lazy.map { $0 })
    }

    /// Registers `object` under `key` again (undoing a removal).
    func register(_ object: DatabaseObject, key: ObjectKey) {
        indexPending()
        positions[key] = objects.count
        objects.append(object)
        indexedCount = objects.count
    }

    func remove(key: ObjectKey) {
        indexPending()
        guard let position = positions.removeValue(forKey: key) else { return }
        objects[position] = nil
        removedCount += 1
        if removedCount > 64, removedCount > objects.count / 2 { compact() }
    }

    func removeAll() {
        objects = []
        positions = [:]
        indexedCount = 0
        removedCount = 0
    }

    /// Indexes the objects registered without lookups.
    private func indexPending() {
        guard indexedCount < objects.count else { return }
        positions.reserveCapacity(objects.count)
        for position in indexedCount..<objects.count {
            guard let key = objects[position]?.objectKey else { continue }
            // A key met twice (inheritance children may repeat a parent's key): the first
            // object answers for it.
            if positions[key] == nil { positions[key] = position }
        }
        indexedCount = objects.count
    }

    /// Drops the removed slots once they are the majority.
    private func compact() {
        indexPending()
        let live = objects.compactMap { $0 }
        objects = ContiguousArray(live.lazy.map { $0 })
        positions.removeAll(keepingCapacity: true)
        for (position, object) in live.enumerated() {
            if let key = object.objectKey { positions[key] = position }
        }
        indexedCount = objects.count
        removedCount = 0
    }
}
