import ArgumentParser
import Foundation
import MediaIO
import Pipeline

struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compose every pair of a manifest (CSV or JSON Lines), in parallel, resumably, with one report.",
        discussion: """
            Each row of MANIFEST is one composition: its back, front and output files (relative to \
            the manifest's folder) and any of compose's options as a column (size, layout, swap_at, \
            inset, corner, codec, crf, audio ...). compose options given here are the defaults of \
            every row. The whole manifest is checked before anything runs (exit 64, a line for each \
            problem). A row that fails is reported and the others go on: exit 0 only when every row \
            is made, 1 otherwise, 130 on Ctrl-C (rows finished are kept, running ones removed). A \
            row whose output was made by an earlier run from the same inputs and options is not \
            made again (--force makes every row again). Each row leaves OUT.batch.json beside its \
            output; on a cluster, --row I (or SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX) runs row I \
            alone and --report-only gathers what every row left.

            EXAMPLES:
              Every pair of talks.csv, two at a time, a report for the record:
                dualcam batch talks.csv --jobs 2 --report report.json
              All rows at 720p unless a row says otherwise:
                dualcam batch talks.jsonl --size 1280x720
              As a Slurm job array (Docs/cluster.md), then the report:
                sbatch --array=0-199 --wrap 'dualcam batch talks.csv'
                dualcam batch talks.csv --report-only --report report.json
            """)

    @Argument(help: "The manifest: .csv (a header row first) or .jsonl (an object per line).", completion: .file(extensions: ["csv", "jsonl"]))
    var manifest: String
    @Option(help: "Compositions at a time. (default: the planner's, from the CPUs allowed)") var jobs: Int?
    @Option(parsing: .unconditional, help: ArgumentHelp("Run this row alone (0 is the first under the header). (default: SLURM_ARRAY_TASK_ID or "
                               + "JOB_COMPLETION_INDEX where set, else every row)", valueName: "I"))
    var row: Int?
    @Option(help: ArgumentHelp("Write the report here as JSON.", valueName: "FILE.json")) var report: String?
    @Flag(help: "Run nothing: gather the report from what each row left.") var reportOnly = false
    @Flag(help: "Make every row again, even those already made (their outputs are replaced).") var force = false
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("compose's options, the defaults of every row.", valueName: "compose options"))
    var defaultOptions: [String] = []

    func validate() throws {
        if let jobs, !(1...64).contains(jobs) { throw ValidationError("--jobs must be from 1 to 64; got \(jobs)") }
        if let row, row < 0 { throw ValidationError("--row must be 0 or more; got \(row)") }
        if row != nil && reportOnly { throw ValidationError("--row runs one row and --report-only none: give one or the other") }
        if let report, let problem = BatchReport.nameProblem(report) { throw ValidationError(problem) }
    }

    /// The manifest read and checked whole, with the defaults, and each row's arguments parsed
    /// as compose parses them (a bad value is found here, for every row, before any runs).
    /// Its problems are a line each and exit 64, with no usage text after them: they are the
    /// manifest's, not the command line's (so they are found in `run`, not `validate`).
    func plan() throws -> (manifest: BatchManifest, defaults: [String: String], rows: [BatchManifest.Row]) {
        let defaults: [String: String]
        switch BatchManifest.defaults(from: defaultOptions) {
        case let .success(found): defaults = found
        case let .failure(problems): throw ValidationError(problems.lines.joined(separator: "\n"))
        }
        let (found, problems) = BatchManifest.readAll(manifest)
        guard let read = found else { throw Self.refusal(problems) }
        let refused = read.rows.compactMap { row -> (Int, String)? in
            do { _ = try Compose.parse(row.composeArguments(defaults: defaults)); return nil } catch {
                return (row.index, "\(manifest): row \(row.index): \(Compose.message(for: error))")
            }
        }
        // In the manifest's order: a row's compose problem beside its own file problems.
        let all = (problems + refused.map(\.1)).sorted { Self.rowNumber($0) < Self.rowNumber($1) }
        if !all.isEmpty { throw Self.refusal(all) }
        if let report, let clash = Self.reportClash(report, rows: read.rows) { throw Self.refusal([clash]) }
        guard let chosen = try chosenRow(count: read.rows.count) else { return (read, defaults, read.rows) }
        return (read, defaults, [read.rows[chosen]])
    }

    /// --report naming a file a row reads, writes or keeps its result in.
    private static func reportClash(_ report: String, rows: [BatchManifest.Row]) -> String? {
        let place = BatchManifest.normalized(report)
        for row in rows {
            for (file, what) in [(row.back, "back"), (row.front, "front"), (row.output, "output"),
                                 (BatchReport.resultPath(for: row.output), "result file")]
            where BatchManifest.normalized(file) == place {
                return "--report \(report) is row \(row.index)'s \(what)"
            }
        }
        return nil
    }

    private static func refusal(_ lines: [String]) -> Failure {
        Failure(lines.map { "dualcam: " + TerminalLine.printable($0) }.joined(separator: "\n"), code: 64, prefixed: false)
    }

    private static func rowNumber(_ line: String) -> Int {
        line.firstMatch(of: #/: row ([0-9]+): /#).flatMap { Int($0.1) } ?? -1
    }

    /// --row, else a job array's index from the environment; nil: every row.
    private func chosenRow(count: Int) throws -> Int? {
        let environment = ProcessInfo.processInfo.environment
        let given: (Int?, String)? = row.map { (Optional($0), "--row \($0)") } ?? ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"].lazy.compactMap { name in
            environment[name].map { value in (Int(value.trimmingCharacters(in: .whitespaces)), "\(name) '\(value)'") }
        }.first
        guard let (number, source) = given, !reportOnly else { return nil }
        guard let index = number else { throw Self.refusal(["\(source): not a row number"]) }
        guard (0..<count).contains(index) else {
            throw Self.refusal(["\(source): the manifest has rows 0 to \(count - 1)"])
        }
        return index
    }

    func run() throws {
        let (manifest, defaults, rows) = try plan()
        Interruption.exitAtOnceUntilStarted(false)
        let outcomes: [BatchReport.Outcome], started = monotonicNow()
        if reportOnly {
            outcomes = rows.map { BatchReport.gathered($0, digest: $0.digest(defaults: defaults)) }
        } else {
            let runner = BatchRunner(rows: rows, defaults: defaults, jobs: jobs ?? BatchRunner.plannedJobs(), force: force)
            outcomes = runner.run()
        }
        let whole = BatchReport(manifest: manifest.path, outcomes: outcomes, elapsed: reportOnly ? nil : monotonicNow() - started)
        if let report { try whole.write(to: report) }
        for line in whole.summaryLines { print(line) }
        if Interruption.requested { throw ExitCode(Interruption.exitCode) }
        if whole.failed > 0 || whole.notRun > 0 { throw ExitCode(1) }
    }
}
