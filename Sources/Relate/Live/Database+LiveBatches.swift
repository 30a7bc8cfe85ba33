import RelatePostgres

/// One live group's read among many: its request, and who reads it (`nil`: the pool's role).
struct LiveRead: Sendable {
    var request: FetchRequest
    var principal: Principal?
    /// Its statement and its principal's settings statement, made once for a layout
    /// (``prepare(in:)``) and kept by its group, which reads again at every change to a row
    /// it holds: making the request's SQL anew was a fifth of a read's time.
    private(set) var prepared: Prepared?

    init(request: FetchRequest, principal: Principal?) {
        self.request = request
        self.principal = principal
    }

    /// What ``prepare(in:)`` makes. `@unchecked Sendable`: statements of the library's own
    /// values, never mutated once made; `PostgresStatement` cannot say so.
    struct Prepared: @unchecked Sendable {
        let layout: ObjectIdentifier
        let entity: Int
        /// Whether rows of descendant entities come too: such a read goes through a context.
        let readsDescendants: Bool
        /// The statement as sent: prepared once a connection, as every group of a request's
        /// shape sends the same text.
        let postgres: PostgresStatement
        let settings: PostgresStatement?
        let shape: Statements.SettingsShape
    }

    /// Makes ``prepared`` for `layout`, unless it was made for it.
    ///
    /// - Throws: A ``RelateError`` for a principal that cannot be taken or a request the
    ///   layout cannot read.
    mutating func prepare(in layout: ModelLayout) throws {
        guard prepared?.layout != ObjectIdentifier(layout) else { return }
        try principal?.validate()
        let (entity, statement) = try request.selectStatement(layout, descendants: .marked)
        var postgres = statement.statement.postgres
        postgres.prepares = true
        prepared = Prepared(
            layout: ObjectIdentifier(layout), entity: entity, readsDescendants: !statement.descendants.isEmpty, postgres: postgres,
            settings: Statements.readOnlySettings(as: principal), shape: Statements.SettingsShape(principal))
    }
}

/// One test of changed rows among many (``Database/requestsMet(_:changedKeys:confirming:)``): the
/// tests of requests on `entity`'s own columns of one principal.
///
/// `@unchecked Sendable`: its settings statement binds strings alone (names and values),
/// and it is never mutated once made; `PostgresStatement` cannot say so.
struct LiveDecision: @unchecked Sendable {
    let tests: MatchTests
    let entity: Int
    /// Who runs the tests, as ``MatchTests/decidingPrincipal(for:)`` made it (`nil`: the
    /// pool's own role, on the plan the server chooses).
    let principal: Principal?
    /// `principal`'s settings statement (``Statements/readOnlySettings(as:)``) and its
    /// shape, made once with the tests: every round sends them.
    let settings: PostgresStatement?
    let shape: Statements.SettingsShape
    /// Whether this round's decision also tells which changed rows its principal sees
    /// (``MatchTests/statement(keys:sight:)``): set for a round whose hub does not know.
    var asksSight = false
    /// When set, the round also asks which rows of the whole table its principal sees (at
    /// most `most`, of a table of at most `table` rows by the planner's estimate), with the
    /// values of `values` (quoted columns) of each (``MatchTests/sweep(most:table:values:)``):
    /// set once for each principal while what the hub found holds.
    var sweepsSight: (most: Int, table: Int, values: [String])?

    /// The decision of `tests` as `principal` (`nil`: the pool's own role), checked and its
    /// settings made once.
    ///
    /// - Throws: A ``RelateError`` for a principal that cannot be taken (``Principal/validate()``).
    init(tests: MatchTests, entity: Int, as principal: Principal?) throws {
        try principal?.validate()
        self.tests = tests
        self.entity = entity
        self.principal = tests.decidingPrincipal(for: principal)
        settings = Statements.readOnlySettings(as: self.principal)
        shape = Statements.SettingsShape(self.principal)
    }
}

extension Database {
    /// The answers of `reads`, on one pooled connection of the primary in one round trip
    /// (``liveRound(_:confirming:on:)``): each read as its principal (with one, after its `SELECT
    /// set_config…` in a read-only transaction it shares with the reads of principals whose
    /// settings set the same names), so a read that fails (a setting a policy cannot cast)
    /// fails alone, and the connection goes back as the login role with no setting. A
    /// request whose entity other tables inherit from is read after the round trip, in a
    /// transaction of its own.
    ///
    /// - Parameters:
    ///   - reads: The reads.
    ///   - earlier: Per read, its answer before (empty for none): a row of it whose
    ///     identity and values come again is taken as it is (``LiveRow/rows(of:entity:reusing:)``).
    ///   - transactions: Transactions a new snapshot must see before the reads answer
    ///     (ids a logical feed handed over at once), asked first in the same round trip.
    /// - Returns: Per read, in order, its rows or the error reading them.
    /// - Throws: ``TransactionsNotVisible`` when it does not see one of `transactions` yet;
    ///   a ``RelateError`` when no read could run: the connection was lost (its
    ///   ``RelateError/postgresError`` says so), or the database is shutting down.
    func liveRows(
        of reads: [LiveRead], reusing earlier: [[LiveRow]] = [], confirming transactions: [UInt32] = []
    ) async throws -> [Result<[LiveRow], RelateError>] {
        try await unit("relate.read") {
            let layout = self.layout.withLock { $0 }
            return try await self.withConnection { connection, _ in
                try Self.liveRows(of: reads, reusing: earlier, confirming: transactions, on: connection, layout: layout)
            }
        }
    }

    /// A decision's answer (``requestsMet(_:changedKeys:confirming:)``).
    struct DecisionAnswer: Equatable {
        /// The indexes of its requests that a changed row meets now.
        var met: Set<Int>
        /// For a decision that ``LiveDecision/asksSight``, the positions in
        /// `changedKeys[entity]` of the rows its principal sees (a row deleted meanwhile is
        /// seen by none); `nil` for one that does not.
        var seen: Set<Int>?
        /// For a decision that ``LiveDecision/sweepsSight``, what its sweep found; `nil`
        /// when the sweep failed.
        var swept: Swept?
    }

    /// What a sweep of a table found (``MatchTests/sweep(most:table:values:)``).
    enum Swept: Equatable {
        /// The rows the principal sees, by key: the values of the columns asked for; and
        /// the log's insert position when it ran (`nil` when it found no row).
        case rows([ObjectKey: [String?]], at: LSN?)
        /// The principal sees more rows than its sweep may hold.
        case tooMany
        /// The table has more rows than the hub may hold, by the planner's estimate (or
        /// none, never analyzed).
        case tableTooBig
    }

    /// The indexes of each decision's requests that a row of its entity whose key is one of
    /// `changedKeys[entity]` (text forms) meets now (rows deleted meanwhile meet none), in
    /// one round trip on one
    /// pooled connection of the primary (``liveRound(_:confirming:on:)``): each decision as its
    /// principal (the rows it may see), failing alone; first, whether a new snapshot sees
    /// `transactions`.
    ///
    /// - Returns: Per decision, in order, its answer or the error deciding.
    /// - Throws: ``TransactionsNotVisible`` when it does not see one of `transactions` yet;
    ///   a ``RelateError`` when no decision could run (the connection was lost, a shutdown).
    func requestsMet(
        _ decisions: [LiveDecision], changedKeys: [Int: [[String?]]], confirming transactions: [UInt32] = []
    ) async throws -> [Result<DecisionAnswer, RelateError>] {
        try await unit("relate.read") {
            let layout = self.layout.withLock { $0 }
            return try await self.withConnection { connection, _ in
                var answers = [Result<DecisionAnswer, RelateError>?](repeating: nil, count: decisions.count)
                var round: [LiveStatement] = []
                // Each decision sent, and where its statement is in the round (its sweep next).
                var sent: [(decision: Int, at: Int)] = []
                // The keys of an entity's changed rows, made once for all its decisions (a
                // hundred principals bind the same list), and the position in
                // `changedKeys[entity]` of each (a text that is no key is left out).
                var keysByEntity: [Int: (keys: MatchTests.Keys, positions: [Int])] = [:]
                for (index, decision) in decisions.enumerated() {
                    if keysByEntity[decision.entity] == nil {
                        var stored: [StoredValue] = []
                        var positions: [Int] = []
                        for (position, text) in (changedKeys[decision.entity] ?? []).enumerated() {
                            guard let key = layout.entities[decision.entity].storedKey(text)?.first else { continue }
                            stored.append(key)
                            positions.append(position)
                        }
                        keysByEntity[decision.entity] = (decision.tests.keys(stored), positions)
                    }
                    guard let (keys, _) = keysByEntity[decision.entity], keys.count > 0 else {
                        answers[index] = .success(DecisionAnswer(met: [], seen: decision.asksSight ? [] : nil))
                        continue
                    }
                    var statement = decision.tests.statement(keys: keys, sight: decision.asksSight).postgres
                    statement.prepares = true
                    sent.append((index, round.count))
                    round.append(LiveStatement(statement: statement, principal: decision.principal, settings: decision.settings, shape: decision.shape))
                    if let (most, rows, values) = decision.sweepsSight {
                        var sweep = decision.tests.sweep(most: most, table: rows, values: values).postgres
                        sweep.prepares = true
                        round.append(LiveStatement(statement: sweep, principal: decision.principal, settings: decision.settings, shape: decision.shape))
                    }
                }
                let results = try Self.liveRound(round, confirming: transactions, on: connection)
                for (index, at) in sent {
                    let decision = decisions[index]
                    let entity = layout.model.entities[decision.entity].name
                    let positions = keysByEntity[decision.entity]!.positions
                    answers[index] = Result {
                        try relateErrors(naming: entity) {
                            var answer = DecisionAnswer(met: [], seen: decision.asksSight ? [] : nil)
                            if let (most, _, _) = decision.sweepsSight { answer.swept = Self.swept(results[at + 1], of: layout.entities[decision.entity], most: most) }
                            for row in try results[at].get() {
                                let found = try row.decode(Int.self, at: 0)
                                // `-n`: the row of the n-th key is seen.
                                if found < 0 {
                                    if positions.indices.contains(-found - 1) { answer.seen?.insert(positions[-found - 1]) }
                                } else {
                                    answer.met.insert(found)
                                }
                            }
                            return answer
                        }
                    }.mapError { Self.relateError($0, entity: entity) }
                }
                return answers.map { $0! }
            }
        }
    }

    /// What a sweep's result says (``MatchTests/sweep(most:table:values:)``); `nil` when it failed, which
    /// leaves what the hub knows as it was (its decision's answer stands: it ran before).
    private static func swept(_ result: Result<PostgresResult, PostgresError>, of entity: EntityLayout, most: Int) -> Swept? {
        guard case .success(let rows) = result else { return nil }
        // More than the principal's share of what the sweeps may find.
        guard rows.count <= most else { return .tooMany }
        var found: [ObjectKey: [String?]] = [:]
        var at: LSN?
        for row in rows {
            let texts: [String?]
            do { texts = try (0..<rows.columns.count).map { try row.decode(String?.self, at: $0) } } catch { return nil }
            // The key, the values, the position.
            guard let text = texts.first ?? nil, let last = texts.last ?? nil, let position = LSN(last) else { return .tableTooBig }
            at = position
            // A text that is no key of the model's (the key's type changed since) says nothing.
            if let key = entity.storedKey([text]).flatMap(ObjectKey.init) { found[key] = Array(texts.dropFirst().dropLast()) }
        }
        return .rows(found, at: at)
    }

    /// A live round asked to confirm transactions found one that a new snapshot does not
    /// see yet (``liveRound(_:confirming:on:)``): its commit was decoded before the
    /// committing backend made it visible (with synchronous replication, until a standby
    /// confirmed it). Nothing the round read is answered.
    struct TransactionsNotVisible: Error {}

    /// Which of `transactions` a new snapshot does not see yet (``LogicalDecodingFeed/notVisibleSQL``).
    private static func unseen(among transactions: [UInt32]) -> PostgresStatement {
        var statement = PostgresStatement(LogicalDecodingFeed.notVisibleSQL, [transactions.map(Int.init)])
        statement.prepares = true
        return statement
    }

    /// Returns once a new snapshot sees every one of `transactions`, asking on a pooled
    /// connection, again after a millisecond, then twice as long each time up to 20 ms:
    /// after a live round found one that it did not (``TransactionsNotVisible``), it waits
    /// so, and reads again once.
    ///
    /// - Returns: Whether it waited (the first question found one not visible).
    /// - Throws: A ``RelateError`` when the question fails; a `CancellationError` when the
    ///   task is cancelled.
    @discardableResult
    func waitUntilVisible(_ transactions: [UInt32]) async throws -> Bool {
        var pause = Duration.milliseconds(1)
        for asked in 0... {
            let unseen = try await unit("relate.read") {
                try await self.withConnection { connection, _ in
                    try relateErrors(naming: nil) { try connection.pipeline(groups: [[Self.unseen(among: transactions)]])[0].get()[0].count }
                }
            }
            if unseen == 0 { return asked > 0 }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(20))
        }
        return true
    }

    /// One statement of a live round, and who runs it: its principal's settings statement
    /// (``Statements/readOnlySettings(as:)``; `nil`: a bare statement as the pool's role)
    /// and their shape.
    struct LiveStatement {
        var statement: PostgresStatement
        var principal: Principal?
        var settings: PostgresStatement?
        var shape: Statements.SettingsShape
    }

    /// Runs `round` in one round trip on `connection`, each statement as its principal:
    /// those whose principals' settings are of one shape in one read-only transaction
    /// (``Statements/sharedReadOnly(_:)``). When one fails, the server skips the rest of its
    /// transaction: that statement is answered with its error, and the others of its
    /// transaction are sent again in another round trip (each pass answers at least the one
    /// that failed).
    ///
    /// First, at the head of its first transaction, it asks whether a new snapshot sees each
    /// transaction of `unconfirmed` (ids a logical feed handed over at once,
    /// ``CommittedChanges/unconfirmedTransaction``): every statement after takes a newer
    /// snapshot, which then sees them too. When a statement of that transaction fails, the
    /// answer is lost with it, and what the others read is asked for again after the question.
    ///
    /// - Returns: Per statement, in order, its result or its error.
    /// - Throws: ``TransactionsNotVisible`` when a snapshot did not see one of
    ///   `unconfirmed` yet (what the round read is not answered); a ``RelateError`` when
    ///   the connection is lost, libpq refuses the pipeline or the question fails.
    private static func liveRound(
        _ round: [LiveStatement], confirming unconfirmed: [UInt32] = [], on connection: Connection
    ) throws -> [Result<PostgresResult, PostgresError>] {
        var answers = [Result<PostgresResult, PostgresError>?](repeating: nil, count: round.count)
        var waiting = Array(round.indices)
        var confirming = unconfirmed
        while !waiting.isEmpty || !confirming.isEmpty {
            var shapes: [Statements.SettingsShape: Int] = [:]
            var transactions: [[Int]] = []
            for index in waiting {
                let shape = round[index].shape
                if let transaction = shapes[shape] {
                    transactions[transaction].append(index)
                } else {
                    shapes[shape] = transactions.count
                    transactions.append([index])
                }
            }
            let groups = transactions.map { members in
                Statements.sharedReadOnly(members.map { (round[$0].principal, round[$0].settings, round[$0].statement) })
            }
            // The question first, at the head of the first transaction: each later statement
            // takes a newer snapshot (or, under a default isolation of repeatable read, the
            // question's), so what it finds visible they see. In a transaction of its own it
            // cost a sync more a round (Benchmarks/README.md, "The visibility question in the
            // first transaction").
            var sent = groups.map(\.statements)
            let asked = confirming
            if !asked.isEmpty {
                if sent.isEmpty { sent = [[]] }
                sent[0].insert(Self.unseen(among: asked), at: 0)
            }
            confirming = []
            var results = try relateErrors(naming: nil) { try connection.pipeline(groups: sent) }
            if !asked.isEmpty {
                switch results[0] {
                case .success(var answered):
                    guard answered.removeFirst().count == 0 else { throw TransactionsNotVisible() }
                    results[0] = .success(answered)
                case .failure(let error) where error.statementIndex == 0:
                    throw Self.relateError(error)
                case .failure:
                    // A member's statement failed after the question, whose answer went
                    // with the transaction's: the failure stands, every other answer is
                    // asked for again, after the question again.
                    confirming = asked
                }
            }
            waiting = []
            var first = asked.isEmpty ? 0 : 1
            for (members, (group, result)) in zip(transactions, zip(groups, results)) {
                defer { first += group.statements.count }
                // Where each member's own statement is in the group: a principal's go
                // together, after its settings when it has them.
                let positions = group.positions
                switch result {
                case .success where !confirming.isEmpty:
                    waiting += members
                case .success(let results):
                    for (position, index) in zip(positions, members) { answers[index] = .success(results[position]) }
                case .failure(let error):
                    // The member that failed: the first whose statement is the failed one or
                    // comes after it (its principal's settings failed).
                    let failed = error.statementIndex.flatMap { statement in
                        positions.indices.filter { positions[$0] >= statement - first }.min { positions[$0] < positions[$1] }
                    }
                    for (position, index) in members.enumerated() where failed == nil || position == failed { answers[index] = .failure(error) }
                    if let failed { waiting += members.enumerated().filter { $0.offset != failed }.map(\.element) }
                }
            }
        }
        return answers.map { $0! }
    }

    /// ``liveRows(of:reusing:confirming:)`` on `connection`.
    private static func liveRows(
        of reads: [LiveRead], reusing earlier: [[LiveRow]], confirming transactions: [UInt32], on connection: Connection, layout: ModelLayout
    ) throws -> [Result<[LiveRow], RelateError>] {
        var answers = [Result<[LiveRow], RelateError>?](repeating: nil, count: reads.count)
        var sent: [(read: Int, entity: Int)] = []
        var alone: [Int] = []
        var round: [LiveStatement] = []
        for (index, read) in reads.enumerated() {
            do {
                var read = read
                try read.prepare(in: layout)
                guard let prepared = read.prepared, !prepared.readsDescendants else {
                    alone.append(index)
                    continue
                }
                sent.append((index, prepared.entity))
                round.append(LiveStatement(statement: prepared.postgres, principal: read.principal, settings: prepared.settings, shape: prepared.shape))
            } catch {
                answers[index] = .failure(relateError(error))
            }
        }
        let results = try liveRound(round, confirming: transactions, on: connection)
        for ((index, entity), result) in zip(sent, results) {
            answers[index] = Result {
                try LiveRow.rows(of: try result.get(), entity: layout.entities[entity], reusing: index < earlier.count ? earlier[index] : [])
            }.mapError { relateError($0, entity: layout.model.entities[entity].name) }
        }
        guard !alone.isEmpty else { return answers.map { $0! } }
        // A request with descendants reads each row as its own entity: through a context,
        // emptied between them, so that no object of one principal's answer is another's.
        let context = DatabaseContext(connection: connection, layout: layout)
        defer { context.reset(keepingSpares: false) }
        for index in alone {
            let unit = UnitOfWork(.read, as: reads[index].principal, replicas: .primaryOnly)
            answers[index] = Result {
                defer { context.reset(keepingSpares: true) }
                return try context.transaction(options: Statements.opening(of: unit, learnsTransactionID: false, learnsCommitPosition: false)) {
                    try context.fetch(reads[index].request).map(LiveRow.init)
                }
            }.mapError { relateError($0) }
        }
        return answers.map { $0! }
    }

    /// `error` as a ``RelateError``, naming `entity` when it is the database's.
    private static func relateError(_ error: any Error, entity: String? = nil) -> RelateError {
        switch error {
        case let error as RelateError: error
        case let error as PostgresError: RelateError(error, entity: entity)
        default: RelateError(kind: .database, message: "\(error)", entity: entity)
        }
    }
}
