import Foundation
import Relate
import RelatePostgres

/// The load `scripts/patroni-failover` drives through a Patroni cluster while it switches the
/// leader over and kills it: 16 tasks writing through one `Database` (a multi-host URL with
/// `target_session_attrs=read-write`), each unit one row `(task, seq)`. Afterwards it checks
/// every unit against the table and prints the figures.
///
///     RelateFailover URL SECONDS EVENTS_FILE
///
/// `EVENTS_FILE` is where the script writes one line per event it causes
/// (`<unix time> switchover|kill`): the driver prints, for each, how long until the next
/// write succeeded. Exit status 0 when every check holds, 1 otherwise.
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
    setup.close()
    let database = try Database(url: url, configuration: configuration)
    defer { database.close() }

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

    var problems: [String] = []
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
    }
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
