// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Relate",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Relate", targets: ["Relate"]),
        .library(name: "RelatePostgres", targets: ["RelatePostgres"]),
        .executable(name: "relate", targets: ["relate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
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
            ]
        ),
        .executableTarget(
            name: "relate",
            dependencies: [
                "Relate",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "RelateModelTests",
            dependencies: ["Relate", "RelatePostgres"]
        ),
        .testTarget(
            name: "RelateIntegrationTests",
            // `relate` is listed so the CLI tests find the binary built beside them.
            dependencies: ["Relate", "RelatePostgres", "relate"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
