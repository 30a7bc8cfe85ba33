import Foundation
import MetricsTestKit
import Testing

@testable import Relate

/// `database.observe(request)`: the answer now, then after every commit that changes it,
/// as values; one feed and one read per change for every observer of a request; nothing
/// for commits outside the request's region.
@Suite struct DatabaseObserveTests {
    /// Collects a stream's snapshots on a task of its own.
    final class Collector: Sendable {
        let snapshots = Locked<[LiveSnapshot]>([])
        let task: Task<Void, Never>

        init(_ stream: AsyncThrowingStream<LiveSnapshot, any Error>) {
            let snapshots = self.snapshots
            task = Task {
                do {
                    for try await snapshot in stream { snapshots.withLock { $0.append(snapshot) } }
                } catch {}
            }
        }

        /// The snapshots once there are `count`, waiting at most `timeout`: long by default,
        /// since in the full suite synchronous tests hold the cooperative threads for a
        /// minute and more (a 10 s wait ran out there); a wait that is met returns at once.
        func wait(for count: Int, timeout: Duration = .seconds(300)) async throws -> [LiveSnapshot] {
            let deadline = ContinuousClock.now + timeout
            while snapshots.withLock({ $0.count }) < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            return snapshots.withLock { $0 }
        }

        deinit { task.cancel() }
    }

    static func ids(_ snapshot: LiveSnapshot?) -> [Int] {
        snapshot?.rows.compactMap { $0.primaryKey.first as? Int } ?? []
    }

    /// The ids of each collector's last answer and of a fresh read of its request by
    /// `context`, once they agree or after 20 s.
    static func answers(
        of collectors: [Collector], settlingOn requests: [FetchRequest], in context: DatabaseContext
    ) async throws -> (answers: [[Int]], expected: [[Int]]) {
        let deadline = ContinuousClock.now + .seconds(20)
        var answers: [[Int]] = []
        var expected: [[Int]] = []
        repeat {
            try await Task.sleep(for: .milliseconds(100))
            expected = try requests.map { try context.fetch($0).compactMap { $0.primaryKey.first as? Int } }
            answers = collectors.map { ids($0.snapshots.withLock { $0.last }) }
        } while answers != expected && ContinuousClock.now < deadline
        return (answers, expected)
    }

    /// Runs `body` on a new database whose tables `script` makes, tracked by `mechanism`,
    /// with the connection that made them and a `Database` of two connections on it.
    static func withTrackedDatabase(
        _ mechanism: ChangeTracking.Mechanism, _ script: String, _ body: (String, Connection, Database) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(script)
            try ChangeTrackingTests.enable(mechanism, on: setup)
            let database = try Database(url: url, maxConnections: 2)
            defer { database.close() }
            try await body(url, setup, database)
        }
    }

    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func observersGetEachChangeOfTheirRegion(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await Self.withTrackedDatabase(mechanism, ChangeTrackingTests.schema) { url, setup, database in
            let request = FetchRequest("person", where: Key("surname") == "Hopper", orderBy: [.ascending("id")])
            let first = Collector(try await database.observe(request))
            let second = Collector(try await database.observe(FetchRequest("person", where: Key("surname") == "Hopper", orderBy: [.ascending("id")])))
            let titles = Collector(try await database.observe(FetchRequest("title", orderBy: [.ascending("id")])))
            #expect(Self.ids(try await first.wait(for: 1).first) == [2])
            #expect(try await first.wait(for: 1).first?.difference.inserted.count == 1)

            // A row that comes to match: both observers of the request get it.
            try setup.execute("INSERT INTO person (firstname, surname) VALUES ('Ann', 'Hopper')")
            let seen = try await first.wait(for: 2)
            #expect(Self.ids(seen.last) == [2, 4])
            #expect(seen.last?.difference.inserted.map(\.index) == [1])
            #expect(seen.last?.version == 1)
            #expect(Self.ids(try await second.wait(for: 2).last) == [2, 4])
            // The values are the row's.
            #expect(seen.last?.rows.last?.values["firstname"] as? String == "Ann")

            // A change of a value that moves nothing is news too; one outside the region is not.
            try setup.execute("UPDATE person SET firstname = 'Annie' WHERE id = 4")
            let updated = try await first.wait(for: 3)
            #expect(updated.last?.rows.last?.values["firstname"] as? String == "Annie")
            // It moves nothing, and names the row it changed.
            let difference = updated.last?.difference
            #expect(difference?.inserted.isEmpty == true && difference?.removed.isEmpty == true && difference?.moved.isEmpty == true)
            #expect(difference?.updated.map(\.index) == [(updated.last?.rows.count ?? 0) - 1])
            #expect(difference?.updated.first?.primaryKey.first as? Int == 4)
            #expect(titles.snapshots.withLock { $0.count } == 1)
            try setup.execute("UPDATE email SET address = 'x@example.com' WHERE id = 1")
            try await Task.sleep(for: .milliseconds(800))
            #expect(first.snapshots.withLock { $0.count } == 3)

            // A row that stops matching leaves.
            try setup.execute("UPDATE person SET surname = 'Lovelace' WHERE id = 2")
            let left = try await first.wait(for: 4)
            #expect(Self.ids(left.last) == [4])
            #expect(left.last?.difference.removed.map(\.index) == [0])
            // The title observer heard of none of it.
            #expect(titles.snapshots.withLock { $0.count } == 1)
        }
    }

    /// A truncate names no row: every answer of its tables is read again (the triggers had
    /// none for it, and a stream kept the rows that were gone).
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func aTruncateReadsItsTablesAnswersAgain(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await Self.withTrackedDatabase(mechanism, ChangeTrackingTests.schema) { url, setup, database in
            let people = Collector(try await database.observe(FetchRequest("person", orderBy: [.ascending("id")])))
            let emails = Collector(try await database.observe(FetchRequest("email", orderBy: [.ascending("id")])))
            #expect(Self.ids(try await people.wait(for: 1).last) == [1, 2, 3])
            #expect(Self.ids(try await emails.wait(for: 1).last) == [1, 2, 3])
            try setup.execute("TRUNCATE email")
            #expect(Self.ids(try await emails.wait(for: 2, timeout: .seconds(20)).last) == [])
            try setup.execute("TRUNCATE person CASCADE")
            #expect(Self.ids(try await people.wait(for: 2, timeout: .seconds(20)).last) == [])
            // Tracking goes on after it.
            try setup.execute("INSERT INTO person (firstname, surname) VALUES ('Ann', 'Hopper')")
            #expect(try await people.wait(for: 3, timeout: .seconds(20)).last?.rows.count == 1)
        }
    }

    /// Two rows keyed by a composed and a decomposed `é` (one key to Swift's `==`, two to the
    /// server), changed in one transaction: each is tested against the conditions, and the
    /// one that came to match joins the answer (a set of the changed keys had kept one).
    /// Then each is changed alone, and the feed tells them apart too.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func rowsWhoseKeysDifferOnlyInTheirBytesAreEachDecided(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await Self.withTrackedDatabase(mechanism, """
                CREATE TABLE tag (name text PRIMARY KEY, rank int NOT NULL, label text);
                INSERT INTO tag VALUES (U&'caf\\00E9', 1, 'a'), (U&'cafe\\0301', 1, 'b');
                """) { url, setup, database in
            let high = Collector(try await database.observe(FetchRequest("tag", where: Key("rank") > 5)))
            #expect(try await high.wait(for: 1).first?.rows.isEmpty == true)
            try setup.executeScript("""
                BEGIN;
                UPDATE tag SET label = 'c' WHERE name = U&'caf\\00E9';
                UPDATE tag SET rank = 10 WHERE name = U&'cafe\\0301';
                COMMIT;
                """)
            let seen = try await high.wait(for: 2, timeout: .seconds(20))
            #expect(seen.last?.rows.map { Array(($0.values["name"] as? String ?? "").utf8) } == [Array("cafe\u{301}".utf8)])

            // Each row's last version is its own to the feed: logical decoding had compared
            // one row's update with the other's version, and named no change of the rank.
            try setup.execute("UPDATE tag SET rank = 2 WHERE name = U&'caf\\00E9'")
            try setup.execute("UPDATE tag SET label = 'd' WHERE name = U&'cafe\\0301'")
            #expect(try await high.wait(for: 3, timeout: .seconds(20)).count == 3)
            // Alone in its round: only its own changed columns decide.
            try setup.execute("UPDATE tag SET rank = 10 WHERE name = U&'caf\\00E9'")
            let both = try await high.wait(for: 4, timeout: .seconds(20))
            #expect(Set(both.last?.rows.map { Array(($0.values["name"] as? String ?? "").utf8) } ?? []) == [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
        }
    }

    /// A key renamed from a composed `é` to a decomposed one is a new key: the answer that
    /// held the row under its old key reads again, though no column it reads changed (the
    /// old key had been taken for the new one and dropped, and the answer kept a row gone).
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func aKeyRenamedInItsBytesAloneReadsItsHolderAgain(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await Self.withTrackedDatabase(mechanism, """
                CREATE TABLE tag (name text PRIMARY KEY, rank int NOT NULL);
                INSERT INTO tag VALUES (U&'caf\\00E9', 10), ('tea', 1);
                """) { url, setup, database in
            let high = Collector(try await database.observe(FetchRequest("tag", where: Key("rank") > 5)))
            #expect(try await high.wait(for: 1).first?.rows.count == 1)
            try setup.execute("UPDATE tag SET name = U&'cafe\\0301' WHERE name = U&'caf\\00E9'")
            let seen = try await high.wait(for: 2, timeout: .seconds(20))
            #expect(seen.last?.rows.map { Array(($0.values["name"] as? String ?? "").utf8) } == [Array("cafe\u{301}".utf8)])
        }
    }

    /// Observers of two tokens of one length, or of two instants of one second, each get
    /// their own rows: the live group had been keyed by how the values print (`Data` as
    /// its length, `Date` to the second), and the second request shared the first's answer.
    @Test func requestsWhoseValuesPrintAlikeAreEachRead() async throws {
        try await Self.withTrackedDatabase(.triggers, """
                CREATE TABLE token (id int PRIMARY KEY, secret bytea NOT NULL, issued timestamptz NOT NULL);
                INSERT INTO token VALUES (1, '\\x0102', '2026-01-01 00:00:00.25+00'), (2, '\\x0304', '2026-01-01 00:00:00.75+00');
                """) { url, setup, database in
            // All four observed at once: a request that shared a group took its answer.
            let second = Date(timeIntervalSince1970: 1_767_225_600)
            let conditions = [
                Key("secret") == Data([1, 2]), Key("secret") == Data([3, 4]),
                Key("issued") == second.addingTimeInterval(0.25), Key("issued") == second.addingTimeInterval(0.75),
            ]
            var collectors: [Collector] = []
            for condition in conditions { collectors.append(Collector(try await database.observe(FetchRequest("token", where: condition)))) }
            var ids: [[Int?]] = []
            for collector in collectors { ids.append(try await collector.wait(for: 1).first?.rows.map { $0.values["id"] as? Int } ?? []) }
            #expect(ids == [[1], [2], [1], [2]])
        }
    }

    /// Requests on a table's own columns are read again only when a changed row is in
    /// their answer or meets their condition now: a commit of one row costs one statement
    /// that tests it against all twenty conditions, and a read of the one answer it changed.
    /// Key changes, deletes and inserts keep every answer equal to a fresh read.
    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func theChangedRowsDecideWhichAnswersToReadAgain(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript("""
                CREATE TABLE item (id int PRIMARY KEY, value int NOT NULL);
                INSERT INTO item SELECT i, 0 FROM generate_series(1, 200) i;
                """)
            try ChangeTrackingTests.enable(mechanism, on: setup)
            let metrics = TestMetrics()
            let database = try Database(url: url, configuration: Configuration(maxConnections: 2, metricsFactory: metrics))
            defer { database.close() }
            let requests = (0..<20).map { range in
                FetchRequest("item", where: Key("id") > range * 10 && Key("id") <= range * 10 + 10, orderBy: [.descending("value"), .ascending("id")], limit: 8)
            }
            var collectors: [Collector] = []
            for request in requests { collectors.append(Collector(try await database.observe(request))) }
            for collector in collectors { _ = try await collector.wait(for: 1) }
            let statements = try metrics.expectTimer("relate.statement.duration", [("pool", "primary")])
            func sent() -> Int { statements.values.count }

            // One row of the second range changes: the second answer is read again, no other.
            let before = sent()
            try setup.execute("UPDATE item SET value = 5 WHERE id = 13")
            #expect(Self.ids(try await collectors[1].wait(for: 2).last) == [13, 11, 12, 14, 15, 16, 17, 18])
            try await Task.sleep(for: .milliseconds(500))
            #expect(sent() - before <= 4, "statements for one changed row: \(sent() - before)")
            #expect(collectors.enumerated().allSatisfy { $0.offset == 1 || $0.element.snapshots.withLock { $0.count } == 1 })

            // A row outside every window but meeting a condition joins it (the limit holds);
            // a key moves a row from one answer to another; a delete and an insert.
            try setup.execute("UPDATE item SET value = 9 WHERE id = 20")
            try setup.execute("UPDATE item SET id = 1000 WHERE id = 13")
            try setup.execute("DELETE FROM item WHERE id = 25")
            try setup.execute("UPDATE item SET id = 25 WHERE id = 1000")
            try setup.execute("DELETE FROM item WHERE id = 31")
            try setup.execute("INSERT INTO item VALUES (300, 1), (205, 0), (31, 3)")
            let (answers, expected) = try await Self.answers(of: collectors, settlingOn: requests, in: try DatabaseContext(url: url))
            #expect(answers == expected)
            #expect(answers[1] == [20, 11, 12, 14, 15, 16, 17, 18])
            #expect(answers[2] == [25, 21, 22, 23, 24, 26, 27, 28])
            #expect(answers[3] == [31, 32, 33, 34, 35, 36, 37, 38])
        }
    }

    /// Conditions of one shape decide together through arrays of their values, also on
    /// columns a `String` is compared with untyped (an enum, a `uuid`: their values stay
    /// in the `VALUES` list, where a `text[]` would not compare) and on `varchar` (arrays):
    /// every answer follows the commits as a fresh read has it.
    @Test func conditionsOfOneShapeDecideOnEveryColumnType() async throws {
        try await Self.withTrackedDatabase(.triggers, """
                CREATE TYPE mood AS ENUM ('happy', 'sad');
                CREATE TABLE diary (id int PRIMARY KEY, mood mood NOT NULL, code uuid NOT NULL, title varchar(20) NOT NULL);
                INSERT INTO diary SELECT i, CASE WHEN i % 2 = 0 THEN 'happy' ELSE 'sad' END::mood,
                    ('00000000-0000-0000-0000-00000000000' || (i % 3))::uuid, 't' || (i % 4) FROM generate_series(1, 40) i;
                """) { url, setup, database in
            let code = { (n: Int) in "00000000-0000-0000-0000-00000000000\(n)" }
            let requests = [
                FetchRequest("diary", where: Key("mood") == "happy", orderBy: [.ascending("id")]),
                FetchRequest("diary", where: Key("mood") == "sad", orderBy: [.ascending("id")]),
                FetchRequest("diary", where: Key("code") == code(1), orderBy: [.ascending("id")]),
                FetchRequest("diary", where: Key("code") == code(2), orderBy: [.ascending("id")]),
                FetchRequest("diary", where: Key("title") == "t1", orderBy: [.ascending("id")]),
                FetchRequest("diary", where: Key("title") == "t3", orderBy: [.ascending("id")]),
                FetchRequest("diary", where: Key("id") > 30 && Key("title") >= "t2", orderBy: [.ascending("id")]),
                FetchRequest("diary", where: Key("id") > 35 && Key("title") >= "t1", orderBy: [.ascending("id")]),
            ]
            var collectors: [Collector] = []
            for request in requests { collectors.append(Collector(try await database.observe(request))) }
            for collector in collectors { _ = try await collector.wait(for: 1) }

            // The decision itself (one that failed would only make every answer read again):
            // row 7 (sad, code 1, t3) meets the second, third and sixth conditions.
            let fresh = try DatabaseContext(url: url)
            let diary = try fresh.layout.entityIndex(named: "diary")
            let tests = try FetchRequest.matchTests(requests, entity: diary, layout: fresh.layout)
            // The enum's labels go one by one; uuids (as UUIDs), varchars and integers in arrays.
            #expect(tests.listed == 2)
            let met = try await database.requestsMet([try LiveDecision(tests: tests, entity: diary, as: nil)], changedKeys: [diary: [["7"]]])
            #expect(try met[0].get().met == [1, 2, 5])

            try setup.execute("UPDATE diary SET mood = 'happy' WHERE id = 7")
            try setup.execute("UPDATE diary SET code = $1::uuid WHERE id = 8", [code(1)])
            try setup.execute("UPDATE diary SET title = 't1' WHERE id IN (32, 36)")
            try setup.execute("DELETE FROM diary WHERE id = 9")
            try setup.execute("INSERT INTO diary VALUES (41, 'sad', $1::uuid, 't1')", [code(2)])
            let (answers, expected) = try await Self.answers(of: collectors, settlingOn: requests, in: fresh)
            #expect(answers == expected)
            #expect(answers[0].contains(7) && !answers[1].contains(7) && answers[2].contains(8) && answers[3].contains(41))
        }
    }

    /// Through a relationship to its own entity, a changed row changes whether another
    /// row meets the condition, whose key is not among the changed rows: such a request is
    /// read again on every change of its table, not decided from the changed rows.
    @Test func aConditionThroughARelationshipToItsOwnEntityIsNotDecidedFromChangedRows() throws {
        try ObjectFixture.with("seed_person_email", extraSQL: "CREATE TABLE node (id int PRIMARY KEY, name text, parent_id int REFERENCES node)") { fixture in
            let layout = fixture.context.layout
            let node = try #require(fixture.context.model.entities.first { $0.name == "node" })
            let children = try #require(node.relationships.first { $0.isToMany }).key
            let parent = try #require(node.relationships.first { !$0.isToMany }).key
            #expect(try FetchRequest("node", where: Key("name") == "x").decidesFromChangedRows(in: layout))
            #expect(try !FetchRequest("node", where: Key(children).any(Key("name") == "x")).decidesFromChangedRows(in: layout))
            #expect(try !FetchRequest("node", where: Key(children).isEmpty).decidesFromChangedRows(in: layout))
            #expect(try !FetchRequest("node", where: Key(parent + ".name") == "x").decidesFromChangedRows(in: layout))
            #expect(try !FetchRequest("node", orderBy: [.ascending(parent + ".name")]).decidesFromChangedRows(in: layout))
        }
    }

    @Test func observingWithoutChangeTrackingSaysWhatToEnable() async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(ChangeTrackingTests.schema)
            let database = try Database(url: url, maxConnections: 1)
            defer { database.close() }
            let error = await #expect(throws: RelateError.self) { _ = try await database.observe(FetchRequest("person")) }
            #expect(error?.message.contains("relate enable") == true)
            let unknown = await #expect(throws: RelateError.self) { _ = try await database.observe(FetchRequest("persn")) }
            #expect(unknown?.kind == .unknownEntity)
        }
    }
}
