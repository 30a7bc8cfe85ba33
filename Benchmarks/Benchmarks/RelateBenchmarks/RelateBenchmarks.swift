import Benchmark
import BenchmarkFixtures
import Foundation
import Interleaved
import Relate
import RelatePostgres

/// Times `body` in microseconds.
@inline(__always)
func microseconds<Result>(_ body: () throws -> Result) rethrows -> Int {
    let start = ContinuousClock.now
    blackHole(try body())
    let elapsed = ContinuousClock.now - start
    return Int(elapsed.components.seconds) * 1_000_000 + Int(elapsed.components.attoseconds / 1_000_000_000_000)
}

/// What a paired benchmark's setup made, and its iteration count (to alternate the order).
final class Pair<Setup> {
    let fixture: Setup
    var iteration = 0
    init(_ fixture: Setup) { self.fixture = fixture }
}

/// Runs both sides back to back in each iteration, in alternating order, and records each
/// side's time and the pair's ratio as custom metrics. Noise from the machine (other
/// processes, a busy server) then falls on both sides alike, which two benchmarks in two
/// processes one after the other cannot promise.
///
/// The metrics are `<metric>: <label> (μs)`, `<metric>: raw libpq (μs)` and
/// `<metric>: <label>/raw ×1000`; `run` reads them from the table by these names.
/// `prepare` runs before each side of each pair, unmeasured (emptying a table, say).
func paired<Setup, Result>(
    _ name: String, metric: String, label side: String = "Connection", iterations: Int, maxDuration: Duration = .seconds(10),
    setup: @escaping () throws -> Setup, prepare: @escaping (Setup) throws -> Void = { _ in },
    side sideBody: @escaping (Setup) throws -> Result, raw: @escaping (Setup) throws -> Result
) {
    let (configuration, sideTime, rawTime, ratio) = pairMetrics(metric: metric, side: side, iterations: iterations, maxDuration: maxDuration)
    Benchmark(name, configuration: configuration) { benchmark, pair in
        for _ in benchmark.scaledIterations {
            pair.iteration += 1
            let fixture = pair.fixture
            var s = 0
            var r = 0
            for sideFirst in pair.iteration.isMultiple(of: 2) ? [true, false] : [false, true] {
                try prepare(fixture)
                if sideFirst {
                    s = try microseconds { try sideBody(fixture) }
                } else {
                    r = try microseconds { try raw(fixture) }
                }
            }
            benchmark.measurement(sideTime, s)
            benchmark.measurement(rawTime, r)
            benchmark.measurement(ratio, s * 1000 / max(r, 1))
        }
    } setup: {
        Pair(try setup())
    }
}

/// A paired benchmark's configuration and its three custom metrics: each side's time and
/// their ratio, named as `run` reads them.
func pairMetrics(
    metric: String, side: String, iterations: Int, maxDuration: Duration
) -> (Benchmark.Configuration, BenchmarkMetric, BenchmarkMetric, BenchmarkMetric) {
    let sideTime = BenchmarkMetric.custom("\(metric): \(side) (μs)", useScalingFactor: false)
    let rawTime = BenchmarkMetric.custom("\(metric): raw libpq (μs)", useScalingFactor: false)
    let ratio = BenchmarkMetric.custom("\(metric): \(side)/raw ×1000", useScalingFactor: false)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, sideTime, rawTime, ratio], timeUnits: .microseconds,
        units: [sideTime: .count, rawTime: .count, ratio: .count],
        warmupIterations: 2, scalingFactor: .one, maxDuration: maxDuration, maxIterations: iterations)
    return (configuration, sideTime, rawTime, ratio)
}

/// The pre-existing fetch pairs: Connection against raw libpq.
func paired(
    _ name: String, iterations: Int,
    connection: @escaping (State) throws -> [FetchedRow], raw: @escaping (State) throws -> [FetchedRow], prefetch: Bool
) {
    paired("paired \(name) 100k", metric: name, iterations: iterations,
           setup: { try State(prefetch: prefetch) }, side: connection, raw: raw)
}

/// `paired` for async work: both sides in each iteration, alternating which goes first.
func pairedAsync<Setup>(
    _ name: String, metric: String, label side: String = "Relate", iterations: Int, maxDuration: Duration = .seconds(10),
    setup: @escaping () throws -> Setup, side sideBody: @escaping (Setup) async throws -> Int, raw: @escaping (Setup) async throws -> Int
) {
    let (configuration, sideTime, rawTime, ratio) = pairMetrics(metric: metric, side: side, iterations: iterations, maxDuration: maxDuration)
    Benchmark(name, configuration: configuration) { benchmark, pair in
        for _ in benchmark.scaledIterations {
            pair.iteration += 1
            let fixture = pair.fixture
            var s = 0
            var r = 0
            for sideFirst in pair.iteration.isMultiple(of: 2) ? [true, false] : [false, true] {
                let start = ContinuousClock.now
                if sideFirst {
                    blackHole(try await sideBody(fixture))
                } else {
                    blackHole(try await raw(fixture))
                }
                let elapsed = ContinuousClock.now - start
                let micros = Int(elapsed.components.seconds) * 1_000_000 + Int(elapsed.components.attoseconds / 1_000_000_000_000)
                if sideFirst { s = micros } else { r = micros }
            }
            benchmark.measurement(sideTime, s)
            benchmark.measurement(rawTime, r)
            benchmark.measurement(ratio, s * 1000 / max(r, 1))
        }
    } setup: {
        Pair(try setup())
    }
}

let benchmarks: @Sendable () -> Void = {
    let fetchMetrics: [BenchmarkMetric] = [
        .wallClock, .cpuTotal, .throughput, .peakMemoryResident, .peakMemoryResidentDelta, .mallocCountTotal,
    ]
    // One iteration is one fetch of 100,000 rows (about 0.1 s): 2 warm-up fetches, then at
    // most 20 measured ones or 10 s. Times in microseconds and memory in KB, so that ./run
    // can compute the ratios from the table.
    let fetch = Benchmark.Configuration(
        metrics: fetchMetrics, timeUnits: .microseconds,
        units: [.peakMemoryResident: .kilo, .peakMemoryResidentDelta: .kilo, .mallocCountTotal: .count],
        warmupIterations: 2, scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 20)

    // The two benchmarks, each in its own process: time, CPU, peak memory, mallocs.
    Benchmark("Connection fetch 100k", configuration: fetch) { benchmark, state in
        for _ in benchmark.scaledIterations {
            blackHole(try fetchWithConnection(state.connection))
        }
    } setup: {
        try State(prefetch: false)
    }

    Benchmark("raw libpq fetch 100k", configuration: fetch) { benchmark, state in
        for _ in benchmark.scaledIterations {
            blackHole(try state.raw.fetch())
        }
    } setup: {
        try State(prefetch: false)
    }

    // The same two fetches interleaved in one process: the time ratio to trust.
    paired("fetch", iterations: 25,
           connection: { try fetchWithConnection($0.connection) }, raw: { try $0.raw.fetch() }, prefetch: false)

    // The client's share alone: decoding a result already in memory, no server, no network.
    paired("decode", iterations: 60,
           connection: { try decodeWithConnection($0.prefetched!) },
           raw: { try RawConnection.decode($0.rawPrefetched!) }, prefetch: true)

    // The object layer. 1: the 100,000 rows as objects, every attribute read by key
    // (`value(forKey:as:)`), against `raw libpq fetch 100k` (same rows, same Swift values). In a process of its
    // own for memory and mallocs, and paired for the time ratio.
    Benchmark("objects fetch 100k", configuration: fetch) { benchmark, state in
        for _ in benchmark.scaledIterations {
            blackHole(try fetchAsObjects(state.context))
        }
    } setup: {
        try ObjectsState.fetch()
    }
    paired("paired objects fetch 100k", metric: "objects fetch", label: "Relate", iterations: 40, maxDuration: .seconds(30),
           setup: { try ObjectsState.fetch() },
           side: { try fetchAsObjects($0.context) }, raw: { try $0.raw.fetch() })

    // The same through the generated type: `context.fetch(Rows.self)` and its getters.
    paired("paired objects fetch typed 100k", metric: "objects fetch typed", label: "Relate", iterations: 40, maxDuration: .seconds(30),
           setup: { try ObjectsState.fetch() },
           side: { try fetchAsTypedObjects($0.context) }, raw: { try $0.raw.fetch() })

    // The same, each attribute read as `value(forKey:) as? T` (DESIGN's examples): the
    // runtime's cast from `Any` is the difference. Reported, no target.
    paired("paired objects fetch as any 100k", metric: "objects fetch as any", label: "Relate", iterations: 40, maxDuration: .seconds(30),
           setup: { try ObjectsState.fetch() },
           side: { try fetchAsObjectsCastingAny($0.context) }, raw: { try $0.raw.fetch() })

    // Issue 41's types (item 5): 100,000 rows of an enum, jsonb, interval, int4range,
    // tstzrange, inet, macaddr, money, time, timetz and a composite, every value read —
    // by key with `value(forKey:as:)` and through the generated `BenchTypesSample` —
    // against raw libpq decoding the same binary forms by hand into the same values. The
    // sides in turns; their rows are compared once before anything is timed.
    interleaved(
        "paired types fetch 100k", metric: "types fetch", iterations: 10, maxDuration: .seconds(400),
        setup: { try TypesState() },
        canonical: { $0.sorted { $0.id < $1.id } }, expected: { $0.count == TypesFixture.rowCount },
        sides: [
            Side("Relate", against: "raw libpq") { try fetchTypesAsObjects($0.context) },
            Side("Relate typed", against: "raw libpq") { try fetchTypesAsTypedObjects($0.context) },
            Side("raw libpq") { try $0.raw.fetchTypes() },
        ])

    // 2: 1,000 parents, each one's 10 children: fetch + prefetch (2 round trips) or fetch
    // + one query per parent (1 + 1,000), against parents + one `= ANY($1)` query raw.
    paired("paired prefetch 1000x10", metric: "prefetch", label: "Relate", iterations: 60,
           setup: { try ObjectsState.prefetch() },
           side: { try childCountsAsObjects($0.context, prefetch: true) }, raw: { try $0.raw.childCounts() })
    paired("paired no prefetch 1000x10", metric: "no prefetch", label: "Relate", iterations: 30,
           setup: { try ObjectsState.prefetch() },
           side: { try childCountsAsObjects($0.context, prefetch: false) }, raw: { try $0.raw.childCounts() })

    // 3: owner.target = 10,000 targets (one pipeline of INSERTs into the helper table),
    // against the same INSERTs in pipeline mode raw. The helper table is emptied and the
    // objects made afresh before each side, unmeasured.
    paired("paired m2m replace 10k", metric: "m2m replace", label: "Relate", iterations: 20, maxDuration: .seconds(20),
           setup: { try ManyToManyState() }, prepare: { try $0.reset() },
           side: { try $0.objects.replace() },
           raw: { try $0.raw.insertPairs(owner: ObjectFixture.ownerID, targets: $0.targetIDs) })
    // The attach, `insert(contentsOf:)` of the 10,000 targets, against the single raw
    // `INSERT … SELECT $1, unnest($2::int4[])`, the statement postgres-nio sends in the
    // peers' attach (issue 28, item 3: ≤ 1.05×).
    paired("paired m2m attach 10k", metric: "m2m attach", label: "Relate", iterations: 20, maxDuration: .seconds(20),
           setup: { try ManyToManyState() }, prepare: { try $0.reset() },
           side: { try $0.objects.attach() },
           raw: { try $0.raw.insertPairsUnnest(owner: ObjectFixture.ownerID, targets: $0.targetIDs) })

    // save() of 1,000 changed objects (issue 36: ≤ 1.3× the same UPDATEs raw in one
    // statement), the edits made before; and the edits measured with it.
    paired("paired save 1000", metric: "save", label: "Relate", iterations: 30,
           setup: { try SaveState() }, prepare: { try $0.edit() }, side: { try $0.save() }, raw: { try $0.rawSave() })
    paired("paired edit and save 1000", metric: "edit and save", label: "Relate", iterations: 30,
           setup: { try SaveState() }, side: { try $0.editAndSave() }, raw: { try $0.rawSave() })

    // End to end, as a user writes it (issue 15, item 3): every side timed from the first
    // call to the last value read, in turns in one process. Relate: one context kept
    // across runs with `reset()` at the start of each (values read with
    // `value(forKey:as:)`, and with `value(forKey:) as? T`); a unit of work of a shared
    // `Database` (`database.read`); a new `DatabaseContext(url:)` per run (connection,
    // catalog, objects, all freed at its end). Raw libpq: a kept connection, the baseline
    // of the first three, and a new PGconn per run, the baseline of the new context.
    func endToEnd<Answer: Equatable>(
        _ name: String, metric: String, iterations: Int, setup: @escaping () throws -> EndToEndState,
        canonical: @escaping (Answer) -> Answer, expected: @escaping (Answer) -> Bool,
        reset: @escaping (DatabaseContext) throws -> Answer, castingAny: ((DatabaseContext) throws -> Answer)?,
        unitOfWork: @escaping (Database) async throws -> Answer, newContext: @escaping (String) throws -> Answer,
        raw: @escaping (RawConnection) throws -> Answer
    ) {
        var sides: [Side<EndToEndState, Answer>] = [
            Side("Relate reset", against: "raw libpq") { try reset($0.context) },
            Side("Relate database.read", against: "raw libpq") { try await unitOfWork($0.database) },
            Side("Relate new context", against: "raw new connection") { try newContext($0.url) },
            Side("raw libpq") { try raw($0.raw) },
            Side("raw new connection") { try raw(try RawConnection(url: $0.url)) },
        ]
        if let castingAny {
            sides.insert(Side("Relate as? T", against: "raw libpq") { try castingAny($0.context) }, at: 1)
        }
        interleaved(name, metric: metric, iterations: iterations, maxDuration: .seconds(60),
                    setup: setup, canonical: canonical, expected: expected, teardown: { $0.close() }, sides: sides)
    }
    endToEnd(
        "e2e fetch 100k", metric: "e2e fetch", iterations: 30, setup: { try EndToEndState.fetch() },
        canonical: { $0.sorted { $0.i < $1.i } }, expected: { $0.count == Fixture.rowCount },
        reset: EndToEnd.fetchAfterReset, castingAny: EndToEnd.fetchAfterResetCastingAny,
        unitOfWork: EndToEnd.fetchInUnitOfWork, newContext: EndToEnd.fetchWithNewContext, raw: { try $0.fetch() })
    endToEnd(
        "e2e prefetch 1000x10", metric: "e2e prefetch", iterations: 60, setup: { try EndToEndState.prefetch() },
        canonical: { $0.sorted() },
        expected: { $0 == Array(repeating: ObjectFixture.childrenPerParent, count: ObjectFixture.parentCount) },
        reset: EndToEnd.childCountsAfterReset, castingAny: nil,
        unitOfWork: EndToEnd.childCountsInUnitOfWork, newContext: EndToEnd.childCountsWithNewContext,
        raw: { try $0.childCounts() })

    // The concurrency issue. 4: one object by primary key through the pool (100 reads one
    // after another), against the same SELECT raw on a kept connection (target ≤ 1.3×):
    // the pool's own, on its thread, so that both sides talk to one server process and
    // where the scheduler puts it weighs on neither.
    pairedAsync("paired pool read 100", metric: "pool read", iterations: 60,
                setup: { try PoolState() },
                side: { state in
                    var found = 0
                    for id in 1...100 where try await state.readThroughPool(id: id) != nil { found += 1 }
                    return found
                },
                raw: { try await $0.readRawOnPoolConnection(ids: 1...100) })
    // The same 100 reads from a task that prefers the database's executor: no hop per unit.
    pairedAsync("paired pool read 100 preferring", metric: "pool read preferring", iterations: 60,
                setup: { try PoolState() },
                side: { state in
                    try await withTaskExecutorPreference(state.database.executor) {
                        var found = 0
                        for id in 1...100 where try await state.readThroughPool(id: id) != nil { found += 1 }
                        return found
                    }
                },
                raw: { try await $0.readRawOnPoolConnection(ids: 1...100) })
    // The same 100 reads with a tracer on (an `InMemoryTracer`: a span per unit and per
    // statement, kept): what tracing costs when it is on. Without one ("pool read" above)
    // no span is made and nothing is timed (issue 40).
    pairedAsync("paired pool read 100 traced", metric: "pool read traced", iterations: 60,
                setup: { try PoolState(traced: true) },
                side: { state in
                    var found = 0
                    for id in 1...100 where try await state.readThroughPool(id: id) != nil { found += 1 }
                    return found
                },
                raw: { try await $0.readRawOnPoolConnection(ids: 1...100) })
    // 16 tasks × 100 reads through a pool of 4, against 4 threads on 4 raw connections.
    pairedAsync("paired pool 16 tasks", metric: "pool 16 tasks", iterations: 30,
                setup: { try PoolState() },
                side: { try await $0.concurrentReads(tasks: 16, units: 100) },
                raw: { try $0.concurrentReadsRaw(tasks: 16, units: 100) })
    // 100 contexts from the shared model on a kept connection (target ≤ 50 µs each); the
    // raw side is 100 `SELECT 1` round trips, for scale only.
    pairedAsync("paired context from model 100", metric: "context from model", iterations: 60,
                setup: { try PoolState() },
                side: { try await $0.makeContext() },
                raw: { state in (1...100).reduce(0) { count, id in count + ((try? state.readRaw(id: id)) != nil ? 1 : 0) } })

    // The fetch-request issue. 5: items with a given tag among 100,000 (a condition through
    // a many-to-many, `EXISTS` via the helper), as objects, against the same SQL raw.
    paired("paired exists 100k", metric: "exists", label: "Relate", iterations: 40, maxDuration: .seconds(20),
           setup: { try RequestState.exists() },
           side: { try $0.existsAsObjects() }, raw: { try $0.raw.exists() })
    // 6: the children of 1,000 parents counted (prefetchCounts, one grouped query) against
    // the same grouped query raw. The parents are fetched afresh before each side, unmeasured.
    paired("paired prefetch counts 1000", metric: "prefetch counts", label: "Relate", iterations: 60,
           setup: { try RequestState.counts() }, prepare: { try $0.fetchParents() },
           side: { try $0.countsAsObjects() }, raw: { try $0.raw.childCountTotal() })
    // 7: 5,000,000 rows walked as objects, 1,000 a batch (a cursor), every attribute read,
    // against libpq's single-row mode. Paired for time; each side alone in its own
    // process for peak memory, beside 100,000 rows walked the same way.
    let walk = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident], timeUnits: .microseconds, units: [.peakMemoryResident: .kilo],
        warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 3)
    Benchmark("objects walk 5 million", configuration: walk) { benchmark, state in
        for _ in benchmark.scaledIterations { blackHole(try state.walkAsObjects(limit: nil)) }
    } setup: {
        try RequestState.stream(check: false)
    }
    Benchmark("objects walk 100k", configuration: walk) { benchmark, state in
        for _ in benchmark.scaledIterations { blackHole(try state.walkAsObjects(limit: 100_000)) }
    } setup: {
        try RequestState.stream(check: false)
    }
    Benchmark("raw single row 5 million", configuration: walk) { benchmark, state in
        for _ in benchmark.scaledIterations { blackHole(try state.raw.walkSingleRow(RequestFixture.streamSQL)) }
    } setup: {
        try RequestState.stream(check: false)
    }
    paired("paired walk 5 million", metric: "walk", label: "Relate", iterations: 5, maxDuration: .seconds(120),
           setup: { try RequestState.stream(check: true) },
           side: { try $0.walkAsObjects(limit: nil).rows }, raw: { try $0.raw.walkSingleRow(RequestFixture.streamSQL).rows })
}
