import Foundation
import Relate
import RelatePostgres

/// Change tracking measured (issue "A live object graph"): for each mechanism, the latency
/// from another client's commit to the change applied in a context, the rate at which a
/// context applies 10,000 committed row changes against a loop that only reads the same
/// notifications or stream, and what tracking costs writers. In a database of its own,
/// created and dropped here; the writer commits with `synchronous_commit = on` (a server's
/// default: logical decoding sends what is flushed).
package struct ChangeTrackingBenchmark {
    package static let rows = 10_000

    package static func run(updates: Int) throws -> [String] {
        let database = try Fixture.ownDatabase("bench_changes")
        defer { database.drop() }
        let writer = database.connection
        try writer.executeScript("""
            CREATE TABLE item (id int PRIMARY KEY, value int NOT NULL, label text NOT NULL);
            INSERT INTO item SELECT i, 0, 'item ' || i FROM generate_series(1, \(rows)) i;
            SET synchronous_commit = on;
            """)
        var lines: [String] = []
        let untracked = try writerCost(writer, updates: updates)
        for mechanism in ChangeTracking.Mechanism.allCases {
            switch mechanism {
            case .triggers: try ChangeTracking.enable(on: writer)
            case .logicalDecoding: try ChangeTracking.enable(logicalDecodingOn: writer)
            }
            let context = try DatabaseContext(connection: try Connection(sameAs: writer))
            try context.startTrackingChanges(using: mechanism)
            _ = try context.fetch("item")
            let latencies = try latency(context, writer: writer, updates: 1_000)
            let (applied, raw) = try throughput(context, writer: writer, mechanism: mechanism)
            let tracked = try writerCost(writer, updates: updates)
            lines.append(String(
                format: "%@: commit → applied median %.2f ms, p99 %.2f ms (1,000 single-row updates); "
                    + "10,000 row changes applied %.0f rows/s, read only (raw) %.0f rows/s, ratio %.2f×; "
                    + "writer %d single-row updates %.0f ms tracked vs %.0f ms untracked, %.2f×",
                mechanism.rawValue, latencies.median, latencies.p99, applied, raw, raw / applied,
                updates, tracked, untracked, tracked / untracked))
            switch mechanism {
            case .triggers: try ChangeTracking.disable(on: writer)
            case .logicalDecoding: try ChangeTracking.disable(logicalDecodingOn: writer)
            }
        }
        return lines
    }

    /// Milliseconds from sending each update to `processChanges()` answering it.
    static func latency(_ context: DatabaseContext, writer: Connection, updates: Int) throws -> (median: Double, p99: Double) {
        var times: [Double] = []
        for update in 0..<updates {
            let start = ContinuousClock.now
            try writer.execute("UPDATE item SET value = value + 1 WHERE id = $1", [update % rows + 1])
            var changes: [Change] = []
            while changes.isEmpty { changes = try context.waitForChanges(timeout: .seconds(5)) }
            times.append(milliseconds(ContinuousClock.now - start))
        }
        times.sort()
        return (times[times.count / 2], times[times.count * 99 / 100])
    }

    /// Rows per second: 10,000 row changes (1,000 transactions of 10 single-row updates)
    /// committed, then applied by the context holding the rows; and read by a second feed
    /// connection that only reads what arrives (notifications or the replication stream).
    static func throughput(_ context: DatabaseContext, writer: Connection, mechanism: ChangeTracking.Mechanism) throws -> (applied: Double, raw: Double) {
        let reader = try Connection(sameAs: writer, adding: mechanism == .logicalDecoding ? ["replication": "database"] : [:])
        switch mechanism {
        case .triggers: try reader.execute("LISTEN \(ChangeTracking.channel)")
        case .logicalDecoding: try reader.startLogicalReplication(slot: "bench_raw_\(reader.backendProcessID)", publications: [ChangeTracking.publication])
        }
        try commitTenThousandChanges(writer)
        let appliedStart = ContinuousClock.now
        var applied = 0
        while applied < rows {
            let changes = try context.waitForChanges(timeout: .seconds(5))
            guard !changes.isEmpty else { break }
            applied += changes.count
        }
        let appliedTime = ContinuousClock.now - appliedStart
        let rawStart = ContinuousClock.now
        var commits = 0
        while commits < rows / 10 {
            switch mechanism {
            case .triggers:
                commits += try reader.notifications().count
            case .logicalDecoding:
                while let message = try reader.readReplicationMessage() {
                    if case .data(_, _, let payload) = message, payload.first == UInt8(ascii: "C") { commits += 1 }
                }
            }
            if commits < rows / 10 { _ = try reader.waitForInput(timeout: .seconds(5)) }
        }
        let rawTime = ContinuousClock.now - rawStart
        return (Double(applied) / seconds(appliedTime), Double(rows) / seconds(rawTime))
    }

    private static func commitTenThousandChanges(_ writer: Connection) throws {
        for transaction in 0..<(rows / 10) {
            try writer.transaction {
                for row in 0..<10 {
                    try writer.execute("UPDATE item SET value = value + 1 WHERE id = $1", [transaction * 10 + row + 1])
                }
            }
        }
    }

    /// Milliseconds for `updates` autocommitted single-row updates (pgbench's simple update).
    static func writerCost(_ writer: Connection, updates: Int) throws -> Double {
        var times: [Double] = []
        for _ in 0..<5 {
            let start = ContinuousClock.now
            for update in 0..<updates {
                try writer.execute("UPDATE item SET value = value + 1 WHERE id = $1", [(update * 7919) % rows + 1])
            }
            times.append(milliseconds(ContinuousClock.now - start))
        }
        return times.sorted()[2]
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    private static func seconds(_ duration: Duration) -> Double { milliseconds(duration) / 1000 }
}
