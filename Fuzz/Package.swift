// swift-tools-version: 5.4
// 5.4 on purpose: from 5.5 on, SwiftPM links an executable's `main` to an entry point of
// its own (so tests can import executables), which leaves no room for libFuzzer's `main`.
// The code is still compiled in the Swift 6 language mode.
import PackageDescription

/// libFuzzer targets for RelatePostgres's decoders, in a package of their own so that the
/// main package's `swift build` and `swift test` never build them. `scripts/fuzz` builds
/// them with `-sanitize=fuzzer,address` and runs them; see Sources/FuzzSupport for what
/// every target checks and how it reads its input.
let fuzzTargets = ["integers", "floats", "numeric", "dates", "text-bytea-uuid-bool", "arrays", "replication"]

let package = Package(
    name: "RelateFuzz",
    dependencies: [
        .package(name: "Relate", path: ".."),
    ],
    targets: [
        .target(
            name: "FuzzSupport",
            dependencies: [.product(name: "RelatePostgres", package: "Relate")]
        ),
    ] + fuzzTargets.map { name in
        .executableTarget(
            name: name,
            dependencies: ["FuzzSupport", .product(name: "RelatePostgres", package: "Relate")]
        )
    },
    swiftLanguageVersions: [.version("6")]
)
