// swift-tools-version: 6.1
import PackageDescription

// Colony's micro-benchmarks (package-benchmark): the hot paths under every request, each with
// thresholds that fail `swift package benchmark thresholds check` on a regression.
// Run through `scripts/bench micro` (or `swift package benchmark` here); see docs/benchmarks.md.
let package = Package(
    name: "colony-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "colony", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
    ],
    targets: [
        .executableTarget(
            name: "HotPaths",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "ColonyModels", package: "colony"),
                .product(name: "ColonyPlatform", package: "colony"),
                .product(name: "RealtimeService", package: "colony"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/HotPaths",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
