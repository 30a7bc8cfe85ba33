/// The order of `save()`'s writes: each placed after the writes it needs and before those
/// that need it, in as few round trips as the keys allow.
///
/// A save's writes are new rows, updates, pairs that leave and join a many-to-many, and
/// deletes. What one needs of another:
///
/// - a new row, or an update, that refers to a new row: that row first; when it refers by
///   a pending key, in an earlier round trip (the key comes back with the row);
/// - a new row, or an update, that takes values of a unique index (a key, a partial index,
///   NULLs too where it counts them equal) another row held: the update that changed them
///   away, or the delete that took the row, first. A partial index's predicate is not read:
///   a change of the columns it reads counts as freeing the values and taking them, and
///   such a need gives way when it closes a cycle;
/// - a new row that refers to a key an update gives: that update first;
/// - a delete: the updates that move its dependants away, the deletes of its dependants,
///   and the pairs that leave it, first; so does an update that changes a key its
///   dependants or pairs refer to.
///
/// A row memory deleted by a rule (`ON DELETE CASCADE`) counts as deleted by the delete the
/// database's cascade follows to it, by the cascading keys its row refers to; one that no
/// delete sent is found to reach (it moved, in memory, to a new row deleted since) is deleted
/// by a write of its own, which finds it gone without a conflict (the cascade may reach it
/// through rows memory does not hold).
///
/// New rows go as early as they may, each round trip of them ("a level") after the one
/// whose keys it needs; updates, pairs and deletes as late as they may, after the last
/// level unless something needs them sooner, which is where they always went. Within a
/// round trip of changes, updates go before pairs that leave, then pairs that join, then
/// deletes; updates that need one another go first, one statement each, in the order
/// found (the others batched), and deletes in that order too (a row's dependants before the
/// row); a need that order does not keep puts the write a round trip earlier. Of writes that need each other in a cycle, one of the cycle
/// goes first (a change rather than a new row) and the database judges it: a deferred
/// constraint takes it. New rows that refer to each other by pending keys, which no order
/// can save, are refused.
extension DatabaseContext {
    /// One round trip of a save: new rows; or changes, the updates and pairs of `objects`
    /// and `pairs` (`nil`: all of them) and `deletes`, in the order they go.
    enum SaveStep {
        case inserts([DatabaseObject])
        case changes(Changes)
    }

    /// The changes of one round trip.
    struct Changes {
        /// The updates' objects (`nil`: all of them).
        var objects: Set<ObjectIdentifier>?
        /// The pairs that leave and join (`nil`: all of them).
        var pairs: Set<PairKey>?
        /// The updates that need one another, in the order they go, one statement each,
        /// before the others (which go batched).
        var ordered: [DatabaseObject] = []
        /// The deletes, in the order they go.
        var deletes: [DatabaseObject] = []
        /// The deletes of rows a cascade of the database may have taken first (memory
        /// deleted them by a rule, and no delete of the save was found to reach them): a row
        /// already gone is no conflict.
        var implied: Set<ObjectIdentifier> = []
    }

    /// A write the order places.
    private enum Write {
        case insert(DatabaseObject)
        case update(DatabaseObject)
        case delete(DatabaseObject)
        case pair(PairKey, owner: DatabaseObject, joining: Bool)

        /// The object it writes (a pair's owner).
        var object: DatabaseObject {
            switch self {
            case .insert(let object), .update(let object), .delete(let object), .pair(_, let object, _): object
            }
        }

        /// The order of changes within one round trip (``DatabaseContext/saveChanges(_:objects:pairs:)``).
        var rank: Int {
            switch self {
            case .insert: -1
            case .update: 0
            case .pair(_, _, let joining): joining ? 2 : 1
            case .delete: 3
            }
        }
    }

    /// The round trips of a save, in order.
    func saveSteps(_ summary: PendingSummary) throws -> [SaveStep] {
        /// Whether an update changed a column of a key or a foreign key: only such an update
        /// needs, or is needed by, another write.
        func ordersSave(_ update: (object: DatabaseObject, originals: SmallArray<(column: Int, value: StoredValue)>)) -> Bool {
            let layout = update.object.table.layout
            return !update.object.isDeleted && update.originals.contains { layout.ordersSave[$0.column] }
        }
        // Most saves: changed values, no new or deleted row.
        if summary.inserted.isEmpty, summary.deletedExplicitly.isEmpty, summary.pairOrder.isEmpty, !summary.updates.contains(where: ordersSave) {
            return [.changes(Changes(objects: nil, pairs: nil))]
        }
        var writes: [Write] = []
        var insertOf: [ObjectIdentifier: Int] = [:]
        var changeOf: [ObjectIdentifier: Int] = [:]
        for object in summary.inserted {
            insertOf[ObjectIdentifier(object)] = writes.count
            writes.append(.insert(object))
        }
        for (object, _) in summary.updates where !object.isDeleted {
            changeOf[ObjectIdentifier(object)] = writes.count
            writes.append(.update(object))
        }
        let insertedOnce = Set(pending.effects.compactMap { effect -> ObjectIdentifier? in
            if case .insert(let object, _) = effect { return ObjectIdentifier(object) }
            return nil
        })
        /// The registered object `object`'s foreign key `index` names with `values`.
        func target(_ object: DatabaseObject, _ index: Int, _ values: [StoredValue]) -> DatabaseObject? {
            guard !values.contains(where: \.isNull) else { return nil }
            return graph.registered(
                entity: graph.target(of: object.entityIndex, index), indexes: graph.targetColumns(of: object.entityIndex, index), values: values)
        }
        /// The key of the row `object`'s foreign key `index` names with `values`.
        func referenced(_ object: DatabaseObject, _ index: Int, _ values: [StoredValue]) -> KeyValues? {
            KeyValues(entity: graph.target(of: object.entityIndex, index), columns: graph.targetColumns(of: object.entityIndex, index), values: values)
        }

        // The deletes: by the key values their rows held, and hold in memory (a row that
        // referred to one is found by either: a new row may hold the first now, and a key
        // change that cascaded in memory is not sent when its row is deleted), and by object.
        // A row a cascade deletes counts as deleted by the delete the cascade follows.
        var deleted: [KeyValues: Int] = [:]
        var deleteWriteOf: [ObjectIdentifier: Int] = [:]
        func noteDeleted(_ object: DatabaseObject, by write: Int) {
            deleteWriteOf[ObjectIdentifier(object)] = write
            for columns in object.table.layout.uniqueColumns {
                for key in [KeyValues(object, columns, values: summary.held(object, at: columns)), KeyValues(object, columns)] {
                    if let key { deleted[key] = write }
                }
            }
        }
        var implied = Set<ObjectIdentifier>()
        func addDelete(_ object: DatabaseObject) -> Int {
            let write = writes.count
            changeOf[ObjectIdentifier(object)] = write
            writes.append(.delete(object))
            noteDeleted(object, by: write)
            return write
        }
        for object in summary.deletedExplicitly where !insertedOnce.contains(ObjectIdentifier(object)) && changeOf[ObjectIdentifier(object)] == nil {
            _ = addDelete(object)
        }
        /// The delete the database's cascade follows to `object`'s row, which memory deleted
        /// by a rule: by the keys its row refers to. One that reaches no delete sent (the
        /// row moved, in memory, to a new row deleted since) is deleted by a write of its own.
        var cascading = Set<ObjectIdentifier>()
        func cascadeRoot(_ object: DatabaseObject) -> Int {
            if let write = deleteWriteOf[ObjectIdentifier(object)] { return write }
            cascading.insert(ObjectIdentifier(object))
            var root: Int?
            for (index, columns) in object.table.foreignKeys where root == nil && object.entity.relationships[index].onDelete == .cascade
                && !object.entity.relationships[index].onDeleteVaries
            {
                let values = summary.held(object, at: columns)
                if let key = referenced(object, index, values), let write = deleted[key] {
                    root = write
                } else if let parent = target(object, index, values), parent.isDeleted, !insertedOnce.contains(ObjectIdentifier(parent)),
                    !cascading.contains(ObjectIdentifier(parent))
                {
                    root = cascadeRoot(parent)
                }
            }
            guard let root else {
                implied.insert(ObjectIdentifier(object))
                return addDelete(object)
            }
            noteDeleted(object, by: root)
            return root
        }
        for object in summary.deleted where changeOf[ObjectIdentifier(object)] == nil && !insertedOnce.contains(ObjectIdentifier(object)) {
            _ = cascadeRoot(object)
        }
        for key in summary.pairOrder {
            guard let pair = summary.pairs[key], pair.times != 0 else { continue }
            writes.append(.pair(key, owner: pair.owner, joining: pair.times > 0))
        }

        // What each write needs first: `hard` when it needs the other's key back; `weak` when
        // it may not need it at all (a partial index, whose predicate is not read), so that
        // it gives way in a cycle.
        var needed: [[Need]] = Array(repeating: [], count: writes.count)
        var needs = 0
        func need(_ first: Int, before then: Int, hard: Bool = false, weak: Bool = false) {
            guard first != then else { return }
            needed[first].append(Need(write: then, hard: hard, weak: weak))
            needs += 1
        }

        // The key values the changes free (a row's before an update, or deleted, by a
        // cascade too) and give.
        var freed: [KeyValues: Int] = [:]
        var given: [KeyValues: Int] = [:]
        for (write, kind) in writes.enumerated() {
            guard case .update(let object) = kind else { continue }
            let originals = summary.originals(of: object)
            guard originals.contains(where: { object.table.layout.ordersSave[$0.column] }) else { continue }
            func isChanged(_ column: Int) -> Bool { originals.contains { $0.column == column } }
            for key in object.table.layout.heldOnce where key.columns.contains(where: isChanged) || key.predicate?.contains(where: isChanged) == true {
                let before = KeyValues(object, key.columns, values: summary.held(object, at: key.columns), nullsNotDistinct: key.nullsNotDistinct)
                // A row may leave a partial index by its predicate, its values the same.
                if let before, key.predicate != nil || before != KeyValues(object, key.columns, nullsNotDistinct: key.nullsNotDistinct) {
                    freed[before] = write
                }
            }
            for columns in object.table.layout.uniqueColumns where columns.contains(where: isChanged) {
                let after = KeyValues(object, columns)
                if let after, after != KeyValues(object, columns, values: summary.held(object, at: columns)) { given[after] = write }
            }
        }
        for object in summary.deleted {
            guard let write = deleteWriteOf[ObjectIdentifier(object)] else { continue }
            for key in object.table.layout.heldOnce {
                let before = KeyValues(object, key.columns, values: summary.held(object, at: key.columns), nullsNotDistinct: key.nullsNotDistinct)
                if let before, freed[before] == nil { freed[before] = write }
            }
        }
        /// The delete of the row `object`'s foreign key `index` named with `values`.
        func deleteOf(_ object: DatabaseObject, _ index: Int, _ values: [StoredValue]) -> Int? {
            guard !deleted.isEmpty else { return nil }
            return referenced(object, index, values).flatMap { deleted[$0] }
        }
        /// The update that changes the key `object`'s foreign key `index` names with `values`.
        func keyChangeOf(_ object: DatabaseObject, _ index: Int, _ values: [StoredValue]) -> Int? {
            guard !freed.isEmpty, let write = referenced(object, index, values).flatMap({ freed[$0] }), case .update = writes[write] else { return nil }
            return write
        }

        for (write, kind) in writes.enumerated() {
            switch kind {
            case .insert(let object):
                for (index, columns) in object.table.foreignKeys {
                    let values = columns.map { object.values[$0] }
                    guard let parent = target(object, index, values) else { continue }
                    if let insert = insertOf[ObjectIdentifier(parent)] {
                        need(insert, before: write, hard: values.contains(where: \.isPendingKey))
                    } else if !given.isEmpty, let key = KeyValues(parent, graph.targetColumns(of: object.entityIndex, index)), let update = given[key] {
                        need(update, before: write)
                    }
                }
                guard !freed.isEmpty else { continue }
                for key in object.table.layout.heldOnce {
                    if let values = KeyValues(object, key.columns, nullsNotDistinct: key.nullsNotDistinct), let freer = freed[values] {
                        need(freer, before: write, weak: key.predicate != nil)
                    }
                }
            case .update(let object):
                let originals = summary.originals(of: object)
                guard originals.contains(where: { object.table.layout.ordersSave[$0.column] }) else { continue }
                func isChanged(_ column: Int) -> Bool {
                    originals.contains { $0.column == column && !object.values[column].isSame(as: $0.value) }
                }
                for (index, columns) in object.table.foreignKeys where columns.contains(where: isChanged) {
                    let values = columns.map { object.values[$0] }
                    if let parent = target(object, index, values) {
                        if let insert = insertOf[ObjectIdentifier(parent)] {
                            need(insert, before: write, hard: values.contains(where: \.isPendingKey))
                        } else if !given.isEmpty, let key = KeyValues(parent, graph.targetColumns(of: object.entityIndex, index)),
                            let update = given[key]
                        {
                            need(update, before: write)
                        }
                    }
                    // Moved away from a row deleted, or whose key changes: before that.
                    let held = summary.held(object, at: columns)
                    if let delete = deleteOf(object, index, held) { need(write, before: delete) }
                    if let keyChange = keyChangeOf(object, index, held) { need(write, before: keyChange) }
                }
                // Taking values another change frees (a one-to-one's taker too: after its holders).
                guard !freed.isEmpty else { continue }
                for key in object.table.layout.heldOnce where key.columns.contains(where: isChanged) || key.predicate?.contains(where: isChanged) == true {
                    if let values = KeyValues(object, key.columns, nullsNotDistinct: key.nullsNotDistinct), let freer = freed[values] {
                        need(freer, before: write, weak: key.predicate != nil)
                    }
                }
            case .delete(let object):
                // Before the row it refers to is deleted, or its key changes.
                for (index, columns) in object.table.foreignKeys {
                    let held = summary.held(object, at: columns)
                    if let delete = deleteOf(object, index, held) { need(write, before: delete) }
                    if let keyChange = keyChangeOf(object, index, held) { need(write, before: keyChange) }
                }
            case .pair(let key, _, let joining):
                guard let pair = summary.pairs[key] else { continue }
                for end in [pair.owner, pair.member] {
                    if joining, let insert = insertOf[ObjectIdentifier(end)] {
                        need(insert, before: write, hard: end.primaryKeyValues.contains(where: \.isPendingKey))
                    } else if !joining, end.isDeleted, let delete = deleteWriteOf[ObjectIdentifier(end)] {
                        need(write, before: delete)
                    } else if !joining, let update = changeOf[ObjectIdentifier(end)], case .update = writes[update],
                        summary.originals(of: end).contains(where: { column in end.table.layout.uniqueColumns.contains { $0.contains(column.column) } })
                    {
                        // Before its end's key changes: the helper's row holds the key it had.
                        need(write, before: update)
                    }
                }
            }
        }

        // A row a cascade deletes leaves what it refers to with the delete that cascades: that
        // delete goes before the others' deletes, and before their keys change.
        for object in summary.deleted {
            guard let root = deleteWriteOf[ObjectIdentifier(object)], writes[root].object !== object else { continue }
            for (index, columns) in object.table.foreignKeys {
                let held = summary.held(object, at: columns)
                if let delete = deleteOf(object, index, held) { need(root, before: delete) }
                if let keyChange = keyChangeOf(object, index, held) { need(root, before: keyChange) }
            }
        }

        // Nothing needs anything: every new row in one round trip, then every change.
        guard needs > 0 else {
            var steps: [SaveStep] = []
            if !summary.inserted.isEmpty { steps.append(.inserts(summary.inserted)) }
            if writes.count > summary.inserted.count {
                let deletes = writes.compactMap { write -> DatabaseObject? in
                    if case .delete(let object) = write { return object }
                    return nil
                }
                steps.append(.changes(Changes(objects: nil, pairs: nil, deletes: deletes, implied: implied)))
            }
            return steps
        }
        return try place(writes, needed, implied: implied)
    }

    /// What a write needs of another: `write` needs it first; `hard` when it needs its key
    /// back (a round trip later); `weak` when it may not need it at all, so that it gives
    /// way in a cycle.
    private struct Need {
        let write: Int
        let hard: Bool
        let weak: Bool
    }

    /// Places `writes` in round trips by what each needs (`needed[i]`: the writes that need
    /// write `i` first). Slots alternate: changes at even ones, new rows at odd ones.
    private func place(_ writes: [Write], _ needed: [[Need]], implied: Set<ObjectIdentifier>) throws -> [SaveStep] {
        let count = writes.count
        func isInsert(_ write: Int) -> Bool { writes[write].rank < 0 }
        /// The slots between `first` and the write that needs it, `then`.
        func gap(_ first: Int, _ then: Int, hard: Bool) -> Int {
            switch (isInsert(first), isInsert(then)) {
            case (true, true): return hard ? 2 : 0
            case (true, false), (false, true): return 1
            case (false, false):
                // Within a round trip the order of kinds keeps it, and the updates' and the
                // deletes' own order (the order found here).
                let (a, b) = (writes[first].rank, writes[then].rank)
                return a < b || (a == b && (a == 0 || a == 3)) ? 0 : 2
            }
        }
        func slot(_ write: Int, atLeast least: Int) -> Int {
            isInsert(write) ? (least % 2 == 0 ? least + 1 : least) : (least % 2 == 0 ? least : least + 1)
        }

        // A topological order (Kahn's), each write as early as what it needs allows.
        var waiting = Array(repeating: 0, count: count)
        var waitingHard = Array(repeating: 0, count: count)
        var waitsFor: [[Int]] = Array(repeating: [], count: count)
        for (first, list) in needed.enumerated() {
            for need in list {
                waiting[need.write] += 1
                waitsFor[need.write].append(first)
                if need.hard { waitingHard[need.write] += 1 }
            }
        }
        // Weak needs given way in a cycle, as `first * count + then`.
        var dropped = Set<Int>()
        func holds(_ first: Int, _ need: Need) -> Bool { dropped.isEmpty || !dropped.contains(first * count + need.write) }
        var earliest = Array(repeating: 0, count: count)
        var order: [Int] = []
        order.reserveCapacity(count)
        var position = Array(repeating: -1, count: count)
        var ready = (0..<count).filter { waiting[$0] == 0 }
        var next = 0
        while order.count < count {
            if next == ready.count {
                // Writes that wait for each other in a cycle: a weak need of the cycle gives
                // way; else one of the cycle goes first (a change rather than a new row), the
                // rest of what it waits for after it. Writes that wait for each other's keys
                // cannot be saved.
                let cycle = try self.cycle(among: waitsFor, from: (0..<count).first { position[$0] < 0 }!) { earlier, later in
                    position[earlier] < 0 && !dropped.contains(earlier * count + later)
                }
                if let (index, _) = cycle.enumerated().first(where: { index, later in
                    let earlier = cycle[(index + 1) % cycle.count]
                    return needed[earlier].contains { $0.write == later && $0.weak }
                }) {
                    let later = cycle[index]
                    let earlier = cycle[(index + 1) % cycle.count]
                    dropped.insert(earlier * count + later)
                    waiting[later] -= needed[earlier].filter { $0.write == later }.count
                    if waiting[later] == 0 { ready.append(later) }
                    continue
                }
                guard let write = cycle.first(where: { !isInsert($0) && waitingHard[$0] == 0 }) ?? cycle.first(where: { waitingHard[$0] == 0 })
                else { throw self.cycle(writes[cycle[0]]) }
                ready.append(write)
            }
            let write = ready[next]
            next += 1
            guard position[write] < 0 else { continue }
            position[write] = order.count
            order.append(write)
            earliest[write] = slot(write, atLeast: earliest[write])
            for need in needed[write] where position[need.write] < 0 && holds(write, need) {
                let then = need.write
                earliest[then] = max(earliest[then], earliest[write] + gap(write, then, hard: need.hard))
                waiting[then] -= 1
                if need.hard { waitingHard[then] -= 1 }
                if waiting[then] == 0 { ready.append(then) }
            }
        }

        // Changes as late as what needs them allows: after the last new rows, where nothing does.
        let last = earliest.max() ?? 0
        let end = last % 2 == 0 ? last : last + 1
        var placed = earliest
        for write in order.reversed() where !isInsert(write) {
            var latest = end
            for need in needed[write] where position[need.write] > position[write] && holds(write, need) {
                latest = min(latest, placed[need.write] - gap(write, need.write, hard: need.hard))
            }
            if latest % 2 != 0 { latest -= 1 }
            placed[write] = max(earliest[write], latest)
        }

        // The updates that need one another within a round trip go in the order found.
        var ordered = Set<Int>()
        for (first, list) in needed.enumerated() where writes[first].rank == 0 {
            for need in list where writes[need.write].rank == 0 && placed[need.write] == placed[first] && holds(first, need) {
                ordered.insert(first)
                ordered.insert(need.write)
            }
        }
        var slots: [Int: [Int]] = [:]
        for write in order { slots[placed[write], default: []].append(write) }
        let changeSlots = slots.keys.filter { $0 % 2 == 0 }.count
        return slots.keys.sorted().map { slot in
            let members = slots[slot]!
            if slot % 2 != 0 { return .inserts(members.map { writes[$0].object }) }
            var changes = Changes(objects: changeSlots > 1 ? [] : nil, pairs: changeSlots > 1 ? [] : nil)
            for write in members {
                switch writes[write] {
                case .update(let object):
                    changes.objects?.insert(ObjectIdentifier(object))
                    if ordered.contains(write) { changes.ordered.append(object) }
                case .delete(let object):
                    changes.deletes.append(object)
                    if implied.contains(ObjectIdentifier(object)) { changes.implied.insert(ObjectIdentifier(object)) }
                case .pair(let key, _, _): changes.pairs?.insert(key)
                case .insert: break
                }
            }
            return .changes(changes)
        }
    }

    /// A cycle of writes that wait for each other, reached from `start` by what each waits
    /// for (`waitsFor`, by the needs `holds(earlier, later)` says still hold): every write
    /// left waits for one left.
    private func cycle(among waitsFor: [[Int]], from start: Int, holds: (Int, Int) -> Bool) throws -> [Int] {
        var path: [Int] = []
        var onPath: [Int: Int] = [:]
        var current = start
        while onPath[current] == nil {
            onPath[current] = path.count
            path.append(current)
            guard let earlier = waitsFor[current].first(where: { holds($0, current) }) else {
                throw RelateError(kind: .invalidWrite, message: "save() could not order its writes")
            }
            current = earlier
        }
        return Array(path[onPath[current]!...])
    }

    /// The error of writes that wait for each other's keys: new rows that refer to each
    /// other by pending keys, or a change and the new rows it needs and that need it.
    private func cycle(_ write: Write) -> RelateError {
        let object = write.object
        return RelateError(
            kind: .invalidWrite,
            message: "new \(object.entity.name) objects, or the changes they need, refer to each other in a cycle: "
                + "save one of them first, then set its foreign key",
            entity: object.entity.name, detail: "\(object)")
    }

    /// A key's values in a row of an entity: what a new row may take that another held.
    /// Its columns in ascending order, so that a foreign key naming them in another order
    /// finds the same key.
    struct KeyValues: Hashable {
        let entity: Int
        let columns: [Int]
        let values: ObjectKey

        /// `values` at `columns` of a row of `entity`; `nil` with a pending key among them, or
        /// a NULL (a key with NULL takes nothing another row holds), but where the key counts
        /// NULLs as equal (`nullsNotDistinct`).
        init?(entity: Int, columns: [Int], values: [StoredValue], nullsNotDistinct: Bool = false) {
            guard !values.contains(where: { $0.isPendingKey || (!nullsNotDistinct && $0.isNull) }) else { return nil }
            var columns = columns
            // No text holds a NUL byte: it stands for NULL.
            var values = nullsNotDistinct ? values.map { $0.isNull ? .string("\u{0}") : $0 } : values
            if columns.count > 1, columns != columns.sorted() {
                let order = columns.indices.sorted { columns[$0] < columns[$1] }
                (columns, values) = (order.map { columns[$0] }, order.map { values[$0] })
            }
            guard let key = ObjectKey(values) else { return nil }
            (self.entity, self.columns, self.values) = (entity, columns, key)
        }

        /// `object`'s values at `columns` (or `values` given for them).
        init?(_ object: DatabaseObject, _ columns: [Int], values: [StoredValue]? = nil, nullsNotDistinct: Bool = false) {
            self.init(
                entity: object.entityIndex, columns: columns, values: values ?? columns.map { object.values[$0] }, nullsNotDistinct: nullsNotDistinct)
        }
    }
}
