import RelatePostgres

/// The objects of one context and everything memory knows about them: the identity map
/// (one object per row), the relationships loaded and their inverses, the many-to-many
/// membership index, kept counts, and the journal that undoes memory changes when a
/// transaction rolls back. No connection and no SQL: the context plans a statement, sends
/// it, and hands what the database answered (rows, or that it accepted a write) to the
/// graph, the one place where memory changes.
final class ObjectGraph {
    /// The model and its SQL pieces, shared with every context made from the same model.
    let layout: ModelLayout
    /// Each entity as this context sees it, by index in `model.entities`.
    let tables: [EntityTable]
    /// The identity map: one object per row, per entity index.
    let registries: [ObjectRegistry]
    /// The relationships `load` ever stored a set or a to-one answer for: only those have
    /// anything in memory for `didChange` to keep in step.
    var loadedRelationships = Set<RelationshipAddress>()
    /// Relationships the server links (``EntityLayout/linksByServer``) whose loaded sets
    /// and to-ones memory could not keep in step by bytes: a row took values that name no
    /// object memory holds by its bytes, though the server may take them for one's key.
    /// ``DatabaseContext/settleLinks()`` loads them again, once the write is in the database.
    var unsettled = Set<RelationshipAddress>()
    /// While a statement's deleted rows are taken one by one (``DatabaseContext/rowsDeleted(_:)``):
    /// the relationships whose objects memory cannot pair by bytes were looked for already.
    /// One look finds them for every row (they name no object memory holds), and the
    /// caller reads them once: a look per row cost 2.7 s for 1,000 rows against 2,000 held.
    var scannedUnsure: Set<RelationshipAddress>?
    /// Every object's box of loaded relationships made since the last `reset()`, which
    /// empties them to break the cycles they close (also for objects the identity map no
    /// longer holds: forgotten, without a key, fetched before a reset).
    var loadedBoxes: [LoadedRelationships] = []
    /// The loaded many-to-many sets each object is a member of, so that a deleted object
    /// leaves them without a scan of every registered object. Built when a delete first
    /// needs it, then kept up to date by the sets; dropped on `reset()`.
    var manyToManyMemberships: [ObjectIdentifier: [RelationshipSet]]?
    /// Counts of unloaded to-many relationships are kept with the generation they were
    /// read in; every write of this context (and every rollback, and every row read again
    /// whose foreign key moved) starts a new one, so that no count outlives a change.
    private(set) var membershipGeneration = 0
    /// Whether a count was kept in the current generation (else a new one is not needed).
    var hasCachedCounts = false
    /// Objects first registered in each batch of the batched fetches under way, innermost
    /// last: after each batch those nobody else holds are let go (see `fetch(_:batchSize:_:)`).
    @exclusivity(unchecked) var registeredInBatch: [[DatabaseObject]] = []
    /// Memory changes to undo if the enclosing transactions roll back, oldest first, in
    /// one array for all of them: `journalLevels` says where each open transaction's
    /// begin, so that a commit costs nothing (its entries become the enclosing one's).
    /// Read for every object a fetch makes, never in overlapping accesses: unchecked.
    @exclusivity(unchecked) private var journal: [JournalEntry] = []
    /// Where each open transaction's entries of ``journal`` begin, innermost last.
    @exclusivity(unchecked) private var journalLevels: [Int] = []
    /// Objects first registered inside each open transaction, innermost last: after a
    /// roll-back their rows are read again, since the transaction may have been what made
    /// them (or made them as they are).
    @exclusivity(unchecked) var registeredInTransaction: [[DatabaseObject]] = []
    /// What memory learnt from the database inside each open transaction, innermost last,
    /// that undoing the transaction's memory changes would unlearn: see ``AfterRollback``.
    @exclusivity(unchecked) private var afterRollback: [[AfterRollback]] = []
    /// Whether a pending write (of a context that does not autocommit) is under way (see
    /// ``beginStep()``). Read for every pending write, never in overlapping accesses: unchecked.
    @exclusivity(unchecked) var isInStep = false
    /// The objects the pending write under way changed so far; kept empty, with its
    /// capacity, between steps.
    @exclusivity(unchecked) var touchedInStep: [DatabaseObject] = []
    /// Every object pending writes changed and that `save()` or `rollback()` has not dealt
    /// with yet: a row read from the database does not overwrite its values, which hold
    /// what the context will write.
    @exclusivity(unchecked) var pendingObjects = Set<ObjectIdentifier>()
    /// The objects another client marks as being edited (see ``DatabaseObject/isBeingEdited``).
    var editMarked = Set<ObjectIdentifier>()
    /// The live results to tell when rows of each entity change, held weakly.
    var watchers: [Int: [Weak<LiveResults>]] = [:]
    /// Objects `reset()` let go of that nothing else held, by entity index: a later bulk
    /// fetch of the entity makes them the objects of its rows, in the very array, instead
    /// of allocating new ones (see ``ObjectRegistry/removeAll(keepingSpares:)``). Each
    /// reset replaces them, so they never outnumber the objects it let go of, nor
    /// ``spareLimit`` in all.
    ///
    /// Allocating and freeing the objects of a 100,000-row fetch cost about 600
    /// instructions an object (286 M a fetch against 244 M with spares); and memory freed
    /// and allocated again for every fetch made the allocator hand it back to the system and
    /// take it again, page by page (`perf stat`: 199,000 page faults in 40 fetches, 42,000
    /// with the cells' memory kept too).
    private var spareObjects: [[DatabaseObject]]
    /// By entity index, a storage `reset()` found all of whose objects were spares (most
    /// often the spares' own), emptied: the next bulk fetch of the entity writes its cells
    /// in its memory.
    private var spareStorages: [ValueStorage?]
    /// By entity index, whether the spares' values were all in the spare storage, each
    /// spare's at its position's row: a fetch into it finds its spares made already.
    private var sparesAreAligned: [Bool]
    /// At most this many spare objects are kept in all (48 bytes each, with the allocator's).
    static let spareLimit = 1 << 17
    /// Spare storages are kept while they have room for at most this many cells in all
    /// (16 bytes each, 24 when not raw).
    static let spareCellLimit = 1 << 20

    /// The most cells one result's objects may have: an object finds its first cell by a
    /// 32-bit position (see `DatabaseObject.storedBase`). A fetch of more throws
    /// (`fetch(_:batchSize:_:)` reads any number of rows in batches).
    static let maximumCells = Int(UInt32.max)

    init(layout: ModelLayout) {
        self.layout = layout
        tables = layout.entities.map(EntityTable.init)
        registries = tables.map(ObjectRegistry.init)
        spareObjects = Array(repeating: [], count: tables.count)
        spareStorages = Array(repeating: nil, count: tables.count)
        sparesAreAligned = Array(repeating: false, count: tables.count)
        for table in tables { table.graph = self }
    }

    var model: Model { layout.model }

    /// Where relationship `index` of `entity` leads: the target entity, the target's
    /// columns it joins on (as attribute indexes), its inverse.
    func target(of entity: Int, _ index: Int) -> Int { layout.entities[entity].targets[index] }
    func targetColumns(of entity: Int, _ index: Int) -> [Int] { layout.entities[entity].targetColumns[index] }
    func inverse(of entity: Int, _ index: Int) -> RelationshipAddress { layout.entities[entity].inverses[index] }

    // MARK: - Identity map

    /// The objects for the rows of `result`, each as ``materialize(entity:row:)``
    /// makes it. `rowsAreDistinct`: the result selects from the entity's table alone, so
    /// it holds each primary key once (a join through a helper table may repeat a row).
    /// `isBatch`: the rows are a batch of a batched fetch, whose objects that stay are
    /// noted as registered in the transaction once the batch is over, not before.
    /// `spare`: storage nothing holds any longer (a walk's previous batch), whose memory
    /// takes the new cells.
    func materialize(
        entity: Int, result: PostgresResult, rows: Range<Int>? = nil, rowsAreDistinct: Bool, isBatch: Bool = false,
        reusing spare: ValueStorage? = nil
    ) throws -> [DatabaseObject] {
        // A cell that cannot be read is a PostgresError naming the column: as every error
        // of the object layer, it comes out as a RelateError.
        try relateErrors(naming: model.entities[entity].name) {
            try materializeRows(
                entity: entity, result: result, rows: rows ?? 0..<result.count, rowsAreDistinct: rowsAreDistinct, isBatch: isBatch,
                reusing: spare)
        }
    }

    private func materializeRows(
        entity: Int, result: PostgresResult, rows: Range<Int>, rowsAreDistinct: Bool, isBatch: Bool, reusing spare: ValueStorage?
    ) throws -> [DatabaseObject] {
        let table = tables[entity]
        let readers = StoredValue.Reader.readers(for: result, entity: table.entity)
        let registry = registries[entity]
        let width = table.columns.count
        guard rows.count <= Self.maximumCells / Swift.max(width, 1) else {
            throw RelateError(
                kind: .invalidRequest,
                message: "\(rows.count) rows of \(width) columns are more than one fetch holds (\(Self.maximumCells) values); "
                    + "fetch them in batches with fetch(_:batchSize:_:)",
                entity: table.entity.name)
        }
        let bulk = rowsAreDistinct && registry.isEmpty && !table.primaryKey.isEmpty
        // A walk's batches write into the memory of the batch before, and a fetch into that
        // of the entity's spare storage: freed and allocated again for every batch, the cells
        // made the allocator hand the top of the heap back to the system and take it again, a
        // page fault per 4 KB, a third of a walk's time.
        var spare = spare?.table === table ? spare : nil
        // The entity's spares sit at their rows of its spare storage when this says so.
        var isAligned = false
        if spare == nil, bulk { (spare, isAligned) = takeSpareStorage(of: entity) }
        // Nothing registered yet, and each key comes once: no lookups. The cells are written
        // in place, row after row, without a check per cell of the array's room (an
        // append's) or of the column's type and form (the typed decoders'); then the objects.
        if bulk, readers.count >= width, readers.prefix(width).allSatisfy(\.readsRaw) {
            let storage = spare ?? ValueStorage(table: table, result: result)
            try storage.replaceRawCells(count: rows.count * width, of: result) { cells, written in
                for row in rows {
                    for column in 0..<width {
                        (cells + written).initialize(to: try readers[column].readRaw(result, row: row, column: column))
                        written += 1
                    }
                }
            }
            return registerFetched(objects(of: entity, count: rows.count, in: storage, aligned: isAligned), in: registry, isBatch: isBatch)
        }
        let storage = spare ?? ValueStorage(table: table, capacity: 0)
        storage.dropRawCells()
        guard bulk else {
            storage.cells.removeAll(keepingCapacity: true)
            storage.objectsMade = 0
            storage.cells.reserveCapacity(rows.count * width)
            let comparesInPlace = !registry.isEmpty && !table.primaryKey.isEmpty && readers.count >= width
                && readers.prefix(width).allSatisfy(\.readsRaw)
            return try rows.map { row in
                guard comparesInPlace else {
                    return try materializeRow(entity: entity, row: result[row], readers: readers, storage: storage, isBatch: isBatch)
                }
                switch try heldAsIs(entity: entity, result: result, row: row, readers: readers) {
                case .held(let object):
                    return object
                case .registered(let object):
                    return try materializeRow(entity: entity, row: result[row], readers: readers, storage: storage, isBatch: isBatch, known: .registered(object))
                case .reserved(let key):
                    do {
                        return try materializeRow(entity: entity, row: result[row], readers: readers, storage: storage, isBatch: isBatch, known: .reserved)
                    } catch {
                        registry.cancelReservation(key)
                        throw error
                    }
                case .unknown:
                    return try materializeRow(entity: entity, row: result[row], readers: readers, storage: storage, isBatch: isBatch)
                }
            }
        }
        // The same loop as the raw cells' above, on purpose: one generic loop with the read
        // passed in cost 15 M instructions more per 100,000-row fetch (callgrind, 326 M
        // against 311 M a run of `RelateProfile objects-fetch`).
        try storage.replaceCells(count: rows.count * width) { cells, written in
            for row in rows {
                for column in 0..<width {
                    (cells + written).initialize(to: try readers[column].readDirect(result, row: row, column: column))
                    written += 1
                }
            }
        }
        return registerFetched(objects(of: entity, count: rows.count, in: storage, aligned: isAligned), in: registry, isBatch: isBatch)
    }

    /// The entity's spare storage, and whether its spares sit at their rows of it.
    private func takeSpareStorage(of entity: Int) -> (ValueStorage?, Bool) {
        defer {
            spareStorages[entity] = nil
            sparesAreAligned[entity] = false
        }
        return (spareStorages[entity], sparesAreAligned[entity])
    }

    /// The objects of the first `count` rows of `storage`, of `entity`: its spares made
    /// theirs first (in the spares' array, which becomes the result's), then new ones.
    /// `aligned`: `storage` is the spare storage the spares sit at their rows of.
    private func objects(of entity: Int, count: Int, in storage: ValueStorage, aligned isAligned: Bool) -> [DatabaseObject] {
        let width = tables[entity].columns.count
        var objects = spareObjects[entity]
        spareObjects[entity] = []
        if objects.count > count { objects.removeLast(objects.count - count) }
        // No rows: the empty array as it is. Made with `unsafeUninitializedCapacity: 0`, it
        // wrote its count into the standard library's one shared empty array, which the
        // thread sanitizer reported as a race with every other empty array read meanwhile.
        if count == 0 { return [] }
        guard !objects.isEmpty else {
            return [DatabaseObject](unsafeUninitializedCapacity: count) { objects, made in
                for row in 0..<count {
                    (objects.baseAddress! + row).initialize(to: DatabaseObject(storage: storage, base: row * width))
                }
                made = count
            }
        }
        let reused = objects.count
        if isAligned {
            // Each is the object of its row already: not one of them need be touched (a
            // pass over 100,000 objects' memory).
            storage.objectsMade += reused
        } else {
            objects.withUnsafeMutableBufferPointer { spares in
                for row in spares.indices { spares[row].reuse(storage: storage, base: row * width) }
            }
        }
        objects.reserveCapacity(count)
        for row in reused..<count { objects.append(DatabaseObject(storage: storage, base: row * width)) }
        return objects
    }

    /// Registers a result's objects into `registry`, empty, without lookups.
    private func registerFetched(_ objects: [DatabaseObject], in registry: ObjectRegistry, isBatch: Bool) -> [DatabaseObject] {
        registry.registerUnindexed(objects)
        if !registeredInTransaction.isEmpty, !isBatch { registeredInTransaction[registeredInTransaction.count - 1] += objects }
        if !registeredInBatch.isEmpty { registeredInBatch[registeredInBatch.count - 1] += objects }
        return objects
    }

    /// The object for a row read from the database: the registered one, refreshed with the
    /// row's values, or a new one.
    func materialize(entity: Int, row: PostgresRow) throws -> DatabaseObject {
        try relateErrors(naming: model.entities[entity].name) { try materializeRow(entity: entity, row: row) }
    }

    /// What ``heldAsIs(entity:result:row:readers:)`` found of a row's key in the identity map.
    private enum Known {
        /// This object is registered under it.
        case registered(DatabaseObject)
        /// None is: the key is reserved for the row's new object.
        case reserved
    }

    /// `readers` are the result's (see ``StoredValue/Reader``); a new object's values go to
    /// `storage`, shared by the objects of one result. `known`: what a lookup of the row's
    /// key already found, so that it is not looked up again.
    private func materializeRow(
        entity: Int, row: PostgresRow, readers: [StoredValue.Reader]? = nil, storage: ValueStorage? = nil, isBatch: Bool = false,
        known: Known? = nil
    ) throws -> DatabaseObject {
        let table = tables[entity]
        let storage = storage ?? ValueStorage(table: table, capacity: table.columns.count)
        let base = try Self.read(row, of: table, readers: readers ?? StoredValue.Reader.readers(for: row.result, entity: table.entity), into: storage)
        let values = ObjectValues(storage: storage, base: base, count: table.columns.count)
        let registry = registries[entity]
        let object: DatabaseObject
        let isNew: Bool
        switch known {
        case .registered(let registered):
            (object, isNew) = (registered, false)
        case .reserved:
            (object, isNew) = (DatabaseObject(storage: storage, base: base), true)
            registry.fillReservation(with: object)
        case nil:
            guard let key = table.primaryKey.isEmpty ? nil : ObjectKey(values, at: table.primaryKey) else {
                return DatabaseObject(storage: storage, base: base)
            }
            (object, isNew) = registry.object(forKey: key) { DatabaseObject(storage: storage, base: base) }
        }
        if isNew {
            if !registeredInTransaction.isEmpty, !isBatch { registeredInTransaction[registeredInTransaction.count - 1].append(object) }
            if !registeredInBatch.isEmpty { registeredInBatch[registeredInBatch.count - 1].append(object) }
        } else if !pendingObjects.isEmpty, pendingObjects.contains(ObjectIdentifier(object)) {
            // Memory holds a pending write for it: that is what the context will save.
            for offset in base..<base + table.columns.count { storage.cells[offset] = .null }
        } else {
            // Most rows read again hold what memory holds (a save's rows coming back, a
            // refetch): those change nothing, and journal nothing.
            if !zip(object.values, values).allSatisfy({ $0.isSame(as: $1) }) {
                let old = Array(object.values)
                object.refresh(values)
                if !watchers.isEmpty { noteChange(of: entity) }
                didChange(object, from: old)
            } else {
                // As a refresh does: a to-one found before is looked for again when next read.
                object.loaded?.toOne.removeAll()
            }
            // The row's cells served only to refresh the registered object: let go of them.
            for offset in base..<base + table.columns.count { storage.cells[offset] = .null }
        }
        return object
    }

    /// What ``heldAsIs(entity:result:row:readers:)`` found.
    private enum Lookup {
        /// The registered object holds the row's values already.
        case held(DatabaseObject)
        /// The registered object, which does not (or has a pending write, or was deleted).
        case registered(DatabaseObject)
        /// None is registered: `key` is reserved for the row's new object (see
        /// ``ObjectRegistry/objectOrReservation(forKey:)``).
        case reserved(ObjectKey)
        /// The key could not be made (a NULL in it).
        case unknown
    }

    /// The registered object of the row's key, and whether it holds the row's values
    /// already (a save's rows coming back, a fetch again of what memory holds), compared
    /// cell by cell where the row lies: then nothing is read, refreshed or journaled.
    /// ``materializeRow(entity:row:readers:storage:isBatch:known:)`` takes the other rows,
    /// told what this lookup found. Every cell of the entity's columns must read raw.
    private func heldAsIs(entity: Int, result: PostgresResult, row: Int, readers: [StoredValue.Reader]) throws -> Lookup {
        let table = tables[entity]
        let key = table.primaryKey
        let objectKey: ObjectKey
        if key.count == 1 {
            guard let value = ObjectKey(try readers[key[0]].readRaw(result, row: row, column: key[0]).value) else { return .unknown }
            objectKey = value
        } else {
            let values = try key.map { try readers[$0].readRaw(result, row: row, column: $0).value }
            guard let value = ObjectKey(values) else { return .unknown }
            objectKey = value
        }
        guard let object = registries[entity].objectOrReservation(forKey: objectKey) else { return .reserved(objectKey) }
        guard !object.isDeleted, pendingObjects.isEmpty || !pendingObjects.contains(ObjectIdentifier(object)),
            try holds(result, row: row, readers: readers, in: object)
        else { return .registered(object) }
        return .held(object)
    }

    /// Whether `object` holds the row as it is (each cell compared where it lies; `readers`
    /// all read raw); if so, its to-ones are looked for again when next read, as a refresh
    /// would have them.
    private func holds(_ result: PostgresResult, row: Int, readers: [StoredValue.Reader], in object: DatabaseObject) throws -> Bool {
        let storage = object.storage
        let base = object.base
        for column in 0..<object.table.columns.count {
            let cell = try readers[column].readRaw(result, row: row, column: column)
            let holds = storage.isRaw ? cell.holds(storage.rawCells[base + column]) : cell.holds(storage.cells[base + column])
            guard holds == true else { return false }
        }
        object.loaded?.toOne.removeAll()
        return true
    }

    /// The rows of a batched update `save()` sent (``Statements/savedUpdates(_:setting:keys:values:held:)``):
    /// each the entity's columns, then the position (from 1) of its object in `objects`. Each
    /// object takes its row as stored, found by that position: no lookup by key.
    ///
    /// - Returns: Whether each of `objects` came back under its key (a row another client
    ///   changed did not). A row memory does not hold as it is (another column changed, a
    ///   trigger) is taken as a fetch takes a row, by its key: one a trigger gave another
    ///   key is not its object's, which counts as not come back.
    func takeSavedRows(_ result: PostgresResult, entity: Int, objects: [DatabaseObject]) throws -> [Bool] {
        let table = tables[entity]
        return try relateErrors(naming: table.entity.name) {
            let width = table.columns.count
            let readers = StoredValue.Reader.readers(for: result, entity: table.entity)
            let comparesInPlace = readers.count > width && readers.prefix(width).allSatisfy(\.readsRaw)
            var returned = [Bool](repeating: false, count: objects.count)
            var seen = [Bool](repeating: false, count: objects.count)
            for row in 0..<result.rowCount {
                let position = try result[row].decode(Int.self, at: width) - 1
                guard seen.indices.contains(position), !seen[position] else {
                    throw RelateError(
                        kind: .database, message: "saving \(table.entity.name) objects: the database answered an update that was not sent",
                        entity: table.entity.name)
                }
                seen[position] = true
                let object = objects[position]
                if comparesInPlace, try holds(result, row: row, readers: readers, in: object) {
                    returned[position] = true
                } else {
                    returned[position] = try materializeRow(entity: entity, row: result[row], readers: readers) === object
                }
            }
            return returned
        }
    }

    /// The row's values as an object of `entity` stores them, without making an object.
    func storedValues(of row: PostgresRow, entity: Int) throws -> [StoredValue] {
        let readers = StoredValue.Reader.readers(for: row.result, entity: tables[entity].entity)
        return try relateErrors(naming: model.entities[entity].name) { try (0..<tables[entity].columns.count).map { try readers[$0].read(row, at: $0) } }
    }

    /// Appends the row's first `table.columns.count` cells to `storage`; answers where they start.
    @inline(__always)
    private static func read(
        _ row: PostgresRow, of table: EntityTable, readers: [StoredValue.Reader], into storage: ValueStorage
    ) throws -> Int {
        let base = storage.cells.count
        for column in 0..<table.columns.count {
            storage.cells.append(try readers[column].read(row, at: column))
        }
        return base
    }

    func unregister(_ object: DatabaseObject) {
        guard let key = object.objectKey else { return }
        let registry = registries[object.entityIndex]
        registry.remove(object, key: key)
        recordUndo { registry.register(object, key: key) }
    }

    /// The registered object of `entity` whose attributes at `indexes` hold `values`,
    /// without a query.
    func registered(entity: Int, indexes: [Int], values: [StoredValue]) -> DatabaseObject? {
        guard let wanted = ObjectKey(values) else { return nil }
        if indexes == tables[entity].primaryKey {
            return registries[entity][wanted]
        }
        return registries[entity].objects(withValues: wanted, at: indexes).first
    }

    /// Registered objects of `entity` whose attributes at `indexes` hold `values`.
    func registeredObjects(entity: Int, indexes: [Int], values: [StoredValue]) -> [DatabaseObject] {
        guard let wanted = ObjectKey(values) else { return [] }
        return registries[entity].objects(withValues: wanted, at: indexes)
    }

    /// Forgets every object: the next fetch reads fresh ones. `keepingSpares`: the objects
    /// nothing else holds become ``spareObjects``, else they are freed.
    func reset(keepingSpares: Bool = true) {
        // Loaded relationships tie objects to each other (a person's emails, each email's
        // person): drop them, or the objects would keep each other alive.
        for box in loadedBoxes { _ = box.takeAll() }
        loadedBoxes = []
        manyToManyMemberships = nil
        var room = keepingSpares ? Self.spareLimit : 0
        var cellRoom = Self.spareCellLimit
        for (entity, registry) in registries.enumerated() {
            spareObjects[entity] = []
            spareStorages[entity] = nil
            sparesAreAligned[entity] = false
            guard room > 0 else {
                registry.removeAll()
                continue
            }
            let spares = registry.removeAll(keepingSpares: room)
            spareObjects[entity] = spares.objects
            room -= spares.objects.count
            // Their values are let go of now, as freeing the objects would have.
            for storage in spares.unread {
                let keeps = spareStorages[entity] == nil && storage.capacity <= cellRoom
                storage.empty(keepingCapacity: keeps)
                guard keeps else { continue }
                cellRoom -= storage.capacity
                spareStorages[entity] = storage
                sparesAreAligned[entity] = storage === spares.alignedOn
            }
        }
        // Forgotten: a batch under way must not register its objects again.
        registeredInBatch = registeredInBatch.map { _ in [] }
        noteChangeOfEverything()
    }

    // MARK: - Transactions

    /// A transaction begins: memory changes from now on are journaled.
    func beginTransaction() {
        journalLevels.append(journal.count)
        registeredInTransaction.append([])
        afterRollback.append([])
    }

    /// The innermost transaction committed: what it journaled joins the enclosing one's.
    func commitTransaction() {
        journalLevels.removeLast()
        if journalLevels.isEmpty { journal.removeAll() }
        let registered = registeredInTransaction.removeLast()
        let learnt = afterRollback.removeLast()
        if !registeredInTransaction.isEmpty {
            registeredInTransaction[registeredInTransaction.count - 1] += registered
            afterRollback[afterRollback.count - 1] += learnt
        }
    }

    /// The innermost transaction rolled back: its memory changes are undone. Answers what
    /// the context must read again: the objects first registered there, and what memory
    /// learnt from the database there (see ``AfterRollback``).
    func rollBackTransaction() -> (registered: [DatabaseObject], learnt: [AfterRollback]) {
        membershipsMayChange()
        undo(takeJournal())
        noteChangeOfEverything()
        return (registeredInTransaction.removeLast(), afterRollback.removeLast())
    }

    /// Takes the innermost journal's entries out, oldest first.
    private func takeJournal() -> [JournalEntry] {
        let start = journalLevels.removeLast()
        defer { journal.removeSubrange(start...) }
        return Array(journal[start...])
    }

    /// Ends the innermost transaction without undoing it or joining it to an enclosing
    /// one: its journal's entries are appended to `kept` (a pending write's steps, see
    /// ``endStep(journal:touched:)``), without an array of their own.
    func moveJournal(to kept: inout [JournalEntry]) {
        let start = journalLevels.removeLast()
        kept.append(contentsOf: journal[start...])
        journal.removeSubrange(start...)
        registeredInTransaction.removeLast()
        afterRollback.removeLast()
    }

    /// Undoes `entries`, newest first. An undo journals nothing: what it changes back is
    /// as it was before the entries were made.
    func undo<Entries: BidirectionalCollection<JournalEntry>>(_ entries: Entries) {
        for entry in entries.reversed() {
            switch entry {
            case .values(let object, let values): object.restore(values)
            case .cells(let object, let columns, let values): object.write(values, at: columns, journaling: false)
            case .action(let undo): undo()
            }
        }
    }

    /// After a roll-back: what was first seen in the rolled-back transaction stays first
    /// seen in the enclosing one, should it roll back too.
    func stillFirstSeenInEnclosingTransaction(_ registered: [DatabaseObject], _ learnt: [AfterRollback]) {
        guard !registeredInTransaction.isEmpty else { return }
        registeredInTransaction[registeredInTransaction.count - 1] += registered
        afterRollback[afterRollback.count - 1] += learnt
    }

    /// Remembers, when a transaction is open, what memory learnt from the database there
    /// and must learn again should the transaction roll back.
    func learntInTransaction(_ what: AfterRollback) {
        guard !afterRollback.isEmpty else { return }
        afterRollback[afterRollback.count - 1].append(what)
    }

    /// Forgets the counts kept so far (see ``membershipGeneration``).
    func membershipsMayChange() {
        guard hasCachedCounts else { return }
        membershipGeneration += 1
        hasCachedCounts = false
    }

    /// Whether a transaction is open, so that memory changes must be undoable.
    var isRecordingUndo: Bool { !journalLevels.isEmpty }

    /// Remembers how to undo a memory change, when a transaction is open.
    func recordUndo(_ undo: @escaping () -> Void) {
        record(.action(undo))
    }

    /// Remembers a journal entry, when a transaction is open.
    func record(_ entry: JournalEntry) {
        guard !journalLevels.isEmpty else { return }
        journal.append(entry)
    }

    // MARK: - Loaded relationships

    /// Stores what a load of relationship `index` found for each of `owners` (`related`, in
    /// the same order): the members of its ``RelationshipSet`` — refilled in place where the
    /// owner has one already, so that a set handed out stays live — or its to-one object.
    /// `mayRepeat`: members may come more than once (pairs through a helper table).
    func storeLoaded(relationship index: Int, of owners: [DatabaseObject], related: [[DatabaseObject]], mayRepeat: Bool) {
        guard let first = owners.first else { return }
        loadedRelationships.insert(RelationshipAddress(entity: first.entityIndex, relationship: index))
        let isToMany = first.table.isToMany[index]
        for (owner, related) in zip(owners, related) {
            if isToMany {
                if let set = owner.sets[index] {
                    set.refill(with: related, mayRepeat: mayRepeat)
                } else {
                    owner.relations.sets[index] = RelationshipSet(owner: owner, relationship: index, members: related, mayRepeat: mayRepeat)
                    learntInTransaction(.loadedSet(owner: owner, relationship: index))
                }
            } else {
                let previous = owner.toOne[index]
                owner.setToOne(index, .some(related.first))
                if isRecordingUndo { recordUndo { [weak owner] in owner?.setToOne(index, previous) } }
            }
        }
    }

    /// Lets go of the owner's set for relationship `index`: loaded again when next asked for.
    func letGo(relationship index: Int, of owner: DatabaseObject) {
        owner.relations.sets[index] = nil
    }

    /// Keeps the members counted for relationship `index` of each of `owners`, in
    /// `generation` (see ``membershipGeneration``).
    func storeCounts(relationship index: Int, of owners: [DatabaseObject], counts: [Int], generation: Int) {
        for (owner, count) in zip(owners, counts) {
            owner.relations.counts[index] = CachedCount(value: count, generation: generation)
        }
        hasCachedCounts = true
    }
}

/// How to undo one memory change. Values, not closures, for the common ones: an object's
/// values change for every row a write or a save reads back, and a closure each (with the
/// row it captured) cost an allocation more, made and freed.
enum JournalEntry {
    /// The object held these values, all of its attributes'.
    case values(DatabaseObject, [StoredValue])
    /// The object held `values` at these attribute indexes.
    case cells(DatabaseObject, columns: SmallArray<Int>, values: SmallArray<StoredValue>)
    /// Anything else: loaded sets and to-ones, the identity map, deleted marks.
    case action(() -> Void)
}

/// What memory learnt from the database inside a transaction, read again if it rolls back.
enum AfterRollback {
    /// A conflict corrected the object (read again, marked deleted, moved between sets).
    case corrected(DatabaseObject)
    /// The owner's set for the relationship was first loaded here.
    case loadedSet(owner: DatabaseObject, relationship: Int)

    var object: DatabaseObject {
        switch self {
        case .corrected(let object), .loadedSet(let object, _): object
        }
    }
}
