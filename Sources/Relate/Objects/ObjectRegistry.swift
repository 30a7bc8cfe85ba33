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
    /// Registered objects in registration order; `removedMark` where one was removed.
    private var objects: [DatabaseObject] = []
    /// Positions in `objects` by key, for `objects[..<indexedCount]`.
    private var positions: [ObjectKey: Int] = [:]
    private var indexedCount = 0
    private var removedCount = 0
    /// Takes a removed object's place, so that `objects` can be the very array a fetch
    /// returned (no optionals to convert to); never handed out.
    private let removedMark: DatabaseObject

    init(table: EntityTable) {
        removedMark = DatabaseObject(storage: ValueStorage(table: table, capacity: 0), base: 0)
    }

    var isEmpty: Bool { objects.count == removedCount }

    /// Every registered object, in registration order.
    var all: [DatabaseObject] {
        removedCount == 0 ? objects : objects.filter { $0 !== removedMark }
    }

    /// The object registered under `key`.
    subscript(key: ObjectKey) -> DatabaseObject? {
        indexPending()
        return positions[key].map { objects[$0] }
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
        return (objects[position], false)
    }

    /// Registers the objects of one result without looking them up: only into an empty
    /// map, which then shares the result's array (no copy).
    func registerUnindexed(_ fetched: [DatabaseObject]) {
        precondition(isEmpty, "only an empty registry takes objects without lookups")
        removeAll()
        objects = fetched
    }

    /// Registers `object` under `key` again (undoing a removal).
    func register(_ object: DatabaseObject, key: ObjectKey) {
        indexPending()
        positions[key] = objects.count
        objects.append(object)
        indexedCount = objects.count
    }

    /// Removes `object`, registered under `key`; nothing when another object answers for
    /// the key (a key a result held twice, see `indexPending`).
    func remove(_ object: DatabaseObject, key: ObjectKey) {
        indexPending()
        guard let position = positions[key], objects[position] === object else { return }
        positions[key] = nil
        objects[position] = removedMark
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
            guard objects[position] !== removedMark, let key = objects[position].objectKey else { continue }
            // A key met twice (inheritance children may repeat a parent's key): the first
            // object answers for it.
            if positions[key] == nil { positions[key] = position }
        }
        indexedCount = objects.count
    }

    /// Lets go of the removed objects once they are the majority.
    private func compact() {
        indexPending()
        objects = all
        removedCount = 0
        positions.removeAll(keepingCapacity: true)
        for (position, object) in objects.enumerated() {
            if let key = object.objectKey, positions[key] == nil { positions[key] = position }
        }
        indexedCount = objects.count
    }
}
