import Foundation
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

        /// The snapshots once there are `count`, waiting at most `timeout`.
        func wait(for count: Int, timeout: Duration = .seconds(10)) async throws -> [LiveSnapshot] {
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

    @Test(arguments: ChangeTracking.Mechanism.allCases)
    func observersGetEachChangeOfTheirRegion(_ mechanism: ChangeTracking.Mechanism) async throws {
        try await TestDatabase.withDatabase { url in
            let setup = try Connection(url: url)
            try setup.executeScript(ChangeTrackingTests.schema)
            try ChangeTrackingTests.enable(mechanism, on: setup)
            let database = try Database(url: url, maxConnections: 2)
            defer { database.close() }
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
            #expect(updated.last?.difference.isEmpty == true)
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
