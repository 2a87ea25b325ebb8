// swift-tools-version: 6.1
// Per-kernel and per-layout benchmarks of the compositor, with package-benchmark:
//   swift package --package-path Benchmarks benchmark
// Kept out of the main package so that building and testing DualCam does not build the
// benchmark framework.
import PackageDescription

let package = Package(
    name: "DualCamBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "DualCam", path: ".."),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "CompositorBenchmarks",
            dependencies: [
                .product(name: "Compositor", package: "DualCam"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/CompositorBenchmarks",
            swiftSettings: [.unsafeFlags(["-Xcc", "-march=x86-64-v3"])],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ]
)
