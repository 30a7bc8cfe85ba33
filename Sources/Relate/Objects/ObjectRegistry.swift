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
///
/// Objects are also found by the values of other columns (a foreign key's, to find a
/// deleted row's dependants; a unique key's, that a foreign key refers to) through one
/// more index per column list, built when first asked for. Values change (a row moved to
/// another parent), so an entry there is a hint: a lookup checks the object's values.
final class ObjectRegistry {
    /// Registered objects in registration order; `removedMark` where one was removed.
    private var objects: [DatabaseObject] = []
    /// Positions in `objects` by key, for `objects[..<indexedCount]`.
    private var positions = ObjectKeyMap<Int>()
    private var indexedCount = 0
    private var removedCount = 0
    /// Positions in `objects` by the values at a column list, for `objects[..<covered]`;
    /// one per column list looked up by. An object whose values changed is listed under
    /// its new values too.
    private var byColumns: [[Int]: ColumnIndex] = [:]

    fileprivate struct ColumnIndex {
        var positions: [ObjectKey: [Int]] = [:]
        var covered = 0
    }
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
        if let registered = objectOrReservation(forKey: key) { return (registered, false) }
        let object = make()
        fillReservation(with: object)
        return (object, true)
    }

    /// The object registered under `key`; when there is none, `nil`, and `key` is kept for
    /// the object that ``fillReservation(with:)`` registers next (or
    /// ``cancelReservation(_:)`` lets go of): one lookup where a lookup and then a
    /// registration were two. Nothing else may be registered or looked up in between.
    func objectOrReservation(forKey key: ObjectKey) -> DatabaseObject? {
        indexPending()
        var isNew = false
        let position = positions.value(forKey: key) {
            isNew = true
            return objects.count
        }
        return isNew ? nil : objects[position]
    }

    /// Registers `object` under the key ``objectOrReservation(forKey:)`` kept.
    func fillReservation(with object: DatabaseObject) {
        objects.append(object)
        indexedCount = objects.count
    }

    /// Lets go of the key ``objectOrReservation(forKey:)`` kept (its row could not be read).
    func cancelReservation(_ key: ObjectKey) {
        positions[key] = nil
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

    /// Whether the map holds `objects` and nothing else, in that order.
    func holdsExactly(_ objects: [DatabaseObject]) -> Bool {
        removedCount == 0 && self.objects.count == objects.count && self.objects.elementsEqual(objects, by: ===)
    }

    /// Removes the objects whose identities are in `removed`, in one pass; an emptied map
    /// takes the next fetch's objects without lookups again.
    func remove(objectsIn removed: Set<ObjectIdentifier>) {
        let kept = objects.filter { $0 !== removedMark && !removed.contains(ObjectIdentifier($0)) }
        guard kept.count < objects.count - removedCount else { return }
        removeAll()
        objects = kept
    }

    /// What ``removeAll(keepingSpares:)`` kept.
    struct Spares {
        /// Objects nothing else held, each made ready (see ``DatabaseObject/readyAsSpare()``).
        var objects: [DatabaseObject] = []
        /// The storages all of whose objects are among them: nothing can read their values.
        /// A spare whose storage has objects besides the spares (a write moved one to values
        /// of its own, one was deleted or is held) points to an empty storage instead, so
        /// that it keeps no values alive.
        var unread: [ValueStorage] = []
        /// The storage the objects' values are all in, each object's at its position's
        /// row (as a bulk fetch made them), if so.
        var alignedOn: ValueStorage?
    }

    /// Forgets every object, and answers at most `limit` of them as spares, in the array
    /// the registry held them in.
    func removeAll(keepingSpares limit: Int) -> Spares {
        var spares = Spares()
        swap(&spares.objects, &objects)
        removeAll()
        let width = removedMark.table.columns.count
        var kept = 0
        var isAligned = true
        // Apart from `spares`, which the buffer's access holds for its whole length.
        var unread: [ValueStorage] = []
        var alignedOn: ValueStorage?
        // The mutable access makes the array's buffer the registry's own first: where a
        // fetch's caller still holds the array, every object is held twice and none is kept.
        spares.objects.withUnsafeMutableBufferPointer { objects in
            var storage: ValueStorage?
            var inStorage = 0
            // The last `inStorage` kept share `storage`: all its objects, or they let go of it.
            func endOfStorage() {
                guard let storage else { return }
                if inStorage == storage.objectsMade {
                    unread.append(storage)
                } else {
                    isAligned = false
                    for position in kept - inStorage..<kept { objects[position].letGoOfValues(for: removedMark.storage) }
                }
            }
            for index in objects.indices where kept < limit {
                guard objects[index] !== removedMark, Self.isHeldOnlyHere(&objects[index]) else { continue }
                objects[index].readyAsSpare()
                if objects[index].storage !== storage {
                    endOfStorage()
                    isAligned = isAligned && storage == nil
                    storage = objects[index].storage
                    inStorage = 0
                }
                isAligned = isAligned && objects[index].base == kept * width
                inStorage += 1
                // Kept ones first; swapping moves references without retaining them.
                if index != kept { objects.swapAt(index, kept) }
                kept += 1
            }
            endOfStorage()
            if isAligned { alignedOn = storage }
        }
        spares.objects.removeLast(spares.objects.count - kept)
        spares.unread = unread
        spares.alignedOn = alignedOn
        return spares
    }

    /// Whether `object`, an element of the registry's own array, is held by nothing else:
    /// no other strong reference, and no weak or unowned one (the runtime counts 1 of each
    /// for none). Freed, such an object could never be told from a new one at its address.
    @inline(__always)
    private static func isHeldOnlyHere(_ object: inout DatabaseObject) -> Bool {
        isKnownUniquelyReferenced(&object) && _getWeakRetainCount(object) == 1 && _getUnownedRetainCount(object) == 1
    }

    func removeAll() {
        objects = []
        positions = ObjectKeyMap()
        indexedCount = 0
        removedCount = 0
        byColumns = [:]
    }

    /// The registered objects whose values at the attribute indexes `columns` make
    /// `wanted`, in registration order.
    func objects(withValues wanted: ObjectKey, at columns: [Int]) -> [DatabaseObject] {
        let listed = byColumns[columns, default: ColumnIndex()].lookUp(wanted, at: columns, in: objects, skipping: removedMark)
        var found: [DatabaseObject] = []
        // A position is listed twice when its object's values changed and changed back.
        for position in listed.sorted() where found.last !== objects[position] {
            found.append(objects[position])
        }
        return found
    }

    /// Whether the registry keeps indexes of values other than the primary key, which
    /// ``valuesChanged(of:from:)`` keeps up to date.
    var indexesValues: Bool { !byColumns.isEmpty }

    /// `object`'s values changed from `old`: where the values an index knows it by changed,
    /// it is listed under its new ones too.
    func valuesChanged(of object: DatabaseObject, from old: [StoredValue]) {
        guard !byColumns.isEmpty else { return }
        indexPending()
        guard let key = object.objectKey, let position = positions[key], objects[position] === object else {
            // Not the object its key finds (a key met twice): rather than track it apart,
            // the indexes are built anew when next asked for.
            byColumns = [:]
            return
        }
        for index in byColumns.indices {
            let columns = byColumns.keys[index]
            guard position < byColumns.values[index].covered,
                  let new = object.key(at: columns), new != ObjectKey(old, at: columns)
            else { continue }
            byColumns.values[index].positions[new, default: []].append(position)
        }
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
        byColumns = [:]
        positions.removeAll(keepingCapacity: true)
        for (position, object) in objects.enumerated() {
            if let key = object.objectKey, positions[key] == nil { positions[key] = position }
        }
        indexedCount = objects.count
    }
}

extension ObjectRegistry.ColumnIndex {
    /// Where the objects whose values at `columns` make `wanted` are, once the objects
    /// registered since the last lookup are listed.
    mutating func lookUp(
        _ wanted: ObjectKey, at columns: [Int], in objects: [DatabaseObject], skipping removedMark: DatabaseObject
    ) -> [Int] {
        for position in covered..<objects.count where objects[position] !== removedMark {
            if let key = objects[position].key(at: columns) {
                positions[key, default: []].append(position)
            }
        }
        covered = objects.count
        guard let listed = positions[wanted] else { return [] }
        let live = listed.filter { position in
            objects[position] !== removedMark && objects[position].key(at: columns) == wanted
        }
        // What no longer holds is dropped, so that a row moved back and forth does not
        // make every later lookup longer.
        if live.count < listed.count { positions[wanted] = live.isEmpty ? nil : live }
        return live
    }
}
