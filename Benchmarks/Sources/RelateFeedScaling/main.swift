import Foundation
import Relate
import RelatePostgres

/// How change feeds scale (issue 27, item 4): for each mechanism (triggers and `NOTIFY`, or
/// a temporary logical replication slot per feed) and 1, 4, 16 and 64 feeds, each feed a
/// context of its own on a thread of its own, while `pgbench` commits single-row updates at a
/// steady rate: the server's CPU per row pgbench committed (all the server's work, the
/// feeds' included, over the updates counted in the table) and the delay from a probe's commit to its
/// delivery on every feed.
///
///     RelateFeedScaling URL POSTMASTER_PID PGBENCH RATE SECONDS [FEEDS…]
///
/// `scripts/feed-scaling` starts the server (wal_level=logical, enough slots) and runs it.
let arguments = CommandLine.arguments
guard arguments.count >= 6, let postmaster = Int32(arguments[2]), let rate = Int(arguments[4]), let seconds = Int(arguments[5]) else {
    FileHandle.standardError.write(Data("usage: RelateFeedScaling URL POSTMASTER_PID PGBENCH RATE SECONDS [FEEDS…]\n".utf8))
    exit(2)
}
let url = arguments[1]
let pgbench = arguments[3]
let feedCounts = arguments.count > 6 ? arguments.dropFirst(6).compactMap { Int($0) } : [1, 4, 16, 64]
let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))

/// CPU seconds the server has used: its processes alive now, and (through the postmaster's
/// `cutime`/`cstime`) those that ended.
func serverCPU() -> Double {
    func fields(_ pid: String) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ")
    }
    var total = 0.0
    for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
        guard let f = fields(pid), f.count > 14 else { continue }
        // After ")": state, ppid, …; utime is field 14 of stat (index 11 here), stime 15, cutime 16, cstime 17.
        let ppid = Int32(f[1]) ?? 0
        if Int32(pid) == postmaster {
            total += f[11...14].compactMap { Double($0) }.reduce(0, +)
        } else if ppid == postmaster {
            total += f[11...12].compactMap { Double($0) }.reduce(0, +)
        }
    }
    return total / ticks
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

final class Probes: @unchecked Sendable {
    private let lock = NSLock()
    private var sent: [Int: ContinuousClock.Instant] = [:]
    private var delays: [Double] = []
    func send(_ id: Int) { lock.withLock { sent[id] = .now } }
    func received(_ id: Int) {
        let now = ContinuousClock.now
        lock.withLock {
            if let at = sent[id] {
                let (s, a) = (now - at).components
                delays.append(Double(s) * 1000 + Double(a) / 1e15)
            }
        }
    }
    var all: [Double] { lock.withLock { delays } }
}

func runPgbench(rate: Int, seconds: Int, script: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pgbench)
    process.arguments = ["-n", "-f", script, "-R", "\(rate)", "-T", "\(seconds)", "-c", "2", "-j", "1", url]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}

let setup = try Connection(url: url)
try setup.executeScript("""
    DROP TABLE IF EXISTS item, probe;
    CREATE TABLE item (id int PRIMARY KEY, value int NOT NULL);
    INSERT INTO item SELECT i, 0 FROM generate_series(1, 10000) i;
    CREATE TABLE probe (id int PRIMARY KEY);
    """)
let script = NSTemporaryDirectory() + "relate-feed-scaling-\(getpid()).sql"
try "\\set id random(1, 10000)\nUPDATE item SET value = value + 1 WHERE id = :id;\n".write(toFile: script, atomically: true, encoding: .utf8)
defer { try? FileManager.default.removeItem(atPath: script) }

print("mechanism | feeds | commits/s | server CPU per committed row | probe commit → delivered on every feed: median, p99 | probes lost")
for mechanism in ChangeTracking.Mechanism.allCases {
    switch mechanism {
    case .triggers: _ = try ChangeTracking.enable(on: setup)
    case .logicalDecoding: _ = try ChangeTracking.enable(logicalDecodingOn: setup)
    }
    for count in feedCounts {
        let stop = Locked(false)
        let probes = Probes()
        let ready = DispatchSemaphore(value: 0)
        var threads: [Thread] = []
        for _ in 0..<count {
            let thread = Thread {
                do {
                    let context = try DatabaseContext(url: url)
                    try context.startTrackingChanges(using: mechanism)
                    ready.signal()
                    while !stop.value {
                        for change in try context.waitForChanges(timeout: .milliseconds(200)) where change.entity == "probe" {
                            if let id = change.primaryKey.first as? Int { probes.received(id) }
                        }
                    }
                } catch {
                    print("feed: \(error)")
                    ready.signal()
                }
            }
            thread.start()
            threads.append(thread)
        }
        for _ in 0..<count { ready.wait() }
        let probeWriter = try Connection(url: url)
        _ = try probeWriter.execute("TRUNCATE probe")
        let statsBefore = try probeWriter.query("SELECT sum(value)::int8 FROM item")[0].decode(Int.self, at: 0)
        let cpuBefore = serverCPU()
        let started = ContinuousClock.now
        let load = try runPgbench(rate: rate, seconds: seconds, script: script)
        var probeCount = 0
        while ContinuousClock.now - started < .seconds(seconds) {
            probeCount += 1
            probes.send(probeCount)
            _ = try probeWriter.execute("INSERT INTO probe VALUES ($1)", [probeCount])
            Thread.sleep(forTimeInterval: 0.1)
        }
        load.waitUntilExit()
        let elapsed = ContinuousClock.now - started
        let cpu = serverCPU() - cpuBefore
        let statsAfter = try probeWriter.query("SELECT sum(value)::int8 FROM item")[0].decode(Int.self, at: 0)
        // Deliveries still in flight get two seconds.
        Thread.sleep(forTimeInterval: 2)
        stop.value = true
        let commits = statsAfter - statsBefore
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let delays = probes.all
        let expected = probeCount * count
        print(String(
            format: "%@ | %d | %.0f | %.0f µs | %.1f ms, %.1f ms | %d of %d",
            mechanism.rawValue, count, Double(commits) / elapsedSeconds, cpu / Double(max(commits, 1)) * 1e6,
            percentile(delays, 0.5), percentile(delays, 0.99), expected - delays.count, expected))
        for thread in threads { while !thread.isFinished { Thread.sleep(forTimeInterval: 0.05) } }
        probeWriter.close()
    }
    switch mechanism {
    case .triggers: try ChangeTracking.disable(on: setup)
    case .logicalDecoding: try ChangeTracking.disable(logicalDecodingOn: setup)
    }
}

/// A value behind a lock, for the feeds' stop flag.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
