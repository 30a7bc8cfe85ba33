// swift-tools-version: 6.1
// Relate in a server: a Hummingbird 2 app over BaseTen's person / email / title schema.
// Its own package, so that the library's test command never builds Hummingbird. Run it
// with ./run (see README.md beside this file).
import PackageDescription

// SwiftPM names a dependency given by path after its folder: the clone's, whatever it is called.
let relate = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "Relate")

let package = Package(
    name: "RelateExamples",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Settings from environment variables (the port, the database's URL and pool).
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        // The console's spans: swift-otel 1.6.0 has no console span exporter (see ConsoleSpans.swift).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // Spans to the console, or to an OTLP collector over HTTP when OTEL_* says so; the
        // gRPC exporter (trait OTLPGRPC, a long build of grpc-swift) is left out.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        .executableTarget(
            name: "PeopleServer",
            dependencies: [
                .product(name: "Relate", package: relate),
                .product(name: "RelateConfiguration", package: relate),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            // Person, Email, Title and PersonTitleRel, from relate-model.json at build time.
            plugins: [.plugin(name: "RelateGenerator", package: relate)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
