import Foundation
import Testing

/// `dualcam batch`: a manifest of pairs, checked whole before anything runs, run in parallel,
/// a failed row isolated, resumable, one report; one row at a time for a job array.
@Suite(.timeLimit(.minutes(5))) struct BatchTests {
    /// Twelve rows over the fixtures (160x90, as the command line's default): row 5's front is
    /// damaged, and as first written row 7 asks CRF 99 and row 9 names a file not there.
    static func twelveRows(in dir: TempDir, fixed: Bool) throws -> String {
        try FileManager.default.copyItem(atPath: Reference.back, toPath: dir.path("talk.mp4"))
        try FileManager.default.copyItem(atPath: Reference.front, toPath: dir.path("face.mkv"))
        var rng = SystemRandomNumberGenerator()
        try Data((0..<65536).map { _ in UInt8.random(in: 0...255, using: &rng) }).write(to: URL(fileURLWithPath: dir.path("damaged.mp4")))
        var lines = ["back,front,output,crf,corner"]
        for i in 0..<12 {
            let front = i == 5 ? "damaged.mp4" : "face.mkv", back = i == 9 && !fixed ? "nothere.mp4" : "talk.mp4"
            lines.append("\(back),\(front),out-\(i).mov,\(i == 7 && !fixed ? "99" : ""),\(i % 2 == 0 ? "top-left" : "")")
        }
        let manifest = dir.path("talks.csv")
        try (lines.joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        return manifest
    }

    static func report(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    static func statuses(_ report: [String: Any]) -> [String] {
        (report["rows"] as? [[String: Any]] ?? []).map { $0["status"] as? String ?? "?" }
    }

    static func modified(_ path: String) -> Date? { (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date }

    @Test func twelvePairsOneDamagedThenARerunThenForce() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let manifest = try Self.twelveRows(in: dir, fixed: false), report = dir.path("report.json")
        let before = Set(dir.contents)
        let refused = try dualcam(["batch", manifest, "--size", "160x90", "--report", report])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("talks.csv: row 7: --crf must be") && refused.stderr.contains("talks.csv:11: row 9: back nothere.mp4: no such file"),
                "\(refused.stderr)")
        #expect(Set(dir.contents) == before, "written before the manifest was right: \(Set(dir.contents).subtracting(before))")

        try String(contentsOfFile: manifest, encoding: .utf8).replacingOccurrences(of: "nothere.mp4", with: "talk.mp4")
            .replacingOccurrences(of: "out-7.mov,99,", with: "out-7.mov,,").write(toFile: manifest, atomically: true, encoding: .utf8)
        let made = try dualcam(["batch", manifest, "--size", "160x90", "--report", report])
        #expect(made.status == 1, "\(made.stderr)")
        #expect(made.stderr.contains("row 5: ") && made.stdout.contains("row 5 failed: \(dir.path("out-5.mov"))"), "\(made.stdout)\(made.stderr)")
        #expect(made.stdout.contains("batch: 12 rows: 11 made, 0 made before, 1 failed"), "\(made.stdout)")
        var whole = try Self.report(report)
        #expect(whole["schema"] as? String == "dualcam.batch/1" && whole["done"] as? Int == 11 && whole["failed"] as? Int == 1, "\(whole)")
        #expect(Self.statuses(whole) == (0..<12).map { $0 == 5 ? "failed" : "done" })
        try CommandLineTests.expectValid("batch", [report])
        for i in 0..<12 where i != 5 {
            let out = dir.path("out-\(i).mov")
            let video = try #require(try Probe(out).stream("video"), "row \(i)")
            #expect(video["codec_name"] as? String == "hevc" && video["width"] as? Int == 160 && video["height"] as? Int == 90, "row \(i): \(video)")
            #expect(abs((Probe.number(video["duration"]) ?? 0) - 3) < 0.05, "row \(i): \(video)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("out-5.mov")))
        let times = (0..<12).map { Self.modified(dir.path("out-\($0).mov")) }

        // Again: what was made is not made again; the damaged row is tried again and fails again.
        let started = Date()
        let again = try dualcam(["batch", manifest, "--size", "160x90", "--report", report])
        let seconds = Date().timeIntervalSince(started)
        print("batch: the rerun took \(String(format: "%.2f", seconds)) s")
        #expect(again.status == 1 && again.stdout.contains("11 made before, 1 failed"), "\(again.stdout)\(again.stderr)")
        #expect((0..<12).map { Self.modified(dir.path("out-\($0).mov")) } == times, "a row made before was made again")
        whole = try Self.report(report)
        #expect(Self.statuses(whole) == (0..<12).map { $0 == 5 ? "failed" : "skipped" })

        // Another default is another composition: every row is made again, as with --force.
        let forced = try dualcam(["batch", manifest, "--size", "160x90", "--force", "--jobs", "3"])
        #expect(forced.status == 1 && forced.stdout.contains("11 made, 0 made before, 1 failed"), "\(forced.stdout)\(forced.stderr)")
        let remade = (0..<12).map { Self.modified(dir.path("out-\($0).mov")) }
        #expect((0..<12).allSatisfy { $0 == 5 || remade[$0] != times[$0] }, "a row not made again with --force")
        let changed = try dualcam(["batch", manifest, "--size", "192x108"])
        #expect(changed.status == 1 && changed.stdout.contains("11 made, 0 made before"), "\(changed.stdout)\(changed.stderr)")
    }

    /// One row at a time, as a job array runs it (--row, SLURM_ARRAY_TASK_ID), then the
    /// report gathered from what the rows left.
    @Test func oneRowAtATimeThenTheReportGathered() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let manifest = try Self.twelveRows(in: dir, fixed: true), report = dir.path("r.json")
        let first = try dualcam(["batch", manifest, "--size", "160x90", "--row", "3"])
        #expect(first.status == 0 && first.stdout.contains("batch: 1 rows: 1 made"), "\(first.stdout)\(first.stderr)")
        let array = try run(Env.dualcam, ["batch", manifest, "--size", "160x90"], environment: ["SLURM_ARRAY_TASK_ID": "4"])
        #expect(array.status == 0, "\(array.stderr)")
        #expect(dir.contents.filter { $0.hasPrefix("out-") && $0.hasSuffix(".mov") }.sorted() == ["out-3.mov", "out-4.mov"], "\(dir.contents)")
        let failing = try run(Env.dualcam, ["batch", manifest, "--size", "160x90"], environment: ["JOB_COMPLETION_INDEX": "5"])
        #expect(failing.status == 1, "\(failing.stderr)")
        let outOfRange = try dualcam(["batch", manifest, "--row", "12"])
        #expect(outOfRange.status == 64 && outOfRange.stderr.contains("--row 12: the manifest has rows 0 to 11"), "\(outOfRange.stderr)")

        let gathered = try run(Env.dualcam, ["batch", manifest, "--size", "160x90", "--report-only", "--report", report],
                               environment: ["SLURM_ARRAY_TASK_ID": "7"])
        #expect(gathered.status == 1, "\(gathered.stderr)")
        let whole = try Self.report(report)
        #expect(Self.statuses(whole) == (0..<12).map { [3, 4].contains($0) ? "done" : $0 == 5 ? "failed" : "not_run" }, "\(whole)")
        #expect(whole["not_run"] as? Int == 9 && whole["done"] as? Int == 2)
        let otherOptions = try dualcam(["batch", manifest, "--report-only", "--report", report])
        let reported = Self.statuses(try Self.report(report))
        #expect(otherOptions.status == 1 && reported.allSatisfy { $0 == "not_run" },
                "made at another size, no row is this manifest's at the default size")
    }

    /// Ctrl-C (SIGINT to the batch alone), or a scheduler's SIGTERM, while row 1 is made: row
    /// 0 is kept, row 1 interrupted (not failed) and its unfinished file removed, exit 128 +
    /// the signal; the next run makes the rest and not row 0.
    @Test(arguments: [SIGINT, SIGTERM]) func aStopInTheMiddleKeepsWhatWasMade(signal: Int32) throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let manifest = try Self.twelveRows(in: dir, fixed: true)
        let lines = try String(contentsOfFile: manifest, encoding: .utf8).split(separator: "\n").prefix(4).joined(separator: "\n")
        try (lines + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let stopped = try dualcam(["batch", manifest, "--size", "640x360", "--jobs", "1"]) { p, _ in
            let deadline = Date().addingTimeInterval(120)
            while !FileManager.default.fileExists(atPath: dir.path("out-0.mov.batch.json")) && Date() < deadline { usleep(20_000) }
            kill(p.processIdentifier, signal)
        }
        #expect(stopped.status == 128 + signal, "\(stopped.stdout)\(stopped.stderr)")
        // Row 1 interrupted, or not started yet if the stop came between the two.
        #expect(stopped.stdout.contains("batch: 3 rows: 1 made, 0 made before, 0 failed"), "\(stopped.stdout)")
        #expect(try Probe(dir.path("out-0.mov")).stream("video") != nil)
        #expect(!FileManager.default.fileExists(atPath: dir.path("out-1.mov")) && !FileManager.default.fileExists(atPath: dir.path("out-2.mov")),
                "\(dir.contents)")
        #expect(dir.contents.allSatisfy { !$0.hasPrefix(".") }, "a hidden file left: \(dir.contents)")
        let rest = try dualcam(["batch", manifest, "--size", "640x360"])
        #expect(rest.status == 0 && rest.stdout.contains("batch: 3 rows: 2 made, 1 made before"), "\(rest.stdout)\(rest.stderr)")
    }

    /// A file of the user's own at a row's output is never replaced: not on the first run, nor
    /// on the next, beside the failed result the first left (it once took that for a batch's
    /// file and wrote over it). What would fail at a row's end or is not a row number is
    /// refused before anything runs, in a line each and no usage text.
    @Test func aFileOfYourOwnIsNeverReplacedAndAMissingFolderIsRefused() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let manifest = try Self.twelveRows(in: dir, fixed: true)
        let lines = try String(contentsOfFile: manifest, encoding: .utf8).split(separator: "\n").prefix(3).joined(separator: "\n")
        try (lines + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let mine = dir.path("out-1.mov")
        try "mine".write(toFile: mine, atomically: true, encoding: .utf8)
        for run in 1...2 {
            let r = try dualcam(["batch", manifest, "--size", "160x90"])
            #expect(r.status == 1, "run \(run): \(r.stdout)\(r.stderr)")
            #expect(r.stdout.contains("row 1 failed: \(mine): already exists, and no batch made it (--force replaces it)"), "run \(run): \(r.stdout)")
            #expect(try String(contentsOfFile: mine, encoding: .utf8) == "mine", "run \(run) wrote over the user's file")
        }

        let nowhere = dir.path("nowhere.csv")
        try "back,front,output\ntalk.mp4,face.mkv,gone/out.mov\n".write(toFile: nowhere, atomically: true, encoding: .utf8)
        let refused = try dualcam(["batch", nowhere])
        #expect(refused.status == 64 && refused.stderrLines == ["dualcam: \(nowhere):2: row 0: output gone/out.mov: folder gone does not exist"],
                "\(refused.stderr)")
        let garbage = try run(Env.dualcam, ["batch", manifest], environment: ["SLURM_ARRAY_TASK_ID": "x"])
        #expect(garbage.status == 64 && garbage.stderrLines == ["dualcam: SLURM_ARRAY_TASK_ID 'x': not a row number"], "\(garbage.stderr)")
        let negative = try dualcam(["batch", manifest, "--row", "-1"])
        #expect(negative.status == 64 && negative.stderr.contains("--row must be 0 or more; got -1"), "\(negative.stderr)")
        let both = try dualcam(["batch", manifest, "--row", "0", "--report-only"])
        #expect(both.status == 64 && both.stderr.contains("give one or the other"), "\(both.stderr)")
    }

    /// Run from a folder whose name is not UTF-8 (Foundation cannot name it): each row's
    /// result is kept beside its output and the report written, so the rerun makes nothing.
    @Test func aWorkingFolderWhoseNameIsNotUTF8KeepsEachRowsResult() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let script = """
            set -e; cd "$1"; mkdir "$(printf 'n\\351')"; cd "$(printf 'n\\351')"
            cp "$3" talk.mp4; cp "$4" face.mkv
            printf 'back,front,output\\ntalk.mp4,face.mkv,out.mov\\n' > m.csv
            "$2" batch m.csv --size 160x90 --report r.json; "$2" batch m.csv --size 160x90; test -s r.json
            """
        let r = try run("/bin/sh", ["-c", script, "sh", dir.url.path, Env.dualcam, Reference.back, Reference.front])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("1 rows: 1 made, 0 made before") && r.stdout.contains("1 rows: 0 made, 1 made before"), "\(r.stdout)")
    }
}
