import Foundation
import MediaIO
import Synchronization
import Testing

/// Every writer of OUT holds it for the whole write (`OutputClaim`): a take being recorded is
/// never replaced by another dualcam, two started together never both run, and a take whose
/// name someone else takes away is kept under a rescue name. Real time: with the
/// CrashSafetyTests, one at a time.
extension CrashSafetyTests {
    /// Refused in one line, exit 1, because another dualcam holds OUT.
    static func expectRefusedAsHeld(_ r: RunResult?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r?.status == 1 && r?.stderrLines.count == 1
                && r?.stderr.contains("is being recorded right now by another dualcam") == true,
                "\(what): \(r?.stderr ?? "did not run")", sourceLocation: sourceLocation)
    }

    /// Whether process `pid` holds a lock (/proc/locks, its fifth field): a writer's claim on
    /// its OUT is one.
    static func holdsALock(_ pid: Int32) -> Bool {
        let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        return locks.split(separator: "\n").contains { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first == "\(pid)" }
    }

    /// No hidden (temporary, pending) file left in `dir`.
    static func expectNoHiddenFile(in dir: TempDir, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".") }.isEmpty,
                sourceLocation: sourceLocation)
    }

    /// compose --overwrite and relayout --overwrite onto a take being recorded are refused in
    /// one line (before, the take's name was taken and its 6 s were gone), and the take ends
    /// whole at OUT, as long as asked.
    @Test(.timeLimit(.minutes(2)))
    func composeAndRelayoutOntoALiveTakeAreRefused() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let camera = try Self.camera(in: dir, seconds: 6)
        let take = dir.path("take.mov"), out = dir.path("live.mov")
        let iso = try dualcam(["record", "--skip-speed-check", "--back", camera, "--front", Reference.front, "--duration", "1",
                               "--size", "320x180", "--audio", "none", "--iso", "-o", take])
        try #require(iso.status == 0, "\(iso.stderr)")
        var refused: [(String, RunResult?)] = []
        let r = try dualcam(["record", "--skip-speed-check", "--back", camera, "--duration", "4", "--size", "640x360",
                             "--audio", "none", "-o", out]) { _, said in
            said.waitForTake(of: 1)
            refused.append(("compose", try? dualcam(["compose", Reference.back, Reference.front, "--size", "320x180",
                                                     "--overwrite", "-o", out])))
            refused.append(("relayout", try? dualcam(["relayout", take, "--size", "320x180", "--overwrite", "-o", out])))
        }
        #expect(r.status == 0, "\(r.stderr)")
        for (name, result) in refused { Self.expectRefusedAsHeld(result, name) }
        try Self.expectRegularFaststart(out)
        #expect(abs(try Self.packetsEnd(out, stream: "v:0") - 4) < 0.1)
        try Self.expectNoHiddenFile(in: dir)
    }

    /// Two `record --overwrite OUT` started at the same instant: one records, the other is
    /// refused in one line, and OUT is the one's whole take (before, both ran and the first
    /// take was lost). Three times, the two launched in either order.
    @Test(.timeLimit(.minutes(3)))
    func twoRecordingsToOneNameNeverBothRun() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let camera = try Self.camera(in: dir, seconds: 6)
        let out = dir.path("race.mov")
        for round in 0..<3 {
            try Data("an older take".utf8).write(to: URL(fileURLWithPath: out))
            let durations = round % 2 == 0 ? ["2", "3"] : ["3", "2"]
            let collected = Mutex([RunResult?](repeating: nil, count: 2))
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                let r = try? dualcam(["record", "--skip-speed-check", "--back", camera, "--duration", durations[i],
                                      "--size", "320x180", "--audio", "none", "--overwrite", "-o", out])
                collected.withLock { $0[i] = r }
            }
            let results = collected.withLock { $0 }
            let ok = results.indices.filter { results[$0]?.status == 0 }
            #expect(ok.count == 1, "round \(round): \(results.map { $0?.stderr ?? "did not run" })")
            guard let winner = ok.first, let loser = results[1 - winner] else { continue }
            Self.expectRefusedAsHeld(loser, "round \(round)")
            try Self.expectRegularFaststart(out)
            #expect(abs(try Self.packetsEnd(out, stream: "v:0") - Double(durations[winner])!) < 0.1, "round \(round)")
            try Self.expectNoHiddenFile(in: dir)
        }
    }

    /// OUT's name taken from a live take, by a remove or by another file renamed over it:
    /// the take is kept under a rescue name beside OUT, whole, and the last line says where;
    /// the file now at OUT is left as it is.
    @Test(.timeLimit(.minutes(2)))
    func aTakeWhoseNameIsTakenAwayIsRescued() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let camera = try Self.camera(in: dir, seconds: 6)
        let other = Data("someone else's file".utf8)
        for (round, takeAway) in ["remove", "rename over"].enumerated() {
            let out = dir.path("take\(round).mov"), rescued = dir.path("take\(round).rescued.mov")
            let r = try dualcam(["record", "--skip-speed-check", "--back", camera, "--duration", "3", "--size", "640x360",
                                 "--audio", "none", "-o", out]) { _, said in
                said.waitForTake(of: 1)
                if takeAway == "remove" {
                    unlink(out)
                } else {
                    try? other.write(to: URL(fileURLWithPath: dir.path("other.mov")))
                    rename(dir.path("other.mov"), out)
                }
            }
            #expect(r.status == 1 && r.stderrLines.last?.contains("the 3.0 s recorded were kept, a fragmented file, at \(rescued)") == true,
                    "\(takeAway): \(r.stderr)")
            #expect(abs(try Self.packetsEnd(rescued, stream: "v:0") - 3) < 0.1, "\(takeAway)")
            let finished = try dualcam(["finish", rescued])
            #expect(finished.status == 0, "\(finished.stderr)")
            try Self.expectRegularFaststart(rescued)
            if takeAway != "remove" { #expect(FileManager.default.contents(atPath: out) == other) }
            try Self.expectNoHiddenFile(in: dir)
        }
    }

    /// The take's folder removed while recording (the take said it was left "wherever it was
    /// moved", and nothing was anywhere): copied from the open file into the working folder,
    /// whole, and the last line says where.
    @Test(.timeLimit(.minutes(2)))
    func aTakeWhoseFolderIsRemovedIsRescuedInTheWorkingFolder() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let camera = try Self.camera(in: dir, seconds: 6)
        // Run from `dir` (the working folder the rescue goes to); the folder removed a second in.
        let r = try run("/bin/sh", ["-c", "cd \"$1\" && mkdir sub && exec \"$2\" record --skip-speed-check --back \"$3\" --duration 3 "
                                    + "--size 640x360 --audio none -o sub/take.mov",
                                    "sh", dir.url.path, Env.dualcam, camera], whileRunning: { _, said in
            said.waitForTake(of: 1)
            try? FileManager.default.removeItem(atPath: dir.path("sub"))
        })
        #expect(r.status == 1 && r.stderrLines.last?.contains("the 3.0 s recorded were kept, a fragmented file, at take.rescued.mov")
                == true, "\(r.stderr)")
        #expect(abs(try Self.packetsEnd(dir.path("take.rescued.mov"), stream: "v:0") - 3) < 0.1)
    }

    /// A name nothing stands at yet is held from the claim too: a record or a second compose
    /// aimed at it while a compose --overwrite runs is refused at once (before, the record
    /// ran, finished, and was replaced at the compose's end), and the compose's file is whole.
    @Test(.timeLimit(.minutes(2)))
    func aNameNotThereYetIsHeldByItsFirstWriter() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let long = dir.path("long.mp4"), out = dir.path("fresh.mov")
        try makeClip(long, ["-f", "lavfi", "-i", "testsrc=s=640x360:r=30:d=10", "-c:v", "libx264", "-preset", "ultrafast"])
        var others: [(String, RunResult?)] = []
        // At 1080p, long enough (seconds) for the other two to start while it runs.
        let c = try dualcam(["compose", long, Reference.front, "--overwrite", "-o", out]) { p, _ in
            waitUntil("compose to hold its claim on \(out)", timeout: 30) { Self.holdsALock(p.processIdentifier) || !p.isRunning }
            others.append(("record", try? dualcam(["record", "--skip-speed-check", "--back", Reference.back, "--duration", "1",
                                                   "--size", "320x180", "--audio", "none", "--overwrite", "-o", out])))
            others.append(("compose", try? dualcam(["compose", Reference.back, Reference.front, "--size", "320x180", "-o", out])))
        }
        #expect(c.status == 0, "\(c.stderr)")
        for (name, r) in others { Self.expectRefusedAsHeld(r, name) }
        #expect(abs((Probe.number(try Probe(out).stream("video")?["duration"]) ?? 0) - 10) < 0.1)
        #expect(Set(dir.contents) == ["long.mp4", "fresh.mov"])
    }

    /// A take recorded with --iso and killed: `finish TAKE` makes the take and both cameras'
    /// files regular, and says so for each.
    @Test(.timeLimit(.minutes(2)))
    func finishMakesAKilledIsoTakeWhole() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let take = dir.path("killed.mov")
        let r = try dualcam(["record", "--back", Reference.back, "--front", Reference.front, "--iso", "--duration", "30",
                             "--audio", "none", "--skip-speed-check", "--size", "640x360", "-o", take]) { p, said in
            said.waitForTake(of: 2)
            kill(p.processIdentifier, SIGKILL)
        }
        #expect(r.status != 0)
        let f = try dualcam(["finish", take])
        #expect(f.status == 0, "\(f.stderr)")
        for name in ["killed.mov", "killed.back.mov", "killed.front.mov"] {
            try Self.expectRegularFaststart(dir.path(name))
            #expect(f.stdout.contains("finished \(dir.path(name)):"), "\(f.stdout)")
        }
    }
}

/// Replacing the caller's own file at OUT (`finish` in place): that file alone.
@Suite(.timeLimit(.minutes(1))) struct OwnFileReplacementTests {
    /// The take is replaced by its finished file, and nothing is left beside it; when another
    /// file was moved over the take meanwhile, that file stays and the finished one is kept
    /// at TAKE.rescued.mov, the error saying so (the other file was replaced, exit 0).
    @Test(arguments: [false, true])
    func onlyTheFileHeldIsReplaced(movedOver: Bool) throws {
        let dir = try TempDir()
        let take = dir.path("t.mov")
        try Data("the fragmented take".utf8).write(to: URL(fileURLWithPath: take))
        let held = open(take, O_RDONLY)
        defer { close(held) }
        let output = try AtomicOutput(destination: take, overwrite: true, holding: held)
        try #require(write(output.descriptor, "the finished take", 17) == 17)
        if movedOver {
            try Data("another program's movie".utf8).write(to: URL(fileURLWithPath: dir.path("other.mov")))
            try #require(rename(dir.path("other.mov"), take) == 0)
        }
        var failure: MediaError?
        do { try output.commit() } catch { failure = error }
        let atTake = try String(contentsOfFile: take, encoding: .utf8)
        if movedOver {
            #expect(atTake == "another program's movie")
            #expect(try String(contentsOfFile: dir.path("t.rescued.mov"), encoding: .utf8) == "the finished take")
            #expect(failure?.description.contains("the finished take is at \(dir.path("t.rescued.mov"))") == true,
                    "\(String(describing: failure))")
            #expect(dir.contents.sorted() == ["t.mov", "t.rescued.mov"])
        } else {
            #expect(failure == nil && atTake == "the finished take")
            #expect(dir.contents == ["t.mov"])
        }
    }
}
