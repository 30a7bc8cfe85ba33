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
            main.logger.warning("change feed lost its connection; listening again", metadata: ["relate.error": "\(error.message)"])
            listener = try Self.listen(like: main)
            return [.gap]
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
        // A transaction's notifications arrive together, in order, when it commits: one
        // event per transaction.
        var events: [FeedEvent] = []
        var transaction: Int?
        for payload in payloads {
            guard let event = event(payload) else { continue }
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

    func waitForInput(timeout: Duration) throws {
        _ = try listener.waitForInput(timeout: timeout)
    }

    /// A trigger's payload: `{"s": schema, "t": table, "k": "I"|"U"|"D", "keys": […], "old": […],
    /// "c": "column,…"}`.
    private func event(_ object: [String: Any]) -> FeedEvent? {
        guard let schema = object["s"] as? String, let table = object["t"] as? String, let letter = object["k"] as? String else { return nil }
        if let now = object["c"] as? String, let known = columns(schema, table), now != known.joined(separator: ",") {
            return .schemaChanged(table: "\(schema).\(table)", what: "its columns are now \(now)")
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
