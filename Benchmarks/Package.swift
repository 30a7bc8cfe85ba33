// swift-tools-version: 6.1
// Benchmarks for Relate, kept apart from the library so that it does not depend on the
// benchmark package. Run them with ./run (see README.md beside this file).
import PackageDescription

// SwiftPM names a dependency given by path after its folder: the clone's, whatever it is called.
let relate = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "Relate")

let package = Package(
    name: "RelateBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        // Naming the traits replaces the benchmark package's default set
        // ["MallocInterposer", "RuntimeInterposer"]: the RuntimeInterposer trait (ARC
        // counters on Linux with Swift 6.3) needs ordo-one/swift-runtime-interposer,
        // which is not available here. See README.md.
        //
        // The malloc interposer (the malloc counts) puts a header before every allocation
        // and a call through a pointer in every malloc and free: it slows the side that
        // allocates more, so time is measured without it. RELATE_BENCH_MALLOC_COUNTS=1
        // builds it in, for the malloc counts (Benchmarks/run keeps that build apart).
        .package(
            url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1",
            traits: Context.environment["RELATE_BENCH_MALLOC_COUNTS"] == "1" ? ["MallocInterposer"] : []),
        // The peers a Swift developer would pick instead (issue 15), for the PeerBenchmarks
        // target only: their first build takes minutes, and nothing else here needs them.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/vapor/fluent-kit.git", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
    ],
    targets: [
        // Raw libpq for the baseline. The parent's CLibPQ is a target, not a product, so
        // it cannot be named from this package; this is the same module map under another name.
        .systemLibrary(
            name: "CLibPQRaw",
            path: "Sources/CLibPQRaw",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // The fixtures and both sides of every task, shared by the benchmarks and the
        // profiling runner.
        .target(
            name: "BenchmarkFixtures",
            dependencies: [
                .product(name: "Relate", package: relate),
                .product(name: "RelatePostgres", package: relate),
                // A tracer that keeps its spans, for the cost of tracing when it is on.
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                "CLibPQRaw",
            ]
        ),
        // The same tasks through Fluent and postgres-nio: in a target of their own, so that
        // only PeerBenchmarks builds them.
        .target(
            name: "PeerFixtures",
            dependencies: [
                "BenchmarkFixtures",
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Relate", package: relate),
                .product(name: "RelatePostgres", package: relate),
            ]
        ),
        // Several sides of one task in turns, each side's time and ratio as metrics.
        .target(
            name: "Interleaved",
            dependencies: [.product(name: "Benchmark", package: "benchmark")]
        ),
        .executableTarget(
            name: "RelateBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Relate", package: relate),
                .product(name: "RelatePostgres", package: relate),
                "BenchmarkFixtures",
                "Interleaved",
            ],
            path: "Benchmarks/RelateBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Relate, raw libpq, Fluent and postgres-nio on the same tasks (see README.md).
        .executableTarget(
            name: "PeerBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkFixtures",
                "PeerFixtures",
                "Interleaved",
            ],
            path: "Benchmarks/PeerBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The load scripts/patroni-failover drives through a Patroni cluster (see README.md).
        .executableTarget(
            name: "RelateFailover",
            dependencies: [.product(name: "Relate", package: relate), .product(name: "RelatePostgres", package: relate)]
        ),
        // Change feeds of each mechanism, 1 to 64 of them, under pgbench (scripts/feed-scaling).
        .executableTarget(
            name: "RelateFeedScaling",
            dependencies: [.product(name: "Relate", package: relate), .product(name: "RelatePostgres", package: relate)]
        ),
        // 10,000 live queries in 1,000 groups over 100 tenants under pgbench (scripts/live-scaling).
        .executableTarget(
            name: "RelateLiveScaling",
            dependencies: [.product(name: "Relate", package: relate), .product(name: "RelatePostgres", package: relate)]
        ),
        // One task, one side, in a loop: for perf and valgrind (see README.md).
        .executableTarget(
            name: "RelateProfile",
            dependencies: ["BenchmarkFixtures", .product(name: "Relate", package: relate)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
