import BenchmarkFixtures
import Foundation
import Relate

/// Runs one side of one benchmark task in a loop, without the benchmark harness, so that
/// perf or valgrind sees nothing else:
///
///     RELATE_TEST_URL=… .build/release/RelateProfile objects-fetch 20
///     valgrind --tool=callgrind --toggle-collect='*fetchAsObjects*' .build/release/RelateProfile objects-fetch 2
///
/// Prints the median time of the runs. Tasks: objects-fetch, objects-fetch-as-any,
/// prefetch, no-prefetch, m2m-replace; `--raw` runs the raw libpq side instead.
let arguments = CommandLine.arguments.dropFirst().filter { $0 != "--raw" }
let raw = CommandLine.arguments.contains("--raw")
let tasks = ["objects-fetch", "objects-fetch-as-any", "prefetch", "no-prefetch", "m2m-replace"]
guard let task = arguments.first, tasks.contains(task) else {
    FileHandle.standardError.write(Data("usage: RelateProfile \(tasks.joined(separator: "|")) [runs] [--raw]\n".utf8))
    exit(2)
}
let runs = arguments.dropFirst().first.flatMap { Int($0) } ?? 10

@inline(never)
func keep<T>(_ value: T) { withExtendedLifetime(value) {} }

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

do {
    var times: [Double] = []
    switch task {
    case "objects-fetch", "objects-fetch-as-any":
        let state = try ObjectsState.fetch()
        for _ in 0..<runs {
            times.append(try milliseconds {
                if raw {
                    keep(try state.raw.fetch())
                } else if task == "objects-fetch" {
                    keep(try fetchAsObjects(state.context))
                } else {
                    keep(try fetchAsObjectsCastingAny(state.context))
                }
            })
        }
    case "prefetch", "no-prefetch":
        let state = try ObjectsState.prefetch()
        for _ in 0..<runs {
            times.append(try milliseconds {
                keep(raw ? try state.raw.childCounts() : try childCountsAsObjects(state.context, prefetch: task == "prefetch"))
            })
        }
    default:
        let state = try ManyToManyState()
        for _ in 0..<runs {
            try state.reset()
            times.append(try milliseconds {
                keep(raw ? try state.raw.insertPairs(owner: ObjectFixture.ownerID, targets: state.targetIDs) : try state.objects.replace())
            })
        }
    }
    print(String(format: "%@%@: median %.1f ms over %d runs", task, raw ? " (raw libpq)" : "", times.sorted()[times.count / 2], runs))
} catch {
    FileHandle.standardError.write(Data("RelateProfile: \(error)\n".utf8))
    exit(1)
}
