import Foundation
import MediaIO
import Testing

extension CrashSafetyTests {
    /// `dualcam finish` from each state a kill can leave a take in, its advice followed where
    /// it gives some: every path ends in a whole take (or, with nothing recorded, in saying
    /// so), and no advice leads back to a command already run (an attacker's trial went round
    /// in a circle: "finish killed.mov -o NEW.mov" -> "finish killed.mov" -> ...).
    @Test(.timeLimit(.minutes(5)))
    func everyStateAKillLeavesIsFinished() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let camera = try Self.camera(in: dir)
        let record = ["record", "--back", camera, "--audio", "none", "--size", "640x360", "--skip-speed-check", "--max-encoder-lag", "5"]

        // Killed during the encoding after the stop.
        let during = dir.path("during.mov")
        try Self.killed(record + ["--encode", "after", "--duration", "3", "-o", during], when: "stopped: encoding")
        try Self.finishFollowingAdvice(during, frames: 90...90)

        // Killed mid-take with everything in its intermediate, then renamed: the intermediate,
        // given as the take, names the renamed take; the renamed take finds it by identity.
        let taken = dir.path("taken.mov"), renamed = dir.path("renamed.mov")
        try Self.killed(record + ["--encode", "after", "--duration", "20", "-o", taken], when: "recording to", after: 2)
        try FileManager.default.moveItem(atPath: taken, toPath: renamed)
        let intermediate = Intermediate.path(for: taken)
        let advice = try dualcam(["finish", intermediate])
        #expect(advice.status == 1 && advice.stderr.contains("dualcam finish \(renamed) joins it to the take (renamed from taken.mov)"),
                "\(advice.stderr)")
        try Self.finishFollowingAdvice(renamed, frames: 30...75)
        #expect(!FileManager.default.fileExists(atPath: intermediate))

        // Killed just after it started: a header, and perhaps a few frames in the intermediate.
        let early = dir.path("early.mov")
        try Self.killed(record + ["--encode", "after", "--duration", "20", "-o", early], when: "recording to")
        try Self.finishFollowingAdvice(early, frames: 0...30)

        // An intermediate a kill left before anything was written to it: removed, and the take
        // said to be empty; a new take may then have its name (finish and record pointed at
        // each other, and only deleting it by hand got out).
        let bare = dir.path("bare.mov")
        try Self.killed(record + ["--encode", "after", "--duration", "20", "-o", bare], when: "recording to", after: 1)
        try FileManager.default.removeItem(atPath: Intermediate.path(for: bare))
        _ = FileManager.default.createFile(atPath: Intermediate.path(for: bare), contents: Data())
        let nothing = try dualcam(["finish", bare])
        #expect(nothing.status == 1 && nothing.stdout.contains("held no frame") && nothing.stderr.contains("there is nothing in it to finish")
                && !nothing.stderr.contains("put it back"), "\(nothing.stdout) \(nothing.stderr)")
        let again = try dualcam(record + ["--duration", "1", "--overwrite", "-o", bare])
        #expect(again.status == 0, "\(again.stderr)")

        // Another take's intermediate beside a take that holds no picture yet (one take renamed
        // over another): refused, never joined; -o makes a take of it alone.
        let first = dir.path("first.mov"), second = dir.path("second.mov")
        for take in [first, second] {
            try Self.killed(record + ["--encode", "after", "--duration", "20", "-o", take], when: "recording to", after: 1.5)
        }
        try FileManager.default.removeItem(atPath: first)
        try FileManager.default.moveItem(atPath: second, toPath: first)
        let mixed = try dualcam(["finish", first])
        #expect(mixed.status == 1 && mixed.stderr.contains("is another take's intermediate than \(first)"), "\(mixed.stderr)")
        let alone = try dualcam(["finish", first, "-o", dir.path("alone.mov")])
        let aloneFrames = alone.status == 0 ? try Self.decoded(dir.path("alone.mov")).frames : 0
        #expect(alone.status == 0 && aloneFrames >= 15, "\(aloneFrames) frames: \(alone.stderr)")

        // Killed as its encoder fell behind (x265 veryslow at 1280x720 does within a second), at
        // the line that says so and half a second later: the take is made of what its own file
        // and the intermediate hold, and at most the last second before the kill is missing.
        let switching = ["record", "--back", camera, "--audio", "none", "--size", "1280x720", "--preset", "veryslow",
                         "--skip-speed-check", "--duration", "20"]
        for after in [0.0, 0.5] {
            let switched = dir.path("switched-\(after).mov")
            let (p, said) = try Self.started(switching + ["-o", switched], until: "fell behind")
            waitUntil(after, after: Date())
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            let line = said()
            let decided = try #require(line.firstMatch(of: /at ([0-9.]+) s the HEVC encoder fell behind/).flatMap { Double($0.1) },
                                       "the switch was not reached (the encoder kept up with veryslow 1280x720 here): \(line)")
            let recorded = decided + after
            try Self.finishFollowingAdvice(switched, frames: max(0, Int(((recorded - 1) * 30).rounded(.up)))...Int((recorded + 1) * 30))
        }

        // Finished right after the kill, while the recording may still be ending and holding its
        // lock: finish waits for a dying holder (a live one is refused at once,
        // CrashSafetyTests.aLiveRecordingsFileIsNotTakenFromUnderIt).
        let dying = dir.path("dying.mov")
        let (p, _) = try Self.started(record + ["--duration", "20", "-o", dying], until: "recording to")
        waitUntil(1.5, after: Date())
        kill(p.processIdentifier, SIGKILL)
        let held = try dualcam(["finish", dying])
        p.waitUntilExit()
        #expect(held.status == 0, "\(held.stderr)")
        #expect(try Self.decoded(dying).frames >= 15)
    }

    /// Runs dualcam until stderr says `line`, waits `after` seconds and kills it.
    static func killed(_ arguments: [String], when line: String, after: Double = 0) throws {
        let (p, _) = try started(arguments, until: line)
        waitUntil(after, after: Date())
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
    }

    /// dualcam started, once its stderr says `line` (or it ended); and all it said, once it ends.
    static func started(_ arguments: [String], until line: String) throws -> (Process, said: () -> String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Env.dualcam)
        p.arguments = arguments
        let stderr = Pipe()
        p.standardError = stderr
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        // Killed at the test's limit should the line never come (and the read never end).
        _ = ChildWatchdog(p)
        var said = ""
        while !said.contains(line), p.isRunning {
            said += String(decoding: stderr.fileHandleForReading.availableData, as: UTF8.self)
        }
        // The rest read as it comes, so that the pipe never fills.
        let rest = Locked(Data()), done = DispatchGroup()
        done.enter()
        DispatchQueue.global().async {
            let data = stderr.fileHandleForReading.readDataToEndOfFile()
            rest.withLock { $0 = data }
            done.leave()
        }
        let before = said
        return (p, { done.wait(); return before + String(decoding: rest.withLock { $0 }, as: UTF8.self) })
    }

    /// `finish take`, then whatever command each refusal names, each run once: ends in a whole
    /// take with `frames` (0 with nothing recorded: said so).
    static func finishFollowingAdvice(_ take: String, frames: ClosedRange<Int>, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var command = ["finish", take], run: Set<[String]> = []
        while true {
            #expect(!run.contains(command), "advice leads back to \(command)", sourceLocation: sourceLocation)
            guard !run.contains(command) else { return }
            run.insert(command)
            let r = try dualcam(command)
            if r.status == 0 {
                let got = try decoded(take).frames
                #expect(frames.contains(got), "\(take): \(got) frames; \(r.stdout)", sourceLocation: sourceLocation)
                return
            }
            if r.stderr.contains("there is nothing in it to finish") {
                #expect(frames.lowerBound == 0, "\(r.stderr)", sourceLocation: sourceLocation)
                return
            }
            guard let advice = r.stderr.range(of: "dualcam finish ") else {
                Issue.record("\(command): \(r.stderr) (no command named)", sourceLocation: sourceLocation)
                return
            }
            command = ["finish"] + r.stderr[advice.upperBound...].prefix { $0 != ")" && $0 != ";" && $0 != "\n" }
                .split(separator: " ").prefix { !["joins", "makes", "completes", "removes"].contains($0) }.map(String.init)
        }
    }
}

extension CrashSafetyTests {
    /// An --iso take killed and then renamed: its camera files keep the old name. finish
    /// finishes them too and says how to name them for relayout, and relayout says the same
    /// (it said the take had no camera files: "record with --iso"), and lays the take out once
    /// they are renamed as said.
    @Test(.timeLimit(.minutes(2)))
    func aRenamedIsoTakesCameraFilesAreFinishedAndNamed() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let camera = try Self.camera(in: dir)
        let old = dir.path("t.mov"), renamed = dir.path("t-renamed.mov")
        try Self.killed(["record", "--back", camera, "--front", Reference.front, "--iso", "--audio", "none", "--size", "320x180",
                         "--skip-speed-check", "--duration", "20", "-o", old], when: "recording to", after: 2)
        try FileManager.default.moveItem(atPath: old, toPath: renamed)
        let moves = "mv \(dir.path("t.back.mov")) \(dir.path("t-renamed.back.mov")); mv \(dir.path("t.front.mov")) "
            + dir.path("t-renamed.front.mov")
        let before = try dualcam(["relayout", renamed, "-o", dir.path("x.mov"), "--size", "320x180"])
        #expect(before.status == 1 && before.stderr.contains(moves + " lets relayout find them"), "\(before.stderr)")
        let f = try dualcam(["finish", renamed])
        #expect(f.status == 0 && f.stderr.contains("relayout finds them once renamed: " + moves), "\(f.stderr)")
        for role in ["back", "front"] {
            #expect(try Self.topLevel(dir.path("t.\(role).mov")).first { $0 == "moof" } == nil, "t.\(role).mov is still fragmented")
        }
        let moved = try run("/bin/sh", ["-c", moves])
        try #require(moved.status == 0, "\(moved.stderr)")
        let after = try dualcam(["relayout", renamed, "-o", dir.path("x.mov"), "--size", "320x180"])
        #expect(after.status == 0, "\(after.stderr)")
        #expect(try Self.decoded(dir.path("x.mov")).frames >= 30)
    }
}

extension CrashSafetyTests {
    /// relayout of a take still being recorded is refused in one line (it laid out the first
    /// two seconds of a 5 s take, exit 0), and works once the recording has ended.
    @Test(.timeLimit(.minutes(2)))
    func aTakeBeingRecordedIsNotLaidOut() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let take = dir.path("t.mov")
        let (p, _) = try Self.started(["record", "--back", Reference.back, "--front", Reference.front, "--iso", "--audio", "none",
                                       "--size", "320x180", "--skip-speed-check", "--duration", "3", "-o", take], until: "recording to")
        let early = try dualcam(["relayout", take, "-o", dir.path("early.mov"), "--size", "320x180"])
        // finish -o only reads it: refused without "cannot write".
        let copy = try dualcam(["finish", take, "-o", dir.path("copy.mov")])
        p.waitUntilExit()
        #expect(copy.status == 1 && copy.stderr == "dualcam: \(take) " + RecordingLock.heldReason + "\n", "\(copy.stderr)")
        #expect(early.status == 1 && early.stderr == "dualcam: \(take) is being recorded right now: lay it out again once its "
                + "recording has ended\n", "\(early.stderr)")
        #expect(OutputPath.entry(dir.path("early.mov")) == nil)
        let later = try dualcam(["relayout", take, "-o", dir.path("later.mov"), "--size", "320x180"])
        #expect(later.status == 0, "\(later.stderr)")
        // A camera file a kill left empty is said to be empty (it was "written by another take").
        try #require(truncate(dir.path("t.back.mov"), 0) == 0)
        let empty = try dualcam(["relayout", take, "-o", dir.path("empty.mov"), "--size", "320x180"])
        #expect(empty.status == 1 && empty.stderr.contains("t.back.mov is empty: the take was stopped or killed as it began"),
                "\(empty.stderr)")
    }
}
