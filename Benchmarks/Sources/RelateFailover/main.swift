import Foundation
import Relate
import RelatePostgres
import Synchronization

/// The load `scripts/patroni-failover` drives through a Patroni cluster while it switches the
/// leader over and kills it: 16 tasks writing through one `Database` (a multi-host URL with
/// `target_session_attrs=read-write`), each unit one row `(task, seq)`. Afterwards it checks
/// every unit against the table and prints the figures.
///
///     RelateFailover URL SECONDS EVENTS_FILE
///
/// `EVENTS_FILE` is where the script writes one line per event it causes
/// (`<unix time> switchover|kill`): the driver prints, for each, how long until the next
/// write succeeded. Meanwhile a `database.observe` stream and a live `DatabaseContext`
/// (change tracking by triggers, `liveFetch`) follow task 1's last five rows through every
/// switch: the driver prints how long after each event they showed a row written after it,
/// and checks that both end equal to a fresh read. Exit status 0 when every check holds, 1
/// otherwise.
let arguments = CommandLine.arguments
guard arguments.count == 4, let seconds = Double(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: RelateFailover URL SECONDS EVENTS_FILE\n".utf8))
    exit(2)
}
let url = arguments[1]
let eventsFile = arguments[3]
let tasks = 16
/// The longest a unit may take: connect timeout (per host) + statement timeout + checkout timeout, with room.
let unitBound: Duration = .seconds(30)

enum Outcome: Sendable {
    case returned
    case failed(String)
    case unknown(String)
}

/// What a follower (the stream, the live context) saw: when, and task 1's highest `seq`.
final class Sightings: Sendable {
    private let seen = Mutex<[(time: Double, top: Int)]>([])
    func note(_ top: Int) { seen.withLock { $0.append((now(), top)) } }
    var all: [(time: Double, top: Int)] { seen.withLock { $0 } }
    var last: Int? { seen.withLock { $0.last?.top } }
}

/// Task 1's last five rows: what both followers follow.
let followed = FetchRequest("failover_unit", where: Key("task") == 1, orderBy: [.descending("seq")], limit: 5)

struct Unit: Sendable {
    var task: Int
    var seq: Int
    var started: Double
    var ended: Double
    var outcome: Outcome
}

func now() -> Double { Date().timeIntervalSince1970 }

func run() async throws -> Int32 {
    var configuration = Configuration(maxConnections: 8, connectTimeout: .seconds(2), statementTimeout: .seconds(5))
    configuration.checkoutTimeout = .seconds(10)
    configuration.schemas = ["public"]
    let setup = try Connection(url: url)
    try setup.execute("CREATE TABLE IF NOT EXISTS failover_unit (task int, seq int, written_at timestamptz DEFAULT now(), PRIMARY KEY (task, seq))")
    try setup.execute("TRUNCATE failover_unit")
    try ChangeTracking.enable(on: setup)
    setup.close()
    let database = try Database(url: url, configuration: configuration)
    defer { database.close() }

    // The followers: a stream of snapshots, and a live context on a thread of its own that
    // processes changes until told to stop (its errors while the leader is away are counted).
    let streamed = Sightings()
    let stream = try await database.observe(followed)
    let follower = Task {
        do {
            for try await snapshot in stream { streamed.note(snapshot.rows.first?.values["seq"] as? Int ?? 0) }
        } catch {
            print("PROBLEM: the observe stream ended: \(error)")
        }
    }
    let lived = Sightings()
    let stopLiving = Atomic<Bool>(false)
    let liveErrors = Atomic<Int>(0)
    let living = DispatchSemaphore(value: 0)
    let liveURL = url
    Thread.detachNewThread {
        defer { living.signal() }
        do {
            let context = try DatabaseContext(url: liveURL, schemas: ["public"])
            try context.startTrackingChanges(using: .triggers)
            let live = try context.liveFetch(followed)
            while !stopLiving.load(ordering: .relaxed) {
                do {
                    _ = try context.waitForChanges(timeout: .milliseconds(100))
                    let top = try live.objects.first.map { try $0.value(forKey: "seq", as: Int.self) ?? 0 } ?? 0
                    if top != lived.last { lived.note(top) }
                } catch {
                    liveErrors.add(1, ordering: .relaxed)
                    Thread.sleep(forTimeInterval: 0.2)
                }
            }
        } catch {
            print("PROBLEM: the live context could not start: \(error)")
        }
    }

    let deadline = now() + seconds
    let units = try await withThrowingTaskGroup(of: [Unit].self) { group in
        for task in 1...tasks {
            group.addTask {
                var units: [Unit] = []
                var seq = 0
                while now() < deadline {
                    seq += 1
                    let started = now()
                    let outcome: Outcome
                    do {
                        let (task, seq) = (task, seq)
                        try await database.write { context in
                            _ = try context.insert("failover_unit", values: ["task": task, "seq": seq])
                        }
                        outcome = .returned
                    } catch let error as RelateError where error.kind == .commitOutcomeUnknown {
                        outcome = .unknown(error.message)
                    } catch {
                        outcome = .failed("\(error)".split(separator: "\n").first.map(String.init) ?? "")
                    }
                    units.append(Unit(task: task, seq: seq, started: started, ended: now(), outcome: outcome))
                    if case .returned = outcome {} else { try await Task.sleep(for: .milliseconds(50)) }
                }
                return units
            }
        }
        var all: [Unit] = []
        for try await units in group { all += units }
        return all
    }

    // What the table holds, read once writes work again (bounded).
    var stored: Set<[Int]> = []
    for attempt in 0..<60 {
        do {
            stored = try await database.read { context in
                Set(try context.connection.query("SELECT task, seq FROM failover_unit").map { [try $0.decode(Int.self, at: 0), try $0.decode(Int.self, at: 1)] })
            }
            break
        } catch {
            if attempt == 59 { throw error }
            try await Task.sleep(for: .seconds(1))
        }
    }

    // Both followers end at a fresh read's answer (bounded).
    let fresh = try await database.read { context in
        try context.fetch(followed).first.map { try $0.value(forKey: "seq", as: Int.self) ?? 0 } ?? 0
    }
    for _ in 0..<300 where streamed.last != fresh || lived.last != fresh {
        try await Task.sleep(for: .milliseconds(100))
    }
    stopLiving.store(true, ordering: .relaxed)
    living.wait()
    follower.cancel()

    var problems: [String] = []
    if streamed.last != fresh { problems.append("the observe stream ended at seq \(streamed.last ?? -1), not \(fresh)") }
    if lived.last != fresh { problems.append("the live context ended at seq \(lived.last ?? -1), not \(fresh)") }
    var returned = 0, failed = 0, unknown = 0, unknownCommitted = 0
    var longest = 0.0
    for unit in units {
        let present = stored.contains([unit.task, unit.seq])
        longest = max(longest, unit.ended - unit.started)
        switch unit.outcome {
        case .returned:
            returned += 1
            if !present { problems.append("unit (\(unit.task), \(unit.seq)) returned but is not in the table") }
        case .failed(let message):
            failed += 1
            if present { problems.append("unit (\(unit.task), \(unit.seq)) threw (\(message)) but is in the table") }
        case .unknown:
            unknown += 1
            if present { unknownCommitted += 1 }
        }
    }
    let bound = Double(unitBound.components.seconds)
    if longest > bound { problems.append("a unit took \(longest) s, past the \(bound) s bound") }

    // For each event the script caused, the time until the next write that succeeded
    // (started after the event).
    let events = ((try? String(contentsOfFile: eventsFile, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line -> (Double, String)? in
        let parts = line.split(separator: " ")
        guard parts.count == 2, let time = Double(parts[0]) else { return nil }
        return (time, String(parts[1]))
    }
    let successes = units.filter { if case .returned = $0.outcome { return true } else { return false } }.map(\.ended).sorted()
    print("units: \(units.count), returned \(returned), threw \(failed), commit outcome unknown \(unknown) (\(unknownCommitted) of them committed)")
    print("longest unit: \(String(format: "%.2f", longest)) s (bound \(bound) s)")
    for (index, (time, name)) in events.enumerated() {
        // The write outage: the longest stretch without a successful write after the event,
        // until the next event (at most a minute): from the event to the first success, or
        // between two.
        let end = min(time + 60, index + 1 < events.count ? events[index + 1].0 : .infinity)
        let window = [time] + successes.filter { $0 > time && $0 < end }
        guard window.count > 1 else {
            problems.append("\(name): no write succeeded in the minute after it")
            continue
        }
        let gaps = zip(window, window.dropFirst()).map { $1 - $0 }
        let threw = units.filter { $0.ended >= time && $0.ended < end }.filter { if case .returned = $0.outcome { return false } else { return true } }
        print("\(name): writes stopped for at most \(String(format: "%.2f", gaps.max()!)) s; \(threw.count) units threw meanwhile")
        // The first row of task 1 written after the event, and when each follower showed it.
        guard let written = units.filter({ $0.task == 1 && $0.started > time }).first(where: { if case .returned = $0.outcome { return true } else { return false } }) else { continue }
        for (follower, sightings) in [("observe stream", streamed), ("live context", lived)] {
            if let seen = sightings.all.first(where: { $0.top >= written.seq && $0.time >= written.ended - 0.001 }) {
                print("  \(follower): showed task 1's first row written after it \(String(format: "%.2f", seen.time - written.ended)) s after its commit")
            } else {
                problems.append("\(name): the \(follower) never showed task 1's row \(written.seq)")
            }
        }
    }
    print("followers: the stream ended at seq \(streamed.last ?? -1), the live context at \(lived.last ?? -1), a fresh read says \(fresh); "
        + "the live context's processChanges() threw \(liveErrors.load(ordering: .relaxed)) times while the leader was away")
    var kinds: [String: Int] = [:]
    for unit in units { if case .failed(let message) = unit.outcome { kinds[String(message.prefix(90)), default: 0] += 1 } }
    for (message, count) in kinds.sorted(by: { $0.value > $1.value }).prefix(6) { print("  threw \(count)×: \(message)") }
    for problem in problems.prefix(20) { print("PROBLEM: \(problem)") }
    print(problems.isEmpty ? "every check holds" : "\(problems.count) problems")
    return problems.isEmpty ? 0 : 1
}

// A watchdog: a run that hangs is a failed run, never a stuck script.
Thread.detachNewThread {
    Thread.sleep(forTimeInterval: seconds + 180)
    print("PROBLEM: the run did not end within \(Int(seconds) + 180) s")
    exit(1)
}
let finished = DispatchSemaphore(value: 0)
nonisolated(unsafe) var status: Int32 = 1
Task.detached {
    do { status = try await run() } catch { print("RelateFailover: \(error)") }
    finished.signal()
}
finished.wait()
exit(status)
