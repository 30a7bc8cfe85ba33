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
    ],
    targets: [
        .executableTarget(
            name: "PeopleServer",
            dependencies: [
                .product(name: "Relate", package: relate),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // Person, Email, Title and PersonTitleRel, from relate-model.json at build time.
            plugins: [.plugin(name: "RelateGenerator", package: relate)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
