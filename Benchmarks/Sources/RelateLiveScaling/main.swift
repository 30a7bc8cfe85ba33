import Foundation
import Relate
import RelatePostgres
import Synchronization

/// Live queries under row-level security at scale (issue 37, item 5): 10,000 observers of
/// `database.observe` in 1,000 groups of ten, over 100 tenants (ten requests each, a range
/// of `rank`), while `pgbench` commits single-row updates of random rows at each rate given
/// (of the title, or with `RELATE_LIVE_COLUMN=rank` of the rank the conditions read),
/// and a probe writer updates a random row 20 times a second with a title that names the
/// probe, timed from before its commit to each of its group's observers receiving it.
///
/// `tenants`: each group is read as `Principal(role: "bench_tenant", settings:
/// ["app.tenant": t])` under a policy `tenant = current_setting('app.tenant')::int`.
/// `one`: the same requests with `tenant = t` in their condition, row-level security off,
/// read as the pool's role: the workload under one principal.
///
/// Reports per rate: commits a second; Relate's CPU per commit (the whole process:
/// the hub, its reads, 10,000 consumers; not the probe writer, which stands for another
/// client as pgbench's writers do: it runs on a thread of its own, whose CPU is measured
/// and printed last, per commit); the CPU of PostgreSQL's backends that serve
/// Relate (the pool's and the feed's, not the writers' — under triggers the trigger's own
/// cost is in the writers') per commit; Relate's statements per commit
/// (`pg_stat_statements`, every role but the writers'); deliveries (snapshots after the
/// first) a second and per CPU second of the process; commit-to-snapshot latency p50/p95/
/// p99 over every observer of every probe; resident memory at the end and its peak. With
/// RELATE_LIVE_WINDOWS=n, n windows a rate, a row each. Once the writers stop, every
/// stream's last answer is compared with a fresh read of its group as its principal
/// (`quiet: N of 10000 streams hold what a fresh read answers (R rows)`): a change lost on the way
/// leaves a stream behind. `scripts/live-scaling gate` judges the rows (Benchmarks/live-gate.awk).
///
///     RelateLiveScaling URL WRITER_URL PGBENCH triggers|logical tenants|one SECONDS RATE…
///
/// `scripts/live-scaling` starts the server (wal_level=logical, pg_stat_statements) and runs it.
let arguments = CommandLine.arguments
guard arguments.count >= 8, let seconds = Int(arguments[6]), let mechanism = ChangeTracking.Mechanism(rawValue: arguments[4] == "logical" ? "logicalDecoding" : arguments[4]),
    ["tenants", "one"].contains(arguments[5])
else {
    FileHandle.standardError.write(Data("usage: RelateLiveScaling URL WRITER_URL PGBENCH triggers|logical tenants|one SECONDS RATE…\n".utf8))
    exit(2)
}
let (url, writerURL, pgbench) = (arguments[1], arguments[2], arguments[3])
let underPrincipals = arguments[5] == "tenants"
let rates = arguments.dropFirst(7).compactMap { Int($0) }
/// RELATE_LIVE_WINDOWS: windows of SECONDS measured one after another at each rate, a row
/// each (the gate's noise band is their spread).
let windows = max(1, Int(ProcessInfo.processInfo.environment["RELATE_LIVE_WINDOWS"] ?? "") ?? 1)
let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
let (tenants, requestsPerTenant, observersPerGroup, rowsPerTenant) = (100, 10, 10, 100)

/// What the consumers and the probe writer share.
final class Tally: Sendable {
    let deliveries = Atomic<Int>(0)
    private let sent = Mutex<[Int: ContinuousClock.Instant]>([:])
    private let delays = Mutex<[Double]>([])
    func send(_ probe: Int, at instant: ContinuousClock.Instant) { sent.withLock { $0[probe] = instant } }
    func received(_ probe: Int) {
        let now = ContinuousClock.now
        guard let at = sent.withLock({ $0[probe] }) else { return }
        let (s, a) = (now - at).components
        delays.withLock { $0.append(Double(s) * 1000 + Double(a) / 1e15) }
    }
    /// The delays so far, forgotten with the probes sent, for the next rate.
    func take() -> [Double] {
        sent.withLock { $0 = [:] }
        return delays.withLock { all in defer { all = [] }; return all }
    }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func processCPU() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// CPU seconds the calling thread has used.
@Sendable func threadCPU() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// One window's probes, from `first + 1` on, 20 a second from `started` for `seconds`, each
/// a random row of `1...rows`: on a thread of their own (with a connection of their own),
/// whose CPU is the writer's, not Relate's. Answers the probes sent and the CPU seconds used.
func probeWindow(
    url: String, tally: Tally, first: Int, rows: Int, started: ContinuousClock.Instant, seconds: Int
) async throws -> (probes: Int, cpu: Double) {
    try await withCheckedThrowingContinuation { done in
        Thread {
            let cpuBefore = threadCPU()
            do {
                let writer = try Connection(url: url)
                var probes = 0
                while ContinuousClock.now - started < .seconds(seconds) {
                    probes += 1
                    tally.send(first + probes, at: .now)
                    try writer.execute("UPDATE document SET title = $1 WHERE id = $2", ["probe-\(first + probes)", Int.random(in: 1...rows)])
                    let (wait, attoseconds) = (started + .milliseconds(50 * probes) - .now).components
                    if wait >= 0, attoseconds >= 0 { Thread.sleep(forTimeInterval: Double(wait) + Double(attoseconds) / 1e18) }
                }
                done.resume(returning: (probes, threadCPU() - cpuBefore))
            } catch {
                done.resume(throwing: error)
            }
        }.start()
    }
}

func residentMegabytes() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = text.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
    else { return 0 }
    return pages * 4096 / 1_048_576
}

func peakMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// CPU seconds process `pid` has used (user and system), 0 once it has gone.
func cpu(of pid: Int) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    return fields.count > 12 ? (fields[11...12].compactMap { Double($0) }.reduce(0, +)) / ticks : 0
}

/// The backends that serve Relate: the pool's connections and the feed's (a walsender for
/// logical decoding), by process id, with their CPU so far.
func relateBackends(_ admin: Connection) throws -> [Int: Double] {
    let rows = try admin.query("SELECT pid FROM pg_stat_activity WHERE usename = 'relate' OR backend_type = 'walsender'")
    return Dictionary(uniqueKeysWithValues: try rows.map { row in let pid = try row.decode(Int.self, at: 0); return (pid, cpu(of: pid)) })
}

/// Statements run by every role but the writers' (Relate's: its pool and its feed).
func relateStatements(_ admin: Connection) throws -> Int {
    try admin.query("""
        SELECT coalesce(sum(s.calls), 0)::int8 FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
         WHERE r.rolname <> 'bench_writer'
        """)[0].decode(Int.self, at: 0)
}

let admin = try Connection(url: writerURL)
try admin.executeScript("""
    CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
    DROP TABLE IF EXISTS document;
    DO $$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'bench_tenant') THEN CREATE ROLE bench_tenant NOLOGIN; END IF;
    END $$;
    CREATE TABLE document (id int PRIMARY KEY, tenant int NOT NULL, rank int NOT NULL, title text NOT NULL);
    INSERT INTO document SELECT i, (i - 1) % \(tenants) + 1, (i - 1) / \(tenants), 'd' || i FROM generate_series(1, \(tenants * rowsPerTenant)) i;
    CREATE INDEX ON document (tenant, rank);
    GRANT SELECT ON document TO bench_tenant;
    CREATE POLICY tenant ON document USING (tenant = current_setting('app.tenant')::int);
    """)
// RELATE_LIVE_IDENTITY=full: logical decoding sends the row before each update, and the
// feed tells which columns it changed (as the triggers always do), at the cost of more WAL:
// under 100 tenants as `relate enable --logical --full-identity-under-row-security` sets it.
let fullIdentity = ProcessInfo.processInfo.environment["RELATE_LIVE_IDENTITY"] == "full"
if fullIdentity && !underPrincipals { try admin.execute("ALTER TABLE document REPLICA IDENTITY FULL") }
try admin.execute("VACUUM ANALYZE document")
if underPrincipals { try admin.execute("ALTER TABLE document ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY") }
switch mechanism {
case .triggers: _ = try ChangeTracking.enable(on: admin)
case .logicalDecoding: _ = try ChangeTracking.enable(logicalDecodingOn: admin, fullIdentityUnderRowSecurity: fullIdentity)
}
// What the writers change: the title (which no request or policy reads: only the group
// holding the row reads again), or with RELATE_LIVE_COLUMN=rank the rank the requests'
// conditions read (every principal's groups decide whether the row came or went).
let movesRank = ProcessInfo.processInfo.environment["RELATE_LIVE_COLUMN"] == "rank"
let script = NSTemporaryDirectory() + "relate-live-scaling-\(getpid()).sql"
// The rows moved are the upper half; the probes change the lower half, whose rows stay in
// their group (a probe's row moved later would be first seen by another group's observers).
let probedRows = movesRank ? tenants * rowsPerTenant / 2 : tenants * rowsPerTenant
try ((movesRank ? "\\set id random(\(probedRows + 1), \(tenants * rowsPerTenant))\n" : "\\set id random(1, \(tenants * rowsPerTenant))\n")
    + (movesRank
        ? "\\set rank random(0, \(rowsPerTenant - 1))\nUPDATE document SET rank = :rank WHERE id = :id;\n"
        : "UPDATE document SET title = md5(random()::text) WHERE id = :id;\n"))
    .write(toFile: script, atomically: true, encoding: .utf8)
defer { try? FileManager.default.removeItem(atPath: script) }

/// A group's request, the principal it reads as (`nil`: the pool's role), and the last
/// answer each of its observers received.
struct Group {
    let request: FetchRequest
    let principal: Principal?
    let last: [Last]
}

/// An observer's last answer.
final class Last: Sendable {
    let rows = Mutex<[LiveRow]>([])
}

let database = try Database(url: url, maxConnections: 4)
let tally = Tally()
let subscribeStart = ContinuousClock.now
var consumers: [Task<Void, Never>] = []
var groups: [Group] = []
for tenant in 1...tenants {
    for range in 0..<requestsPerTenant {
        let low = range * rowsPerTenant / requestsPerTenant
        let ranks = Key("rank") >= low && Key("rank") < low + rowsPerTenant / requestsPerTenant
        let group = Group(
            request: FetchRequest("document", where: underPrincipals ? ranks : Key("tenant") == tenant && ranks, orderBy: [.ascending("id")]),
            principal: underPrincipals ? Principal(role: "bench_tenant", settings: ["app.tenant": "\(tenant)"]) : nil,
            last: (0..<observersPerGroup).map { _ in Last() })
        groups.append(group)
        for observer in 0..<observersPerGroup {
            let stream =
                if let principal = group.principal { try await database.observe(group.request, as: principal) } else {
                    try await database.observe(group.request)
                }
            consumers.append(Task {
                var seen = Set<Int>()
                var first = true
                do {
                    for try await snapshot in stream {
                        group.last[observer].rows.withLock { $0 = snapshot.rows }
                        if first {
                            first = false
                            continue
                        }
                        tally.deliveries.add(1, ordering: .relaxed)
                        // What a server pushing changes sends on: the rows that joined or changed.
                        for changed in snapshot.difference.inserted + snapshot.difference.updated {
                            let row = snapshot.rows[changed.index]
                            if let title = row.values["title"] as? String, title.hasPrefix("probe-"), let probe = Int(title.dropFirst(6)),
                                seen.insert(probe).inserted
                            {
                                tally.received(probe)
                            }
                        }
                    }
                } catch {
                    print("an observer's stream failed: \(error)")
                }
            })
        }
    }
}
let subscribed = ContinuousClock.now - subscribeStart
print(String(
    format: "%@, %@, writers change the %@: %d observers in %d groups subscribed in %.1f s; resident %.0f MB",
    mechanism.rawValue + (fullIdentity && mechanism == .logicalDecoding ? " (replica identity FULL)" : ""), underPrincipals ? "100 tenants (a principal each)" : "one principal", movesRank ? "rank" : "title", consumers.count,
    tenants * requestsPerTenant,
    Double(subscribed.components.seconds) + Double(subscribed.components.attoseconds) / 1e18, residentMegabytes()))
print("rate | commits/s | Relate CPU per commit | PostgreSQL CPU for Relate per commit | statements per commit | deliveries/s | deliveries per CPU second | latency p50 / p95 / p99 | probes seen | resident / peak | probe writer CPU per commit")

var probe = 0
for rate in rates {
    try await Task.sleep(for: .seconds(2))
    for _ in 0..<windows {
        _ = tally.take()
        let backendsBefore = try relateBackends(admin)
        let statementsBefore = try relateStatements(admin)
        let deliveriesBefore = tally.deliveries.load(ordering: .relaxed)
        let cpuBefore = processCPU()
        let started = ContinuousClock.now
        let load = Process()
        load.executableURL = URL(fileURLWithPath: pgbench)
        load.arguments = ["-n", "-f", script, "-R", "\(rate)", "-T", "\(seconds)", "-c", "2", "-j", "1", writerURL]
        let output = Pipe()
        load.standardOutput = output
        load.standardError = FileHandle.nullDevice
        try load.run()
        let (probes, probeCPU) = try await probeWindow(url: writerURL, tally: tally, first: probe, rows: probedRows, started: started, seconds: seconds)
        probe += probes
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        load.waitUntilExit()
        // What is still being read gets a moment; the window ends when the last answer could be in.
        try await Task.sleep(for: .seconds(1))
        let elapsed = ContinuousClock.now - started
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpu = processCPU() - cpuBefore - probeCPU
        let deliveries = tally.deliveries.load(ordering: .relaxed) - deliveriesBefore
        let statements = try relateStatements(admin) - statementsBefore
        var serverCPU = 0.0
        for (pid, cpuNow) in try relateBackends(admin) { serverCPU += cpuNow - (backendsBefore[pid] ?? 0) }
        let processed = text.split(separator: "\n").first { $0.hasPrefix("number of transactions actually processed:") }
            .flatMap { Int($0.split(separator: ":")[1].split(separator: "/")[0].trimmingCharacters(in: .whitespaces)) } ?? 0
        let commits = processed + probes
        let delays = tally.take().sorted()
        let expected = probes * observersPerGroup
        print(String(
            format: "%d | %.0f | %.3f ms | %.3f ms | %.2f | %.0f | %.0f | %.1f / %.1f / %.1f ms | %d of %d | %.0f / %.0f MB | %.3f ms",
            rate, Double(commits) / Double(seconds), cpu / Double(max(commits, 1)) * 1000, serverCPU / Double(max(commits, 1)) * 1000,
            Double(statements) / Double(max(commits, 1)), Double(deliveries) / elapsedSeconds, Double(deliveries) / max(cpu, 0.001),
            percentile(delays, 0.5), percentile(delays, 0.95), percentile(delays, 0.99), delays.count, expected, residentMegabytes(),
            peakMegabytes(), probeCPU / Double(max(commits, 1)) * 1000))
    }
}
// Quiet: every stream's last answer must be what its principal reads now (a change lost on
// the way would leave one behind for good; one late is waited for, up to 10 s).
var behind: [String] = []
var rowsCompared = 0
let quietDeadline = ContinuousClock.now + .seconds(10)
repeat {
    try await Task.sleep(for: .seconds(1))
    behind = []
    rowsCompared = 0
    for (index, group) in groups.enumerated() {
        let read: @Sendable (DatabaseContext) throws -> [String] = { context in
            try context.fetch(group.request).map { "\(try $0.value(forKey: "id") ?? "") \(try $0.value(forKey: "title") ?? "")" }
        }
        let fresh = if let principal = group.principal { try await database.read(as: principal, read) } else { try await database.read(read) }
        rowsCompared += fresh.count * group.last.count
        for (observer, last) in group.last.enumerated() {
            let rows = last.rows.withLock { $0 }.map { "\($0.values["id"] ?? "") \($0.values["title"] ?? "")" }
            if rows != fresh { behind.append("group \(index) observer \(observer): stream \(rows.count) rows, read \(fresh.count)") }
        }
    }
} while !behind.isEmpty && ContinuousClock.now < quietDeadline
// The rows compared say that the check was not of empty answers.
print("quiet: \(groups.count * observersPerGroup - behind.count) of \(groups.count * observersPerGroup) streams hold what a fresh read answers (\(rowsCompared) rows)")
for line in behind.prefix(5) { print("  behind: \(line)") }
for consumer in consumers { consumer.cancel() }
database.close()
switch mechanism {
case .triggers: _ = try ChangeTracking.disable(on: admin)
case .logicalDecoding: try ChangeTracking.disable(logicalDecodingOn: admin)
}
