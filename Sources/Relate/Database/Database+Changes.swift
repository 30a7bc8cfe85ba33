import Foundation
import Logging
import RelatePostgres
import Synchronization
import Tracing

/// What one committed transaction of any client changed, as ``Database/changes(using:)``
/// streams it.
public struct CommittedChanges: Sendable {
    /// Entity, kind and primary key of each row changed (no object is read: `changedKeys`
    /// is empty).
    public var changes: [Change]
    /// The feed lost its connection and opened a new one: what was committed in between is
    /// unknown, and `changes` is empty. Read again whatever you keep.
    public var mayHaveMissedChanges: Bool
    /// The transaction's id when the feed handed it over before confirming that new
    /// snapshots see it (the live queries' mailbox, ``Database/changeMailbox(using:)``).
    var unconfirmedTransaction: UInt32? = nil

    /// The same without the rows after updates (``Change/newRow``): what a consumer of
    /// ``Database/changes(using:)`` receives, which may not see those rows.
    var withoutRows: CommittedChanges {
        var changes = self
        for index in changes.changes.indices { changes.changes[index].newRow = nil }
        return changes
    }
}

extension Database {
    /// Every transaction other clients (and this database's own units of work) commit on
    /// the tracked tables, as it commits: for a server that pushes updates, invalidates a
    /// cache, or wakes a task. The feed runs on a thread of its own with a connection of its
    /// own, and ends when the consumer stops iterating. It listens once this returns:
    /// whatever commits afterwards is delivered.
    ///
    /// ```swift
    /// for try await committed in try await database.changes() {
    ///     for change in committed.changes { print(change) }        // "update person"
    /// }
    /// ```
    ///
    /// With the triggers, a change is what a notification on Relate's channel says, and any
    /// role allowed to connect may send one (`NOTIFY`): a change may name a row that did not
    /// change, or a delete that did not happen. One whose keys are not the table's (their
    /// number, their type) comes keyless, the table's. Read a row before acting on it; the
    /// contexts and live queries do. Logical decoding's changes come from the server's log
    /// alone.
    ///
    /// - Parameter mechanism: ``ChangeTracking/Mechanism/triggers`` or
    ///   ``ChangeTracking/Mechanism/logicalDecoding``; `nil` (the default) to take what the
    ///   database has enabled.
    /// - Returns: The committed transactions, each with its changes, as they commit.
    /// A shutdown of the `Database` (``run()``) or ``close()`` ends the stream without an error.
    ///
    /// - Throws: A ``RelateError`` when no mechanism is enabled in the database, the feed's
    ///   connection cannot be opened or the database was closed (``close()``), or of kind
    ///   ``RelateError/Kind-swift.struct/shuttingDown`` during a shutdown; the stream throws
    ///   when the feed fails later.
    public func changes(using mechanism: ChangeTracking.Mechanism? = nil) async throws -> AsyncThrowingStream<CommittedChanges, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: CommittedChanges.self)
        let (id, entry) = try changeFeeds.register()
        continuation.onTermination = { _ in entry.stop() }
        try await startFeed(mechanism, id: id, entry: entry, into: FeedSink(yield: { continuation.yield($0.withoutRows) }, finish: { continuation.finish(throwing: $0) }))
        return stream
    }

    /// The feed of ``changes(using:)`` for the live queries' hub: in a ``ChangeMailbox``,
    /// which hands over every transaction that committed since it was last asked at once.
    /// Cancelling the task that takes from it stops the feed.
    ///
    /// A logical feed's transaction comes as soon as its commit does, with its id
    /// (``CommittedChanges/unconfirmedTransaction``): the hub confirms that it is visible in
    /// the round trip that reads because of it, where the feed would ask in one of its own.
    func changeMailbox(using mechanism: ChangeTracking.Mechanism? = nil) async throws -> ChangeMailbox {
        let (id, entry) = try changeFeeds.register()
        let mailbox = ChangeMailbox(stopFeed: { entry.stop() })
        try await startFeed(mechanism, confirmingVisibility: false, id: id, entry: entry, into: FeedSink(yield: mailbox.post, finish: mailbox.finish))
        return mailbox
    }

    /// Where a feed's thread hands what it reads: each committed transaction, then the end
    /// (with the error that ended it, or none when it was stopped).
    struct FeedSink: Sendable {
        let yield: @Sendable (CommittedChanges) -> Void
        let finish: @Sendable ((any Error)?) -> Void
    }

    /// Starts feed `id`'s thread, which streams into `sink` until `entry` is stopped;
    /// returns once it listens. `confirmingVisibility`: see ``makeChangeFeed(on:layout:mechanism:confirmingVisibility:)``.
    private func startFeed(
        _ mechanism: ChangeTracking.Mechanism?, confirmingVisibility: Bool = true, id: Int, entry: ChangeFeedRegistry.Entry, into sink: FeedSink
    ) async throws {
        let (conninfo, defaults, setUp) = (self.conninfo, self.connectionDefaults, self.sessionSetUp)
        let (layout, logger, feeds, tracer) = (self.layout.withLock { $0 }, self.logger, self.changeFeeds, self.tracer)
        // Opened as the pool's are: the configured password and connect timeout, the
        // session's query log level and statement timeout.
        let open: @Sendable () throws -> Connection = {
            let connection = try Connection(conninfo: conninfo, defaults: defaults, logger: logger)
            try setUp(connection)
            return connection
        }
        // The feed blocks in libpq, so it runs on a thread of its own; a background job of
        // the database waits for that thread to end (its connections closed), so that a
        // shutdown awaits it, and stops the feed when cancelled.
        let ended = BackgroundTasks.Signal()
        guard background.start({ await withTaskCancellationHandler { await ended.wait() } onCancel: { entry.stop() } }) else {
            feeds.remove(id)
            throw ConnectionPool.closedError
        }
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                // Named from inside: on Linux a name given before the start is not the one
                // perf and gdb show.
                Thread.current.name = "relate-changes"
                // The feed and its connections are gone once `run` returns: only then is the
                // feed forgotten and its job ended, so that a shutdown waits for its
                // connections to close.
                defer {
                    feeds.remove(id)
                    ended.fire()
                }
                Self.run(
                    mechanism, confirmingVisibility: confirmingVisibility, open: open, layout: layout, logger: logger, tracer: tracer,
                    entry: entry, started: started, into: sink)
            }
            thread.start()
        }
    }

    /// Opens the feed (telling `started` how that went), then streams until stopped.
    private static func run(
        _ mechanism: ChangeTracking.Mechanism?, confirmingVisibility: Bool, open: () throws -> Connection, layout: ModelLayout, logger: Logger, tracer: (any Tracer)?,
        entry: ChangeFeedRegistry.Entry, started: CheckedContinuation<Void, any Error>, into sink: FeedSink
    ) {
        let feed: any ChangeFeed
        do {
            let connection = try DatabaseContext.wrappingErrors { try open() }
            // The feed's own statements (catalog checks, stored changes) are spans too, roots of their own.
            if let tracer { connection.roundTripObserver = StatementSpans(tracer: tracer, connection: connection) }
            feed = try DatabaseContext.wrappingErrors { try makeChangeFeed(on: connection, layout: layout, mechanism: mechanism, confirmingVisibility: confirmingVisibility) }
        } catch {
            started.resume(throwing: error)
            return
        }
        entry.note(.streaming, of: feed)
        started.resume()
        stream(feed, layout: layout, logger: logger, entry: entry, into: sink)
    }

    private static func stream(_ feed: any ChangeFeed, layout: ModelLayout, logger: Logger, entry: ChangeFeedRegistry.Entry, into sink: FeedSink) {
        // While the server is away (a failover under way) the feed cannot open its
        // connection again: it tries again, waiting longer each time up to 2 s, and once back
        // reports a gap. Any other error ends the stream.
        var pause = 0.1
        func isConnectionLoss(_ error: RelateError) -> Bool {
            error.postgresError.map { [.connectionClosed, .connectionFailed].contains($0.kind) } ?? false
        }
        do {
            while !entry.isStopped {
                let events: [FeedEvent]
                do {
                    // A connection found closed here is opened again by `receive()`.
                    try? DatabaseContext.wrappingErrors { try feed.waitForInput(timeout: .milliseconds(200)) }
                    events = try DatabaseContext.wrappingErrors { try feed.receive() }
                    entry.note(.streaming, of: feed)
                    pause = 0.1
                } catch let error as RelateError where isConnectionLoss(error) {
                    entry.note(.reconnecting)
                    logger.warning("change feed cannot reach the server; trying again", metadata: ["relate.error": "\(error.message)"])
                    Thread.sleep(forTimeInterval: pause)
                    pause = min(2, pause * 2)
                    continue
                }
                for event in events {
                    switch event {
                    case .changes(let notices, let unconfirmed):
                        sink.yield(
                            CommittedChanges(
                                changes: notices.flatMap { Self.changes($0, layout: layout) }, mayHaveMissedChanges: false, unconfirmedTransaction: unconfirmed))
                    case .gap:
                        sink.yield(CommittedChanges(changes: [], mayHaveMissedChanges: true))
                    case .editMarks:
                        continue
                    case .schemaChanged(let schema, let table, let what):
                        let name = layout.entityIndex(schema: schema, table: table).map { layout.model.entities[$0].name } ?? table
                        throw RelateError(
                            kind: .schemaChanged,
                            message: "table \(name) changed since the model was read (\(what)): reload the model (Database.reloadModel()) and ask for changes again")
                    }
                }
            }
            sink.finish(nil)
        } catch {
            sink.finish(error)
        }
    }

    /// One change per row a notice names (a trigger's notice names a statement's rows).
    private static func changes(_ notice: ChangeNotice, layout: ModelLayout) -> [Change] {
        guard let entity = layout.entityIndex(schema: notice.schema, table: notice.table) else { return [] }
        let name = layout.model.entities[entity].name
        // A key that is not one of the table's (the wrong number of parts, a text where the
        // key is a number) is no row's: a forged notification's, as anyone may NOTIFY. The
        // change is then the table's, keys unknown.
        guard let keys = notice.keys, case let stored = keys.map({ layout.entities[entity].storedKey($0) }), !stored.contains(where: { $0 == nil })
        else { return [Change(entity: name, kind: notice.kind, primaryKey: [], changedKeys: [])] }
        return keys.enumerated().map { offset, key in
            let values = stored[offset]!.map(\.value)
            // The keys before, of rows whose key changed: by position when the notice pairs
            // them with the keys after, else all of them with each row.
            var texts = [key]
            if let old = notice.oldKeys {
                // By their bytes: a key renamed from a composed `é` to a decomposed one is a
                // new key, and a live answer holding the old one reads again.
                texts += old.count == keys.count ? (ExactTexts(old[offset]) == ExactTexts(key) ? [] : [old[offset]]) : old
            }
            return Change(
                entity: name, kind: notice.kind, primaryKey: values, changedKeys: [], keyTexts: texts, changedColumns: notice.changedColumns,
                newRow: keys.count == 1 ? notice.newRow : nil)
        }
    }
}
