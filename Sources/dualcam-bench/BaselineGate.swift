import Foundation
import MediaIO

/// `--baseline FILE`: each case's figures against those a saved `--json` run gives it. A
/// figure more than `tolerance` per cent over its baseline fails the gate; every such case
/// is named (stderr), so one run tells all that regressed.
struct BaselineGate {
    enum Kind { case instructions, times }
    let path: String
    let tolerance: Double
    let kind: Kind
    let baseline: [String: [String: Double]]
    /// What counted a baseline of instructions (nil for times, or a file from before the
    /// field said which: callgrind was then the only counter).
    let counter: Bench.CounterChoice?

    init(path: String, tolerance: Double, kind: Kind) throws {
        self.path = path
        self.tolerance = tolerance
        self.kind = kind
        // A saved run is a few kilobytes: a folder, a device or a huge file is none.
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFREG else { throw Self.failure("\(path): not a file, so not a saved run") }
            guard st.st_size <= Self.largest else { throw Self.failure("\(path): \(st.st_size) bytes, not a saved run") }
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = access(path, R_OK) == 0 ? "cannot be read" : String(cString: strerror(errno))
            throw Self.failure("\(path): \(reason) (save one first: dualcam bench\(kind == .instructions ? " --instructions" : "") --json > \(path))")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let cases = object["cases"] as? [[String: Any]]
        else { throw Self.failure("\(path): not a saved `dualcam bench --json` run") }
        let counted = object["counter"] != nil
        counter = (object["counter"] as? String).flatMap { Bench.CounterChoice(rawValue: $0) }
        if counted != (kind == .instructions) {
            throw Self.failure("\(path) holds \(counted ? "instruction counts" : "times"): compare it with a run "
                      + (counted ? "with" : "without") + " --instructions")
        }
        if counted, let machine = object["machine"] as? String, machine != Bench.machine {
            writeToStandardError("bench: \(path) was counted on \(machine), this is \(Bench.machine): "
                + "libjpeg-turbo and libswscale pick their code by CPU and may count differently\n")
        }
        var figures: [String: [String: Double]] = [:]
        for c in cases {
            guard let name = c["name"] as? String else { continue }
            let numbers = c.filter { Self.gated.contains($0.key) }.compactMapValues { ($0 as? NSNumber)?.doubleValue }
            // A figure no run gives (0, negative, beyond any count) is a file edited by hand.
            if let (metric, value) = numbers.first(where: { !($0.value > 0 && $0.value < 1e15) }) {
                throw Self.failure("\(path): \(name)'s \(metric) is \(value), which no run gives: not a saved run")
            }
            figures[name] = numbers
        }
        baseline = figures
    }

    /// The figures a gate compares: times' p50, instruction counts.
    static let gated: Set<String> = ["p50_ms", "instructions_per_frame", "other_instructions_per_frame"]

    /// More than any saved run (a thousand cases) takes.
    static let largest: off_t = 16 << 20

    /// A baseline that cannot be used: exit 2, as a regression is not (that is 1).
    static func failure(_ line: String) -> BenchFailure { BenchFailure(message: "bench: \(line)", code: 2) }

    /// True when no case regressed.
    func check(_ rows: [(name: String, metrics: [String: Double])]) throws -> Bool {
        fflush(nil)  // every output stream: the report first, then the verdict, in a log that takes both
        var regressed: [String] = [], improved: [String] = [], compared = 0
        for row in rows {
            guard let old = baseline[row.name] else {
                writeToStandardError("bench: \(row.name): not in \(path), not gated\n")
                continue
            }
            for (metric, value) in row.metrics.sorted(by: { $0.key < $1.key }) {
                guard let before = old[metric], before > 0 else { continue }
                compared += 1
                let change = (value / before - 1) * 100
                guard abs(change) > tolerance else { continue }
                let unit = kind == .instructions ? Bench.grouped(value) : String(format: "%.3f ms", value)
                let was = kind == .instructions ? Bench.grouped(before) : String(format: "%.3f ms", before)
                let line = String(format: "%@ %@: %@ against %@ (%+.2f %%)", row.name, metric, unit, was, change)
                if change > 0 { regressed.append(line) } else { improved.append(line) }
            }
        }
        for line in regressed {
            writeToStandardError("bench: REGRESSED \(line), over the \(String(format: "%g", tolerance)) % tolerance\n")
        }
        // A gain kept in the baseline would hide a later regression of up to its size.
        for line in improved {
            writeToStandardError("bench: improved \(line): save a new baseline (the same command with "
                + "--json > \(path), without --baseline) so that a later regression cannot hide behind this gain\n")
        }
        // A gate that compared nothing held nothing: a CI step with an empty case list passed.
        if compared == 0 {
            throw Self.failure("\(path) has none of the figures this run measured (\(rows.map(\.name).joined(separator: ", "))): "
                               + "nothing was compared")
        }
        if regressed.isEmpty {
            writeToStandardError("bench: \(compared) figure\(compared == 1 ? "" : "s") of \(rows.count) case\(rows.count == 1 ? "" : "s"), none more than "
                + "\(String(format: "%g", tolerance)) % over \(path)\n")
        }
        return regressed.isEmpty
    }
}
