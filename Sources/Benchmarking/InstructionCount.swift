import CValgrind
import Foundation
import MediaIO

/// Instructions per frame, counted by valgrind's callgrind: a count, not a time, so the
/// same binary on the same input gives the same figure whatever else the machine runs. That
/// is what a regression gate on a shared machine can trust; wall time there moves by tens of
/// per cent from one minute to the next.
///
/// `dualcam bench --instructions` starts itself again under callgrind with collection off
/// (`launch`); the counted process turns it on around each measured region only (`count`)
/// and dumps each case under its name, which `launch` reads back.
public enum InstructionCount {
    /// Running under valgrind (the counted process).
    public static var underValgrind: Bool { dc_running_on_valgrind() != 0 }

    /// Suffix of the dump that holds a record case's other camera (its own thread's work).
    public static let otherSuffix = "/other"

    /// `warmup` frames uncounted (scale plans, pools, first-use paths), then `frames` frames
    /// of `frame` counted and recorded as `name`; when `prepare` does work of its own (the
    /// other camera), another pass counts it alone and records it as `name` + `otherSuffix`.
    /// The counter runs only around the counted calls.
    public static func count(name: String, frames: Int, warmup: Int = 3, with counter: some RegionCounter,
                             prepare: (Int) throws -> Void, frame: (Int) throws -> Void, countsPrepare: Bool) throws {
        for n in 0..<warmup {
            try prepare(n)
            try frame(n)
        }
        var n = warmup
        if countsPrepare {
            try counter.zero()
            for _ in 0..<frames {
                try counter.resume()
                try prepare(n)
                try counter.pause()
                try frame(n)
                n += 1
            }
            try counter.record(name + otherSuffix)
        }
        try counter.zero()
        for _ in 0..<frames {
            try prepare(n)
            try counter.resume()
            try frame(n)
            try counter.pause()
            n += 1
        }
        try counter.record(name)
    }

    /// The counted process's side of callgrind: collection toggled by client requests, each
    /// total dumped under its name for `launch` to read back.
    public final class Callgrind: RegionCounter {
        public init() {}
        public func zero() { dc_callgrind_zero_stats() }
        public func resume() { dc_callgrind_toggle_collect() }
        public func pause() { dc_callgrind_toggle_collect() }
        public func record(_ name: String) { dc_callgrind_dump_stats_at(name) }
    }

    public enum Failure: Error, CustomStringConvertible {
        case noValgrind
        /// `ending`: "exited 1" or "was killed by signal 9"; `log`: valgrind's whole output, kept.
        case failed(ending: String, stderr: String, log: String?)
        case noCounts(String)
        public var description: String {
            switch self {
            case .noValgrind: return "valgrind is not installed (apt install valgrind): instruction counts need its callgrind"
            case let .failed(ending, stderr, log):
                return "the counted run \(ending): \(InstructionCount.cause(in: stderr))" + (log.map { " (valgrind's output: \($0))" } ?? "")
            case let .noCounts(why): return "no instruction counts: \(why)"
            }
        }
    }

    /// The line of the counted run's output that says why it failed. Valgrind prefixes its
    /// own lines with `==PID==`, opens with a banner and closes with a summary, and ends many
    /// messages with an empty line, so the last line alone says nothing: valgrind's fatal
    /// messages are looked for first, then the program's own last line (the loader's or
    /// dualcam's error), then valgrind's last line that is neither banner nor summary.
    static func cause(in stderr: String) -> String {
        var valgrindSaid: [String] = [], programSaid: [String] = []
        for line in stderr.split(separator: "\n") {
            if line.hasPrefix("=="), let end = line.dropFirst(2).range(of: "== ") {
                let text = line[end.upperBound...].trimmingCharacters(in: .whitespaces)
                if !text.isEmpty { valgrindSaid.append(text) }
            } else if !line.hasPrefix("--") {
                let text = line.trimmingCharacters(in: .whitespaces)
                if !text.isEmpty { programSaid.append(text) }
            }
        }
        // A sanitizer's build (CI's ThreadSanitizer one) carries debug information valgrind
        // 3.19 cannot read; it says so among lines of "### unhandled dwarf2 abbrev form".
        if let unreadable = valgrindSaid.first(where: { $0.contains("debuginfo reader: Possibly corrupted") }) {
            return "valgrind cannot read this build's debug information (\(unreadable)): count a plain debug or "
                + "release build (valgrind cannot run one made with a sanitizer)"
        }
        let fatal = ["out of memory", "Process terminating", "Unrecognised instruction", "unhandled instruction",
                     "the 'impossible' happened", "Fatal error", "FATAL", "failed to start tool", "Error:"]
        for marker in fatal {
            if let index = valgrindSaid.firstIndex(where: { $0.contains(marker) }) {
                // The out-of-memory message says who asked for how much on its next line.
                let next = marker == "out of memory" && index + 1 < valgrindSaid.count ? " " + valgrindSaid[index + 1] : ""
                return valgrindSaid[index] + next
            }
        }
        if let last = programSaid.last { return last }
        let routine = ["Callgrind, a call-graph", "Copyright (C)", "Using Valgrind-", "Command: ", "For interactive control",
                       "Using source line as position", "Events", "Collected", "I   refs"]
        return valgrindSaid.last { line in !routine.contains { line.hasPrefix($0) } }
            ?? "valgrind said nothing after starting it"
    }

    /// What the counted process must be given beside its arguments, so that its counts do
    /// not depend on the process or the machine: Swift's hashing seeded the same way each run,
    /// and glibc's copy routines chosen the same way whatever the CPU's cache sizes and
    /// `rep movsb` speed (valgrind counts each byte a `rep movsb` moves as an instruction).
    public static let environment = [
        "SWIFT_DETERMINISTIC_HASHING": "1",
        "GLIBC_TUNABLES": "glibc.cpu.x86_rep_movsb_threshold=0x7fffffffffffffff:"
            + "glibc.cpu.x86_rep_stosb_threshold=0x7fffffffffffffff:"
            + "glibc.cpu.x86_non_temporal_threshold=0x7fffffffffffffff",
    ]

    /// Runs `executable arguments` under callgrind, collection off until the process asks,
    /// and returns each dump's instruction count by the name it was dumped under. A run that
    /// fails is said on stderr and run once more: a count does not depend on the moment, so a
    /// second run that succeeds is as good as a first; one CI run (stop 28) lost the counted
    /// process once, its cause not kept, where every run here had passed.
    public static func launch(executable: String, arguments: [String]) throws -> [String: UInt64] {
        do {
            return try launchOnce(executable: executable, arguments: arguments)
        } catch let failure as Failure {
            guard case .failed = failure else { throw failure }
            writeToStandardError("bench: \(failure); counting again\n")
            return try launchOnce(executable: executable, arguments: arguments)
        }
    }

    static func launchOnce(executable: String, arguments: [String]) throws -> [String: UInt64] {
        guard let valgrind = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw Failure.noValgrind }
        let name = "dualcam-callgrind-\(UUID().uuidString)"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: valgrind)
        process.arguments = ["--tool=callgrind", "--collect-atstart=no", "--dump-line=no", "--compress-strings=no",
                             "--callgrind-out-file=\(folder.path)/counts", executable] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment.merge(Self.environment) { _, ours in ours }
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .exit && process.terminationStatus == 0 else {
            let ending = process.terminationReason == .uncaughtSignal
                ? "was killed by signal \(process.terminationStatus)" : "exited \(process.terminationStatus)"
            let log = FileManager.default.temporaryDirectory.appendingPathComponent(name + ".log")
            let kept = (try? Data(errorText.utf8).write(to: log)) != nil ? log.path : nil
            throw Failure.failed(ending: ending, stderr: errorText, log: kept)
        }
        var counts: [String: UInt64] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            if let (name, instructions) = parseDump(text) { counts[name] = instructions }
        }
        guard !counts.isEmpty else { throw Failure.noCounts("callgrind wrote no dump named by the benchmark") }
        return counts
    }

    /// A callgrind dump's trigger name and its instruction total (`totals:` or `summary:`),
    /// when it was dumped by a client request.
    static func parseDump(_ text: String) -> (String, UInt64)? {
        var name: String?, total: UInt64?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("desc: Trigger: Client Request: ") {
                name = String(line.dropFirst("desc: Trigger: Client Request: ".count))
            } else if line.hasPrefix("totals: ") || (total == nil && line.hasPrefix("summary: ")) {
                total = line.split(separator: " ").dropFirst().first.flatMap { UInt64($0) }
            }
        }
        guard let name, let total else { return nil }
        return (name, total)
    }
}
