// swift-tools-version: 6.1
// The HTTP benchmark (issue 40, item 7): the same three endpoints in Hummingbird over Relate
// and in Hummingbird over postgres-nio's PostgresClient. A package of its own, so that neither
// the library nor the main Benchmarks package builds Hummingbird; run it with ../http-run.
import PackageDescription

// SwiftPM names a dependency given by path after its folder: the clone's, whatever it is called.
let relate = String(Context.packageDirectory.split(separator: "/").dropLast(2).last ?? "Relate")

let package = Package(
    name: "RelateHTTPBenchmark",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // What both servers answer: the same JSON shapes, the same routes' parameters.
        .target(
            name: "ServerShapes",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")]
        ),
        .executableTarget(
            name: "RelateServer",
            dependencies: [
                "ServerShapes",
                .product(name: "Relate", package: relate),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // Author and Post, from relate-model.json at build time.
            plugins: [.plugin(name: "RelateGenerator", package: relate)]
        ),
        .executableTarget(
            name: "PostgresNIOServer",
            dependencies: [
                "ServerShapes",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
