/// The live queries of one ``Database``: one change feed for all of them, one group per
/// distinct request (read once per change for all its subscribers), evaluation coalesced
/// while a read is under way.
actor ObservationHub {
    private struct Group {
        let request: FetchRequest
        /// The entities whose changes can change the answer.
        let region: Set<Int>
        var rows: [LiveRow] = []
        var version = 0
        var subscribers: [Int: AsyncThrowingStream<LiveSnapshot, any Error>.Continuation] = [:]
    }

    private var groups: [String: Group] = [:]
    /// Groups whose region changed since they were last read.
    private var stale = Set<String>()
    private var isEvaluating = false
    private var nextSubscriber = 0
    /// Reads the database's change feed; `nil` while nobody observes.
    private var feed: Task<Void, Never>?
    /// Opening the feed (asked once, however many subscribe meanwhile).
    private var opening: Task<AsyncThrowingStream<CommittedChanges, any Error>, any Error>?

    func subscribe(to request: FetchRequest, on database: Database) async throws -> AsyncThrowingStream<LiveSnapshot, any Error> {
        let layout = database.layout.withLock { $0 }
        let (_, statement) = try request.selectStatement(layout)
        // The same SQL with the same values is the same request, whoever built it.
        let key = statement.sql + "\u{0}" + statement.statement.parameters.map { $0.map { "\($0)" } ?? "NULL" }.joined(separator: "\u{0}")
        let region = try request.region(in: layout)
        try await startFeed(for: database)
        if groups[key] == nil {
            let rows = try await database.liveRows(request)
            if groups[key] == nil { groups[key] = Group(request: request, region: region, rows: rows) }
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LiveSnapshot.self, bufferingPolicy: .bufferingNewest(1))
        let group = groups[key]!
        continuation.yield(LiveSnapshot(rows: group.rows, difference: Self.difference(from: [], to: group.rows), version: group.version))
        let id = nextSubscriber
        nextSubscriber += 1
        groups[key]!.subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id, from: key) }
        }
        return stream
    }

    private func unsubscribe(_ id: Int, from key: String) {
        groups[key]?.subscribers[id] = nil
        if groups[key]?.subscribers.isEmpty == true {
            groups[key] = nil
            stale.remove(key)
        }
        if groups.isEmpty {
            feed?.cancel()
            feed = nil
        }
    }

    private func startFeed(for database: Database) async throws {
        guard feed == nil else { return }
        if opening == nil { opening = Task { try await database.changes() } }
        let changes: AsyncThrowingStream<CommittedChanges, any Error>
        do {
            changes = try await opening!.value
        } catch {
            opening = nil
            throw error
        }
        opening = nil
        guard feed == nil else { return }
        feed = Task { [weak self] in
            do {
                for try await committed in changes {
                    await self?.committed(committed, on: database)
                }
            } catch {
                await self?.fail(error)
            }
        }
    }

    /// A transaction committed: the groups whose region it touched are stale, and are read
    /// again (one read each, however many commits arrive meanwhile).
    private func committed(_ committed: CommittedChanges, on database: Database) {
        let layout = database.layout.withLock { $0 }
        let touched = Set(committed.changes.compactMap { try? layout.entityIndex(named: $0.entity) })
        for (key, group) in groups where committed.mayHaveMissedChanges || !group.region.isDisjoint(with: touched) {
            stale.insert(key)
        }
        guard !stale.isEmpty, !isEvaluating else { return }
        isEvaluating = true
        Task { await evaluate(on: database) }
    }

    private func evaluate(on database: Database) async {
        defer { isEvaluating = false }
        while let key = stale.popFirst() {
            guard let request = groups[key]?.request else { continue }
            do {
                let rows = try await database.liveRows(request)
                guard var group = groups[key] else { continue }
                let difference = Self.difference(from: group.rows, to: rows)
                guard !difference.isEmpty || !Self.sameValues(group.rows, rows) else { continue }
                group.rows = rows
                group.version += 1
                groups[key] = group
                let snapshot = LiveSnapshot(rows: rows, difference: difference, version: group.version)
                for continuation in group.subscribers.values { continuation.yield(snapshot) }
            } catch {
                for continuation in groups[key]?.subscribers.values.map({ $0 }) ?? [] { continuation.finish(throwing: error) }
                groups[key] = nil
            }
        }
    }

    /// The feed failed: every observer's stream ends with its error.
    private func fail(_ error: any Error) {
        for group in groups.values {
            for continuation in group.subscribers.values { continuation.finish(throwing: error) }
        }
        groups = [:]
        stale = []
        feed = nil
    }

    /// Rows told apart by primary key (by position where there is none).
    static func difference(from old: [LiveRow], to new: [LiveRow]) -> LiveResults.Difference {
        func identities(_ rows: [LiveRow]) -> [(identity: AnyHashable, primaryKey: [(any Sendable)?])] {
            rows.enumerated().map { offset, row in
                let key = row.primaryKey.map { $0 as? AnyHashable }
                return (row.primaryKey.isEmpty ? AnyHashable(offset) : AnyHashable(key), row.primaryKey)
            }
        }
        return LiveResults.Difference(from: identities(old), to: identities(new))
    }

    /// Whether two answers hold the same values, row by row (a change of an attribute the
    /// order does not depend on moves no row, but is news all the same).
    private static func sameValues(_ old: [LiveRow], _ new: [LiveRow]) -> Bool {
        old.count == new.count && zip(old, new).allSatisfy { "\($0.values.sorted { $0.key < $1.key })" == "\($1.values.sorted { $0.key < $1.key })" }
    }
}
