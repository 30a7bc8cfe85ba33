// swift-tools-version: 6.1
// Typed models from a checked-in `relate-model.json`, generated at build time by the
// RelateGenerator plugin: no database needed to build. Its own package, beside the server
// example, with no dependency beyond Relate.
//
//   swift build --package-path Examples/TypedPeople
//   DATABASE_URL=postgresql://… swift run --package-path Examples/TypedPeople
import PackageDescription

// SwiftPM names a dependency given by path after its folder: the clone's, whatever it is called.
let relate = String(Context.packageDirectory.split(separator: "/").dropLast(2).last ?? "Relate")

let package = Package(
    name: "TypedPeople",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "TypedPeople",
            dependencies: [.product(name: "Relate", package: relate)],
            plugins: [.plugin(name: "RelateGenerator", package: relate)]
        ),
        // The typed API's cost against the dynamic layer (build with -c release).
        .executableTarget(
            name: "TypedReads",
            dependencies: [.product(name: "Relate", package: relate)],
            plugins: [.plugin(name: "RelateGenerator", package: relate)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
