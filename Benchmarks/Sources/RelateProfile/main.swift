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
/// objects-fetch-typed (through the generated type `Rows`), prefetch, no-prefetch,
/// m2m-replace (raw: a pipeline of 10,000 INSERTs), m2m-attach
/// (`insert(contentsOf:)`; raw: one `INSERT … SELECT $1, unnest($2::int4[])`), cascade-delete (see `CascadeDeleteState`), and
/// remove-all, replace-children, m2m-delete (10,000 members, Relate's side only: see
/// `ScalingState`), exists, prefetch-counts, walk (see `RequestState`; the walk's batch
/// size from RELATE_WALK_BATCH, default 1,000), by-key (100 objects by primary key, one
/// query each, after `reset()`), connection-by-key (the same `SELECT` through
/// `Connection.query`, 1,000 a run), pool-read (1,000 objects by key, each through
/// `database.read`; raw: `PQexecParams` on the pool's connection and thread, inside one
/// unit), pool-read-preferring (the same in a task that prefers the database's executor),
/// pool-read-traced (pool-read with an `InMemoryTracer`: a span per unit and per statement)
/// and pool-empty (1,000 `database.read`s that send nothing, against the same raw reads),
/// objects-fetch-observed (objects-fetch with `context.isObservable` on), and the writes by
/// the thousand against raw libpq (issue 38, see `WriteFixture`): copy-100k
/// (`copy(into:rows:)`; raw: binary COPY), copy-100k-by-position (`copy(into:columns:rows:)`), insert-100k (`insert(_:rows:)`; raw: binary
/// COPY), update-10k (`update(_:where:values:)` after `reset()`; raw: one UPDATE) and
/// delete-10k (`delete(_:where:)`, 30,000 children cascaded; raw: one DELETE), and
/// issue 41's types (see `TypesFixture`): types-fetch (100,000 rows of an enum, jsonb,
/// interval, ranges, inet, macaddr, money, time, timetz and a composite as objects, read
/// by key) and types-fetch-typed (through the generated `BenchTypesSample`), both against
/// raw libpq decoding the binary forms by hand; their rows are compared once first;
/// `--raw` runs the raw libpq side instead, and
/// `--paired` runs both sides in turns and prints the median of the per-pair ratios as
/// `Benchmarks/run` does, quicker than the whole harness when trying a change.
/// `RelateProfile changes [updates]` measures change tracking (see `ChangeTrackingBenchmark`),
/// `RelateProfile catalog [runs]` the catalog read and the model built (see `CatalogBenchmark`),
/// `RelateProfile pool-hops [reads]` where a read through the pool spends its time (see `PoolHops`).
let flags: Set = ["--raw", "--paired"]
let arguments = CommandLine.arguments.dropFirst().filter { !flags.contains($0) }
let raw = CommandLine.arguments.contains("--raw")
let paired = CommandLine.arguments.contains("--paired")
let tasks = [
    "objects-fetch", "objects-fetch-as-any", "objects-fetch-typed", "prefetch", "no-prefetch", "m2m-replace", "m2m-attach", "cascade-delete",
    "remove-all", "replace-children", "m2m-delete", "exists", "prefetch-counts", "walk", "by-key", "connection-by-key",
    "pool-read", "pool-read-preferring", "pool-read-traced", "pool-empty", "update-by-key", "objects-fetch-observed", "save", "edit-save",
    "copy-100k", "copy-100k-by-position", "insert-100k", "update-10k", "delete-10k", "types-fetch", "types-fetch-typed",
]
let relateOnly: Set = ["remove-all", "replace-children", "m2m-delete"]
// Change tracking and the catalog have reports of their own: `changes [updates]`
// (latency percentiles, rates, writer cost), `live [commits]` (live queries' latency and
// the statements commits outside their region cost), `live-soak [seconds]` (1,000 observed
// requests under 100 commits a second) and `catalog [runs]`.
let reports: [String: (count: Int, run: (Int) throws -> [String])] = [
    "changes": (2_000, { try ChangeTrackingBenchmark.run(updates: $0) }),
    "catalog": (20, { try CatalogBenchmark.run(runs: $0) }),
    "live": (500, { commits in
        nonisolated(unsafe) var lines: [String] = []
        try waitFor { lines = try await LiveLatencyBenchmark.run(commits: commits) }
        return lines
    }),
    "live-soak": (120, { seconds in
        nonisolated(unsafe) var lines: [String] = []
        try waitFor { lines = try await LiveSoakBenchmark.run(seconds: seconds) }
        return lines
    }),
    "pool-hops": (2_000, { reads in
        nonisolated(unsafe) var lines: [String] = []
        try waitFor { lines = try await PoolHops.run(reads: reads) }
        return lines
    }),
]
if let name = CommandLine.arguments.dropFirst().first, let report = reports[name] {
    do {
        let count = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) } ?? report.count
        for line in try report.run(count) { print(line) }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("RelateProfile: \(error)\n".utf8))
        exit(1)
    }
}
guard let task = arguments.first, tasks.contains(task) else {
    FileHandle.standardError.write(Data("usage: RelateProfile \(tasks.joined(separator: "|")) [runs] [--raw|--paired]\n".utf8))
    exit(2)
}
let runs = arguments.dropFirst().first.flatMap { Int($0) } ?? 10
guard runs > 0, !(raw && paired), !(relateOnly.contains(task) && (raw || paired)) else {
    FileHandle.standardError.write(Data("RelateProfile: give at least one run, and --raw or --paired, not both (neither for \(relateOnly.sorted().joined(separator: ", ")))\n".utf8))
    exit(2)
}

@inline(never)
@Sendable func keep<T>(_ value: T) { withExtendedLifetime(value) {} }

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

/// One task's two sides, each run once per call, and what to do before each (unmeasured).
struct Sides {
    var prepare: () throws -> Void = {}
    var relate: () throws -> Void
    var raw: () throws -> Void
}

func sides(of task: String) throws -> Sides {
    switch task {
    case "objects-fetch", "objects-fetch-as-any", "objects-fetch-typed", "objects-fetch-observed":
        let state = try ObjectsState.fetch()
        // Every read told to Observation, as a context that feeds a user interface does.
        state.context.isObservable = task == "objects-fetch-observed"
        let read = switch task {
        case "objects-fetch-as-any": fetchAsObjectsCastingAny
        case "objects-fetch-typed": fetchAsTypedObjects
        default: fetchAsObjects
        }
        return Sides(relate: { keep(try read(state.context)) }, raw: { keep(try state.raw.fetch()) })
    case "types-fetch", "types-fetch-typed":
        let state = try TypesState()
        let read = task == "types-fetch" ? fetchTypesAsObjects : fetchTypesAsTypedObjects
        // The same rows on both sides, checked once outside the runs.
        try state.check(read)
        return Sides(relate: { keep(try read(state.context)) }, raw: { keep(try state.raw.fetchTypes()) })
    case "by-key", "connection-by-key":
        let state = try ObjectsState.fetch()
        let keys = Array(repeating: KeyedFixture.fetchKeys, count: 10).flatMap { $0 }
        if task == "connection-by-key" {
            let connection = state.context.connection
            return Sides(
                relate: {
                    for key in keys {
                        keep(try connection.query(KeyedFixture.selectRow, [key], format: .binary))
                    }
                },
                raw: { keep(try state.raw.rows(keys: keys)) })
        }
        let once = KeyedFixture.fetchKeys
        return Sides(relate: { keep(try ObjectsByKey.rows(state.context, keys: once)) }, raw: { keep(try state.raw.rows(keys: once)) })
    case "save":
        // 1,000 changed objects saved (the edits made before), against the same names in one
        // raw UPDATE … unnest.
        let state = try SaveState()
        return Sides(prepare: { try state.edit() }, relate: { keep(try state.save()) }, raw: { keep(try state.rawSave()) })
    case "edit-save":
        // The same, the 1,000 setValues measured too.
        let state = try SaveState()
        return Sides(relate: { keep(try state.editAndSave()) }, raw: { keep(try state.rawSave()) })
    case "update-by-key":
        // 100 updates of one attribute by primary key: Relate's by-key write against raw
        // libpq's UPDATE; each run writes new values (a stamp per run).
        let connection = try KeyedFixture.prepareUpdate()
        let context = try DatabaseContext(connection: connection, schemas: [KeyedFixture.updateSchema])
        let raw = try RawConnection(url: try Fixture.url())
        final class Stamp { var value = 0 }
        let stamp = Stamp()
        return Sides(
            relate: {
                stamp.value += 1_000
                keep(try ObjectsByKey.updateHits(context, keys: KeyedFixture.keys, stamp: stamp.value))
            },
            raw: {
                stamp.value += 1_000
                keep(try raw.updateHits(keys: KeyedFixture.keys, stamp: stamp.value))
            })
    case "copy-100k", "copy-100k-by-position", "insert-100k":
        // 100,000 rows into an emptied table, against raw libpq's binary COPY.
        let connection = try WriteFixture.prepareInsert()
        let context = try DatabaseContext(connection: connection, schemas: [WriteFixture.insertSchema])
        let raw = try RawConnection(url: try Fixture.url())
        let load: (DatabaseContext, [Reading]) throws -> Int = switch task {
        case "copy-100k": SetWrites.copy
        case "copy-100k-by-position": SetWrites.copyByPosition
        default: SetWrites.insert
        }
        return Sides(
            prepare: {
                context.reset()
                try connection.execute("TRUNCATE bench_insert.reading")
            },
            relate: {
                keep(try load(context, WriteFixture.readings))
            },
            raw: { keep(try raw.copy(WriteFixture.readings)) })
    case "update-10k":
        // 10,000 of 100,000 rows by `id <= 10000`, a new stamp each run, nothing in memory.
        let connection = try WriteFixture.prepareUpdate()
        let context = try DatabaseContext(connection: connection, schemas: [WriteFixture.updateSchema])
        let raw = try RawConnection(url: try Fixture.url())
        final class Stamp { var value = 0 }
        let stamp = Stamp()
        return Sides(
            prepare: {
                stamp.value += 1
                try connection.execute("VACUUM bench_setupdate.account")
            },
            relate: { keep(try SetWrites.updateStamp(context, stamp: stamp.value)) },
            raw: { keep(try raw.updateStamp(stamp.value)) })
    case "delete-10k":
        // 10,000 of 100,000 parents by `id <= 10000`, 30,000 children cascaded; put back before each run.
        let connection = try WriteFixture.prepareDelete()
        let context = try DatabaseContext(connection: connection, schemas: [WriteFixture.deleteSchema])
        let raw = try RawConnection(url: try Fixture.url())
        return Sides(
            prepare: { try WriteFixture.restoreDeleted(connection) },
            relate: { keep(try SetWrites.deleteParents(context)) },
            raw: { keep(try raw.deleteParents()) })
    case "pool-read", "pool-read-preferring", "pool-read-traced", "pool-empty":
        let state = try PoolState(traced: task == "pool-read-traced")
        let empty = task == "pool-empty"
        let reads: @Sendable () async throws -> Void = {
            for id in 1...1_000 {
                if empty { keep(try await state.database.read { _ in id }) } else { keep(try await state.readThroughPool(id: id)) }
            }
        }
        let preferring = task == "pool-read-preferring"
        return Sides(
            relate: { try waitFor { preferring ? try await withTaskExecutorPreference(state.database.executor, operation: reads) : try await reads() } },
            raw: { try waitFor { keep(try await state.readRawOnPoolConnection(ids: 1...1_000)) } })
    case "prefetch", "no-prefetch":
        let state = try ObjectsState.prefetch()
        return Sides(
            relate: { keep(try childCountsAsObjects(state.context, prefetch: task == "prefetch")) },
            raw: { keep(try state.raw.childCounts()) })
    case "remove-all", "replace-children", "m2m-delete":
        let state = try ScalingState(task: task)
        return Sides(
            prepare: { try state.prepare() },
            relate: { keep(try state.run()) },
            raw: {})
    case "exists":
        let state = try RequestState.exists()
        return Sides(relate: { keep(try state.existsAsObjects()) }, raw: { keep(try state.raw.exists()) })
    case "walk":
        let state = try RequestState.stream(check: false)
        let batchSize = ProcessInfo.processInfo.environment["RELATE_WALK_BATCH"].flatMap { Int($0) } ?? 1_000
        return Sides(
            relate: { keep(try state.walkAsObjects(limit: nil, batchSize: batchSize)) },
            raw: { keep(try state.raw.walkSingleRow(RequestFixture.streamSQL)) })
    case "prefetch-counts":
        let state = try RequestState.counts()
        return Sides(
            prepare: { try state.fetchParents() },
            relate: { keep(try state.countsAsObjects()) },
            raw: { keep(try state.raw.childCountTotal()) })
    case "cascade-delete":
        let state = try CascadeDeleteState()
        return Sides(
            prepare: { try state.prepare() },
            relate: { keep(try state.deleteWithObjects()) },
            raw: { keep(try state.deleteRaw()) })
    default:
        let state = try ManyToManyState()
        let unnest = task == "m2m-attach"
        return Sides(
            prepare: { try state.reset() },
            relate: { keep(unnest ? try state.objects.attach() : try state.objects.replace()) },
            raw: {
                keep(unnest
                    ? try state.raw.insertPairsUnnest(owner: ObjectFixture.ownerID, targets: state.targetIDs)
                    : try state.raw.insertPairs(owner: ObjectFixture.ownerID, targets: state.targetIDs))
            })
    }
}

/// Runs `body` in a task and blocks this (main, not cooperative) thread until it ends.
func waitFor(_ body: @escaping @Sendable () async throws -> Void) throws {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var failure: (any Error)?
    Task {
        do { try await body() } catch { failure = error }
        done.signal()
    }
    done.wait()
    if let failure { throw failure }
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

do {
    let sides = try sides(of: task)
    if paired {
        var relateTimes: [Double] = [], rawTimes: [Double] = [], ratios: [Double] = []
        for run in 0..<runs {
            var relate = 0.0, raw = 0.0
            // Alternate which side goes first, as the harness does.
            for relateFirst in run.isMultiple(of: 2) ? [true, false] : [false, true] {
                try sides.prepare()
                if relateFirst { relate = try milliseconds(sides.relate) } else { raw = try milliseconds(sides.raw) }
            }
            relateTimes.append(relate)
            rawTimes.append(raw)
            ratios.append(relate / raw)
        }
        print(String(format: "%@: Relate %.1f ms, raw %.1f ms, ratio %.2f× (medians over %d pairs)",
                     task, median(relateTimes), median(rawTimes), median(ratios), runs))
    } else {
        var times: [Double] = []
        for _ in 0..<runs {
            try sides.prepare()
            times.append(try milliseconds(raw ? sides.raw : sides.relate))
        }
        print(String(format: "%@%@: median %.1f ms over %d runs", task, raw ? " (raw libpq)" : "", median(times), runs))
    }
} catch {
    FileHandle.standardError.write(Data("RelateProfile: \(error)\n".utf8))
    exit(1)
}
