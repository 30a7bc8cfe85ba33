import Foundation
import Relate
import RelatePostgres

/// Many live queries on one `Database` under a steady write load (issue "Live queries and
/// Observation"): 1,000 observed requests (100 distinct ones, each observed ten times) of
/// `item`; a writer commits single-row updates at a steady rate, half to `item`, half to a
/// table no request reads. Reports the statements the database ran per commit besides the
/// writer's (`pg_stat_database.xact_commit`: every read of an answer is one), the process's
/// CPU time and its resident memory at the start and the end, then the statements commits
/// outside every region cost. In a database of its own.
package enum LiveSoakBenchmark {
    package static func run(seconds: Int, commitsPerSecond: Int = 100) async throws -> [String] {
        var lines: [String] = []
        for mechanism in ChangeTracking.Mechanism.allCases {
            lines.append(mechanism.rawValue + ": " + (try await run(mechanism, seconds: seconds, commitsPerSecond: commitsPerSecond)))
        }
        return lines
    }

    static func run(_ mechanism: ChangeTracking.Mechanism, seconds: Int, commitsPerSecond: Int) async throws -> String {
        let own = try Fixture.ownDatabase("bench_soak")
        defer { own.drop() }
        let writer = own.connection
        let name = own.name
        // Counted from the server's default database, so that counting adds nothing to them.
        let counter = try Connection(url: try Fixture.url())
        try writer.executeScript("""
            CREATE TABLE item (id int PRIMARY KEY, value int NOT NULL);
            INSERT INTO item SELECT i, 0 FROM generate_series(1, 1000) i;
            CREATE TABLE other (id int PRIMARY KEY, value int NOT NULL);
            INSERT INTO other SELECT i, 0 FROM generate_series(1, 1000) i;
            SET synchronous_commit = on;
            """)
        switch mechanism {
        case .triggers: try ChangeTracking.enable(on: writer)
        case .logicalDecoding: try ChangeTracking.enable(logicalDecodingOn: writer)
        }
        let database = try Database(url: own.url, maxConnections: 4)
        defer { database.close() }
        var consumers: [Task<Void, Never>] = []
        for subscriber in 0..<1_000 {
            let low = subscriber % 100 * 10 + 1
            let stream = try await database.observe(
                FetchRequest("item", where: Key("id") >= low && Key("id") < low + 10, orderBy: [.ascending("id")]))
            consumers.append(Task { do { for try await _ in stream {} } catch {} })
        }
        defer { for consumer in consumers { consumer.cancel() } }
        let startMemory = residentMegabytes()
        let startCPU = cpuSeconds()
        let commitsBefore = try transactions(counter, name)
        let interval = 1.0 / Double(commitsPerSecond)
        let start = ContinuousClock.now
        var commits = 0
        var inRegion = 0
        // Resident memory at each tenth of the run: flat, or not.
        var memory: [Double] = []
        while ContinuousClock.now - start < .seconds(seconds) {
            if ContinuousClock.now - start >= .seconds(seconds) / 10 * memory.count { memory.append(residentMegabytes()) }
            let table = commits % 2 == 0 ? "item" : "other"
            if table == "item" { inRegion += 1 }
            try writer.execute("UPDATE \(table) SET value = value + 1 WHERE id = $1", [commits * 7 % 1000 + 1])
            commits += 1
            let due = start + .milliseconds(Int(Double(commits) * interval * 1000))
            if due > ContinuousClock.now { try await Task.sleep(until: due) }
        }
        let statements = try await settled(counter, name) - commitsBefore - commits
        // Then commits outside every region alone: what they cost the observers.
        let outsideBefore = try await settled(counter, name)
        let outsideCommits = commitsPerSecond * 5
        for commit in 0..<outsideCommits {
            try writer.execute("UPDATE other SET value = value + 1 WHERE id = $1", [commit % 1000 + 1])
        }
        let outside = try await settled(counter, name) - outsideBefore - outsideCommits
        return String(
            format: "%d observed requests (100 distinct) for %d s, %d commits (%d touching them): %.2f statements a commit in "
                + "their region besides the writer's; CPU %.1f s; resident memory %.0f MB at the start, %.0f MB at the end "
                + "(each tenth of the run: \(memory.map { String(format: "%.0f", $0) }.joined(separator: " ")) MB); "
                + "then %d commits outside every region: %d statements besides the writer's",
            consumers.count, seconds, commits, inRegion, Double(statements) / Double(max(1, inRegion)), cpuSeconds() - startCPU,
            startMemory, residentMegabytes(), outsideCommits, outside)
    }

    /// Transactions committed in database `name`, once the answers still being read are done
    /// and every backend's statistics are in: an idle backend flushes them within 10 s.
    private static func settled(_ admin: Connection, _ name: String) async throws -> Int {
        try await Task.sleep(for: .seconds(12))
        return try transactions(admin, name)
    }

    /// Transactions committed in database `name` so far.
    private static func transactions(_ admin: Connection, _ name: String) throws -> Int {
        try admin.execute("SELECT pg_stat_clear_snapshot()")
        return try admin.query("SELECT xact_commit FROM pg_stat_database WHERE datname = $1", [name])[0].decode(Int.self, at: 0)
    }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    private static func residentMegabytes() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return pages * 4096 / 1_048_576
    }
}
