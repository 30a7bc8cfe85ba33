import RelatePostgres

/// Change tracking by logical decoding: a replication connection streaming Relate's
/// publication from a temporary slot with `pgoutput`. Nothing is installed on the tables;
/// a transaction is handed over when its commit arrives and a new snapshot sees it, never
/// before — or, for a consumer that confirms that itself, when its commit arrives, with its
/// id (`confirmingVisibility` false).
final class LogicalDecodingFeed: ChangeFeed {
    let mechanism = ChangeTracking.Mechanism.logicalDecoding
    /// The connection for what is not the stream: the catalog, and whether a snapshot sees a
    /// transaction. Replaced when it dies while the stream lives on.
    private var main: Connection
    private let tables: TrackedTables
    private var stream: Connection
    private var relations: [UInt32: PgOutputMessage.Relation] = [:]
    /// The relations whose updates tell which columns changed: replica identity `FULL`, and
    /// the model's columns; told when their relation message comes, not at every update.
    private var comparable = Set<UInt32>()
    /// The relations of the model's columns and keys from the catalog (unique) whose
    /// identity is not `FULL`: their rows' last versions are kept in ``lastSeen``.
    private var remembering = Set<UInt32>()
    /// The last version the feed saw of each row of a ``remembering`` relation, by relation
    /// and key: under the default replica identity pgoutput sends no row before an update,
    /// and this is it, so the update's changed columns are what differs from it (as `FULL`
    /// would say). The feed sees every committed change in commit order, so the version
    /// kept is the one before. It starts with the rows the tables held when the slot was
    /// made, read in its snapshot (``seed(_:on:into:)``), up to ``maxRemembered``; a row
    /// past that has none until it changes, and its first update names no columns. Without it, every
    /// principal's requests tested each updated row (Benchmarks/README.md, "Changed columns
    /// under the default replica identity", "Every row's version from the slot's snapshot").
    /// What is kept of a long value is its length and hash (``KeptValue``).
    private var lastSeen: [UInt32: [ExactTexts: [KeptValue]]] = [:]
    private var lastSeenCount = 0
    /// The column types of each relation whose rows the slot's snapshot gave ``lastSeen``,
    /// until its first relation message: one of other types (a column altered since the
    /// snapshot) forgets them.
    private var seededTypes: [UInt32: [UInt32]] = [:]
    /// At most this many rows are kept; one more forgets one (its next update names no columns).
    static let maxRemembered = 100_000
    /// How many updates of a transaction whose changed columns are not known carry the row
    /// after them (``ChangeNotice/newRow``) at most.
    static let rowsAfterKept = 1_000
    private var transaction: [ChangeNotice]?
    /// The id of the transaction being read (its `begin`).
    private var transactionID: UInt32 = 0
    /// What was read and not yet handed over, in order: a transaction's changes with its
    /// id, held until a new snapshot sees it (``visibleUpTo(_:)``), or, for a consumer that
    /// confirms that itself, until the end of ``receive()``.
    private var held: [(transaction: UInt32?, event: FeedEvent)] = []
    private var received = LSN.zero
    private var acknowledged = LSN.zero
    var position: LSN? { received == .zero ? nil : received }
    /// Whether a transaction is held until a snapshot of the feed's sees it; if not, it is
    /// handed over at once with its id, which the consumer confirms.
    private let confirmsVisibility: Bool

    init(main: Connection, layout: ModelLayout, confirmingVisibility: Bool = true) throws {
        self.main = main
        confirmsVisibility = confirmingVisibility
        try ChangeTracking.checkLogicalDecoding(on: main)
        tables = try TrackedTables(layout: layout, pinningOn: main)
        (stream, lastSeen, lastSeenCount, seededTypes) = try Self.start(like: main, tables: tables)
    }

    /// A replication connection streaming from a new temporary slot, and the rows its
    /// snapshot held that ``lastSeen`` starts with (``seed(_:on:into:)``), with their
    /// columns' types (``seededTypes``): read on a connection of their own that took the
    /// snapshot, before streaming starts. Until then the walsender sends nothing, so
    /// nobody waits on it (not a commit whose synchronous standby it is, not its own
    /// `wal_sender_timeout`), and the snapshot stays exported.
    private static func start(
        like main: Connection, tables: TrackedTables
    ) throws -> (stream: Connection, seen: [UInt32: [ExactTexts: [KeptValue]]], count: Int, types: [UInt32: [UInt32]]) {
        let stream = try Connection(sameAs: main, adding: ["replication": "database"])
        var (seen, count, types) = ([UInt32: [ExactTexts: [KeptValue]]](), 0, [UInt32: [UInt32]]())
        // The walsender's own process ID names the slot: unique among live connections.
        try stream.startLogicalReplication(slot: "relate_\(stream.backendProcessID)", publications: [ChangeTracking.publication]) { snapshot in
            do {
                let seeder = try Connection(sameAs: main)
                defer { seeder.close() }
                // Bounded: a lock another session waits for (an ALTER TABLE queued behind a
                // long transaction), or a slow read, ends the reading, not the feed.
                try seeder.executeScript("""
                    BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT \(try seeder.quoteLiteral(snapshot));
                    SET LOCAL lock_timeout = '1s'; SET LOCAL statement_timeout = '5s'
                    """)
                try seed(tables, on: seeder) { oid, rows, columnTypes in
                    seen[oid] = rows
                    count += rows.count
                    types[oid] = columnTypes
                }
            } catch {
                main.logger.debug("change feed: the rows of the slot's snapshot could not all be read", metadata: ["relate.error": "\(error)"])
            }
        }
        return (stream, seen, count, types)
    }

    /// How much text of the slot's snapshot ``seed(_:on:into:)`` reads at most, and for how long.
    static let seedBytes = 64 << 20
    static let seedTime = Duration.seconds(10)

    /// Reads on `connection`, in the slot's snapshot, the rows of the publication's tables
    /// of the model whose versions ``lastSeen`` keeps (their key known, their replica
    /// identity not `FULL`), up to ``maxRemembered`` in all, ``seedBytes`` of text and
    /// ``seedTime``, a thousand at a time; hands each table's over (by oid) with its
    /// columns' types. The stream's changes come after that snapshot, in order, so an
    /// update of a row read names the columns it changed. Tables the role may not read are
    /// left out, and those whose row-level security applies to it (a policy could fail for
    /// a role with no settings, or hide rows): what pgoutput sends the feed, every row
    /// whole, a role that bypasses the policies reads. A failure ends the reading: what was
    /// handed over is the snapshot's still, and rows not read name no columns at their
    /// first update.
    private static func seed(
        _ tables: TrackedTables, on connection: Connection, into found: (UInt32, [ExactTexts: [KeptValue]], [UInt32]) -> Void
    ) throws {
        // Each table's columns with their types, by name: the types the rows are read with.
        var readable: [Int: [String: UInt32]] = [:]
        for row in try connection.query(seededTablesSQL, [ChangeTracking.publication]) {
            let (names, types) = (try row.decode([String].self, at: 1), try row.decode([Int].self, at: 2))
            readable[try row.decode(Int.self, at: 0)] = Dictionary(zip(names, types.map { UInt32($0) }), uniquingKeysWith: { first, _ in first })
        }
        let deadline = ContinuousClock.now + seedTime
        var (room, bytes) = (maxRemembered, seedBytes)
        for table in tables.tables where table.triggersSendKey && !table.primaryKey.isEmpty {
            let keyPositions = table.primaryKey.compactMap { table.columns.firstIndex(of: $0) }
            guard let oid = table.oid, let typesByName = readable[oid], keyPositions.count == table.primaryKey.count else { continue }
            let types = table.columns.compactMap { typesByName[$0] }
            guard types.count == table.columns.count else { continue }
            let columns = try table.columns.map { try connection.quoteIdentifier($0) }.joined(separator: ", ")
            // In text, as pgoutput sends values: each type's output function.
            try connection.execute(
                "DECLARE relate_seed NO SCROLL CURSOR FOR SELECT \(columns) FROM ONLY \(try connection.quoteIdentifier(table.schema)).\(try connection.quoteIdentifier(table.name))")
            var rows: [ExactTexts: [KeptValue]] = [:]
            var full = false
            while !full {
                let batch = try connection.query("FETCH 1000 FROM relate_seed")
                if batch.count == 0 { break }
                for row in batch {
                    let texts = try table.columns.indices.map { try row.decode(String?.self, at: $0) }
                    let key = keyPositions.map { texts[$0] }
                    guard !key.contains(nil) else { continue }
                    rows[ExactTexts(key)] = texts.map { $0.map { KeptValue(.text($0)) } ?? .null }
                    bytes -= texts.reduce(0) { $0 + ($1?.utf8.count ?? 0) }
                }
                full = rows.count >= room || bytes <= 0 || ContinuousClock.now > deadline
            }
            try connection.execute("CLOSE relate_seed")
            room -= rows.count
            found(UInt32(oid), rows, types)
            if full { return }
        }
    }

    /// The oids of publication `$1`'s tables that ``seed(_:on:into:)`` reads, with their
    /// columns' names and type oids: replica identity not `FULL`, readable by the role, and
    /// no row-level security that applies to it (none on the table; or the role a
    /// superuser, or with `BYPASSRLS`, or the owner's without `FORCE`).
    static let seededTablesSQL = """
        SELECT c.oid::int8,
               array(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum),
               array(SELECT a.atttypid::int8 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum)
          FROM pg_publication_tables p
          JOIN pg_namespace n ON n.nspname = p.schemaname
          JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = p.tablename
          JOIN pg_roles r ON r.rolname = current_user
         WHERE p.pubname = $1 AND c.relreplident <> 'f' AND has_table_privilege(c.oid, 'SELECT')
           AND (NOT c.relrowsecurity OR r.rolsuper OR r.rolbypassrls OR (pg_has_role(c.relowner, 'USAGE') AND NOT c.relforcerowsecurity))
        """

    func receive() throws -> [FeedEvent] {
        do {
            while let message = try stream.readReplicationMessage() {
                switch message {
                case .keepalive(let end, let replyRequested):
                    received = max(received, end)
                    if replyRequested { try stream.sendStandbyStatus(received: received, flushed: acknowledged) }
                case .data(_, let end, let payload):
                    received = max(received, end)
                    let message = try PgOutputMessage(payload)
                    if let event = try read(message) {
                        if case .commit = message { held.append((transactionID, event)) } else { held.append((nil, event)) }
                    }
                }
            }
            // At once, not on a timer: the feed's walsender may be a synchronous standby
            // (`synchronous_standby_names = '*'` names every walsender), and then every
            // commit of the server waits for this (Benchmarks/README.md, "Logical
            // decoding: …": once a second made each commit wait up to a second).
            if acknowledged < received, transaction == nil {
                acknowledged = received
                try stream.sendStandbyStatus(received: received, flushed: acknowledged)
            }
        } catch let error as PostgresError where error.kind == .connectionClosed || !stream.isOpen {
            main.logger.warning("change feed lost its replication connection; streaming again", metadata: ["relate.error": "\(error.message)"])
            (stream, lastSeen, lastSeenCount, seededTypes) = try Self.start(like: main, tables: tables)
            relations = [:]
            comparable = []
            remembering = []
            transaction = nil
            // What was read before the gap is handed over with it: the gap reads everything again.
            defer { held = [] }
            return held.map(\.event) + [.gap]
        }
        guard confirmsVisibility else {
            defer { held = [] }
            return held.map { transaction, event in
                guard let transaction, case .changes(let notices, _) = event else { return event }
                return .changes(notices, unconfirmed: transaction)
            }
        }
        let count = try visibleUpTo(held.compactMap(\.transaction))
        defer { held.removeFirst(count) }
        return held.prefix(count).map(\.event)
    }

    /// How many of ``held`` a new snapshot sees, from the first: up to the first transaction
    /// it does not see yet, and everything when none is held.
    ///
    /// The walsender sends a commit once its record is flushed, which is before the
    /// committing backend makes the transaction visible to other snapshots; with synchronous
    /// replication, not until a standby confirmed it. A live query that read again at once
    /// could then read the row as it was before, and no later change would tell it
    /// otherwise (Benchmarks/README.md, "A transaction handed over once it is visible").
    /// So a transaction is handed over once a new snapshot on the feed's other
    /// connection sees it: one statement for all held, asked again after a millisecond
    /// (``waitForInput(timeout:)``) while one is not.
    private func visibleUpTo(_ transactions: [UInt32]) throws -> Int {
        guard !transactions.isEmpty else { return held.count }
        func ask() throws -> Set<Int> {
            Set(try main.queryPrepared(Self.notVisibleSQL, [transactions.map(Int.init)]).map { try $0.decode(Int.self, at: 0) })
        }
        let unseen: Set<Int>
        do {
            unseen = try ask()
        } catch let error as PostgresError where error.kind == .connectionClosed || !main.isOpen {
            // The other connection died while the stream lives on (a restart is a gap of the
            // stream's own): a new one with the stream's parameters, not a replication one,
            // is asked once more. Failing, the held transactions wait for the next call.
            main = try Connection(sameAs: stream, adding: ["replication": "false"])
            unseen = try ask()
        }
        guard !unseen.isEmpty else { return held.count }
        return held.firstIndex { $0.transaction.map { unseen.contains(Int($0)) } ?? false } ?? held.count
    }

    /// Which of the transaction ids `$1` (32 bits, as `int8`) the statement's snapshot does
    /// not see yet: each made a full id in the epoch of the snapshot's `xmax` (the one
    /// before, when that would put it past `xmax`), then asked of the snapshot.
    static let notVisibleSQL = """
        SELECT t FROM unnest($1::int8[]) AS t, pg_current_snapshot() AS s,
               LATERAL (SELECT pg_snapshot_xmax(s)::text::int8 AS xmax) AS m,
               LATERAL (SELECT (m.xmax & ~4294967295::int8) | t AS full) AS f
         WHERE NOT pg_visible_in_snapshot((CASE WHEN f.full > m.xmax THEN f.full - 4294967296 ELSE f.full END)::text::xid8, s)
        """

    func waitForInput(timeout: Duration) throws {
        // A transaction held for its visibility is asked about again soon, whatever arrives.
        _ = try stream.waitForInput(timeout: held.isEmpty ? timeout : min(timeout, .milliseconds(1)))
    }

    private func read(_ message: PgOutputMessage) throws -> FeedEvent? {
        switch message {
        case .begin(_, let id):
            transaction = []
            transactionID = id
        case .commit(let end):
            defer { transaction = nil }
            if var notices = transaction, !notices.isEmpty {
                for index in notices.indices where notices[index].newRow != nil { notices[index].newRow?.committed = end }
                return .changes(notices)
            }
        case .relation(let relation):
            // The walsender sends a relation again after an invalidation of its cache (a
            // policy made on the table, for one), most often unchanged: the rows seen stay
            // valid then. Sent first, it finds the rows of the slot's snapshot, read with
            // its columns' types.
            if let known = relations[relation.id], known != relation { forget(relation.id) }
            if let types = seededTypes.removeValue(forKey: relation.id), types != relation.columns.map(\.type) { forget(relation.id) }
            relations[relation.id] = relation
            let index = tables.index(schema: relation.schema, table: relation.name)
            let sameColumns = index.map { tables.tables[$0].columns.elementsEqual(relation.columns.lazy.map(\.name)) } ?? false
            comparable.remove(relation.id)
            remembering.remove(relation.id)
            if sameColumns, relation.hasFullReplicaIdentity {
                comparable.insert(relation.id)
            } else if sameColumns, let index, tables.tables[index].triggersSendKey {
                remembering.insert(relation.id)
            }
            // Rows of the snapshot read for a relation whose versions are not kept.
            if !remembering.contains(relation.id) { forget(relation.id) }
            return try schemaChange(relation)
        case .insert(let id, let new):
            let rowKey = key(of: new, in: id)
            note(id, .insert, keys: rowKey, old: nil)
            remember(new, key: rowKey, in: id)
        case .update(let id, let old, let new):
            let (rowKey, keyBefore) = (key(of: new, in: id), old.flatMap { key(of: $0, in: id) })
            let before = comparable.contains(id) ? old?.map(KeptValue.init) : seen(keyBefore ?? rowKey, in: id)
            let changed = changedColumns(from: before, to: new, in: id)
            // The row after it, for the first rows of a transaction: a bulk update of rows not
            // seen before would hold every row's text until its commit.
            let after = changed == nil && (transaction?.count ?? 0) < Self.rowsAfterKept ? row(new, in: id) : nil
            note(id, .update, keys: rowKey, old: keyBefore, changed: changed, newRow: after)
            remember(new, key: rowKey, replacing: keyBefore, in: id)
        case .delete(let id, let old):
            let rowKey = key(of: old, in: id)
            note(id, .delete, keys: rowKey, old: nil)
            if let rowKey { forget(rowKey, in: id) }
        case .truncate(let ids):
            for id in ids {
                note(id, .delete, keys: nil, old: nil)
                forget(id)
            }
        case .other:
            break
        }
        return nil
    }

    /// A relation message that disagrees with the model (another name for a table's oid,
    /// other columns) is a hint: the catalog decides, for the model's own table, whether it
    /// changed.
    private func schemaChange(_ relation: PgOutputMessage.Relation) throws -> FeedEvent? {
        let byName = tables.index(schema: relation.schema, table: relation.name)
        let byOID = tables.index(oid: Int(relation.id))
        var hinted = Set<Int>()
        for index in [byName, byOID].compactMap({ $0 }) {
            let table = tables.tables[index]
            if table.oid != Int(relation.id) || table.schema != relation.schema || table.name != relation.name
                || table.columns != relation.columns.map(\.name)
            {
                hinted.insert(index)
            }
        }
        guard let (index, what) = try tables.altered(hinted, on: main).min(by: { $0.key < $1.key }) else { return nil }
        return .schemaChanged(schema: tables.tables[index].schema, table: tables.tables[index].name, what: what)
    }

    private func note(_ id: UInt32, _ kind: Change.Kind, keys: [String?]?, old: [String?]?, changed: [String]? = nil, newRow: RowAfter? = nil) {
        guard let relation = relations[id] else { return }
        transaction?.append(
            ChangeNotice(
                schema: relation.schema, table: relation.name, kind: kind, keys: keys.map { [$0] }, oldKeys: old.map { [$0] },
                changedColumns: changed, newRow: newRow))
    }

    /// `tuple`'s text values by column name (``ChangeNotice/newRow``), its commit's position
    /// told when it comes.
    private func row(_ tuple: [PgOutputMessage.TupleValue], in id: UInt32) -> RowAfter? {
        guard let relation = relations[id], tuple.count == relation.columns.count else { return nil }
        var row: [String: String?] = [:]
        for (column, value) in zip(relation.columns, tuple) {
            switch value {
            case .text(let text): row[column.name] = .some(text)
            case .null: row[column.name] = .some(nil)
            case .unchanged, .binary: continue
            }
        }
        return RowAfter(values: row)
    }

    /// The columns an update changed, given the whole row before it: the old tuple of a
    /// ``comparable`` relation, or the version ``lastSeen`` kept (their columns the model's);
    /// `nil` without one. A TOASTed value the update did not touch comes as `unchanged` in
    /// the new tuple; one that is `unchanged` in the row before alone counts as changed.
    /// Values are compared by their bytes: two text forms that Swift's `==` takes as equal
    /// (the same letters, composed or not) are two values to the server.
    private func changedColumns(from old: [KeptValue]?, to new: [PgOutputMessage.TupleValue], in id: UInt32) -> [String]? {
        guard let old, comparable.contains(id) || remembering.contains(id), let relation = relations[id], old.count == new.count,
            new.count == relation.columns.count
        else { return nil }
        var changed: [String] = []
        for (position, value) in new.enumerated() where value != .unchanged && KeptValue(value) != old[position] {
            changed.append(relation.columns[position].name)
        }
        return changed
    }

    /// The version of row `key` that ``lastSeen`` kept, if any.
    private func seen(_ key: [String?]?, in id: UInt32) -> [KeptValue]? {
        key.flatMap { lastSeen[id]?[ExactTexts($0)] }
    }

    /// Keeps `new` as row `key`'s last version (moved from `oldKey`, an update's key before,
    /// when it changed): a value the update left TOASTed and unchanged keeps the one before.
    private func remember(_ new: [PgOutputMessage.TupleValue], key: [String?]?, replacing oldKey: [String?]? = nil, in id: UInt32) {
        guard remembering.contains(id), let key, !key.contains(nil) else { return }
        var row = new.map(KeptValue.init)
        if let before = seen(oldKey ?? key, in: id), before.count == row.count {
            for position in row.indices where row[position] == .unchanged { row[position] = before[position] }
        }
        if let oldKey, ExactTexts(oldKey) != ExactTexts(key) { forget(oldKey, in: id) }
        if lastSeen[id]?[ExactTexts(key)] == nil {
            if lastSeenCount >= Self.maxRemembered, let full = lastSeen.first(where: { !$0.value.isEmpty })?.key {
                lastSeen[full]!.remove(at: lastSeen[full]!.startIndex)
                lastSeenCount -= 1
            }
            lastSeenCount += 1
        }
        lastSeen[id, default: [:]][ExactTexts(key)] = row
    }

    /// Forgets row `key`'s last version (a delete).
    private func forget(_ key: [String?], in id: UInt32) {
        if lastSeen[id]?.removeValue(forKey: ExactTexts(key)) != nil { lastSeenCount -= 1 }
    }

    /// Forgets every row of relation `id` (a truncate, or a relation message that changed it).
    private func forget(_ id: UInt32) {
        lastSeenCount -= lastSeen.removeValue(forKey: id)?.count ?? 0
    }

    /// The primary key's values in a tuple, in the key's order; `nil` when the table has
    /// none in the model or the tuple lacks one (a key never arrives unchanged-TOASTed).
    private func key(of tuple: [PgOutputMessage.TupleValue], in id: UInt32) -> [String?]? {
        guard let relation = relations[id], let index = tables.index(schema: relation.schema, table: relation.name) else { return nil }
        let names = tables.tables[index].primaryKey
        guard !names.isEmpty else { return nil }
        var values: [String?] = []
        for name in names {
            guard let position = relation.columns.firstIndex(where: { $0.name == name }), position < tuple.count,
                case .text(let text) = tuple[position]
            else { return nil }
            values.append(text)
        }
        return values
    }
}

/// What the logical feed keeps of a column's value (``LogicalDecodingFeed``'s `lastSeen`),
/// to tell whether an update changed it: a short value as it came, a longer one's length and
/// hash. A row of long text then costs a few words a column, where a hundred thousand rows
/// kept whole could have held gigabytes. The hash is Swift's, seeded anew in each process,
/// so a writer cannot make two values collide on purpose; two different values of one
/// length pass for one with a chance of 2⁻⁶⁴. Text is compared by its bytes
/// (``Swift/String/hasSameBytes(as:)``), and a short value is kept as it came: an update's
/// values make no array each.
private enum KeptValue: Equatable {
    case null
    case unchanged
    case text(String)
    case binary([UInt8])
    case digest(count: Int, hash: Int)

    /// Values up to this many bytes are kept whole.
    static let longestKept = 32

    init(_ value: PgOutputMessage.TupleValue) {
        switch value {
        case .null: self = .null
        case .unchanged: self = .unchanged
        case .text(let text) where text.utf8.count <= Self.longestKept: self = .text(text)
        case .text(var text): self = text.withUTF8(Self.digest)
        case .binary(let bytes) where bytes.count <= Self.longestKept: self = .binary(bytes)
        case .binary(let bytes): self = bytes.withUnsafeBufferPointer(Self.digest)
        }
    }

    private static func digest(_ bytes: UnsafeBufferPointer<UInt8>) -> Self {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return .digest(count: bytes.count, hash: hasher.finalize())
    }

    static func == (left: Self, right: Self) -> Bool {
        switch (left, right) {
        case (.null, .null), (.unchanged, .unchanged): true
        case (.text(let left), .text(let right)): left.hasSameBytes(as: right)
        case (.binary(let left), .binary(let right)): left == right
        case (.digest(let leftCount, let leftHash), .digest(let rightCount, let rightHash)): leftCount == rightCount && leftHash == rightHash
        default: false
        }
    }
}
