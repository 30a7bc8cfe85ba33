// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Relate",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Relate", targets: ["Relate"]),
        .library(name: "RelatePostgres", targets: ["RelatePostgres"]),
        .library(name: "RelateConfiguration", targets: ["RelateConfiguration"]),
        .executable(name: "relate", targets: ["relate"]),
        .plugin(name: "RelateGenerator", targets: ["RelateGenerator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        // Pool and statement metrics; nothing is recorded (or timed) without a backend.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        // `Database` is a ServiceLifecycle `Service`: a dependency, not a trait (see the
        // Production article): the conformance is what lets a server's `ServiceGroup` drain it.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Statements and units of work as spans of the application's tracer (none: no cost).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // `Configuration(config:)` in RelateConfiguration: settings from environment variables,
        // files, … (swift-configuration, which brings swift-system's C module: a target of its own,
        // so that `Relate` alone does not).
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        // `swift package generate-documentation`: the DocC catalogs (no code of the library depends on it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(
            name: "RelatePostgres",
            dependencies: [
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Relate",
            dependencies: [
                "RelatePostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "RelateConfiguration",
            dependencies: ["Relate", .product(name: "Configuration", package: "swift-configuration")]
        ),
        // Swift source from `relate inspect --format json`: plain text, no Relate, no libpq,
        // shared by `relate generate` and the RelateGenerator build-tool plugin.
        .target(name: "RelateCodeGen"),
        .executableTarget(name: "relate-generate-tool", dependencies: ["RelateCodeGen"]),
        .plugin(name: "RelateGenerator", capability: .buildTool(), dependencies: ["relate-generate-tool"]),
        .executableTarget(
            name: "relate",
            dependencies: [
                "Relate",
                "RelateCodeGen",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "RelateModelTests",
            dependencies: ["Relate", "RelatePostgres", "RelateCodeGen"]
        ),
        .testTarget(
            name: "RelateIntegrationTests",
            // `relate` is listed so the CLI tests find the binary built beside them.
            dependencies: [
                "Relate", "RelatePostgres", "RelateCodeGen", "relate", "relate-generate-tool", "RelateConfiguration",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        // Types generated from sql/examples/awkward_identifiers.sql, used against the server:
        // a module of their own, beside the seeds' types of RelateIntegrationTests.
        .testTarget(
            name: "RelateTypedAwkwardTests",
            dependencies: ["Relate", "RelatePostgres", "RelateCodeGen"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
