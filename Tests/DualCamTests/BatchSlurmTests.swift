import Foundation
import Testing

extension BatchTests {
    /// Six rows as a job array of a real Slurm (one node, started by Tests/slurm/job-array.sh
    /// in a folder of its own and stopped after): each task runs `dualcam batch MANIFEST` with
    /// no row given, so the row is SLURM_ARRAY_TASK_ID's; every output is valid, the report
    /// gathered after (--report-only) has every row done, and no daemon is left running.
    @Test func sixRowsAsASlurmJobArray() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        try FileManager.default.copyItem(atPath: Reference.back, toPath: dir.path("talk.mp4"))
        try FileManager.default.copyItem(atPath: Reference.front, toPath: dir.path("face.mkv"))
        let lines = ["back,front,output,size,corner"] + (0..<6).map { "talk.mp4,face.mkv,out-\($0).mov,160x90,\($0 % 2 == 0 ? "top-left" : "")" }
        let manifest = dir.path("talks.csv"), report = dir.path("report.json"), slurm = dir.path("slurm")
        try (lines.joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let script = Env.repoRoot.appendingPathComponent("Tests/slurm/job-array.sh").path
        let array = try run("/bin/bash", [script, slurm, "6", "--", Env.dualcam, "batch", manifest])
        defer { _ = try? run("/usr/bin/pkill", ["-KILL", "-f", slurm]) }
        guard Env.canRun(array.status != 77, otherwise: "the Slurm test: \(array.stdout)") else { return }
        let tasks = (0..<6).map { (try? String(contentsOfFile: dir.path("slurm/task-\($0).out"), encoding: .utf8)) ?? "" }
        print(array.stdout.split(separator: "\n").filter { $0.hasPrefix("slurm:") }.joined(separator: "\n"))
        #expect(array.status == 0, "\(array.stdout)\(array.stderr)\n\(tasks.joined(separator: "\n"))")
        for (i, text) in tasks.enumerated() {
            #expect(text.contains("batch: 1 rows: 1 made"), "task \(i): \(text)")
        }
        for i in 0..<6 {
            let video = try #require(try Probe(dir.path("out-\(i).mov")).stream("video"), "row \(i)")
            #expect(video["codec_name"] as? String == "hevc" && video["width"] as? Int == 160 && video["height"] as? Int == 90, "row \(i): \(video)")
            #expect(abs((Probe.number(video["duration"]) ?? 0) - 3) < 0.05, "row \(i): \(video)")
        }
        let gathered = try dualcam(["batch", manifest, "--report-only", "--report", report])
        #expect(gathered.status == 0, "\(gathered.stdout)\(gathered.stderr)")
        let whole = try Self.report(report)
        #expect(Self.statuses(whole) == Array(repeating: "done", count: 6) && whole["done"] as? Int == 6, "\(whole)")
        try CommandLineTests.expectValid("batch", [report])
        let left = try run("/usr/bin/pgrep", ["-a", "-f", slurm])
        #expect(left.status == 1, "left running: \(left.stdout)")
    }
}
