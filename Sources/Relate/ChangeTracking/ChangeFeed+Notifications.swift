import Foundation
import RelatePostgres

/// Change tracking by Relate's triggers: `LISTEN relate_changes` on a connection of its own.
/// Notifications the context's own connection caused (same backend process) are skipped.
final class NotificationFeed: ChangeFeed {
    let mechanism = ChangeTracking.Mechanism.triggers
    private let main: Connection
    /// The columns of a table the model has, to tell a changed definition.
    private let columns: (String, String) -> [String]?
    private var listener: Connection

    init(main: Connection, columns: @escaping (String, String) -> [String]?) throws {
        self.main = main
        self.columns = columns
        listener = try Self.listen(like: main)
    }

    private static func listen(like main: Connection) throws -> Connection {
        let listener = try Connection(sameAs: main)
        try listener.execute("LISTEN \(ChangeTracking.channel)")
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
        var payloads: [[String: Any]] = []
        for notification in notifications where notification.channel == ChangeTracking.channel && notification.processID != own {
            if let object = try? JSONSerialization.jsonObject(with: Data(notification.payload.utf8)) as? [String: Any] { payloads.append(object) }
        }
        let stored = payloads.compactMap { $0["id"] as? Int }
        if !stored.isEmpty {
            // Payloads too long for NOTIFY, kept in Relate's table, put back in their place.
            let result = try main.query("SELECT id, payload::text FROM relate_tracking.change WHERE id = ANY($1)", [stored])
            var found: [Int: [String: Any]] = [:]
            for row in result {
                let text = try row.decode(String.self, at: 1)
                found[try row.decode(Int.self, at: 0)] = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            }
            payloads = payloads.compactMap { payload in (payload["id"] as? Int).map { found[$0] } ?? payload }
        }
        let altered: [Int: String]
        do {
            altered = try alteredTables(payloads)
        } catch let error as PostgresError where error.kind == .connectionClosed {
            return try listenAgain(after: error)
        }
        // A transaction's notifications arrive together, in order, when it commits: one
        // event per transaction.
        var events: [FeedEvent] = []
        var transaction: Int?
        for payload in payloads {
            guard let event = event(payload, altered: altered) else { continue }
            let writer = payload["x"] as? Int
            if case .changes(let notices) = event, let writer, writer == transaction, case .changes(let earlier) = events.last {
                events[events.count - 1] = .changes(earlier + notices)
            } else {
                events.append(event)
            }
            transaction = writer
        }
        return events
    }

    /// What was sent while the listener was away is lost: the context reads everything again.
    private func listenAgain(after error: PostgresError) throws -> [FeedEvent] {
        main.logger.warning("change feed lost its connection; listening again", metadata: ["relate.error": "\(error.message)"])
        listener = try Self.listen(like: main)
        return [.gap]
    }

    func waitForInput(timeout: Duration) throws {
        _ = try listener.waitForInput(timeout: timeout)
    }

    /// The tables of the model, among those the payloads name, whose columns are no longer
    /// the model's, with what they are now: one query on the listener's connection, which
    /// does nothing else. The triggers do not send the columns: the writers would pay for it.
    private func alteredTables(_ payloads: [[String: Any]]) throws -> [Int: String] {
        var known: [Int: [String]] = [:]
        for payload in payloads {
            guard let table = payload["r"] as? Int, known[table] == nil, let schema = payload["s"] as? String,
                let name = payload["t"] as? String, let columns = columns(schema, name)
            else { continue }
            known[table] = columns
        }
        guard !known.isEmpty else { return [:] }
        var now: [Int: String] = [:]
        for row in try listener.query(ChangeTracking.columnsSQL, [Array(known.keys)]) {
            now[try row.decode(Int.self, at: 0)] = try row.decode(String.self, at: 1)
        }
        var altered: [Int: String] = [:]
        for (table, columns) in known where now[table] != columns.joined(separator: ",") {
            altered[table] = now[table].map { "its columns are now \($0.replacingOccurrences(of: ",", with: ", "))" } ?? "it no longer exists"
        }
        return altered
    }

    /// A trigger's payload: `{"x": transaction, "r": table oid, "s": schema, "t": table,
    /// "k": "I"|"U"|"D", "keys": […], "old": […]}`.
    private func event(_ object: [String: Any], altered: [Int: String]) -> FeedEvent? {
        guard let schema = object["s"] as? String, let table = object["t"] as? String, let letter = object["k"] as? String else { return nil }
        if let oid = object["r"] as? Int, let what = altered[oid] {
            return .schemaChanged(schema: schema, table: table, what: what)
        }
        let kind: Change.Kind = letter == "I" ? .insert : letter == "D" ? .delete : .update
        return .changes([ChangeNotice(schema: schema, table: table, kind: kind, keys: Self.texts(object["keys"]), oldKeys: Self.texts(object["old"]))])
    }

    /// JSON keys as the server's text forms (numbers as digits, strings as they are).
    private static func texts(_ value: Any?) -> [[String?]]? {
        guard let keys = value as? [[Any]] else { return nil }
        return keys.map { key in
            key.map { part in
                switch part {
                case let text as String: text
                case let number as NSNumber: number.stringValue
                default: nil
                }
            }
        }
    }
}
