import RelatePostgres

/// The live queries of one ``Database``: one change feed for all of them, one group per
/// distinct request and principal (``LiveGroupKey``; read once per change for all its
/// subscribers, always as its principal), evaluation coalesced while a read is under way.
/// A request on its entity's own columns is read again only when a changed row is in its
/// answer or meets its condition now, which one statement per entity, principal and batch
/// of commits tells for all such requests at once, run as that principal (so it sees the
/// rows the principal sees, never fewer); a principal an earlier statement found not to
/// see the changed rows is left out while that holds (``State/sight``).
///
/// Row-level security: a change to a table that a policy of the request's tables reads
/// (``SecurityState/policyRegion(of:)``) makes the group read again, whatever the changed
/// rows; so does a change of those tables' policies, privileges or row-level security, or
/// of role memberships, which the hub asks the catalog about every
/// ``securityCheckInterval`` while a principal observes or a table it watches has
/// row-level security. No value of the change feed ever reaches a subscriber: only what
/// a read as the group's principal answered.
///
/// Its state sits behind a lock, not on an actor. The feed's task prefers the pool's
/// threads (``Database/executor``), and the rounds its commits start run in it: a round's
/// statements then run on the thread the round is on, where an actor's round hopped to a
/// pool thread and back for each, and woke a thread of Swift's own to take up the actor
/// again (Benchmarks/README.md, "The hub behind a lock"). No lock is held across a wait:
/// each stretch between two waits takes it once, as an actor's turn would.
final class ObservationHub: Sendable {
    /// A class, not a struct: every round walks the groups, and a struct of sets, rows and
    /// subscribers cost a retain of each on every copy (5 % of the hub's time under
    /// `scripts/live-scaling`). Only the hub, under its lock, holds them.
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
        /// changed rows are to say whether it reads again (``ObservationHub/setUndecided(_:_:)``),
        /// for a change of columns that some of its entity's groups read and others do not.
        /// A flag, not a set of keys: inserting a thousand groups' keys into a set was a tenth
        /// of the hub's time. A change that concerns every group deciding from the entity
        /// marks the entity instead (``State/everyGroupUndecided``).
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

    private struct HeldRow: Hashable {
        var entity: Int
        var key: ObjectKey
    }

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

    /// The groups decided in one statement (per ``ObservationHub/groupsPerDecision``): of one
    /// entity, read as one principal.
    private struct DecisionBatch: Hashable {
        var entity: Int
        var principal: Principal?
    }

    /// A decision batch's groups, in the order of their ids, and those ids: a round names
    /// the groups of its decisions by them without touching each group's object.
    private struct BatchMembers {
        var groups: [Group]
        var ids: [Int]
        /// The principal's number in ``State/sight``.
        var principal: Int
    }

    /// Every decision batch (``State/decisionOrder``), by entity: each batch's entity and
    /// principal's number in arrays of their own, so that a round passes over the batches it
    /// has nothing for (under a hundred tenants, all but one principal's for a changed row)
    /// without copying, and retaining, their principals and groups.
    private struct DecisionOrder {
        var entities: [Int] = []
        var principals: [Int] = []
        var batches: [DecisionBatch] = []
        var members: [BatchMembers] = []
    }

    private struct MatchKey: Hashable {
        var entity: Int
        var groups: [Int]
    }

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


    /// A group's first answer being read, by the subscribers that came before it existed:
    /// the region a commit meanwhile may have changed, and how many read it (the group is
    /// stale if one did; one whose read failed does not end the others').
    private struct FirstRead {
        var region: Set<Int>
        var readers = 0
    }

    /// What the hub knows, behind ``state``'s lock.
    private struct State {
        var groups: [LiveGroupKey: Group] = [:]
        /// The groups whose answer holds each row, by entity and key: the groups that must read
        /// again because a row they hold changed, found by the changed rows' keys, not by
        /// asking each of a thousand groups about them every round.
        var holders: [HeldRow: [Group]] = [:]
        /// `groups` in the order of their ids, for the walks of every round; made when a round
        /// first needs it after groups came or went (``groupsChanged()``).
        var groupsInOrder: [Group]?
        /// The groups a change of each entity touches, sorted by what it makes of them; made
        /// when a round first needs it after groups came or went or their policies changed.
        var watchers: [Int: Watchers]?

        var nextGroupID = 0
        /// The groups a round may decide, by the entity whose changed rows decide them and
        /// their principal, in the order of their ids (the order their tests are made in): made
        /// when a round first needs it after groups came or went, where each round looked every
        /// waiting group up and sorted them anew (one round a commit, at 300 commits a second).
        var decisionOrder: DecisionOrder?

        /// The decision of each set of groups decided together (by entity and the groups' ids,
        /// in order): their tests of the changed rows and their principal's settings, made once,
        /// without keys: a round binds only the rows' keys. Made with `matchLayout`; emptied
        /// when the layout changes, or when it grows past 10,000.
        var decisionsMade: [MatchKey: LiveDecision] = [:]
        var matchLayout: ObjectIdentifier?

        /// Groups whose region changed since they were last read.
        var stale = Set<LiveGroupKey>()
        /// How many groups are undecided one by one (``Group/isUndecided``), by the entity
        /// whose changed rows decide them (none at 0): their entity's rows changed, and they
        /// are read again if the changed rows say so.
        var undecidedByEntity: [Int: Int] = [:]
        /// The entities every one of whose deciding groups is undecided: an insert, or an
        /// update whose changed columns the feed did not say (logical decoding's update of a
        /// row it had not seen). One mark, where marking each of a thousand groups (and
        /// clearing the marks, and asking each whether it waited) touched a thousand objects
        /// at every commit: a tenth of Relate's CPU under logical decoding at 100 commits a
        /// second (Benchmarks/README.md, "A change to every group marked once").
        var everyGroupUndecided = Set<Int>()
        /// How many groups the hub let go of: unchanged since a round's decisions were made,
        /// none of their groups is gone, and their answers need no look at each.
        var groupsLetGo = 0
        /// The keys (text forms) of the rows changed since the groups waiting on them were
        /// last decided, by entity.
        var changedKeys: [Int: Set<ExactTexts>] = [:]
        /// What the commits since the groups were last sorted touched, sorted into stale and
        /// undecided groups once per round of reads (``sortCommitted(_:)``), not once per commit:
        /// a commit costs the hub its changes, not its groups.
        var committedSinceSorted = Committed()
        /// Transactions the logical feed handed over as their commits came, before a
        /// snapshot was seen to see them (``CommittedChanges/unconfirmedTransaction``), in
        /// order: the next round asks first, in its own round trip, whether one does
        /// (``confirmingVisibility(on:_:)``). What they touched, for first reads.
        var unconfirmed: [(transaction: UInt32, touched: Set<Int>)] = []
        /// A round found one of ``unconfirmed`` not visible: until a question asked alone
        /// finds them all visible at once, rounds ask it alone first (under synchronous
        /// replication, where commits arrive a standby's answer early, most rounds would
        /// otherwise be read twice).
        var visibilityLags = false
        /// Requests whose first answer is being read, by region: a commit that touches one
        /// meanwhile may be missing from that answer, so the group starts stale.
        var firstReads: [LiveGroupKey: FirstRead] = [:]
        var touchedDuringFirstRead = Set<LiveGroupKey>()
        /// Row-level security as last read from the catalog; `nil` until the feed starts.
        var security: SecurityState?
        /// Stops the job that asks the catalog whether policies changed, while the feed runs.
        var securityWatch: BackgroundTasks.Signal?
        var isEvaluating = false
        var nextSubscriber = 0
        /// Stops the job that reads the database's change feed; `nil` while nobody observes.
        var feed: BackgroundTasks.Signal?
        /// Which feed is the current one, so that the end of one stopped before does not end
        /// the observers of the next.
        var feedNumber = 0
        /// Opening the feed (asked once, however many subscribe meanwhile). A task of its own,
        /// not a job of the database's: the subscribers that asked await it before they return,
        /// so it never outlives them.
        var opening: Task<ChangeMailbox, any Error>?
        /// The groups of the decisions the round under way awaits the answers of, in their
        /// order, with which of them waited, their entity and their principal's number in
        /// ``sight`` (``decisions(_:)``).
        var deciding: [(groups: ArraySlice<Group>, waiting: [Bool], entity: Int, principal: Int)] = []
        /// ``groupsLetGo`` when the decisions in ``deciding`` were made.
        var letGoWhenDecided = 0

        /// What decisions found of changed rows, and sweeps of every row (``swept``), by row,
        /// for the entities whose rows'
        /// visibility follows their columns (``SecurityState/visibilityFollowsColumns``): a
        /// principal found not to see a row is not asked about it again (its groups' tests
        /// skip the round) until a column the policies read changes, the row's key changes,
        /// it goes, a change may have been missed, or the policies or roles change. Under
        /// 100 tenants, a row moved between answers was tested for the 99 principals who
        /// cannot see it at every commit (Benchmarks/README.md, "What a decision found").
        var sight: [HeldRow: RowSight] = [:]
        /// Each principal's number in ``sight`` (`nil`: the pool's role), kept while the
        /// feed runs; past 10,000 they are numbered again and ``sight`` is emptied.
        var principalNumbers: [Principal?: Int] = [:]
        /// The rows of each entity's changed keys in the round's decisions (for the entities
        /// ``sight`` is kept for), in the order the keys went (`nil`: a text that is no key).
        var roundRows: [Int: [HeldRow?]] = [:]
        /// The rows forgotten since the last round's decisions were made, or all of them.
        /// What a round under way finds of them is older than their change. The next round
        /// does not ask about them: their change (an insert, an update of what the policies
        /// read or of columns the feed did not name) is not one the row's next changes keep
        /// what was found through, and under logical decoding's default replica identity a
        /// row's first update names no column (in a table the feed could not read as it
        /// started) while its next ones (of the title, say) need no test at all; asking
        /// cost each test a probe for nothing, a fifth more of the server's work
        /// (Benchmarks/README.md, "What a decision found").
        var sightForgotten = Set<HeldRow>()
        var everySightForgotten = false
        /// The principals (their numbers) asked which rows of each entity they see, since
        /// ``sight`` was last emptied (``LiveDecision/sweepsSight``): each is asked once,
        /// in its first decision of the entity, where each row not yet tested cost a test
        /// of every principal (Benchmarks/README.md, "A principal asked once which rows it
        /// sees"). One whose decision failed (or its round trip) is asked again at its next;
        /// one whose sweep alone failed, or found more rows than it may hold, is not: its
        /// rows are asked of one by one, as before.
        var swept: [Int: Set<Int>] = [:]
        /// The entities whose tables are too big to sweep (by the planner's estimate, or by
        /// what a sweep found), until the layout changes.
        var unswept = Set<Int>()
        /// Per entity swept, the columns its policies read whose values the sweeps ask
        /// (``RowSight/values``), by name: empty when one is of a type whose text the feed
        /// and a cast to `text` may write otherwise (``sightColumns(of:layout:)``).
        var sightColumns: [Int: [String]] = [:]
        /// What the sweeps of the round under way found, learnt when its decisions are all
        /// answered (``learnSweeps()``).
        var sweepsFound: [(entity: Int, principal: Int, swept: Database.Swept)] = []

        /// Forgets what decisions found of `row`.
        mutating func forgetSight(of row: HeldRow) {
            sight[row] = nil
            // Emptied by each round. Changes no round decides stop growing it here, and what
            // a round under way finds is then forgotten whole.
            if sightForgotten.count < ObservationHub.sightLimit {
                sightForgotten.insert(row)
            } else {
                everySightForgotten = true
            }
        }

        /// Forgets what decisions found of every row.
        mutating func forgetAllSight() {
            emptySight()
            everySightForgotten = true
        }

        /// Empties ``sight``: every principal is swept again.
        mutating func emptySight() {
            sight = [:]
            swept = [:]
            sightColumns = [:]
        }

        /// The columns whose values the sweeps of `entity` ask, by name, and quoted: what its
        /// policies read, when each is an integer, `text`, `varchar` or `uuid` (whose text the
        /// feed and a cast to `text` write alike: a `bool` is `t` to one and `true` to the
        /// other, a `timestamptz` follows the session's time zone).
        func sightColumns(of entity: Int, layout: ModelLayout) -> (names: [String], quoted: [String]) {
            guard case .only(let read)? = security?.policyColumns[entity] else { return ([], []) }
            let names = read.sorted()
            let table = layout.entities[entity]
            let indexes = table.attributeIndexes(names)
            guard indexes.count == names.count, indexes.allSatisfy({ [.int2, .int4, .int8, .text, .varchar, .uuid].contains(table.types[$0]) }) else {
                return ([], [])
            }
            return (names, indexes.map { table.columns[$0] })
        }

        /// How many rows ``sight`` holds at most: fewer as principals grow (a row's bits grow with them).
        var sightCapacity: Int { ObservationHub.sightLimit / (1 + principalNumbers.count / 64) }

        /// How many rows a principal's sweep of a table may find: what ``sight`` may hold,
        /// and ``ObservationHub/sweptRowsLimit`` for the sweeps of every principal together.
        var sweepMost: Int { min(sightCapacity, ObservationHub.sweptRowsLimit / max(1, principalNumbers.count)) }

        /// Notes which of the round's changed rows of `entity` principal `principal`'s
        /// decision found (`seen`: their positions in ``roundRows``), unless forgotten since.
        mutating func learnSight(_ seen: Set<Int>, of entity: Int, by principal: Int) {
            guard !everySightForgotten, let rows = roundRows[entity] else { return }
            if sight.count > sightCapacity { emptySight() }
            // By row, not position: two texts of one key say the same of it.
            let found = Set(seen.compactMap { rows.indices.contains($0) ? rows[$0] : nil })
            for case let row? in rows where !sightForgotten.contains(row) {
                sight[row, default: RowSight()].set(principal, sees: found.contains(row))
            }
        }

        /// Notes what the round's sweeps found (``sweepsFound``), unless every row was
        /// forgotten since its decisions were made: for each row of the entity that one of
        /// them sees, or that a decision found before, whether each principal swept sees it,
        /// and the values of ``sightColumns`` that one sweep found. The sweeps ran at
        /// snapshots of their own, maybe after commits the hub notes later: a row changed in
        /// between is forgotten when that change is noted (and its values are not kept past
        /// it, ``forgetSight(changedBy:of:layout:)``), or was forgotten already (left out).
        mutating func learnSweeps() {
            defer { sweepsFound = [] }
            guard !everySightForgotten else { return }
            var found: [Int: [(principal: Int, rows: [ObjectKey: [String?]], at: LSN?)]] = [:]
            for (entity, principal, swept) in sweepsFound {
                switch swept {
                case .tableTooBig: unswept.insert(entity)
                // Not learnt of this principal: its rows are asked of one by one.
                case .tooMany: continue
                case .rows(let rows, let at): found[entity, default: []].append((principal, rows, at))
                }
            }
            for (entity, sweeps) in found where !unswept.contains(entity) {
                var rows = Set(sweeps.flatMap(\.rows.keys).lazy.map { HeldRow(entity: entity, key: $0) })
                rows.formUnion(sight.keys.lazy.filter { $0.entity == entity })
                rows.subtract(sightForgotten)
                // Past what ``sight`` may hold: the table is swept no more.
                let known = sight
                guard known.count + rows.filter({ known[$0] == nil }).count <= sightCapacity else {
                    unswept.insert(entity)
                    continue
                }
                let columns = sightColumns[entity] ?? []
                for row in rows {
                    var entry = known[row] ?? RowSight()
                    for sweep in sweeps { entry.set(sweep.principal, sees: sweep.rows[row.key] != nil) }
                    // The values one sweep found, with where the log was when it ran; not
                    // long ones (a text a policy compares), which would grow what is held.
                    if !columns.isEmpty, let sweep = sweeps.first(where: { $0.rows[row.key] != nil }), let texts = sweep.rows[row.key],
                        texts.count == columns.count, let at = sweep.at, texts.reduce(0, { $0 + ($1?.utf8.count ?? 0) }) <= 64
                    {
                        entry.values = (texts, at)
                    }
                    sight[row] = entry
                }
            }
        }

        mutating func unsubscribe(_ id: Int, from key: LiveGroupKey) {
            groups[key]?.subscribers[id] = nil
            if groups[key]?.subscribers.isEmpty == true { letGo(key) }
            if groups.isEmpty { stopFeed() }
        }

        /// Stops the feed and the security watch. What decisions found is forgotten: the
        /// next feed does not say what changed in between (a row moved to a tenant that was
        /// found not to see it, say).
        mutating func stopFeed() {
            feed?.fire()
            feed = nil
            securityWatch?.fire()
            securityWatch = nil
            security = nil
            forgetAllSight()
            principalNumbers = [:]
        }

        /// The hub no longer reads group `key`: its observers are gone, or their streams ended.
        mutating func letGo(_ key: LiveGroupKey) {
            guard let group = groups.removeValue(forKey: key) else { return }
            group.isGone = true
            groupsLetGo += 1
            hold(group, keys: [])
            setUndecided(group, false)
            stale.remove(key)
            groupsChanged()
        }

        /// Groups came or went: what is made of all of them is made again when next needed.
        mutating func groupsChanged() {
            decisionOrder = nil
            groupsInOrder = nil
            watchers = nil
        }

        /// ``watchers``, made when missing.
        mutating func allWatchers() -> [Int: Watchers] {
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
        mutating func allGroups() -> [Group] {
            if let made = groupsInOrder { return made }
            let made = groups.values.sorted { $0.id < $1.id }
            groupsInOrder = made
            return made
        }

        /// Sets the keys of the rows `group`'s answer holds (for a group with a deciding
        /// entity), and ``holders`` with them: only the rows that came or went are touched.
        mutating func hold(_ group: Group, keys: Set<ObjectKey>) {
            guard let entity = group.decidingEntity else { return }
            for key in group.keys where !keys.contains(key) {
                let row = HeldRow(entity: entity, key: key)
                holders[row]?.removeAll { $0 === group }
                if holders[row]?.isEmpty == true { holders[row] = nil }
            }
            for key in keys where !group.keys.contains(key) { holders[HeldRow(entity: entity, key: key), default: []].append(group) }
            group.keys = keys
        }

        /// Marks `group` undecided or not, keeping ``undecidedByEntity``.
        mutating func setUndecided(_ group: Group, _ undecided: Bool) {
            guard group.isUndecided != undecided, let entity = group.decidingEntity else { return }
            group.isUndecided = undecided
            undecidedByEntity[entity, default: 0] += undecided ? 1 : -1
            if undecidedByEntity[entity] == 0 { undecidedByEntity[entity] = nil }
        }

        /// A transaction committed: what it touched is noted, for the groups to be sorted by
        /// the next round of reads (``sortCommitted(_:)``); a first read under way that it may
        /// have missed is read again.
        mutating func note(_ committed: CommittedChanges, layout: ModelLayout) {
            var touched = Set<Int>()
            if committed.mayHaveMissedChanges { forgetAllSight() }
            for change in committed.changes {
                guard let entity = try? layout.entityIndex(named: change.entity) else { continue }
                touched.insert(entity)
                forgetSight(changedBy: change, of: entity, layout: layout)
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
            // One that touched none of the model's tables no read waits for.
            if let transaction = committed.unconfirmedTransaction, !touched.isEmpty { unconfirmed.append((transaction, touched)) }
            for (key, read) in firstReads where committed.mayHaveMissedChanges || !read.region.isDisjoint(with: touched) {
                touchedDuringFirstRead.insert(key)
            }
        }

        /// Forgets what decisions found of the rows `change` touched, unless it left each as
        /// visible to every principal as it was: an update of one row, its key kept, that
        /// changed no column the entity's policies read (named, or found as a sweep did).
        mutating func forgetSight(changedBy change: Change, of entity: Int, layout: ModelLayout) {
            guard let security, security.visibilityFollowsColumns.contains(entity) else { return }
            if change.kind == .update, change.keyTexts.count == 1 {
                if let columns = change.changedColumns {
                    // Its changed columns named: none the policies read.
                    if case .only(let read) = security.policyColumns[entity] ?? .only([]), read.isDisjoint(with: columns) { return }
                } else if let after = change.newRow, let columns = sightColumns[entity],
                    let key = layout.entities[entity].storedKey(change.keyTexts[0]).flatMap(ObjectKey.init),
                    sight[HeldRow(entity: entity, key: key)]?.keeps(after, columns: columns) == true
                {
                    // Not named, but what the policies read is as a sweep before it found it:
                    // every change noted since kept those values or forgot them.
                    return
                }
            }
            // No key (a truncate, a payload cut short): any row may have changed.
            guard !change.keyTexts.isEmpty else { return forgetAllSight() }
            for text in change.keyTexts {
                guard let key = layout.entities[entity].storedKey(text).flatMap(ObjectKey.init) else { continue }
                forgetSight(of: HeldRow(entity: entity, key: key))
            }
        }

        /// The groups whose region the commits since the last call touched are stale, and are
        /// read again (one read each, however many commits came) — or, where the changed rows
        /// decide, wait for them to be tested: those whose answer holds a changed row read
        /// again, and those whose deciding columns no update changed (and no insert came) need
        /// no test at all.
        mutating func sortCommitted(_ layout: ModelLayout) {
            let committed = committedSinceSorted
            guard !committed.isEmpty else { return }
            committedSinceSorted = Committed()
            if committed.mayHaveMissedChanges {
                for group in allGroups() {
                    stale.insert(group.key)
                    setUndecided(group, false)
                }
                everyGroupUndecided = []
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
                guard !watching.deciding.isEmpty else { continue }
                var undecided = [watching.anyColumn]
                if !committed.anyColumn.contains(entity) {
                    for column in committed.changedColumns[entity] ?? [] { undecided.append(watching.byColumn[column] ?? []) }
                }
                // Every group deciding from it (an insert, an update whose columns the feed did
                // not say, a column that all of them read; each list holds a group once):
                // marked once, stale ones too, which a decision that finds met makes stale
                // again, and they are read once.
                if committed.anyColumn.contains(entity) || undecided.contains(where: { $0.count == watching.deciding.count }) {
                    deciding.insert(entity)
                    everyGroupUndecided.insert(entity)
                    continue
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
            for entity in deciding { changedKeys[entity, default: []].formUnion((committed.keys[entity] ?? []).lazy.map(ExactTexts.init)) }
        }

        /// Whether a round is to start now: something is stale or undecided, and no round is
        /// under way (it takes what came meanwhile). The caller then runs
        /// ``ObservationHub/evaluate(on:)``.
        mutating func startsRound() -> Bool {
            guard hasWork, !isEvaluating else { return false }
            isEvaluating = true
            return true
        }

        /// The first `count` of ``unconfirmed`` are seen by new snapshots.
        mutating func confirmed(_ count: Int) {
            unconfirmed.removeFirst(min(count, unconfirmed.count))
        }

        /// A subscriber's first read of group `key` ended (read, or failed).
        mutating func endFirstRead(of key: LiveGroupKey) {
            firstReads[key]?.readers -= 1
            if firstReads[key]?.readers == 0 { firstReads[key] = nil }
        }

        /// Whether a round has something to do: a commit to sort, a group stale or undecided.
        var hasWork: Bool { !stale.isEmpty || hasUndecided || !committedSinceSorted.isEmpty }

        /// Whether a group is undecided, one by one or with every group of its entity.
        var hasUndecided: Bool { !undecidedByEntity.isEmpty || !everyGroupUndecided.isEmpty }

        /// Ends every observer's stream (with `error`, if any) and stops the feed and the
        /// security watch.
        mutating func end(throwing error: (any Error)?) {
            for group in groups.values {
                for continuation in group.subscribers.values { continuation.finish(throwing: error) }
                group.isGone = true
            }
            groups = [:]
            groupsLetGo += 1
            holders = [:]
            groupsChanged()
            stale = []
            undecidedByEntity = [:]
            everyGroupUndecided = []
            changedKeys = [:]
            committedSinceSorted = Committed()
            stopFeed()
        }


        /// The decisions of a round (``ObservationHub/decide(on:)``), with the keys (text
        /// forms) of the rows changed since the groups were last decided; their groups wait in
        /// ``deciding`` until the answers come (``decided(_:_:)``).
        mutating func decisions(_ layout: ModelLayout) -> (decisions: [LiveDecision], changedKeys: [Int: [[String?]]]) {
            let keysByEntity = changedKeys.mapValues { $0.map(\.texts) }
            changedKeys = [:]
            if decisionOrder == nil {
                if principalNumbers.count > 10_000 {
                    principalNumbers = [:]
                    forgetAllSight()
                }
                var batches: [DecisionBatch: BatchMembers] = [:]
                for group in allGroups() {
                    guard let entity = group.decidingEntity else { continue }
                    let batch = DecisionBatch(entity: entity, principal: group.key.principal)
                    if batches[batch] == nil {
                        let number = principalNumbers[batch.principal] ?? principalNumbers.count
                        principalNumbers[batch.principal] = number
                        batches[batch] = BatchMembers(groups: [], ids: [], principal: number)
                    }
                    batches[batch]?.groups.append(group)
                    batches[batch]?.ids.append(group.id)
                }
                var order = DecisionOrder()
                for (batch, members) in batches.sorted(by: { $0.key.entity < $1.key.entity }) {
                    order.entities.append(batch.entity)
                    order.principals.append(members.principal)
                    order.batches.append(batch)
                    order.members.append(members)
                }
                decisionOrder = order
            }
            let order = decisionOrder ?? DecisionOrder()
            // Each decision: its groups (at most `groupsPerDecision`, one statement) and their entity.
            var decisions: [LiveDecision] = []
            deciding = []
            letGoWhenDecided = groupsLetGo
            if matchLayout != ObjectIdentifier(layout) || decisionsMade.count > 10_000 {
                if matchLayout != ObjectIdentifier(layout) {
                    emptySight()
                    unswept = []
                }
                decisionsMade = [:]
                matchLayout = ObjectIdentifier(layout)
            }
            // From here on, a row forgotten was changed after the round's decisions began.
            let unasked = sightForgotten
            sightForgotten = []
            everySightForgotten = false
            roundRows = [:]
            for (entity, texts) in keysByEntity where security?.visibilityFollowsColumns.contains(entity) == true {
                roundRows[entity] = texts.map { text in layout.entities[entity].storedKey(text).flatMap(ObjectKey.init).map { HeldRow(entity: entity, key: $0) } }
            }
            // What decisions found of each changed row, looked up once for every principal's batch.
            var roundSight: [Int: [(row: HeldRow?, found: RowSight?)]] = [:]
            for (entity, rows) in roundRows { roundSight[entity] = rows.map { row in (row, row.flatMap { sight[$0] }) } }
            // A batch with a group waiting is decided whole, its groups in the order they were
            // made: its tests are then the same round after round, made once and prepared. Only
            // the groups that waited read again when met (the others are stale already, or no
            // change concerned them); leaving them out made other tests each round — of 500
            // requests when one of them held the changed row.
            for index in order.entities.indices {
                let entity = order.entities[index]
                let everyOne = everyGroupUndecided.contains(entity)
                // Which of the batch's groups wait (`nil`: every one).
                var waiting: [Bool]?
                if undecidedByEntity[entity] != nil {
                    let groups = order.members[index].groups
                    guard everyOne || groups.contains(where: \.isUndecided) else { continue }
                    waiting = everyOne ? nil : groups.map(\.isUndecided)
                    // Decided from here on: a commit meanwhile marks them again, for the next round.
                    for group in groups { setUndecided(group, false) }
                } else if !everyOne {
                    continue
                }
                // A principal that an earlier decision found not to see any of the changed
                // rows (and nothing since may have shown it one) meets no request with
                // them; one not asked about a row is asked now.
                let principal = order.principals[index]
                var asksSight = false
                if let rows = roundSight[entity] {
                    var hidden = !rows.isEmpty
                    for (row, found) in rows {
                        switch found?.sees(principal) {
                        case false?: continue
                        case true?: hidden = false
                        case nil:
                            hidden = false
                            if let row, !unasked.contains(row) { asksSight = true }
                        }
                    }
                    if hidden { continue }
                }
                let (batch, members) = (order.batches[index], order.members[index])
                // A principal not yet asked which rows of the table it sees is asked now, in
                // its first test (which then need not ask of the changed rows).
                var sweeps: (most: Int, table: Int, values: [String])?
                if roundRows[entity] != nil, !unswept.contains(entity), swept[entity]?.contains(members.principal) != true {
                    let columns = sightColumns(of: entity, layout: layout)
                    sightColumns[entity] = columns.names
                    sweeps = (sweepMost, sightCapacity, columns.quoted)
                    asksSight = false
                    swept[entity, default: []].insert(members.principal)
                }
                for start in stride(from: 0, to: members.groups.count, by: ObservationHub.groupsPerDecision) {
                    let range = start..<min(start + ObservationHub.groupsPerDecision, members.groups.count)
                    let chunk = members.groups[range]
                    let match = MatchKey(entity: entity, groups: Array(members.ids[range]))
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
                    var asked = decision
                    asked.asksSight = asksSight
                    asked.sweepsSight = start == 0 ? sweeps : nil
                    decisions.append(asked)
                    deciding.append((chunk, waiting.map { Array($0[chunk.indices]) } ?? Array(repeating: true, count: chunk.count), entity, members.principal))
                }
            }
            everyGroupUndecided = []
            return (decisions, keysByEntity)
        }

        /// The answers of the decisions at `range` of ``deciding``, or `nil` when none could
        /// run: a waiting group that a changed row meets now is stale.
        mutating func decided(_ range: Range<Int>, _ answers: [Result<Database.DecisionAnswer, RelateError>]?) {
            guard let answers else {
                // Undecided: read them again, which reports its own error; swept again next time.
                for (members, _, entity, principal) in deciding[range] {
                    stale.formUnion(members.filter { !$0.isGone }.map(\.key))
                    swept[entity]?.remove(principal)
                }
                return
            }
            // Whether a group went meanwhile, asked of each only when the hub let go of one.
            let mayHaveGone = groupsLetGo != letGoWhenDecided
            for ((members, waiting, entity, principal), answer) in zip(deciding[range], answers) {
                // Which principals see a row does not hang on the groups. An answer says
                // when its decision asked, or swept.
                switch answer {
                case .success(let found):
                    if let seen = found.seen { learnSight(seen, of: entity, by: principal) }
                    if let swept = found.swept { sweepsFound.append((entity, principal, swept)) }
                // Swept again next time, if it was.
                case .failure: swept[entity]?.remove(principal)
                }
                // A group went meanwhile: the indexes no longer match; read the rest again.
                guard case .success(let found) = answer, !mayHaveGone || !members.contains(where: \.isGone) else {
                    stale.formUnion(members.filter { !$0.isGone }.map(\.key))
                    continue
                }
                for index in found.met where waiting.indices.contains(index) && waiting[index] {
                    stale.insert(members[members.startIndex + index].key)
                }
            }
        }
    }
    private let state = Locked(State())

    /// How often policies, privileges and role memberships are checked.
    static let securityCheckInterval = Duration.seconds(1)

    /// How many transactions handed over unconfirmed (of the model's tables) a round that
    /// finds no work asks about alone: what they touched would make first reads of those
    /// tables read twice until a round that reads asks.
    static let unconfirmedLimit = 1_000

    /// How many groups' reads, or decisions of principals, one round trip carries at most.
    static let groupsPerRoundTrip = 100

    /// How many groups of one entity and principal one decision statement tests at most.
    /// A thousand: the cap dates from tests in a `VALUES` list (500 then); conditions of
    /// one shape now go as arrays, whatever their number. One statement for the thousand
    /// groups of one principal, where two of 500 were, cost a tenth less of Relate's CPU and
    /// the server's under logical decoding at 100 commits a second (Benchmarks/README.md,
    /// "A change to every group marked once"). Tests in a `VALUES` list (conditions of no
    /// shape shared) bind their own values: a thousand such groups binding 66 values or more
    /// each pass the server's 65,535, and that decision fails, so its groups read again at
    /// every change (more reads, no change missed).
    static let groupsPerDecision = 1000

    /// How many rows ``State/sight`` holds at most, under 64 principals or fewer (half as
    /// many under 128, …): past it, it starts again empty. About 120 bytes a row under 64
    /// (its key, its words, the table's slot), and with what a sweep found of the columns
    /// the policies read, their texts (a tenant's number, a UUID): some 12 to 20 MB.
    static let sightLimit = 100_000

    /// How many rows the sweeps of every principal may find together, once what was found
    /// is forgotten whole (``State/sweepMost``): each statement's result is held until the
    /// round's answers are learnt.
    static let sweptRowsLimit = 200_000

    func subscribe(
        to request: FetchRequest, as principal: Principal?, on database: Database
    ) async throws -> AsyncThrowingStream<LiveSnapshot, any Error> {
        try principal?.validate()
        let layout = database.layout.withLock { $0 }
        let (_, statement) = try request.selectStatement(layout)
        // The same SQL with the same values as the same principal is the same group, whoever built it.
        let key = try relateErrors(naming: request.entity) { try LiveGroupKey(statement.statement, principal: principal) }
        let region = try request.region(in: layout)
        let decidingEntity = try request.decidesFromChangedRows(in: layout) ? try layout.entityIndex(named: request.entity) : nil
        let requestColumns = decidingEntity == nil ? nil : try request.decidingColumns(in: layout)
        try await startFeed(for: database)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LiveSnapshot.self, bufferingPolicy: .bufferingNewest(1))
        // A group that is there takes the subscriber at once; a new one reads its first answer.
        let isNew = state.withLock { state in
            guard state.groups[key] == nil else {
                add(continuation, to: key, in: &state, on: database)
                return false
            }
            let read = FirstRead(region: region.union(state.security?.policyRegion(of: region) ?? []))
            state.firstReads[key, default: read].readers += 1
            // A transaction handed over before it was seen to be visible may be missing from
            // the answer (its commit came before this read began): read again with it confirmed.
            if state.unconfirmed.contains(where: { !$0.touched.isDisjoint(with: read.region) }) { state.touchedDuringFirstRead.insert(key) }
            return true
        }
        guard isNew else { return stream }
        let rows: [LiveRow]
        do {
            rows = try await database.liveRows(request, as: principal)
        } catch {
            state.withLock { $0.endFirstRead(of: key) }
            throw error
        }
        state.withLock { state in
            state.endFirstRead(of: key)
            if state.groups[key] == nil {
                state.nextGroupID += 1
                state.groupsChanged()
                let group = Group(
                    key: key, id: state.nextGroupID, request: request, layout: layout, region: region,
                    policyRegion: state.security?.policyRegion(of: region) ?? [], decidingEntity: decidingEntity, requestColumns: requestColumns,
                    rows: rows)
                state.groups[key] = group
                state.hold(group, keys: Self.keys(of: rows))
            }
            watchSecurity(&state, on: database)
            if state.touchedDuringFirstRead.remove(key) != nil {
                state.stale.insert(key)
                scheduleEvaluation(&state, on: database)
            }
            add(continuation, to: key, in: &state, on: database)
        }
        return stream
    }

    /// Gives `continuation` group `key`'s answer, and every answer after it. Under the
    /// lock, with the group's rows: a round's answer cannot come before it.
    private func add(
        _ continuation: AsyncThrowingStream<LiveSnapshot, any Error>.Continuation, to key: LiveGroupKey, in state: inout State, on database: Database
    ) {
        let group = state.groups[key]!
        continuation.yield(LiveSnapshot(rows: group.rows, difference: Self.difference(from: [], to: group.rows), version: group.version))
        let id = state.nextSubscriber
        state.nextSubscriber += 1
        group.subscribers[id] = continuation
        // A job of the database's, not a call: a stream the hub finishes under its lock
        // ends here at once. Once the database shut down or closed, nothing is left to leave.
        let background = database.background
        continuation.onTermination = { [weak self] _ in
            background.start { [weak self] in self?.state.withLock { $0.unsubscribe(id, from: key) } }
        }
    }

    private func startFeed(for database: Database) async throws {
        // Row-level security first, before a feed is opened: a subscriber that came while
        // it was read would otherwise have found no feed and no opening, and opened a
        // second feed that nobody read.
        if state.withLock({ $0.feed == nil && $0.security == nil }) {
            let security = try await database.securityState(after: nil)
            state.withLock { if $0.security == nil { $0.security = security } }
        }
        let opening = state.withLock { state -> Task<ChangeMailbox, any Error>? in
            guard state.feed == nil else { return nil }
            if state.opening == nil { state.opening = Task { try await database.changeMailbox() } }
            return state.opening
        }
        guard let opening else { return }
        let changes: ChangeMailbox
        do {
            changes = try await opening.value
        } catch {
            state.withLock { if $0.opening == opening { $0.opening = nil } }
            throw error
        }
        // The first subscriber back starts the feed; the others, given the same mailbox, find it started.
        try state.withLock { state in
            if state.opening == opening { state.opening = nil }
            guard state.feed == nil else { return }
            state.feedNumber += 1
            let number = state.feedNumber
            // A job of the database's, which its shutdown or `close()` ends (cancelled, it
            // stops taking, and the feed's thread stops). It runs the rounds its commits
            // start, on the pool's threads, where their statements run.
            let started = database.background.startCancellable { [weak self] in
                await withTaskExecutorPreference(database.executor) {
                    do {
                        while let batch = try await changes.next() {
                            await self?.committed(batch, on: database)
                        }
                        self?.feedEnded(number, error: nil)
                    } catch {
                        self?.feedEnded(number, error: error is CancellationError ? nil : error)
                    }
                }
            }
            guard let started else { throw ConnectionPool.closedError }
            state.feed = started
        }
    }

    /// Transactions committed (every one the feed read since the hub last took): each is
    /// noted, and unless a round is under way (which takes them), a round reads in the
    /// calling task, the feed's. Commits that arrive during it wait in the feed's mailbox
    /// for the next round, all of them at once.
    private func committed(_ batch: [CommittedChanges], on database: Database) async {
        let layout = database.layout.withLock { $0 }
        let startsRound = state.withLock { state in
            for committed in batch { state.note(committed, layout: layout) }
            return state.startsRound()
        }
        if startsRound { await evaluate(on: database) }
    }

    /// Starts reading what is stale or undecided in a job of its own, unless a read is
    /// under way (it will): for what happens outside the feed's task (a first read that a
    /// commit touched, a policy changed, a server back).
    private func scheduleEvaluation(_ state: inout State, on database: Database) {
        guard state.startsRound() else { return }
        // A job of the database's, so that a shutdown awaits the read under way; none
        // starts once it shut down or closed. On the pool's threads, as the feed's rounds.
        let started = database.background.start { [self] in
            await withTaskExecutorPreference(database.executor) { await evaluate(on: database) }
        }
        if !started { state.isEvaluating = false }
    }

    private func evaluate(on database: Database) async {
        var unreachable = Set<LiveGroupKey>()
        var confirmsAlone = true
        while true {
            let layout = database.layout.withLock { $0 }
            // Whether work is left, and the round's end when none is, under one lock: a
            // commit noted after it finds no round under way, and starts one.
            let decides = state.withLock { state -> Bool? in
                guard state.hasWork else {
                    // Commits no group reads are confirmed too, now and then (once a call):
                    // what they touched would make every first read of their tables read twice.
                    if confirmsAlone, state.unconfirmed.count >= Self.unconfirmedLimit { return false }
                    state.isEvaluating = false
                    return nil
                }
                // Cancelled: the feed whose task this round runs in stopped (its last
                // observer left), or the database closes. What is left goes to a round of
                // its own, which a closed database does not start: every read here would
                // fail, and a new feed's groups would lose their changes to it.
                if Task.isCancelled {
                    state.isEvaluating = false
                    scheduleEvaluation(&state, on: database)
                    return nil
                }
                state.sortCommitted(layout)
                return state.hasUndecided
            }
            guard let decides else { break }
            if decides { await decide(on: database) }
            if confirmsAlone, state.withLock({ !$0.hasWork && $0.unconfirmed.count >= Self.unconfirmedLimit }) {
                confirmsAlone = false
                _ = try? await confirmingVisibility(on: database) { try await database.liveRows(of: [], confirming: $0) }
            }
            // Every stale group, whatever its principal, in one round trip (a hundred at a time).
            while let keys = state.withLock({ state -> [LiveGroupKey]? in
                guard !state.stale.isEmpty, !Task.isCancelled else { return nil }
                let keys = Array(state.stale.prefix(Self.groupsPerRoundTrip))
                state.stale.subtract(keys)
                return keys
            }) {
                unreachable.formUnion(await read(keys, on: database))
            }
        }
        guard !unreachable.isEmpty else { return }
        // The server could not be reached (a failover under way): those answers are read
        // again a moment later, and their observers keep their streams.
        database.background.start { [weak self, unreachable] in
            try? await Task.sleep(for: .milliseconds(500))
            guard !Task.isCancelled else { return }
            self?.retry(unreachable, on: database)
        }
    }

    private func retry(_ keys: Set<LiveGroupKey>, on database: Database) {
        state.withLock { state in
            state.stale.formUnion(keys.filter { state.groups[$0] != nil })
            scheduleEvaluation(&state, on: database)
        }
    }

    /// Tests the rows changed since the undecided groups were last read against their
    /// conditions, one statement per entity and principal (and per ``groupsPerDecision`` requests), run as
    /// that principal, every principal's in one round trip (a hundred at a time), those whose
    /// settings set the same names in one transaction (``Database/requestsMet(_:changedKeys:confirming:)``): a group
    /// whose answer holds a changed row, or whose condition a changed row the principal
    /// sees now meets, is stale; the rest kept their answer.
    private func decide(on database: Database) async {
        let layout = database.layout.withLock { $0 }
        let (decisions, changedKeys) = state.withLock { $0.decisions(layout) }
        for start in stride(from: 0, to: decisions.count, by: Self.groupsPerRoundTrip) {
            let end = min(start + Self.groupsPerRoundTrip, decisions.count)
            let answers = try? await confirmingVisibility(on: database) {
                try await database.requestsMet(Array(decisions[start..<end]), changedKeys: changedKeys, confirming: $0)
            }
            state.withLock { $0.decided(start..<end, answers) }
        }
        state.withLock { state in
            state.learnSweeps()
            state.deciding = []
        }
    }

    /// Runs `round`, given the transactions to confirm first in its round trip (those the feed
    /// handed over unconfirmed so far); when a snapshot does not see one yet, waits until one
    /// does (``Database/waitUntilVisible(_:)``) and runs it again. A round that answered
    /// confirmed them.
    ///
    /// The logical feed asked that itself, in a round trip of its own for every batch it
    /// read: asked here, it rides in the round trip that reads (Benchmarks/README.md, "The
    /// visibility of a transaction asked where it is read").
    private func confirmingVisibility<Answer>(on database: Database, _ round: ([UInt32]) async throws -> Answer) async throws -> Answer {
        let (transactions, lags) = state.withLock { state in (state.unconfirmed.map(\.transaction), state.visibilityLags) }
        if lags, !transactions.isEmpty {
            let waited = try await database.waitUntilVisible(transactions)
            state.withLock { state in
                state.confirmed(transactions.count)
                if !waited { state.visibilityLags = false }
            }
            return try await round([])
        }
        let answer: Answer
        do {
            answer = try await round(transactions)
        } catch is Database.TransactionsNotVisible {
            state.withLock { $0.visibilityLags = true }
            try await database.waitUntilVisible(transactions)
            state.withLock { $0.confirmed(transactions.count) }
            return try await round([])
        }
        state.withLock { $0.confirmed(transactions.count) }
        return answer
    }

    /// Reads the answers of groups `keys` again, each as its principal, in one round trip
    /// (``Database/liveRows(of:reusing:confirming:)``); tells each group's subscribers when its answer
    /// changed, and ends the streams of a group whose read failed (that group's only).
    /// Answers the groups whose server could not be reached: they stay, to be read again.
    private func read(_ keys: [LiveGroupKey], on database: Database) async -> Set<LiveGroupKey> {
        let layout = database.layout.withLock { $0 }
        let (present, ids, reads, earlier) = state.withLock { state in
            let groups = keys.compactMap { state.groups[$0] }
            let reads = groups.map { group in
                // One that cannot be prepared is read all the same, which reports its error.
                try? group.read.prepare(in: layout)
                return group.read
            }
            return (groups.map(\.key), groups.map(\.id), reads, groups.map(\.rows))
        }
        guard !present.isEmpty else { return [] }
        let answers: [Result<[LiveRow], any Error>]
        do {
            answers = try await confirmingVisibility(on: database) { try await database.liveRows(of: reads, reusing: earlier, confirming: $0) }
                .map { $0.mapError { $0 as any Error } }
        } catch {
            answers = Array(repeating: .failure(error), count: present.count)
        }
        // The differences outside the lock, which a subscriber may be waiting for: only a
        // round changes a group's rows, and one round runs at a time, so the rows it took
        // are its group's still (a group made again under the key since takes nothing).
        let differences = zip(earlier, answers).map { old, answer -> LiveResults.Difference? in
            guard case .success(let rows) = answer else { return nil }
            return Self.difference(from: old, to: rows)
        }
        return state.withLock { state in
            var unreachable = Set<LiveGroupKey>()
            for (index, (key, id)) in zip(present, ids).enumerated() {
                // A group let go meanwhile, and one made again under its key since, whose
                // first read may be newer than this one: neither takes this answer.
                guard let group = state.groups[key], group.id == id else { continue }
                switch answers[index] {
                case .success(let rows):
                    guard let difference = differences[index], !difference.isEmpty else { continue }
                    group.rows = rows
                    // Only rows that came or went change the keys it holds (rows are told apart by key).
                    if group.decidingEntity != nil, !difference.inserted.isEmpty || !difference.removed.isEmpty {
                        state.hold(group, keys: Self.keys(of: rows))
                    }
                    group.version += 1
                    let snapshot = LiveSnapshot(rows: rows, difference: difference, version: group.version)
                    for continuation in group.subscribers.values { continuation.yield(snapshot) }
                case .failure(let error as RelateError) where error.postgresError.map({ [.connectionClosed, .connectionFailed].contains($0.kind) }) ?? false:
                    unreachable.insert(key)
                case .failure(is CancellationError):
                    // This round was cancelled: the database is closing (the end of the feed
                    // then finishes the streams, without an error), or the feed whose task
                    // it ran in stopped. It is read again by a round of its own
                    // (``evaluate(on:)``), which takes over once this one sees it was
                    // cancelled (never a loop of reads that fail alike).
                    if Task.isCancelled { state.stale.insert(key) }
                case .failure(let error):
                    for continuation in group.subscribers.values { continuation.finish(throwing: error) }
                    state.letGo(key)
                }
            }
            return unreachable
        }
    }

    /// Starts asking the catalog about policies every ``securityCheckInterval``, once a
    /// principal observes or a watched table has row-level security (a database without
    /// either pays nothing).
    private func watchSecurity(_ state: inout State, on database: Database) {
        guard state.securityWatch == nil, state.feed != nil else { return }
        let protected = state.security?.protected ?? []
        guard state.groups.contains(where: { $0.key.principal != nil || !$0.value.region.union($0.value.policyRegion).isDisjoint(with: protected) })
        else { return }
        state.securityWatch = database.background.startCancellable { [weak self] in
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
        guard let known = state.withLock({ $0.security }) else { return }
        let now: SecurityState
        do {
            now = try await database.securityState(after: known)
        } catch {
            database.logger.debug("live queries cannot read policies from the catalog; trying again", metadata: ["relate.error": "\(error)"])
            return
        }
        state.withLock { state in
            guard state.security != nil, now != known else { return }
            state.security = now
            // What decisions found holds under the policies and roles they ran under.
            state.forgetAllSight()
            let changed = now.changed(from: known)
            let everything = now.roles != known.roles
            // What the groups' policies read may have changed: the index is made again.
            state.watchers = nil
            for (key, group) in state.groups {
                let before = group.region.union(group.policyRegion)
                group.policyRegion = now.policyRegion(of: group.region)
                if everything || !before.union(group.policyRegion).isDisjoint(with: changed) {
                    state.stale.insert(key)
                    state.setUndecided(group, false)
                }
            }
            for (key, read) in state.firstReads where everything || !read.region.isDisjoint(with: changed) {
                state.touchedDuringFirstRead.insert(key)
            }
            scheduleEvaluation(&state, on: database)
        }
    }

    /// The identities of rows of an entity with a one-column key: each row's own, made from
    /// its cells when it was read, not made again from its key's values.
    private static func keys(of rows: [LiveRow]) -> Set<ObjectKey> {
        Set(rows.compactMap { row in row.primaryKey.count == 1 ? row.identity : nil })
    }

    /// The database is shutting down: every observer's stream ends, without an error, and
    /// the feed stops.
    func shutDown() {
        state.withLock { $0.end(throwing: nil) }
    }

    /// Feed `number` ended: when it is the current one, every observer's stream ends, with
    /// its error if it failed, without one if it was stopped (``Database/close()``).
    private func feedEnded(_ number: Int, error: (any Error)?) {
        state.withLock { state in
            guard number == state.feedNumber, state.feed != nil else { return }
            state.end(throwing: error)
        }
    }

    /// What tells a row of an answer from the others: its key, or without one its index.
    private enum RowIdentity: Hashable {
        case key(ObjectKey)
        case position(Int)
    }

    /// Rows told apart by primary key (by position where there is none). The same rows in
    /// the same order, the common answer to a change of a value, take no diff at all; the
    /// rows whose values changed are told by their cells.
    static func difference(from old: [LiveRow], to new: [LiveRow]) -> LiveResults.Difference {
        var difference = LiveResults.Difference()
        if old.count != new.count || !zip(old, new).allSatisfy({ $0.identity != nil && $0.identity == $1.identity }) {
            // A row without a key is told apart by where it is.
            func identities(_ rows: [LiveRow]) -> [RowIdentity] {
                rows.enumerated().map { offset, row in row.identity.map(RowIdentity.key) ?? .position(offset) }
            }
            difference = LiveResults.Difference(from: identities(old), to: identities(new)) { old[$0].primaryKey } newKey: { new[$0].primaryKey }
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
