import ArgumentParser
import Foundation
import MediaIO
import Benchmarking

extension Bench {
    /// The cases asked for, in the order given (all by default).
    var selectedCases: [String] { cases.map { $0.split(separator: ",").map(String.init) } ?? Self.defaultCases }

    /// Under callgrind: each case's per-frame work, counted (`count`).
    func countInstructions() throws {
        guard InstructionCount.underValgrind else {
            throw ValidationError("--counted is what --instructions runs under valgrind; use --instructions")
        }
        try count(with: InstructionCount.Callgrind())
    }

    /// Each case's per-frame work, counted. One thread composes (a second thread's share is
    /// the same instructions, and its waits would vary the count), and sources are warm
    /// (where they come from changes the time, not the instructions).
    func count(with counter: some RegionCounter) throws {
        var paths = PathBench()
        paths.threads = 1
        paths.sources = .warm
        paths.layout.style = insetStyle.style
        var kernels = LatencyBench()
        kernels.threads = 1
        kernels.sources = .warm
        kernels.layout.style = insetStyle.style
        for name in selectedCases {
            if let c = PathBench.cases.first(where: { $0.name == name }) {
                let work = try paths.work(c)
                try InstructionCount.count(name: name, frames: framesPerCase, with: counter, prepare: work.prepare,
                                           frame: work.frame, countsPrepare: c.path != .compose)
            } else if let c = LatencyBench.cases.first(where: { $0.name == name }) {
                let frame = try kernels.work(c)
                try InstructionCount.count(name: name, frames: framesPerCase, with: counter, prepare: { _ in }, frame: frame,
                                           countsPrepare: false)
            }
        }
    }

    /// The counter `--instructions` uses, and the hardware one when that is it: `--counter`,
    /// else the baseline's, else the CPU's where it counts, else callgrind. Asked for and not
    /// there: one line, exit 2, before any counting.
    func chooseCounter(baseline gate: BaselineGate?) throws -> (CounterChoice, PerfInstructions?) {
        let wanted = counter != .auto ? counter : gate?.counter ?? .auto
        if wanted == .callgrind { return (.callgrind, nil) }
        do {
            return (.perf, try PerfInstructions())
        } catch {
            if wanted == .auto { return (.callgrind, nil) }
            let asked = counter == .auto ? gate.map { "\($0.path) was counted with perf, but " } ?? "" : ""
            throw BaselineGate.failure(asked + "\(error); count with --counter callgrind (and a baseline counted with it)")
        }
    }

    /// Counts every case, prints the figures, and holds them against --baseline.
    func reportInstructions() throws {
        // A baseline that cannot be used is said before minutes of counting, not after.
        let gate = try baseline.map { try BaselineGate(path: $0, tolerance: tolerance ?? 1, kind: .instructions) }
        let (used, perf) = try chooseCounter(baseline: gate)
        if let gate, let theirs = gate.counter, theirs != used {
            throw BaselineGate.failure("\(gate.path) was counted with \(theirs.rawValue), this run counts with \(used.rawValue): "
                              + "the two count differently; compare like with like (--counter \(theirs.rawValue))")
        }
        let counts: [String: UInt64]
        do {
            if let perf {
                try count(with: perf)
                counts = perf.totals
            } else {
                let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
                counts = try InstructionCount.launch(executable: executable, arguments: [
                    "--counted", "--frames", "\(framesPerCase)", "--cases", selectedCases.joined(separator: ","),
                    "--inset-style", insetStyle.rawValue])
            }
        } catch {
            writeToStandardError("dualcam: bench: \(error)\n")
            throw ExitCode(1)
        }
        let frames = Double(framesPerCase)
        var rows: [(name: String, metrics: [String: Double])] = []
        for name in selectedCases {
            guard let total = counts[name] else {
                writeToStandardError("dualcam: bench: no count for \(name)\n")
                throw ExitCode(1)
            }
            var metrics = ["instructions_per_frame": (Double(total) / frames).rounded()]
            if let other = counts[name + InstructionCount.otherSuffix] {
                metrics["other_instructions_per_frame"] = (Double(other) / frames).rounded()
            }
            rows.append((name, metrics))
        }
        if json {
            let cases = rows.map { row -> String in
                var fields = ["\"name\": \"\(row.name)\"", "\"frames\": \(framesPerCase)"]
                for key in row.metrics.keys.sorted() { fields.append("\"\(key)\": \(UInt64(row.metrics[key]!))") }
                return "{" + fields.joined(separator: ", ") + "}"
            }
            print("{" + Self.provenance(schema: "dualcam.bench.instructions/1") + ", \"counter\": \"\(used.rawValue)\", \"cases\": ["
                  + cases.joined(separator: ", ") + "], \"inset_style\": \"\(insetStyle.rawValue)\", \"machine\": \"\(Self.machine)\"}")
        } else {
            print("case                         instructions/frame   other camera/frame")
            for row in rows {
                let other = row.metrics["other_instructions_per_frame"].map { Self.grouped($0) } ?? "-"
                print(row.name.padding(toLength: 28, withPad: " ", startingAt: 0)
                      + Self.grouped(row.metrics["instructions_per_frame"]!).leftPadded(to: 19)
                      + other.leftPadded(to: 21))
            }
            let by = used == .perf ? "the CPU's counter (perf_event_open, user space)" : "valgrind's callgrind"
            print("counted by \(by) over \(framesPerCase) frames per case, after 3 uncounted; one thread, warm sources")
        }
        let held = try gate?.check(rows) ?? true
        if !held { throw ExitCode(1) }
    }

    /// The CPU's model name: libraries that pick their code by CPU (libjpeg-turbo, libswscale)
    /// may count differently on another.
    static var machine: String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = info.split(separator: "\n").first { $0.hasPrefix("model name") }?.split(separator: ":", maxSplits: 1).last
        return model.map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\"", with: "") } ?? "unknown"
    }

    static func grouped(_ value: Double) -> String {
        let digits = String(UInt64(value))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }
}

extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
