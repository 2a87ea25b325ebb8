// swift-tools-version: 6.2
import Foundation
import PackageDescription

// Scripts/sanitizers.sh sets this: sanitizer builds leave out what their instrumentation
// cannot compile (the compositor's prefetch intrinsic).
let sanitized = ProcessInfo.processInfo.environment["DUALCAM_SANITIZED"] == "1"

// The compositor's kernels are generic Swift SIMD; the instruction set they compile to is
// chosen here, per architecture. x86-64: SSE4.2 (x86-64-v2) by default, which every x86-64
// CPU still in use runs; DUALCAM_X86_64_LEVEL=v3 builds for AVX2 (Haswell and later, ~40 %
// faster inset, SIGILL on anything older). Elsewhere (aarch64: NEON is baseline) the
// compiler's default for the target.
#if arch(x86_64)
let x86Level = ProcessInfo.processInfo.environment["DUALCAM_X86_64_LEVEL"] ?? "v2"
let kernelISA = ["-Xcc", "-march=x86-64-\(x86Level)"]
#else
let kernelISA: [String] = []
#endif

// CI sets this: a compiler warning in our own code fails the build (dependencies keep theirs).
let strict: [SwiftSetting] = ProcessInfo.processInfo.environment["DUALCAM_WERROR"] == "1"
    ? [.unsafeFlags(["-warnings-as-errors"])] : []

let package = Package(
    name: "DualCam",
    products: [
        .executable(name: "dualcam", targets: ["dualcam"]),
        // The benchmark harness and its regression gate (`dualcam bench` runs it): the
        // counters and the references it times against are not in `dualcam`.
        .executable(name: "dualcam-bench", targets: ["dualcam-bench"]),
        .library(name: "Compositor", targets: ["Compositor"]),
        // For the package-benchmark suite (Benchmarks/): the product paths it counts
        // allocations on.
        .library(name: "Pipeline", targets: ["Pipeline"]),
        .library(name: "Benchmarking", targets: ["Benchmarking"]),
        // The allocation counter `dualcam bench --allocations` preloads (LD_PRELOAD): it
        // replaces malloc for a whole process, so no program links it.
        .library(name: "DualCamAllocationCount", type: .dynamic, targets: ["CAllocationCount"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat libavcodec libavutil libswscale libswresample",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev"])]
        ),
        .systemLibrary(
            name: "CV4L2",
            pkgConfig: "libv4l2",
            providers: [.apt(["libv4l-dev"])]
        ),
        // No pkgConfig: sdl2.pc's -D_REENTRANT is a flag SwiftPM refuses with a warning on
        // every build, and the shim needs nothing else of it (<SDL2/SDL.h> is on the default
        // include path, the module map links SDL2). libsdl2-dev: Scripts/setup.sh.
        .systemLibrary(name: "CSDL2"),
        .systemLibrary(
            name: "CJPEG",
            pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"])]
        ),
        // Callgrind's client requests, for `dualcam bench --instructions` (header only: the
        // macros do nothing outside valgrind).
        .systemLibrary(
            name: "CValgrind",
            providers: [.apt(["valgrind"])]
        ),
        // perf_event_open and its ioctls (variadic in C) for `dualcam bench --instructions`
        // where the CPU counts instructions. A header, no library.
        .systemLibrary(name: "CPerfEvent"),
        // The vector instructions Swift cannot spell, for the compositor's enlarging kernels:
        // bytes picked by a vector of indices (pshufb, tbl), a rounded high multiply
        // (pmulhrsw, sqrdmulh), sums of products (pmaddwd) and saturating packs and adds.
        // A header, no library.
        .systemLibrary(name: "CVectorOps"),
        .systemLibrary(
            name: "CALSA",
            pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]
        ),
        // The pixel kernels and the layout arithmetic, in Swift; no C but the vector
        // instructions' header (CVectorOps). Always optimised: the kernels are unusably slow
        // at -Onone, and the debug test suite composes real 1080p video through them.
        .target(
            name: "Compositor",
            dependencies: ["CVectorOps"],
            swiftSettings: [.unsafeFlags(["-O"] + kernelISA)]
                + (sanitized ? [.define("DUALCAM_SANITIZED")] : []) + strict
        ),
        // Linux system calls Swift's Glibc does not show (renameat2, O_TMPFILE, linkat of a
        // descriptor).
        // DWARF 4: valgrind 3.19 (Debian 12), which counts the benchmarks' instructions,
        // cannot read the DWARF 5 clang writes by default ("possibly corrupted debuginfo").
        .target(name: "CLinuxCalls", cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        // What FFmpeg may open and how our files are written (inputs confined to their folder,
        // outputs through a descriptor, network deadlines): C, because FFmpeg calls it back.
        .target(name: "CFFmpegPolicy", dependencies: ["CFFmpeg"], cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        .target(name: "MediaIO", dependencies: ["CFFmpeg", "CFFmpegPolicy", "CJPEG", "CV4L2", "CALSA", "CLinuxCalls", "Compositor"],
                swiftSettings: strict),
        .target(name: "Pipeline", dependencies: ["MediaIO", "Compositor", "CV4L2"], swiftSettings: strict),
        // The benchmark harness (`dualcam-bench`): the product's paths timed beside their
        // floors and libswscale / libjpeg-turbo references. Nothing in `dualcam` links it.
        .target(name: "Benchmarking", dependencies: ["Pipeline", "MediaIO", "Compositor", "CFFmpeg", "CJPEG", "CValgrind", "CPerfEvent"], swiftSettings: strict),
        .target(name: "CAllocationCount"),
        // The preview window (SDL2): shows what Pipeline composes, on its own thread.
        .target(name: "Preview", dependencies: ["CSDL2", "Pipeline", "MediaIO", "Compositor"], swiftSettings: strict),
        .executableTarget(
            name: "dualcam",
            dependencies: ["Pipeline", "MediaIO", "Compositor", "Preview",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict,
            // libnuma's warning and error printers, replaced in CLinuxCalls: exported, or
            // libnuma's own calls would not find them.
            linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=numa_warn",
                                           "-Xlinker", "--export-dynamic-symbol=numa_error"])]
        ),
        .executableTarget(
            name: "dualcam-bench",
            dependencies: ["Benchmarking", "Compositor", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        // The vivid VM's A/V sync test plays beeps and flips a camera control at the same
        // monotonic instant with this; it ships nothing.
        // Optimised even in debug builds: it must produce audio in real time in an emulated VM.
        .executableTarget(name: "dualcam-av-marker", dependencies: ["CALSA", "CV4L2"], path: "Tests/AVMarker",
                          swiftSettings: [.unsafeFlags(["-O"])] + strict),
        .testTarget(name: "CompositorTests", dependencies: ["Compositor"], swiftSettings: strict),
        .testTarget(name: "DualCamTests", dependencies: ["Compositor", "MediaIO", "Pipeline", "Benchmarking"], swiftSettings: strict),
    ]
)
