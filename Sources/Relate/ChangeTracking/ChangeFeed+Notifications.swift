import Foundation
import RelatePostgres

/// Change tracking by Relate's triggers: `LISTEN relate_changes` on a connection of its own.
/// Notifications the context's own connection caused (same backend process) are skipped.
///
/// Any role that may connect may `NOTIFY relate_changes`, so a payload is a hint, never a
/// fact: it names rows that may have changed, and they are read again. Whether a table's
/// definition changed is asked of the catalog for the model's own table (``TrackedTables``),
/// whatever oid or name the payload gives. A payload that does not parse, names a table the
/// model lacks, or carries keys that cannot be the table's (of the wrong type or shape, or
/// more than ``maxKeys``) costs at most a re-read of that table, logged at debug level.
final class NotificationFeed: ChangeFeed {
    let mechanism = ChangeTracking.Mechanism.triggers
    /// Notifications carry no log position.
    var position: LSN? { nil }
    private let main: Connection
    private let tables: TrackedTables
    private var listener: Connection
    /// Whether Relate's event triggers tell of every definition change (`{"ddl":1}`): then
    /// the catalog is read after one (and after a gap), not at every batch.
    private var toldOfDefinitionChanges: Bool
    /// The tables the catalog last said were altered, while the event triggers tell.
    private var altered: [Int: String] = [:]
    /// The catalog must be read before the next batch is trusted (at the start, after a gap).
    private var mustCheckAll = true
    /// How often the catalog was read, for tests.
    private(set) var catalogChecks = 0

    /// More keys than this in one notice (new or old) and the table is read again whole
    /// instead (what memory holds of it), so that no payload makes a context hold or look up
    /// more than this. A NOTIFY payload, the only kind another role can send, holds at most
    /// a few thousand; stored ones are written by the owner's triggers alone.
    static let maxKeys = 1_000_000

    init(main: Connection, layout: ModelLayout) throws {
        self.main = main
        listener = try Self.listen(like: main)
        tables = try TrackedTables(layout: layout, pinningOn: listener)
        toldOfDefinitionChanges = try Self.hasEventTriggers(on: listener)
    }

    /// Whether both of Relate's event triggers are there and enabled.
    private static func hasEventTriggers(on connection: Connection) throws -> Bool {
        try connection.query(
            "SELECT count(*) = 2 FROM pg_event_trigger WHERE evtname IN ('relate_ddl', 'relate_drop') AND evtenabled IN ('O', 'A')"
        )[0].decode(Bool.self, at: 0)
    }

    private static func listen(like main: Connection) throws -> Connection {
        let listener = try Connection(sameAs: main)
        // The stored payloads' read runs at every notification of a table with row-level
        // security, with one id or a few: the server's custom plans for `id = ANY($1)`
        // always looked cheaper than its generic one, so it planned the statement anew each
        // time (a third of the listener's backend's time; Benchmarks/README.md, "The hub reads
        // in the feed's task"). The listener's other statements, catalog checks, are as well
        // served by a plan made once.
        try listener.execute("SET plan_cache_mode = force_generic_plan")
        try listener.execute("LISTEN \(ChangeTracking.channel)")
        try listener.execute("LISTEN \(DatabaseContext.editMarksChannel)")
        return listener
    }

    func receive() throws -> [FeedEvent] {
        let notifications: [PostgresNotification]
        do {
            notifications = try listener.notifications()
            guard listener.isOpen else { throw PostgresError(kind: .connectionClosed, message: "the listener's connection was closed") }
        } catch let error as PostgresError where error.kind == .connectionClosed {
            return try listenAgain(after: error)
        }
        let own = main.backendProcessID
        var payloads: [TriggerPayload] = []
        let marks: [FeedEvent] = notifications.contains { $0.channel == DatabaseContext.editMarksChannel && $0.processID != own } ? [.editMarks] : []
        for notification in notifications where notification.channel == ChangeTracking.channel && notification.processID != own {
            if let payload = TriggerPayload(json: notification.payload) {
                payloads.append(payload)
            } else {
                main.logger.debug(
                    "change feed: a notification that is not a payload of Relate's triggers; ignored",
                    metadata: ["relate.sender": "\(notification.processID)", "relate.bytes": "\(notification.payload.utf8.count)"])
            }
        }
        do {
            payloads = try resolveStored(payloads)
            return try marks + events(payloads)
        } catch let error as PostgresError where error.kind == .connectionClosed || !listener.isOpen {
            return try listenAgain(after: error)
        }
    }

    /// Payloads too long for NOTIFY, and those of tables with row-level security, kept in
    /// Relate's table, put back in their place (read on the listener's connection, never the
    /// context's: a failure there cannot touch the context's transaction). When the row
    /// cannot be read — gone, a forged id, or a reader without `SELECT` on
    /// `relate_tracking.change` — the notification's own table, kind and transaction stand,
    /// without keys: the table is read again.
    private func resolveStored(_ payloads: [TriggerPayload]) throws -> [TriggerPayload] {
        let stored = payloads.compactMap(\.stored)
        guard !stored.isEmpty else { return payloads }
        var found: [Int: TriggerPayload] = [:]
        do {
            for row in try listener.queryPrepared(TriggerPayload.storedSQL, [stored], format: .binary) {
                found[try row.decode(Int.self, at: 0)] = TriggerPayload(json: try row.decode(String.self, at: 1))
            }
        } catch let error as PostgresError where error.kind != .connectionClosed && listener.isOpen {
            main.logger.warning(
                "change feed cannot read long payloads from relate_tracking.change (grant SELECT on it: relate enable --grant-to ROLE); their tables are read again whole",
                metadata: ["relate.error": "\(error.message)", "relate.sqlstate": "\(error.sqlState.map { "\($0)" } ?? "")"])
        }
        return payloads.map { payload in
            guard let id = payload.stored else { return payload }
            if let full = found[id] { return full }
            main.logger.debug("change feed: a stored payload that cannot be read; its table is read again", metadata: ["relate.id": "\(id)"])
            var keyless = payload
            keyless.keys = nil
            keyless.oldKeys = nil
            return keyless
        }
    }

    /// What was sent while the listener was away is lost: the context reads everything again.
    private func listenAgain(after error: PostgresError) throws -> [FeedEvent] {
        main.logger.warning("change feed lost its connection; listening again", metadata: ["relate.error": "\(error.message)"])
        listener = try Self.listen(like: main)
        toldOfDefinitionChanges = try Self.hasEventTriggers(on: listener)
        mustCheckAll = true
        return [.gap]
    }

    func waitForInput(timeout: Duration) throws {
        _ = try listener.waitForInput(timeout: timeout)
    }

    /// The events of a batch of payloads: a table of the model that a payload points at (by
    /// name, or by the oid it had when the feed started) and that the catalog says changed is
    /// a schema change; the rest are notices, one event per transaction (a transaction's
    /// notifications arrive together, in order, when it commits).
    private func events(_ payloads: [TriggerPayload]) throws -> [FeedEvent] {
        let hints = payloads.map(hinted)
        let altered: [Int: String]
        if toldOfDefinitionChanges {
            if mustCheckAll || payloads.contains(where: \.isDefinitionChange) {
                catalogChecks += 1
                self.altered = try tables.altered(Set(tables.tables.indices), on: listener)
                mustCheckAll = false
            }
            altered = self.altered
        } else {
            catalogChecks += hints.joined().first == nil ? 0 : 1
            altered = try tables.altered(Set(hints.joined()), on: listener)
        }
        var events: [FeedEvent] = []
        var transaction: Int?
        for (payload, hinted) in zip(payloads, hints) where !payload.isDefinitionChange {
            if let index = hinted.first(where: { altered[$0] != nil }), let what = altered[index] {
                let table = tables.tables[index]
                events.append(.schemaChanged(schema: table.schema, table: table.name, what: what))
                continue
            }
            guard let notice = notice(payload) else { continue }
            if let writer = payload.transaction, writer == transaction, case .changes(let earlier, _) = events.last {
                events[events.count - 1] = .changes(earlier + [notice])
            } else {
                events.append(.changes([notice]))
            }
            transaction = payload.transaction
        }
        return events
    }

    /// The model's tables a payload points at: by its schema and name, and by its oid.
    private func hinted(_ payload: TriggerPayload) -> [Int] {
        var hinted: [Int] = []
        if let schema = payload.schema, let name = payload.table, let index = tables.index(schema: schema, table: name) {
            hinted.append(index)
        }
        if let oid = payload.relation, let index = tables.index(oid: oid), !hinted.contains(index) {
            hinted.append(index)
        }
        return hinted
    }

    /// A trigger's payload as a notice of the model's table it names; `nil` for a table the
    /// model lacks. The changed columns, an update of one row's, are taken only when the
    /// trigger compared as many columns as the model has and names only those: a trigger
    /// made before a column was added does not compare it, and a changed column it cannot
    /// name must never read as unchanged.
    private func notice(_ payload: TriggerPayload) -> ChangeNotice? {
        guard let schema = payload.schema, let name = payload.table, let index = tables.index(schema: schema, table: name) else {
            main.logger.debug("change feed: a payload that names no table of the model; ignored")
            return nil
        }
        // A truncate (`T`) is a delete of rows it does not name, as logical decoding reports it.
        let kind: Change.Kind = payload.kind == "I" ? .insert : payload.kind == "D" || payload.kind == "T" ? .delete : .update
        var (keys, old) = (payload.keys, payload.oldKeys)
        if (keys?.count ?? 0) > Self.maxKeys || (old?.count ?? 0) > Self.maxKeys {
            main.logger.debug("change feed: a payload with more keys than \(Self.maxKeys); its table is read again whole")
            (keys, old) = (nil, nil)
        }
        // The trigger sent the catalog's key, which is not the one an override declared.
        if !tables.tables[index].triggersSendKey { (keys, old) = (nil, nil) }
        var changed: [String]?
        if kind == .update, keys?.count == 1, let columns = payload.changedColumns, payload.comparedColumns == tables.tables[index].columns.count,
            columns.allSatisfy(tables.tables[index].columns.contains)
        {
            changed = columns
        }
        return ChangeNotice(schema: schema, table: name, kind: kind, keys: keys, oldKeys: old, changedColumns: changed)
    }
}
