import ArgumentParser
import Foundation
import MediaIO
import Pipeline

extension LatencyBench.Sources: ExpressibleByArgument {}

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure compositing latency per frame, against libswscale doing the same scaling.",
        discussion: """
            Needs no input files. Each case composes --frames frames, every one from a source \
            frame not in the CPU caches, and reports p50/p99/max in milliseconds. Exits non-zero \
            when any case's p99 exceeds the budget. Run a release build for real figures.
            """)

    @Option(help: "Frames per case.") var frames = 600
    @Flag(help: "Print one JSON object instead of a table.") var json = false
    @Option(name: .customLong("budget-ms"), help: "Per-frame latency budget for p99, in milliseconds.")
    var budgetMs = 16.0
    @Flag(help: "Also time the scalar reference kernels (slow).") var withScalar = false
    @Option(help: "Threads composing each frame (1 or 2).") var threads = 2
    @Option(help: "cold: every source frame comes from memory (a camera's); warm: from cache (a decoder's).")
    var sources: LatencyBench.Sources = .cold
    @Option(help: ArgumentHelp("Only these cases (comma-separated).", valueName: "NAMES"))
    var cases: String?
    @Flag(help: "Instead of timing, check that the SIMD kernels give the scalar reference's output to the bit in each case (exit 1 if not).")
    var verify = false
    @Flag(help: ArgumentHelp(
        "Time the MJPEG camera path instead: two 1080p cameras' JPEGs decoded and composed, the front at full size and at the size its inset needs (exit 1 if that saves less than a quarter of its decoding).",
        valueName: "mjpeg"))
    var mjpeg = false

    func validate() throws {
        guard (1...2).contains(threads) else { throw ValidationError("--threads must be 1 or 2") }
        guard frames >= 1 else { throw ValidationError("--frames must be at least 1") }
        guard budgetMs > 0 else { throw ValidationError("--budget-ms must be positive") }
        if let cases {
            let known = Set(LatencyBench.cases.map(\.name))
            for name in cases.split(separator: ",") where !known.contains(String(name)) {
                throw ValidationError("unknown case '\(name)'; known: \(known.sorted().joined(separator: ", "))")
            }
        }
    }

    func run() throws {
        var bench = LatencyBench()
        bench.frames = frames
        bench.withScalar = withScalar
        bench.threads = threads
        bench.sources = sources
        if mjpeg { return try runMJPEG() }
        let selected = cases.map { Set($0.split(separator: ",").map(String.init)) }
        if verify {
            var exact = true
            for c in LatencyBench.cases where selected?.contains(c.name) ?? true {
                let differing = try bench.mismatchedBytes(c)
                print("\(c.name): \(differing == 0 ? "SIMD and scalar reference agree to the bit" : "\(differing) bytes differ")")
                exact = exact && differing == 0
            }
            if !exact { throw ExitCode(1) }
            return
        }
        var results: [LatencyBench.Result] = []
        for c in LatencyBench.cases where selected?.contains(c.name) ?? true {
            results.append(try bench.run(c))
        }
        let within = results.allSatisfy { $0.ours.p99 <= budgetMs }
        if json {
            print(jsonReport(results, within: within))
        } else {
            printTable(results, within: within)
        }
        if !within { throw ExitCode(1) }
    }

    /// Role-sized decoding must save at least this share of the front camera's decode (50 % measured, 44-61 % on a noisier day).
    static let mjpegFrontSavingFloor = 0.25

    private func runMJPEG() throws {
        var bench = MJPEGBench()
        bench.frames = frames
        let r = try bench.run()
        let frontSaving = 1 - r.roleSized.frontDecodeMs / r.fullSize.frontDecodeMs
        let ok = frontSaving >= Self.mjpegFrontSavingFloor
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(r), as: UTF8.self))
        } else {
            print("MJPEG path, 1080p back + 1080p front (\(r.jpegBytes / 1000) kB JPEGs), CPU ms per frame (p50 of \(frames)):")
            print("front decoded at     back decode  front decode  compose  total")
            for (label, run) in [("full, libswscale", r.reference), ("full size", r.fullSize),
                                 ("1/\(1 << r.roleSized.frontShift) (inset role)", r.roleSized)] {
                print(label.padding(toLength: 20, withPad: " ", startingAt: 0)
                      + String(format: " %11.2f %13.2f %8.2f %6.2f", run.backDecodeMs, run.frontDecodeMs, run.composeMs, run.cpuPerFrameMs))
            }
            print(String(format: "role-sized decoding: front decode %.0f %% cheaper, both cameras' decoding %.0f %% cheaper; "
                         + "at 30 fps that is %.1f %% of one core saved (%@)",
                         frontSaving * 100, r.decodeSaving * 100,
                         (r.fullSize.frontDecodeMs - r.roleSized.frontDecodeMs) * 30 / 10, ok ? "ok" : "REGRESSION"))
            print(String(format: "against full size with libswscale converting (an ffmpeg pipeline's way): %.2fx less CPU per frame",
                         r.reference.cpuPerFrameMs / r.roleSized.cpuPerFrameMs))
        }
        if !ok { throw ExitCode(1) }
    }

    private func jsonReport(_ results: [LatencyBench.Result], within: Bool) -> String {
        func n(_ v: Double) -> String { String(format: "%.4f", v) }
        let cases = results.map { r -> String in
            var fields = ["\"name\": \"\(r.name)\"", "\"p50_ms\": \(n(r.ours.p50))", "\"p99_ms\": \(n(r.ours.p99))",
                          "\"max_ms\": \(n(r.ours.max))", "\"frames\": \(r.ours.frames)",
                          "\"swscale_p50_ms\": \(n(r.swscale.p50))", "\"swscale_p99_ms\": \(n(r.swscale.p99))",
                          "\"speedup_vs_swscale\": \(n(r.swscale.p50 / r.ours.p50))"]
            if let s = r.scalar { fields.append("\"scalar_p50_ms\": \(n(s.p50))") }
            return "{" + fields.joined(separator: ", ") + "}"
        }
        return "{\"cases\": [" + cases.joined(separator: ", ") + "], \"budget_ms\": \(n(budgetMs)), \"within_budget\": \(within)"
            + ", \"sources\": \"\(sources.rawValue)\", \"threads\": \(threads)}"
    }

    private func printTable(_ results: [LatencyBench.Result], within: Bool) {
        var header = "case             p50 ms   p99 ms   max ms | swscale+copy p50   p99 | speedup"
        if withScalar { header += " | scalar p50" }
        print(header)
        for r in results {
            var line = r.name.padding(toLength: max(14, r.name.count), withPad: " ", startingAt: 0)
                + String(format: " %8.3f %8.3f %8.3f | %15.3f %7.3f | %6.1fx",
                         r.ours.p50, r.ours.p99, r.ours.max, r.swscale.p50, r.swscale.p99, r.swscale.p50 / r.ours.p50)
            if let s = r.scalar { line += String(format: " | %9.3f", s.p50) }
            print(line)
        }
        print(String(format: "budget %.1f ms per frame (p99): %@; %d frames per case, %@ sources, %d thread(s)",
                     budgetMs, within ? "met" : "EXCEEDED", results.first?.ours.frames ?? 0, sources.rawValue, threads))
    }
}
