import Foundation
import MediaIO
import Pipeline

/// Runs a batch's rows, `jobs` at a time, each as a `dualcam compose` of its own: a row that
/// fails, or crashes, takes nothing else with it, and each is compose exactly as a user
/// running it by hand gets it. One progress line on a terminal; each row's messages printed
/// when it ends, its row first.
final class BatchRunner {
    let rows: [BatchManifest.Row]
    let defaults: [String: String]
    let jobs: Int
    let force: Bool
    /// Names the batch to each of its compositions, which stop when it ends (Compose.run).
    static let parentVariable = "DUALCAM_BATCH_PARENT"

    init(rows: [BatchManifest.Row], defaults: [String: String], jobs: Int, force: Bool) {
        self.rows = rows
        self.defaults = defaults
        self.jobs = jobs
        self.force = force
    }

    /// Compositions at a time when --jobs is not given: two per CPU allowed, at most 16, and no
    /// more than a 512 MiB share of the memory each. A short composition leaves CPUs idle as it
    /// opens its files and encoder and drains: 12 rows of the bundled 3 s clips at 1280x720 on
    /// two idle CPUs took 21.3 and 18.6 s one at a time, 17.7 and 16.6 s two at a time, 14.6
    /// and 15.5 s four at a time (Benchmarks/batch-jobs.sh, alternated).
    static func plannedJobs(cpus: Int = CPUAllowance.current().wholeCPUs,
                            memory: UInt64 = ProcessInfo.processInfo.physicalMemory) -> Int {
        max(1, min(2 * cpus, 16, Int(memory / (512 << 20))))
    }

    private struct Running {
        let row: BatchManifest.Row
        let digest: String
        let process: Process
        let stdout: String, stderr: String
        let started: Double
    }

    func run() -> [BatchReport.Outcome] {
        let scratch = NSTemporaryDirectory() + "dualcam-batch-\(getpid())"
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var outcomes: [Int: BatchReport.Outcome] = [:], waiting: [(BatchManifest.Row, String)] = []
        for row in rows {
            let digest = row.digest(defaults: defaults)
            if !force, let made = BatchReport.alreadyMade(row, digest: digest) { outcomes[row.index] = made } else { waiting.append((row, digest)) }
        }
        var running: [Running] = [], frames = 0, finishedHere = 0, stopsSent = false
        let started = monotonicNow()
        while !waiting.isEmpty || !running.isEmpty {
            while running.count < jobs, !waiting.isEmpty, !Interruption.requested {
                let (row, digest) = waiting.removeFirst()
                switch start(row, digest: digest, scratch: scratch) {
                case let .running(child): running.append(child)
                case let .notStarted(outcome): outcomes[row.index] = BatchReport.keep(outcome)
                }
            }
            if Interruption.requested && !stopsSent {
                // Once: a second signal would tell a composition removing its file to stop at once.
                stopsSent = true
                waiting.removeAll()  // not run: said so in the report
                for child in running where child.process.isRunning { child.process.interrupt() }
            }
            usleep(50_000)
            // Once: a child that ends between two looks must not be dropped unrecorded.
            let ended = running.filter { !$0.process.isRunning }
            running.removeAll { child in ended.contains { $0.process === child.process } }
            for child in ended {
                let outcome = finished(child)
                frames += outcome.frames ?? 0
                finishedHere += 1
                outcomes[child.row.index] = BatchReport.keep(outcome)
            }
            let done = outcomes.count, elapsed = monotonicNow() - started
            TerminalLine.shared.update(String(format: "batch: %d of %d rows, %d failed, %d running · %.0f fps", done, rows.count,
                                              outcomes.values.filter { $0.status == .failed }.count, running.count,
                                              elapsed > 0 ? Double(frames) / elapsed : 0)
                                       + Self.timeLeft(finished: finishedHere, left: waiting.count + running.count, elapsed: elapsed))
        }
        TerminalLine.shared.clear()
        return rows.map { outcomes[$0.index] ?? BatchReport.Outcome($0, digest: $0.digest(defaults: defaults), status: .notRun) }
    }

    /// "· about 1:20 left", from the rows this run has finished (several at a time).
    private static func timeLeft(finished: Int, left: Int, elapsed: Double) -> String {
        guard finished > 0, left > 0 else { return "" }
        return " · about \(clockText(elapsed / Double(finished) * Double(left))) left"
    }

    private enum Started {
        case running(Running)
        case notStarted(BatchReport.Outcome)
    }

    private func start(_ row: BatchManifest.Row, digest: String, scratch: String) -> Started {
        var arguments = ["compose"] + row.composeArguments(defaults: defaults) + ["--json"]
        // Replaced only when a batch made it (or --force): a file of the user's own at a row's
        // output fails that row, untouched.
        if OutputPath.entry(row.output) != nil {
            guard force || BatchReport.madeByABatch(row) else {
                var refused = BatchReport.Outcome(row, digest: digest, status: .failed)
                refused.error = "\(row.output): already exists, and no batch made it (--force replaces it)"
                say("row \(row.index): \(refused.error!)")
                return .notStarted(refused)
            }
            arguments.append("--overwrite")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let out = scratch + "/\(row.index).out", err = scratch + "/\(row.index).err"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: err)
        process.standardInput = FileHandle.nullDevice
        process.environment = ProcessInfo.processInfo.environment.merging([Self.parentVariable: "\(getpid())"]) { $1 }
        // Foundation would start it in the working folder by its name, which it cannot give
        // where the name is not UTF-8: the kernel's link to the folder itself always works.
        process.currentDirectoryURL = URL(fileURLWithPath: "/proc/\(getpid())/cwd")
        do { try process.run() } catch {
            var failed = BatchReport.Outcome(row, digest: digest, status: .failed)
            failed.error = "could not start dualcam compose: \(error.localizedDescription)"
            return .notStarted(failed)
        }
        return .running(Running(row: row, digest: digest, process: process, stdout: out, stderr: err, started: monotonicNow()))
    }

    private func finished(_ child: Running) -> BatchReport.Outcome {
        let code = child.process.terminationStatus, signalled = child.process.terminationReason == .uncaughtSignal
        let lines = ((try? String(contentsOfFile: child.stderr, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        for line in lines { say("row \(child.row.index): " + (line.hasPrefix("dualcam: ") ? String(line.dropFirst(9)) : line)) }
        // The runner stops its compositions with SIGINT, whatever signal stopped it; one still
        // starting has no handler yet, and SIGINT ends it before it wrote anything.
        let interrupted = Interruption.requested && (signalled ? code == SIGINT : code == 128 + SIGINT)
        var outcome = BatchReport.Outcome(child.row, digest: child.digest, status: code == 0 && !signalled ? .done : interrupted ? .interrupted : .failed)
        outcome.seconds = ((monotonicNow() - child.started) * 1000).rounded() / 1000
        if let data = FileManager.default.contents(atPath: child.stdout),
           let summary = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            outcome.frames = summary["frames"] as? Int
            outcome.duration = (summary["seconds"] as? NSNumber)?.doubleValue
        }
        if outcome.status == .failed {
            outcome.error = signalled ? "dualcam compose ended by signal \(code)" : lines.last.map { $0.hasPrefix("dualcam: ") ? String($0.dropFirst(9)) : $0 }
                ?? "dualcam compose exited \(code)"
        }
        return outcome
    }
}
