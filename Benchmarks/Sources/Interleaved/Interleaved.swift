import Benchmark

/// One way of doing a benchmark's task: Relate, raw libpq, a peer library.
///
/// `baseline` names the side this one's time is divided by in each iteration (its ratio
/// metric); a side without one is only timed. `observe`, when given, is what the check
/// compares instead of the answer `run` gives: for a write, the rows it left behind, read
/// outside the measurement.
public struct Side<Fixture, Answer> {
    public let name: String
    public let baseline: String?
    public let run: (Fixture) async throws -> Answer
    public let observe: ((Fixture) async throws -> Answer)?

    public init(
        _ name: String, against baseline: String? = nil,
        observe: ((Fixture) async throws -> Answer)? = nil,
        run: @escaping (Fixture) async throws -> Answer
    ) {
        self.name = name
        self.baseline = baseline
        self.run = run
        self.observe = observe
    }
}

/// What a benchmark's setup made, and how many iterations ran (to rotate the order).
final class Rotation<Fixture> {
    let fixture: Fixture
    var iteration = 0
    init(_ fixture: Fixture) { self.fixture = fixture }
}

/// The task's failure when its sides disagree, raised before anything is measured.
public struct SidesDisagree: Error, CustomStringConvertible {
    public let description: String
}

/// Runs every side once in each iteration, in an order that rotates by one side per
/// iteration, and records each side's time and each side's ratio to its baseline as custom
/// metrics. Machine noise (other processes, a busy server) then falls on all sides alike,
/// which separate processes one after the other cannot promise; the ratio to judge is the
/// median of the per-iteration ratios.
///
/// Metrics, as `Benchmarks/run` reads them: `<metric>: <side> (μs)` for every side, and
/// `<metric>: <side>/<baseline> ×1000` for every side with a baseline.
///
/// Before anything is timed, every side runs once (after `prepare`) and its answer, passed
/// through `canonical` (an order that differs between sides, say), must equal the first
/// side's; then `expected`, when given, must hold for it. Otherwise the benchmark fails.
/// `prepare` runs before each side in every iteration, unmeasured; `teardown` once at the end.
public func interleaved<Fixture, Answer: Equatable>(
    _ name: String, metric: String, iterations: Int, maxDuration: Duration = .seconds(20),
    setup: @escaping () async throws -> Fixture,
    prepare: @escaping (Fixture) async throws -> Void = { _ in },
    canonical: @escaping (Answer) -> Answer = { $0 },
    expected: ((Answer) -> Bool)? = nil,
    teardown: ((Fixture) async throws -> Void)? = nil,
    sides: [Side<Fixture, Answer>]
) {
    let times = sides.map { BenchmarkMetric.custom("\(metric): \($0.name) (μs)", useScalingFactor: false) }
    let ratios: [(side: Int, baseline: Int, metric: BenchmarkMetric)] = sides.indices.compactMap { index in
        guard let baseline = sides[index].baseline else { return nil }
        guard let baselineIndex = sides.firstIndex(where: { $0.name == baseline }) else {
            fatalError("\(name): side \(sides[index].name) is compared with \(baseline), which is not one of its sides")
        }
        return (index, baselineIndex, .custom("\(metric): \(sides[index].name)/\(baseline) ×1000", useScalingFactor: false))
    }
    let custom = times + ratios.map(\.metric)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock] + custom, timeUnits: .microseconds,
        units: Dictionary(uniqueKeysWithValues: custom.map { ($0, .count) }),
        warmupIterations: 1, scalingFactor: .one, maxDuration: maxDuration, maxIterations: iterations)

    // The teardown hook gets no setup state: the fixture is kept here for it.
    let made = Made<Fixture>()
    Benchmark(name, configuration: configuration) { (benchmark: Benchmark, rotation: Rotation<Fixture>) async throws in
        for _ in benchmark.scaledIterations {
            let first = rotation.iteration % sides.count
            rotation.iteration += 1
            var elapsed = [Int](repeating: 0, count: sides.count)
            for offset in sides.indices {
                let index = (first + offset) % sides.count
                try await prepare(rotation.fixture)
                let start = ContinuousClock.now
                blackHole(try await sides[index].run(rotation.fixture))
                elapsed[index] = microseconds(ContinuousClock.now - start)
            }
            for (index, metric) in zip(sides.indices, times) {
                benchmark.measurement(metric, elapsed[index])
            }
            for ratio in ratios {
                benchmark.measurement(ratio.metric, elapsed[ratio.side] * 1000 / max(elapsed[ratio.baseline], 1))
            }
        }
    } setup: {
        let fixture = try await setup()
        made.fixture = fixture
        try await check(name, fixture, prepare: prepare, canonical: canonical, expected: expected, sides: sides)
        return Rotation(fixture)
    } teardown: {
        if let fixture = made.fixture { try await teardown?(fixture) }
        made.fixture = nil
    }
}

/// The fixture a benchmark's setup made, for its teardown.
final class Made<Fixture>: @unchecked Sendable {
    var fixture: Fixture?
}

/// Every side once, outside the measurement: all must give the same answer.
private func check<Fixture, Answer: Equatable>(
    _ name: String, _ fixture: Fixture, prepare: (Fixture) async throws -> Void,
    canonical: (Answer) -> Answer, expected: ((Answer) -> Bool)?, sides: [Side<Fixture, Answer>]
) async throws {
    var reference: (side: String, answer: Answer)?
    for side in sides {
        try await prepare(fixture)
        var answer = try await side.run(fixture)
        if let observe = side.observe { answer = try await observe(fixture) }
        answer = canonical(answer)
        if let reference {
            guard answer == reference.answer else {
                throw SidesDisagree(description: "\(name): \(side.name) and \(reference.side) give different answers")
            }
        } else {
            guard expected?(answer) ?? true else {
                throw SidesDisagree(description: "\(name): \(side.name) does not give the expected answer")
            }
            reference = (side.name, answer)
        }
    }
}

/// A duration in whole microseconds.
public func microseconds(_ duration: Duration) -> Int {
    Int(duration.components.seconds) * 1_000_000 + Int(duration.components.attoseconds / 1_000_000_000_000)
}
