import CValgrind
import Foundation

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

    /// In the counted process: `warmup` frames uncounted (scale plans, pools, first-use
    /// paths), then `frames` frames of `frame` counted and dumped as `name`; when `prepare`
    /// does work of its own (the other camera), another pass counts it alone and dumps it as
    /// `name` + `otherSuffix`. Collection is toggled, so nothing between counts.
    public static func count(name: String, frames: Int, warmup: Int = 3,
                             prepare: (Int) throws -> Void, frame: (Int) throws -> Void, countsPrepare: Bool) throws {
        for n in 0..<warmup {
            try prepare(n)
            try frame(n)
        }
        var n = warmup
        if countsPrepare {
            dc_callgrind_zero_stats()
            for _ in 0..<frames {
                dc_callgrind_toggle_collect()
                try prepare(n)
                dc_callgrind_toggle_collect()
                try frame(n)
                n += 1
            }
            dc_callgrind_dump_stats_at(name + otherSuffix)
        }
        dc_callgrind_zero_stats()
        for _ in 0..<frames {
            try prepare(n)
            dc_callgrind_toggle_collect()
            try frame(n)
            dc_callgrind_toggle_collect()
            n += 1
        }
        dc_callgrind_dump_stats_at(name)
    }

    public enum Failure: Error, CustomStringConvertible {
        case noValgrind
        case failed(status: Int32, stderr: String)
        case noCounts(String)
        public var description: String {
            switch self {
            case .noValgrind: return "valgrind is not installed (apt install valgrind): instruction counts need its callgrind"
            case let .failed(status, stderr):
                return "the counted run exited \(status): \(stderr.split(separator: "\n").last.map(String.init) ?? "")"
            case let .noCounts(why): return "no instruction counts: \(why)"
            }
        }
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
    /// and returns each dump's instruction count by the name it was dumped under.
    public static func launch(executable: String, arguments: [String]) throws -> [String: UInt64] {
        guard let valgrind = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw Failure.noValgrind }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dualcam-callgrind-\(UUID().uuidString)")
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
        guard process.terminationStatus == 0 else { throw Failure.failed(status: process.terminationStatus, stderr: errorText) }
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
