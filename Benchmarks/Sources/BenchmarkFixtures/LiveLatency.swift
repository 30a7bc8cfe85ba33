import Foundation
import Relate
import RelatePostgres

/// Live queries measured (issue "Live queries and Observation"): for each mechanism, the
/// time from another client's commit to the updated answer — in a context (`liveFetch`,
/// `waitForChanges`, then `objects`) and in a server (`database.observe`'s next snapshot) —
/// and the statements a context sends for commits outside the request's region. In a
/// database of its own, created and dropped here; the writer commits with
/// `synchronous_commit = on` (a server's default: logical decoding sends what is flushed).
package enum LiveLatencyBenchmark {
    static let rows = 1_000
    static let request = FetchRequest("item", where: Key("value") >= 0, orderBy: [.ascending("id")], limit: 50)

    package static func run(commits: Int) async throws -> [String] {
        let own = try Fixture.ownDatabase("bench_live")
        defer { own.drop() }
        let writer = own.connection
        try writer.executeScript("""
            CREATE TABLE item (id int PRIMARY KEY, value int NOT NULL, label text NOT NULL);
            INSERT INTO item SELECT i, 0, 'item ' || i FROM generate_series(1, \(rows)) i;
            CREATE TABLE other (id int PRIMARY KEY, value int NOT NULL);
            INSERT INTO other SELECT i, 0 FROM generate_series(1, 100) i;
            SET synchronous_commit = on;
            """)
        var lines: [String] = []
        for mechanism in ChangeTracking.Mechanism.allCases {
            switch mechanism {
            case .triggers: try ChangeTracking.enable(on: writer)
            case .logicalDecoding: try ChangeTracking.enable(logicalDecodingOn: writer)
            }
            let inContext = try contextLatency(writer: writer, mechanism: mechanism, commits: commits)
            let inServer = try await observeLatency(url: own.url, writer: writer, commits: commits)
            lines.append(String(
                format: "%@: commit → LiveResults median %.2f ms, p99 %.2f ms; commit → observe snapshot median %.2f ms, p99 %.2f ms "
                    + "(%d single-row updates in the answer); %d commits outside the region: %d statements for the live answer",
                mechanism.rawValue, inContext.median, inContext.p99, inServer.median, inServer.p99, commits, commits, inContext.outside))
            switch mechanism {
            case .triggers: try ChangeTracking.disable(on: writer)
            case .logicalDecoding: try ChangeTracking.disable(logicalDecodingOn: writer)
            }
        }
        return lines
    }

    /// Milliseconds from each commit to `objects` answering it; and the statements the live
    /// answer sends after commits to another table (its region is `item`'s).
    static func contextLatency(
        writer: Connection, mechanism: ChangeTracking.Mechanism, commits: Int
    ) throws -> (median: Double, p99: Double, outside: Int) {
        let context = try DatabaseContext(connection: try Connection(sameAs: writer))
        try context.startTrackingChanges(using: mechanism)
        let live = try context.liveFetch(request)
        _ = try live.objects
        var times: [Double] = []
        for commit in 0..<commits {
            let start = ContinuousClock.now
            try writer.execute("UPDATE item SET value = value + 1 WHERE id = $1", [commit % 50 + 1])
            while !live.needsUpdate { _ = try context.waitForChanges(timeout: .seconds(5)) }
            _ = try live.objects
            times.append(milliseconds(ContinuousClock.now - start))
        }
        for commit in 0..<commits {
            try writer.execute("UPDATE other SET value = value + 1 WHERE id = $1", [commit % 100 + 1])
        }
        var seen = 0
        while seen < commits {
            let changes = try context.waitForChanges(timeout: .seconds(5))
            if changes.isEmpty { break }
            seen += changes.count
        }
        let before = context.connection.roundTrips
        _ = try live.objects
        let outside = context.connection.roundTrips - before
        times.sort()
        return (times[times.count / 2], times[times.count * 99 / 100], outside)
    }

    /// Milliseconds from each commit to the next snapshot of `database.observe`.
    static func observeLatency(url: String, writer: Connection, commits: Int) async throws -> (median: Double, p99: Double) {
        let database = try Database(url: url, maxConnections: 2)
        defer { database.close() }
        var snapshots = try await database.observe(request).makeAsyncIterator()
        _ = try await snapshots.next()
        var times: [Double] = []
        for commit in 0..<commits {
            let start = ContinuousClock.now
            try writer.execute("UPDATE item SET value = value + 1 WHERE id = $1", [commit % 50 + 1])
            _ = try await snapshots.next()
            times.append(milliseconds(ContinuousClock.now - start))
        }
        times.sort()
        return (times[times.count / 2], times[times.count * 99 / 100])
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}
