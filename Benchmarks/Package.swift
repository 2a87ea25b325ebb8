// swift-tools-version: 6.1
// Per-kernel and per-layout benchmarks of the compositor, with package-benchmark:
//   swift package --package-path Benchmarks benchmark
// Kept out of the main package so that building and testing DualCam does not build the
// benchmark framework.
import Foundation
import PackageDescription

// The same instruction set as the compositor it measures (see ../Package.swift).
#if arch(x86_64)
let kernelISA = ["-Xcc", "-march=x86-64-" + (ProcessInfo.processInfo.environment["DUALCAM_X86_64_LEVEL"] ?? "v2")]
#else
let kernelISA: [String] = []
#endif

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
            swiftSettings: [.unsafeFlags(kernelISA)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // The product's paths (`dualcam bench`'s cases) with their allocations counted.
        .executableTarget(
            name: "PathBenchmarks",
            dependencies: [
                .product(name: "Benchmarking", package: "DualCam"),
                .product(name: "Benchmark", package: "package-benchmark"),
            ],
            path: "Benchmarks/PathBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ]
)
