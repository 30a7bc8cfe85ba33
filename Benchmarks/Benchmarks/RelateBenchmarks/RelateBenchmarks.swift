import Benchmark
import Foundation
import RelatePostgres

#if os(Linux)
/// glibc's `malloc_trim` (from <malloc.h>, which the Glibc module leaves out).
@_silgen_name("malloc_trim")
func malloc_trim(_ pad: Int) -> Int32
#endif

/// What a benchmark's setup leaves for its measured part. Each benchmark runs in a process
/// of its own, so each has its own connections.
final class State {
    let connection: Connection
    let raw: RawConnection
    /// For the decode-only benchmark: the rows fetched once, outside the measurement.
    var prefetched: PostgresResult?
    var rawPrefetched: OpaquePointer?
    /// Counts the paired benchmarks' iterations, to alternate which side goes first.
    var iteration = 0

    init(prefetch: Bool) throws {
        connection = try Fixture.prepare()
        raw = try RawConnection(url: try Fixture.url())
        try Fixture.check(connection: connection, raw: raw)
        if prefetch {
            prefetched = try connection.query(Fixture.select, format: .binary)
            rawPrefetched = try raw.execute()
        }
        #if os(Linux)
        // The check above held 200,000 rows; give that memory back so it does not count
        // in the measured part's resident peak.
        _ = malloc_trim(0)
        #endif
    }

    deinit {
        if let rawPrefetched { PQclearRaw(rawPrefetched) }
    }
}

/// Times `body` in microseconds.
@inline(__always)
func microseconds(_ body: () throws -> [FetchedRow]) rethrows -> Int {
    let start = ContinuousClock.now
    blackHole(try body())
    let elapsed = ContinuousClock.now - start
    return Int(elapsed.components.seconds) * 1_000_000 + Int(elapsed.components.attoseconds / 1_000_000_000_000)
}

/// Runs both sides back to back in each iteration, in alternating order, and records each
/// side's time and the pair's ratio as custom metrics. Noise from the machine (other
/// processes, a busy server) then falls on both sides alike, which two benchmarks in two
/// processes one after the other cannot promise.
func paired(
    _ name: String, iterations: Int,
    connection: @escaping (State) throws -> [FetchedRow], raw: @escaping (State) throws -> [FetchedRow], prefetch: Bool
) {
    let connectionTime = BenchmarkMetric.custom("\(name): Connection (μs)", useScalingFactor: false)
    let rawTime = BenchmarkMetric.custom("\(name): raw libpq (μs)", useScalingFactor: false)
    let ratio = BenchmarkMetric.custom("\(name): Connection/raw ×1000", useScalingFactor: false)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, connectionTime, rawTime, ratio], timeUnits: .microseconds,
        units: [connectionTime: .count, rawTime: .count, ratio: .count],
        warmupIterations: 2, scalingFactor: .one, maxDuration: .seconds(10), maxIterations: iterations)
    Benchmark("paired \(name) 100k", configuration: configuration) { benchmark, state in
        for _ in benchmark.scaledIterations {
            state.iteration += 1
            let c: Int
            let r: Int
            if state.iteration.isMultiple(of: 2) {
                c = try microseconds { try connection(state) }
                r = try microseconds { try raw(state) }
            } else {
                r = try microseconds { try raw(state) }
                c = try microseconds { try connection(state) }
            }
            benchmark.measurement(connectionTime, c)
            benchmark.measurement(rawTime, r)
            benchmark.measurement(ratio, c * 1000 / max(r, 1))
        }
    } setup: {
        try State(prefetch: prefetch)
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
}
