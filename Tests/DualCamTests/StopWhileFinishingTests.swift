import Foundation
import MediaIO
import Testing

extension CrashSafetyTests {
    /// A stop signal while the frames of the intermediate are encoded after the stop ends the
    /// process at once (it said "please wait" for as long as that took: 22-29 s on a busy
    /// two-core machine, hours for a long take, and a service manager's SIGKILL came first),
    /// saying that finish completes the take; finish then makes it whole, every frame. A
    /// stop between the finished take taking its name and the intermediate's removal leaves
    /// the intermediate over: finish says so and removes it (it was "not that take").
    @Test(.timeLimit(.minutes(2)))
    func aStopDuringTheEncodingAfterTheStopLeavesTheRestToFinish() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let take = dir.path("take.mov"), rest = Intermediate.path(for: take)
        let (p, everything) = try Self.started(["record", "--back", try Self.camera(in: dir), "--front", Reference.front, "--audio", "none",
                                                "--encode", "after", "--duration", "4", "--skip-speed-check", "-o", take],
                                               until: "stopped: encoding")
        let watchdog = ChildWatchdog(p)
        defer { watchdog.disarm() }
        let signalled = Date()
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        let took = Date().timeIntervalSince(signalled)
        let said = everything()
        #expect(p.terminationStatus == 128 + SIGTERM && took < 2, "status \(p.terminationStatus) \(took) s after SIGTERM: \(said)")
        #expect(said.hasSuffix("dualcam: stopped before the end of the take was encoded: nothing is lost, dualcam finish \(take) completes it\n"),
                "\(said)\(watchdog.verdict("dualcam"))")
        let kept = dir.path("kept-intermediate.mov")
        try FileManager.default.copyItem(atPath: rest, toPath: kept)

        let finished = try dualcam(["finish", take])
        #expect(finished.status == 0 && finished.stdout.contains("finished \(take): 120 frames"), "\(finished.stdout) \(finished.stderr)")
        try Self.expectRegularFaststart(take)
        #expect(try Self.decoded(take).frames == 120 && !FileManager.default.fileExists(atPath: rest))

        // As if stopped just after the finished take took its name.
        let whole = try Data(contentsOf: URL(fileURLWithPath: take))
        try FileManager.default.copyItem(atPath: kept, toPath: rest)
        let elsewhere = try dualcam(["finish", take, "-o", dir.path("copy.mov")])
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("is already finished with the frames of \(rest), which is left over"),
                "\(elsewhere.stderr)")
        let leftover = try dualcam(["finish", take])
        #expect(leftover.status == 0 && leftover.stdout.contains("the leftover is removed"), "\(leftover.stdout) \(leftover.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: take)) == whole)
        #expect(Set(dir.contents) == ["camera.mp4", "take.mov", "kept-intermediate.mov"])
    }
}

extension CrashSafetyTests {
    /// --iso on a small disk: the warning counts the cameras' files too; when the room left is
    /// what the take needs, the cameras' files stop (said, and in the sidecar) and the take
    /// goes on to its end with every frame; relayout says where its pictures end. (They ran
    /// the disk full: the take stopped at 5.9 s with 25 holes, no sidecar, "about 3 minutes".)
    /// The disk leaves no room for an intermediate, so the take is encoded live, and two CPUs
    /// do not encode this noise in real time (the ffmpeg CLI alone, decoding, scaling to
    /// 640x360 and x265 ultrafast: 9.6 s for its 8 s; the take fell 5 s behind at 6.3-7.7 s
    /// and skipped 4-17 slots): what may wait for the encoder is the whole take, so a frame
    /// missing is the disk's doing, the thing tested.
    @Test(.timeLimit(.minutes(2)))
    func onASmallDiskTheCamerasFilesStopFirst() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        guard let mountPoint = try smallDisk("small", size: "24m", in: dir, for: "small-disk") else { return }
        defer { unmount(mountPoint) }
        let take = mountPoint + "/t.mov"
        let r = try dualcam(["record", "--back", try Self.camera(in: dir, seconds: 12, noisy: true), "--front", Reference.front, "--iso",
                             "--audio", "none", "--duration", "8", "--size", "640x360", "--skip-speed-check", "--max-encoder-lag", "30",
                             "-o", take])
        try #require(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("free for \(take) and the files beside it: under a minute"), "\(r.stderr)")
        let stop = try #require(r.stderrLines.first { $0.contains("the cameras' own files stop here, the take goes on") }, "\(r.stderr)")
        #expect(try Self.decoded(take).frames == 240, "\(stop)")
        let sidecar = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: mountPoint + "/t.dualcam.json"))) as? [String: Any]
        let stoppedAt = try #require(sidecar?["stopped_at"] as? Double, "\(sidecar ?? [:])")
        #expect(stoppedAt > 0 && stoppedAt < 8)
        for camera in ["t.back.mov", "t.front.mov"] {
            let seconds = try #require(Probe.number(try Probe(mountPoint + "/" + camera).format["duration"]))
            #expect(abs(seconds - stoppedAt) < 0.1, "\(camera): \(seconds) s, stopped at \(stoppedAt)")
        }
        let relaid = try dualcam(["relayout", take, "-o", dir.path("again.mov"), "--size", "320x180"])
        #expect(relaid.status == 0 && relaid.stderr.contains(String(format: "stop at %.2f s of the take", stoppedAt)), "\(relaid.stderr)")
    }
}
