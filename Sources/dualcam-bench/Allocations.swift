import ArgumentParser
import Benchmarking
import Compositor
import Foundation

extension Bench {
    /// What a case may allocate while it makes frames (after its pools are full): the
    /// compositor's kernels nothing at all; a product path no frame-sized (large) allocation,
    /// small ones being made on purpose (the AVFrame a decoded picture is wrapped in, a
    /// reference to a queued camera frame).
    enum AllocationRule: String {
        case none = "no allocation"
        case noLarge = "no frame-sized allocation"
        func holds(_ c: AllocationCount.Counts) -> Bool { self == .none ? c.total == 0 : c.large == 0 }
    }

    /// `--allocations`: every case's allocations over --frames frames, held to its rule.
    /// Runs with libDualCamAllocationCount.so preloaded: started without it, the harness
    /// starts itself again with it (from beside the executable).
    func reportAllocations() throws {
        guard let counter = AllocationCount() else { try Self.restartWithAllocationCounter() }
        guard counter.seesAllocations() else {
            throw BenchFailure(message: "bench: the allocation counter sees no allocation in this process "
                               + "(is another malloc preloaded first?); nothing judged", code: 2)
        }
        var paths = PathBench()
        paths.threads = threads
        paths.sources = .warm
        paths.layout.style = insetStyle.style
        var kernels = LatencyBench()
        kernels.threads = threads
        kernels.sources = .warm
        kernels.layout.style = insetStyle.style
        var rows: [(name: String, rule: AllocationRule)] = []
        // Pools (camera frames, scale plans, the encoder's frames) fill in the first frames.
        let warmup = 8
        for name in cases.map({ $0.split(separator: ",").map(String.init) }) ?? Self.allocationCases {
            if let c = PathBench.cases.first(where: { $0.name == name }) {
                let work = try paths.work(c)
                try InstructionCount.count(name: name, frames: framesPerCase, warmup: warmup, with: counter,
                                           prepare: work.prepare, frame: work.frame, countsPrepare: c.path != .compose)
                rows.append((name, .noLarge))
                if c.path != .compose { rows.append((name + InstructionCount.otherSuffix, .noLarge)) }
            } else if let c = LatencyBench.cases.first(where: { $0.name == name }) {
                for variant in withScalar ? [KernelVariant.simd, .scalar] : [.simd] {
                    let label = variant == .simd ? name : "\(name) scalar"
                    try InstructionCount.count(name: label, frames: framesPerCase, warmup: warmup, with: counter,
                                               prepare: { _ in }, frame: try kernels.work(c, kernels: variant), countsPrepare: false)
                    rows.append((label, .none))
                }
            }
        }
        print("case                              allocations  frame-sized  rule")
        var held = true
        for row in rows {
            let counts = counter.recorded[row.name] ?? AllocationCount.Counts(total: .max, large: .max)
            let ok = row.rule.holds(counts)
            held = held && ok
            let name = row.name.padding(toLength: 32, withPad: " ", startingAt: 0)
            let figures = String(counts.total).leftPadded(to: 13) + String(counts.large).leftPadded(to: 13)
            print(name + figures + "  " + row.rule.rawValue + (ok ? "" : ": BROKEN"))
        }
        print("allocations in \(framesPerCase) frames per case after \(warmup) uncounted, \(threads) thread(s), warm sources; "
              + "frame-sized: over 16 KiB; " + (held ? "every rule held" : "a rule BROKEN"))
        if !held { throw ExitCode(1) }
    }

    /// Every case, the named-only kernel ones too: their allocations cost nothing to count.
    static var allocationCases: [String] { PathBench.cases.map(\.name) + LatencyBench.cases.map(\.name) }

    /// Starts this program again with the counter preloaded, the same arguments; returns
    /// only by throwing (no counter beside the executable, or it did not load).
    static func restartWithAllocationCounter() throws -> Never {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let library = executable.deletingLastPathComponent().appendingPathComponent(AllocationCount.library).path
        let preload = ProcessInfo.processInfo.environment["LD_PRELOAD"] ?? ""
        guard FileManager.default.fileExists(atPath: library), !preload.contains(library) else {
            throw BenchFailure(message: "bench: --allocations counts with \(AllocationCount.library) preloaded, and "
                               + (preload.contains(library) ? "it did not load from \(library)"
                                  : "there is none beside \(executable.path) (swift build -c release --product DualCamAllocationCount)"),
                               code: 2)
        }
        setenv("LD_PRELOAD", preload.isEmpty ? library : library + ":" + preload, 1)
        execv(executable.path, CommandLine.unsafeArgv)
        throw BenchFailure(message: "bench: could not start \(executable.path) again with the allocation counter: "
                           + String(cString: strerror(errno)), code: 2)
    }
}
