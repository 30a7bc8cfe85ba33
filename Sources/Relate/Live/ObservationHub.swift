/// The live queries of one ``Database``: one change feed for all of them, one group per
/// distinct request and principal (``LiveGroupKey``; read once per change for all its
/// subscribers, always as its principal), evaluation coalesced while a read is under way.
/// A request on its entity's own columns is read again only when a changed row is in its
/// answer or meets its condition now, which one statement per entity, principal and batch
/// of commits tells for all such requests at once, run as that principal (so it sees the
/// rows the principal sees, never fewer).
///
/// Row-level security: a change to a table that a policy of the request's tables reads
/// (``SecurityState/policyRegion(of:)``) makes the group read again, whatever the changed
/// rows; so does a change of those tables' policies, privileges or row-level security, or
/// of role memberships, which the hub asks the catalog about every
/// ``securityCheckInterval`` while a principal observes or a table it watches has
/// row-level security. No value of the change feed ever reaches a subscriber: only what
/// a read as the group's principal answered.
actor ObservationHub {
    /// A class, not a struct: every round walks the groups, and a struct of sets, rows and
    /// subscribers cost a retain of each on every copy (5 % of the hub's time under
    /// `scripts/live-scaling`). Only the hub, on its actor, holds them.
    private final class Group {
        /// Its request and principal, the statement prepared once for the layout
        /// (``LiveRead/prepare(in:)``).
        var read: LiveRead
        var request: FetchRequest { read.request }
        /// The entities whose changes can change the answer.
        let region: Set<Int>
        /// The entities that the policies of the region's tables read, whose changes can
        /// change which rows the principal sees.
        var policyRegion: Set<Int>
        /// The entity whose changed rows alone decide whether the answer changed; `nil`
        /// when the request reads more (see ``FetchRequest/decidesFromChangedRows(in:)``).
        let decidingEntity: Int?
        /// The deciding entity's columns that the request reads
        /// (``FetchRequest/decidingColumns(in:)``); with those its policies read, what
        /// ``ObservationHub/watchers`` files it under.
        let requestColumns: Set<String>?
        var rows: [LiveRow]
        /// The rows' keys, for a group with a deciding entity; set through
        /// ``ObservationHub/hold(_:keys:)``, which keeps ``ObservationHub/holders`` with them.
        fileprivate(set) var keys: Set<ObjectKey> = []
        var version = 0
        var subscribers: [Int: AsyncThrowingStream<LiveSnapshot, any Error>.Continuation] = [:]
        /// Tells groups apart in ``ObservationHub/decisionsMade``' keys, and orders them.
        let id: Int
        /// Set when the hub lets go of the group: a round that awaited the server finds it
        /// out without a lookup of each of its groups.
        var isGone = false
        /// Whether its entity's rows changed since it was last decided or read, and the
        /// changed rows are to say whether it reads again (``ObservationHub/setUndecided(_:_:)``).
        /// A flag, not a set of keys: every round marks each of a thousand groups, and
        /// inserting their keys into a set was a tenth of the hub's time.
        fileprivate(set) var isUndecided = false
        let key: LiveGroupKey

        init(
            key: LiveGroupKey, id: Int, request: FetchRequest, layout: ModelLayout, region: Set<Int>, policyRegion: Set<Int>,
            decidingEntity: Int?, requestColumns: Set<String>?, rows: [LiveRow]
        ) {
            self.key = key
            self.id = id
            read = LiveRead(request: request, principal: key.principal)
            // Made now, not at its first change: a thousand groups each made their statement
            // in the round of their first change (a tenth of the hub's time in a 10 s window at
            // 100 commits a second). One that cannot be made is read all the same, which
            // reports its error.
            try? read.prepare(in: layout)
            self.region = region
            self.policyRegion = policyRegion
            self.decidingEntity = decidingEntity
            self.requestColumns = requestColumns
            self.rows = rows
        }
    }

    private var groups: [LiveGroupKey: Group] = [:]
    /// The groups whose answer holds each row, by entity and key: the groups that must read
    /// again because a row they hold changed, found by the changed rows' keys, not by
    /// asking each of a thousand groups about them every round.
    private var holders: [HeldRow: [Group]] = [:]

    private struct HeldRow: Hashable {
        var entity: Int
        var key: ObjectKey
    }

    /// `groups` in the order of their ids, for the walks of every round; made when a round
    /// first needs it after groups came or went (``groupsChanged()``).
    private var groupsInOrder: [Group]?
    /// The groups a change of each entity touches, sorted by what it makes of them; made
    /// when a round first needs it after groups came or went or their policies changed.
    private var watchers: [Int: Watchers]?

    /// The groups watching one entity (in their region or their policy region), by what a
    /// change of its rows makes of them: a round visits those the change concerns, not the
    /// thousand groups.
    private struct Watchers {
        /// Read again at any change: the entity is in their region some other way than as
        /// the one whose changed rows decide, or their policies read it.
        var always: [Group] = []
        /// Deciding from the entity's changed rows on any change of them (the columns that
        /// decide cannot be told: ``SecurityState/decidingColumns(_:of:)``).
        var anyColumn: [Group] = []
        /// Deciding from its changed rows when a column they or their policies read
        /// changed, by column: an update of one row that changed none of them cannot have
        /// brought the row in or taken it out, and only a group holding it reads again.
        var byColumn: [String: [Group]] = [:]
        /// Every group deciding from its changed rows, for an insert or an update whose
        /// columns the feed did not say.
        var deciding: [Group] = []
    }
    private var nextGroupID = 0
    /// The groups a round may decide, by the entity whose changed rows decide them and
    /// their principal, in the order of their ids (the order their tests are made in): made
    /// when a round first needs it after groups came or went, where each round looked every
    /// waiting group up and sorted them anew (one round a commit, at 300 commits a second).
    private var decisionOrder: [DecisionBatch: [Group]]?

    /// The groups decided in one statement (per 500): of one entity, read as one principal.
    private struct DecisionBatch: Hashable {
        var entity: Int
        var principal: Principal?
    }
    /// The decision of each set of groups decided together (by entity and the groups' ids,
    /// in order): their tests of the changed rows and their principal's settings, made once,
    /// without keys: a round binds only the rows' keys. Made with `matchLayout`; emptied
    /// when the layout changes, or when it grows past 10,000.
    private var decisionsMade: [MatchKey: LiveDecision] = [:]
    private var matchLayout: ObjectIdentifier?

    private struct MatchKey: Hashable {
        var entity: Int
        var groups: [Int]
    }
    /// Groups whose region changed since they were last read.
    private var stale = Set<LiveGroupKey>()
    /// How many groups are undecided (``Group/isUndecided``): their entity's rows changed,
    /// and they are read again if the changed rows say so.
    private var undecidedCount = 0
    /// The keys (text forms) of the rows changed since the groups waiting on them were
    /// last decided, by entity.
    private var changedKeys: [Int: Set<[String?]>] = [:]
    /// What the commits since the groups were last sorted touched, sorted into stale and
    /// undecided groups once per round of reads (``sortCommitted(_:)``), not once per commit:
    /// a commit costs the hub its changes, not its groups.
    private var committedSinceSorted = Committed()
    /// Requests whose first answer is being read, by region: a commit that touches one
    /// meanwhile may be missing from that answer, so the group starts stale.
    private var firstReads: [LiveGroupKey: Set<Int>] = [:]
    private var touchedDuringFirstRead = Set<LiveGroupKey>()
    /// Row-level security as last read from the catalog; `nil` until the feed starts.
    private var security: SecurityState?
    /// Stops the job that asks the catalog whether policies changed, while the feed runs.
    private var securityWatch: BackgroundTasks.Signal?
    /// How often policies, privileges and role memberships are checked.
    static let securityCheckInterval = Duration.seconds(1)
    private var isEvaluating = false
    private var nextSubscriber = 0
    /// Stops the job that reads the database's change feed; `nil` while nobody observes.
    private var feed: BackgroundTasks.Signal?
    /// Which feed is the current one, so that the end of one stopped before does not end
    /// the observers of the next.
    private var feedNumber = 0
    /// Opening the feed (asked once, however many subscribe meanwhile). A task of its own,
    /// not a job of the database's: the subscribers that asked await it before they return,
    /// so it never outlives them.
    private var opening: Task<ChangeMailbox, any Error>?

    func subscribe(
        to request: FetchRequest, as principal: Principal?, on database: Database
    ) async throws -> AsyncThrowingStream<LiveSnapshot, any Error> {
        try principal?.validate()
        let layout = database.layout.withLock { $0 }
        let (_, statement) = try request.selectStatement(layout)
        // The same SQL with the same values as the same principal is the same group, whoever built it.
        let key = LiveGroupKey(statement.statement, principal: principal)
        let region = try request.region(in: layout)
        let decidingEntity = try request.decidesFromChangedRows(in: layout) ? try layout.entityIndex(named: request.entity) : nil
        let requestColumns = decidingEntity == nil ? nil : try request.decidingColumns(in: layout)
        try await startFeed(for: database)
        if groups[key] == nil {
            firstReads[key] = region.union(security?.policyRegion(of: region) ?? [])
            let rows: [LiveRow]
            do {
                rows = try await database.liveRows(request, as: principal)
            } catch {
                firstReads[key] = nil
                throw error
            }
            firstReads[key] = nil
            if groups[key] == nil {
                nextGroupID += 1
                groupsChanged()
                let group = Group(
                    key: key, id: nextGroupID, request: request, layout: layout, region: region, policyRegion: security?.policyRegion(of: region) ?? [],
                    decidingEntity: decidingEntity, requestColumns: requestColumns, rows: rows)
                groups[key] = group
                hold(group, keys: Self.keys(of: rows))
            }
            watchSecurity(on: database)
            if touchedDuringFirstRead.remove(key) != nil {
                stale.insert(key)
                scheduleEvaluation(on: database)
            }
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LiveSnapshot.self, bufferingPolicy: .bufferingNewest(1))
        let group = groups[key]!
        continuation.yield(LiveSnapshot(rows: group.rows, difference: Self.difference(from: [], to: group.rows), version: group.version))
        let id = nextSubscriber
        nextSubscriber += 1
        groups[key]!.subscribers[id] = continuation
        // A job of the database's; once it shut down or closed, nothing is left to leave.
        let background = database.background
        continuation.onTermination = { [weak self] _ in
            background.start { [weak self] in await self?.unsubscribe(id, from: key) }
        }
        return stream
    }

    private func unsubscribe(_ id: Int, from key: LiveGroupKey) {
        groups[key]?.subscribers[id] = nil
        if groups[key]?.subscribers.isEmpty == true { letGo(key) }
        if groups.isEmpty {
            feed?.fire()
            feed = nil
            securityWatch?.fire()
            securityWatch = nil
            security = nil
        }
    }

    /// The hub no longer reads group `key`: its observers are gone, or their streams ended.
    private func letGo(_ key: LiveGroupKey) {
        guard let group = groups.removeValue(forKey: key) else { return }
        group.isGone = true
        hold(group, keys: [])
        setUndecided(group, false)
        stale.remove(key)
        groupsChanged()
    }

    /// Groups came or went: what is made of all of them is made again when next needed.
    private func groupsChanged() {
        decisionOrder = nil
        groupsInOrder = nil
        watchers = nil
    }

    /// ``watchers``, made when missing.
    private func allWatchers() -> [Int: Watchers] {
        if let made = watchers { return made }
        var made: [Int: Watchers] = [:]
        for group in allGroups() {
            for entity in group.region.union(group.policyRegion) {
                guard !group.policyRegion.contains(entity), group.decidingEntity == entity else {
                    made[entity, default: Watchers()].always.append(group)
                    continue
                }
                made[entity, default: Watchers()].deciding.append(group)
                if let security, let columns = security.decidingColumns(group.requestColumns, of: entity) {
                    for column in columns { made[entity, default: Watchers()].byColumn[column, default: []].append(group) }
                } else {
                    made[entity, default: Watchers()].anyColumn.append(group)
                }
            }
        }
        watchers = made
        return made
    }

    /// Every group, in the order of their ids.
    private func allGroups() -> [Group] {
        if let made = groupsInOrder { return made }
        let made = groups.values.sorted { $0.id < $1.id }
        groupsInOrder = made
        return made
    }

    /// Sets the keys of the rows `group`'s answer holds (for a group with a deciding
    /// entity), and ``holders`` with them: only the rows that came or went are touched.
    private func hold(_ group: Group, keys: Set<ObjectKey>) {
        guard let entity = group.decidingEntity else { return }
        for key in group.keys where !keys.contains(key) {
            let row = HeldRow(entity: entity, key: key)
            holders[row]?.removeAll { $0 === group }
            if holders[row]?.isEmpty == true { holders[row] = nil }
        }
        for key in keys where !group.keys.contains(key) { holders[HeldRow(entity: entity, key: key), default: []].append(group) }
        group.keys = keys
    }

    /// Marks `group` undecided or not, keeping ``undecidedCount``.
    private func setUndecided(_ group: Group, _ undecided: Bool) {
        guard group.isUndecided != undecided else { return }
        group.isUndecided = undecided
        undecidedCount += undecided ? 1 : -1
    }

    private func startFeed(for database: Database) async throws {
        guard feed == nil else { return }
        if opening == nil { opening = Task { try await database.changeMailbox() } }
        let changes: ChangeMailbox
        do {
            changes = try await opening!.value
        } catch {
            opening = nil
            throw error
        }
        opening = nil
        guard feed == nil else { return }
        if security == nil { security = try await database.securityState(after: nil) }
        guard feed == nil else { return }
        feedNumber += 1
        let number = feedNumber
        // A job of the database's, which its shutdown or `close()` ends (cancelled, it stops
        // taking, and the feed's thread stops). It runs the rounds its commits start.
        let started = database.background.startCancellable { [weak self] in
            do {
                while let batch = try await changes.next() {
                    await self?.committed(batch, on: database)
                }
                await self?.feedEnded(number, error: nil)
            } catch {
                await self?.feedEnded(number, error: error is CancellationError ? nil : error)
            }
        }
        guard let started else { throw ConnectionPool.closedError }
        feed = started
    }

    /// What commits touched since the groups were last sorted.
    private struct Committed {
        var touched = Set<Int>()
        var keys: [Int: [[String?]]] = [:]
        /// Entities with a change whose key the feed did not send (a table without one, a
        /// truncate, a payload cut short): no group can decide from their rows.
        var unkeyed = Set<Int>()
        /// Per entity, the columns its updates changed, where the feed said
        /// (``Change/changedColumns``); its deletes change none a group not holding the row reads.
        var changedColumns: [Int: Set<String>] = [:]
        /// Entities with an insert, or an update whose changed columns the feed did not say.
        var anyColumn = Set<Int>()
        var mayHaveMissedChanges = false
        var isEmpty: Bool { touched.isEmpty && !mayHaveMissedChanges }
    }

    /// Transactions committed (every one the feed read since the hub last took): each is
    /// noted, and unless a round is under way (which takes them), a round reads in the
    /// calling task, the feed's. Commits that arrive during it wait in the feed's mailbox
    /// for the next round, all of them at once.
    private func committed(_ batch: [CommittedChanges], on database: Database) async {
        for committed in batch { note(committed, on: database) }
        if startsRound() { await evaluate(on: database) }
    }

    /// A transaction committed: what it touched is noted, for the groups to be sorted by
    /// the next round of reads (``sortCommitted(_:)``); a first read under way that it may
    /// have missed is read again.
    private func note(_ committed: CommittedChanges, on database: Database) {
        let layout = database.layout.withLock { $0 }
        var touched = Set<Int>()
        for change in committed.changes {
            guard let entity = try? layout.entityIndex(named: change.entity) else { continue }
            touched.insert(entity)
            if change.keyTexts.isEmpty {
                committedSinceSorted.unkeyed.insert(entity)
            } else {
                committedSinceSorted.keys[entity, default: []] += change.keyTexts
            }
            switch (change.kind, change.changedColumns) {
            case (.delete, _): break
            case (.update, let columns?): committedSinceSorted.changedColumns[entity, default: []].formUnion(columns)
            default: committedSinceSorted.anyColumn.insert(entity)
            }
        }
        committedSinceSorted.touched.formUnion(touched)
        if committed.mayHaveMissedChanges { committedSinceSorted.mayHaveMissedChanges = true }
        for (key, region) in firstReads where committed.mayHaveMissedChanges || !region.isDisjoint(with: touched) {
            touchedDuringFirstRead.insert(key)
        }
    }

    /// The groups whose region the commits since the last call touched are stale, and are
    /// read again (one read each, however many commits came) — or, where the changed rows
    /// decide, wait for them to be tested: those whose answer holds a changed row read
    /// again, and those whose deciding columns no update changed (and no insert came) need
    /// no test at all.
    private func sortCommitted(_ layout: ModelLayout) {
        let committed = committedSinceSorted
        guard !committed.isEmpty else { return }
        committedSinceSorted = Committed()
        if committed.mayHaveMissedChanges {
            for group in allGroups() {
                stale.insert(group.key)
                setUndecided(group, false)
            }
            return
        }
        let watchers = allWatchers()
        // Undecided first: stale is empty between rounds, so that asking whether a group is
        // stale hashes nothing (it did for each of a thousand groups, a tenth of Relate's
        // time when every commit moved a row between answers).
        var deciding = Set<Int>()
        for entity in committed.touched where !committed.unkeyed.contains(entity) {
            guard let watching = watchers[entity] else { continue }
            // A group none of whose deciding columns an update changed (and no insert
            // came) needs no decision: every changed row is where it was, in its answer or
            // out of it, and one it held is read again below.
            var undecided: [[Group]] = []
            if committed.anyColumn.contains(entity) {
                undecided = [watching.deciding]
            } else {
                undecided = [watching.anyColumn]
                for column in committed.changedColumns[entity] ?? [] { undecided.append(watching.byColumn[column] ?? []) }
            }
            for groups in undecided where !groups.isEmpty {
                deciding.insert(entity)
                for group in groups where stale.isEmpty || !stale.contains(group.key) { setUndecided(group, true) }
            }
        }
        for entity in committed.touched {
            guard let watching = watchers[entity] else { continue }
            // A table a policy reads changed (which rows the principal sees may have,
            // whatever rows changed), or one whose rows do not decide; or no key says
            // which rows changed.
            for group in watching.always + (committed.unkeyed.contains(entity) ? watching.deciding : []) {
                stale.insert(group.key)
                setUndecided(group, false)
            }
        }
        // A group whose answer holds a changed row reads again, whatever the rest says.
        for (entity, texts) in committed.keys {
            for text in texts {
                guard let key = layout.entities[entity].storedKey(text).flatMap(ObjectKey.init) else { continue }
                for group in holders[HeldRow(entity: entity, key: key)] ?? [] {
                    stale.insert(group.key)
                    setUndecided(group, false)
                }
            }
        }
        for entity in deciding { changedKeys[entity, default: []].formUnion(committed.keys[entity] ?? []) }
    }

    /// Starts reading what is stale or undecided in a job of its own, unless a read is
    /// under way (it will): for what happens outside the feed's task (a first read that a
    /// commit touched, a policy changed, a server back).
    private func scheduleEvaluation(on database: Database) {
        guard startsRound() else { return }
        // A job of the database's, so that a shutdown awaits the read under way; none
        // starts once it shut down or closed.
        if !database.background.start({ [self] in await evaluate(on: database) }) { isEvaluating = false }
    }

    /// Whether a round is to start now: something is stale or undecided, and no round is
    /// under way (it takes what came meanwhile). The caller then runs ``evaluate(on:)``.
    private func startsRound() -> Bool {
        guard !stale.isEmpty || undecidedCount > 0 || !committedSinceSorted.isEmpty, !isEvaluating else { return false }
        isEvaluating = true
        return true
    }

    private func evaluate(on database: Database) async {
        var unreachable = Set<LiveGroupKey>()
        while !stale.isEmpty || undecidedCount > 0 || !committedSinceSorted.isEmpty {
            sortCommitted(database.layout.withLock { $0 })
            if undecidedCount > 0 { await decide(on: database) }
            while !stale.isEmpty {
                // Every stale group, whatever its principal, in one round trip (a hundred at a time).
                let keys = Array(stale.prefix(Self.groupsPerRoundTrip))
                stale.subtract(keys)
                unreachable.formUnion(await read(keys, on: database))
            }
        }
        isEvaluating = false
        guard !unreachable.isEmpty else { return }
        // The server could not be reached (a failover under way): those answers are read
        // again a moment later, and their observers keep their streams.
        database.background.start { [weak self, unreachable] in
            try? await Task.sleep(for: .milliseconds(500))
            guard !Task.isCancelled else { return }
            await self?.retry(unreachable, on: database)
        }
    }

    private func retry(_ keys: Set<LiveGroupKey>, on database: Database) {
        stale.formUnion(keys.filter { groups[$0] != nil })
        scheduleEvaluation(on: database)
    }

    /// Tests the rows changed since the undecided groups were last read against their
    /// conditions, one statement per entity and principal (and per 500 requests), run as
    /// that principal, every principal's in one round trip (a hundred at a time), those whose
    /// settings set the same names in one transaction (``Database/requestsMet(_:changedKeys:)``): a group
    /// whose answer holds a changed row, or whose condition a changed row the principal
    /// sees now meets, is stale; the rest kept their answer.
    private func decide(on database: Database) async {
        let layout = database.layout.withLock { $0 }
        let keysByEntity = changedKeys
        changedKeys = [:]
        if decisionOrder == nil {
            var order: [DecisionBatch: [Group]] = [:]
            for group in allGroups() {
                guard let entity = group.decidingEntity else { continue }
                order[DecisionBatch(entity: entity, principal: group.key.principal), default: []].append(group)
            }
            decisionOrder = order
        }
        let order = decisionOrder ?? [:]
        // Each decision: its groups (at most 500, one statement) and their entity.
        var decisions: [LiveDecision] = []
        var decided: [(groups: ArraySlice<Group>, entity: Int, waiting: [Bool])] = []
        if matchLayout != ObjectIdentifier(layout) || decisionsMade.count > 10_000 {
            decisionsMade = [:]
            matchLayout = ObjectIdentifier(layout)
        }
        // A batch with a group waiting is decided whole, its groups in the order they were
        // made: its tests are then the same round after round, made once and prepared. Only
        // the groups that waited read again when met (the others are stale already, or no
        // change concerned them); leaving them out made other tests each round — of 500
        // requests when one of them held the changed row.
        for (batch, members) in order where members.contains(where: \.isUndecided) {
            let entity = batch.entity
            let waiting = members.map(\.isUndecided)
            // Decided from here on: a commit meanwhile marks them again, for the next round.
            for group in members { setUndecided(group, false) }
            for start in stride(from: 0, to: members.count, by: 500) {
                let chunk = members[start..<min(start + 500, members.count)]
                let match = MatchKey(entity: entity, groups: chunk.map(\.id))
                let decision: LiveDecision
                if let made = decisionsMade[match] {
                    decision = made
                } else {
                    do {
                        let tests = try FetchRequest.matchTests(chunk.map(\.request), entity: entity, layout: layout)
                        decision = try LiveDecision(tests: tests, entity: entity, as: batch.principal)
                    } catch {
                        // Undecided: read them again, which reports its own error.
                        stale.formUnion(chunk.map(\.key))
                        continue
                    }
                    decisionsMade[match] = decision
                }
                decisions.append(decision)
                decided.append((chunk, entity, Array(waiting[chunk.indices])))
            }
        }
        let changedTexts = keysByEntity.mapValues(Array.init)
        for start in stride(from: 0, to: decisions.count, by: Self.groupsPerRoundTrip) {
            let end = min(start + Self.groupsPerRoundTrip, decisions.count)
            let answers: [Result<Set<Int>, RelateError>]
            do {
                answers = try await database.requestsMet(Array(decisions[start..<end]), changedKeys: changedTexts)
            } catch {
                // Undecided: read them again, which reports its own error.
                for (members, _, _) in decided[start..<end] { stale.formUnion(members.filter { !$0.isGone }.map(\.key)) }
                continue
            }
            for ((members, _, waiting), answer) in zip(decided[start..<end], answers) {
                // A group went meanwhile: the indexes no longer match; read the rest again.
                guard case .success(let meeting) = answer, !members.contains(where: \.isGone) else {
                    stale.formUnion(members.filter { !$0.isGone }.map(\.key))
                    continue
                }
                for index in meeting where waiting.indices.contains(index) && waiting[index] {
                    stale.insert(members[members.startIndex + index].key)
                }
            }
        }
    }

    /// How many groups' reads, or decisions of principals, one round trip carries at most.
    static let groupsPerRoundTrip = 100

    /// Reads the answers of groups `keys` again, each as its principal, in one round trip
    /// (``Database/liveRows(of:reusing:)``); tells each group's subscribers when its answer
    /// changed, and ends the streams of a group whose read failed (that group's only).
    /// Answers the groups whose server could not be reached: they stay, to be read again.
    private func read(_ keys: [LiveGroupKey], on database: Database) async -> Set<LiveGroupKey> {
        let present = keys.filter { groups[$0] != nil }
        guard !present.isEmpty else { return [] }
        var answers: [Result<[LiveRow], any Error>]
        do {
            let layout = database.layout.withLock { $0 }
            answers = try await database.liveRows(
                of: present.map { key in
                    let group = groups[key]!
                    // One that cannot be prepared is read all the same, which reports its error.
                    try? group.read.prepare(in: layout)
                    return group.read
                },
                reusing: present.map { groups[$0]!.rows })
                .map { $0.mapError { $0 as any Error } }
        } catch {
            answers = Array(repeating: .failure(error), count: present.count)
        }
        var unreachable = Set<LiveGroupKey>()
        for (key, answer) in zip(present, answers) {
            switch answer {
            case .success(let rows):
                guard let group = groups[key] else { continue }
                let difference = Self.difference(from: group.rows, to: rows)
                guard !difference.isEmpty else { continue }
                group.rows = rows
                // Only rows that came or went change the keys it holds (rows are told apart by key).
                if group.decidingEntity != nil, !difference.inserted.isEmpty || !difference.removed.isEmpty {
                    hold(group, keys: Self.keys(of: rows))
                }
                group.version += 1
                let snapshot = LiveSnapshot(rows: rows, difference: difference, version: group.version)
                for continuation in group.subscribers.values { continuation.yield(snapshot) }
            case .failure(let error as RelateError) where error.postgresError.map({ [.connectionClosed, .connectionFailed].contains($0.kind) }) ?? false:
                unreachable.insert(key)
            case .failure(is CancellationError):
                // This job was cancelled: the database is closing, and the end of the feed
                // finishes the streams (without an error).
                continue
            case .failure(let error):
                for continuation in groups[key]?.subscribers.values.map({ $0 }) ?? [] { continuation.finish(throwing: error) }
                letGo(key)
            }
        }
        return unreachable
    }

    /// Starts asking the catalog about policies every ``securityCheckInterval``, once a
    /// principal observes or a watched table has row-level security (a database without
    /// either pays nothing).
    private func watchSecurity(on database: Database) {
        guard securityWatch == nil, feed != nil else { return }
        let protected = security?.protected ?? []
        guard groups.contains(where: { $0.key.principal != nil || !$0.value.region.union($0.value.policyRegion).isDisjoint(with: protected) })
        else { return }
        securityWatch = database.background.startCancellable { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.securityCheckInterval)
                guard !Task.isCancelled, let self else { return }
                await self.checkSecurity(on: database)
            }
        }
    }

    /// Reads row-level security from the catalog again: the groups that read a table whose
    /// policies, privileges or row-level security changed (or whose policies read one),
    /// and every group when role memberships changed, read again. A failure waits for the
    /// next round.
    private func checkSecurity(on database: Database) async {
        guard let known = security else { return }
        let now: SecurityState
        do {
            now = try await database.securityState(after: known)
        } catch {
            database.logger.debug("live queries cannot read policies from the catalog; trying again", metadata: ["relate.error": "\(error)"])
            return
        }
        guard security != nil, now != known else { return }
        security = now
        let changed = now.changed(from: known)
        let everything = now.roles != known.roles
        // What the groups' policies read may have changed: the index is made again.
        watchers = nil
        for key in Array(groups.keys) {
            guard let group = groups[key] else { continue }
            let before = group.region.union(group.policyRegion)
            group.policyRegion = now.policyRegion(of: group.region)
            if everything || !before.union(group.policyRegion).isDisjoint(with: changed) {
                stale.insert(key)
                setUndecided(group, false)
            }
        }
        for (key, region) in firstReads where everything || !region.isDisjoint(with: changed) {
            touchedDuringFirstRead.insert(key)
        }
        scheduleEvaluation(on: database)
    }

    /// The identities of rows of an entity with a one-column key: each row's own, made from
    /// its cells when it was read, not made again from its key's values.
    private static func keys(of rows: [LiveRow]) -> Set<ObjectKey> {
        Set(rows.compactMap { row in row.primaryKey.count == 1 ? row.identity : nil })
    }

    /// The database is shutting down: every observer's stream ends, without an error, and
    /// the feed stops.
    func shutDown() {
        end(throwing: nil)
    }

    /// Feed `number` ended: when it is the current one, every observer's stream ends, with
    /// its error if it failed, without one if it was stopped (``Database/close()``).
    private func feedEnded(_ number: Int, error: (any Error)?) {
        guard number == feedNumber, feed != nil else { return }
        end(throwing: error)
    }

    /// Ends every observer's stream (with `error`, if any) and stops the feed and the
    /// security watch.
    private func end(throwing error: (any Error)?) {
        for group in groups.values {
            for continuation in group.subscribers.values { continuation.finish(throwing: error) }
            group.isGone = true
        }
        groups = [:]
        holders = [:]
        groupsChanged()
        stale = []
        undecidedCount = 0
        changedKeys = [:]
        committedSinceSorted = Committed()
        feed?.fire()
        feed = nil
        securityWatch?.fire()
        securityWatch = nil
        security = nil
    }

    /// Rows told apart by primary key (by position where there is none). The same rows in
    /// the same order, the common answer to a change of a value, take no diff at all; the
    /// rows whose values changed are told by their cells.
    static func difference(from old: [LiveRow], to new: [LiveRow]) -> LiveResults.Difference {
        var difference = LiveResults.Difference()
        if old.count != new.count || !zip(old, new).allSatisfy({ $0.identity != nil && $0.identity == $1.identity }) {
            func identities(_ rows: [LiveRow]) -> [(identity: AnyHashable, primaryKey: [(any Sendable)?])] {
                rows.enumerated().map { offset, row in (row.identity.map(AnyHashable.init) ?? AnyHashable(offset), row.primaryKey) }
            }
            difference = LiveResults.Difference(from: identities(old), to: identities(new))
        }
        var before = EarlierAnswer(old)
        for (index, row) in new.enumerated() {
            if let earlier = before.position(of: row.identity, at: index), !row.hasSameValues(as: old[earlier]) {
                difference.updated.append(LiveResults.Difference.Row(index: index, primaryKey: row.primaryKey))
            }
        }
        return difference
    }
}
