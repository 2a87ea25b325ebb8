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
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Env.dualcam)
        p.arguments = ["record", "--back", try Self.camera(in: dir), "--front", Reference.front, "--audio", "none", "--encode", "after",
                       "--duration", "4", "--skip-speed-check", "-o", take]
        let stderr = Pipe()
        p.standardError = stderr
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let watchdog = ChildWatchdog(p)
        defer { watchdog.disarm() }
        var said = ""
        while !said.contains("stopped: encoding"), p.isRunning {
            said += String(decoding: stderr.fileHandleForReading.availableData, as: UTF8.self)
        }
        let signalled = Date()
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        let took = Date().timeIntervalSince(signalled)
        said += String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
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
