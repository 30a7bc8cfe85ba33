import RelatePostgres

/// Change tracking by logical decoding: a replication connection streaming Relate's
/// publication from a temporary slot with `pgoutput`. Nothing is installed on the tables;
/// a transaction is handed over when its commit arrives, never before.
final class LogicalDecodingFeed: ChangeFeed {
    let mechanism = ChangeTracking.Mechanism.logicalDecoding
    private let main: Connection
    /// The primary key's column names of a table the model has, by schema and name.
    private let primaryKey: (String, String) -> [String]?
    /// The columns of a table the model has, to tell a changed definition.
    private let columns: (String, String) -> [String]?
    private var stream: Connection
    private var relations: [UInt32: PgOutputMessage.Relation] = [:]
    private var transaction: [ChangeNotice]?
    private var received = LSN.zero
    private var acknowledged = LSN.zero

    init(main: Connection, primaryKey: @escaping (String, String) -> [String]?, columns: @escaping (String, String) -> [String]?) throws {
        self.main = main
        self.primaryKey = primaryKey
        self.columns = columns
        try ChangeTracking.checkLogicalDecoding(on: main)
        stream = try Self.start(like: main)
    }

    private static func start(like main: Connection) throws -> Connection {
        let stream = try Connection(sameAs: main, adding: ["replication": "database"])
        // The walsender's own process ID names the slot: unique among live connections.
        try stream.startLogicalReplication(slot: "relate_\(stream.backendProcessID)", publications: [ChangeTracking.publication])
        return stream
    }

    func receive() throws -> [FeedEvent] {
        var events: [FeedEvent] = []
        do {
            while let message = try stream.readReplicationMessage() {
                switch message {
                case .keepalive(let end, let replyRequested):
                    received = max(received, end)
                    if replyRequested { try stream.sendStandbyStatus(received: received, flushed: acknowledged) }
                case .data(_, let end, let payload):
                    received = max(received, end)
                    if let event = try read(try PgOutputMessage(payload)) { events.append(event) }
                }
            }
            if acknowledged < received, transaction == nil {
                acknowledged = received
                try stream.sendStandbyStatus(received: received, flushed: acknowledged)
            }
        } catch let error as PostgresError where error.kind == .connectionClosed || !stream.isOpen {
            main.logger.warning("change feed lost its replication connection; streaming again", metadata: ["relate.error": "\(error.message)"])
            stream = try Self.start(like: main)
            relations = [:]
            transaction = nil
            return events + [.gap]
        }
        return events
    }

    func waitForInput(timeout: Duration) throws {
        _ = try stream.waitForInput(timeout: timeout)
    }

    private func read(_ message: PgOutputMessage) throws -> FeedEvent? {
        switch message {
        case .begin:
            transaction = []
        case .commit:
            defer { transaction = nil }
            if let notices = transaction, !notices.isEmpty { return .changes(notices) }
        case .relation(let relation):
            relations[relation.id] = relation
            if let known = columns(relation.schema, relation.name), known != relation.columns.map(\.name) {
                return .schemaChanged(
                    schema: relation.schema, table: relation.name,
                    what: "its columns are now \(relation.columns.map(\.name).joined(separator: ", "))")
            }
        case .insert(let id, let new):
            note(id, .insert, keys: key(of: new, in: id), old: nil)
        case .update(let id, let old, let new):
            note(id, .update, keys: key(of: new, in: id), old: old.flatMap { key(of: $0, in: id) })
        case .delete(let id, let old):
            note(id, .delete, keys: key(of: old, in: id), old: nil)
        case .truncate(let ids):
            for id in ids { note(id, .delete, keys: nil, old: nil) }
        case .other:
            break
        }
        return nil
    }

    private func note(_ id: UInt32, _ kind: Change.Kind, keys: [String?]?, old: [String?]?) {
        guard let relation = relations[id] else { return }
        transaction?.append(
            ChangeNotice(schema: relation.schema, table: relation.name, kind: kind, keys: keys.map { [$0] }, oldKeys: old.map { [$0] }))
    }

    /// The primary key's values in a tuple, in the key's order; `nil` when the table has
    /// none in the model or the tuple lacks one (a key never arrives unchanged-TOASTed).
    private func key(of tuple: [PgOutputMessage.TupleValue], in id: UInt32) -> [String?]? {
        guard let relation = relations[id], let names = primaryKey(relation.schema, relation.name), !names.isEmpty else { return nil }
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
