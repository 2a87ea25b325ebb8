import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// What a recording leaves at OUT when it is killed, hung up on, interrupted or runs out of
/// disk: always something that plays, checked with ffprobe and ffmpeg.
/// Every recording here skips the encoder-speed check at the start (a test knob): a kill at a
/// fixed time must find the same amount recorded whether or not the speed was measured yet.
@Suite(.serialized, .timeLimit(.minutes(10))) struct CrashSafetyTests {
    /// 12 s of simple moving pictures with sound, easy enough for x265 to keep real time.
    static func camera(in dir: TempDir, seconds: Int = 12, noisy: Bool = false) throws -> String {
        let path = dir.path(noisy ? "noisy.mp4" : "camera.mp4")
        let picture = noisy ? "testsrc2=s=1280x720:r=30:d=\(seconds),noise=alls=60:allf=t" : "testsrc=s=640x360:r=30:d=\(seconds)"
        try makeClip(path, ["-f", "lavfi", "-i", picture, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"])
        return path
    }

    static func topLevel(_ path: String) throws -> [String] { try MovAtoms.topLevel(path).map(\.type) }

    /// A regular QuickTime file with its index first and no fragments.
    static func expectRegularFaststart(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let atoms = try topLevel(path)
        let moov = atoms.firstIndex(of: "moov"), mdat = atoms.firstIndex(of: "mdat")
        #expect(atoms.first == "ftyp", "\(atoms)", sourceLocation: sourceLocation)
        #expect(moov != nil && mdat != nil && moov! < mdat!, "moov must come before mdat: \(atoms)", sourceLocation: sourceLocation)
        #expect(!atoms.contains("moof"), "still fragmented: \(atoms)", sourceLocation: sourceLocation)
    }

    /// Frames ffmpeg decodes from the video track, and seconds of audio it decodes.
    static func decoded(_ path: String) throws -> (frames: Int, audioSeconds: Double) {
        let r = try run(Env.tool("ffprobe")!, ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
        let frames = Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        return (frames, Double(try Decode.audio(path).count / 2) / 48000)
    }

    /// Frames and seconds of sound GStreamer (qtdemux, libav decoders) gets out of `path`.
    static func decodedByGStreamer(_ path: String, in dir: TempDir) throws -> (frames: Int, audioSeconds: Double) {
        guard let gst = Env.tool("gst-launch-1.0") else {
            Issue.record("gst-launch-1.0 not installed: run Scripts/setup.sh")
            throw CancellationError()
        }
        let video = dir.path("gst.yuv"), audio = dir.path("gst.f32")
        defer { try? FileManager.default.removeItem(atPath: video); try? FileManager.default.removeItem(atPath: audio) }
        let r = try run(gst, ["-q", "filesrc", "location=\(path)", "!", "qtdemux", "name=d",
                              "d.video_0", "!", "queue", "!", "h265parse", "!", "avdec_h265", "!", "video/x-raw,format=I420",
                              "!", "filesink", "location=\(video)",
                              "d.audio_0", "!", "queue", "!", "aacparse", "!", "avdec_aac", "!", "audioconvert", "!",
                              "audio/x-raw,format=F32LE,channels=2", "!", "filesink", "location=\(audio)"])
        let frameBytes = 1920 * 1080 * 3 / 2
        let v = (try? FileManager.default.attributesOfItem(atPath: video)[.size] as? Int) ?? nil
        let a = (try? FileManager.default.attributesOfItem(atPath: audio)[.size] as? Int) ?? nil
        guard r.status == 0, let v, let a else { throw ProbeError(message: "GStreamer could not decode \(path): \(r.stderr)") }
        return (v / frameBytes, Double(a) / 8 / 48000)
    }

    /// Where the last packet of a stream ends, in seconds (fragmented files included).
    static func packetsEnd(_ path: String, stream: String) throws -> Double {
        let r = try run(Env.tool("ffprobe")!, ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pts_time,duration_time",
                                                "-of", "csv=p=0", path])
        return r.stdout.split(separator: "\n").compactMap { line -> Double? in
            let f = line.split(separator: ",").compactMap { Double($0) }
            return f.count == 2 ? f[0] + f[1] : nil
        }.max() ?? 0
    }

    /// Resident memory of a process, in kB.
    static func residentKB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    /// `count` processes that each keep a core busy, for the life of `body`.
    static func withBusyCores<T>(_ count: Int = 2, _ body: () throws -> T) throws -> T {
        let burners = try (0..<count).map { _ -> Process in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", "while :; do :; done"]
            try p.run()
            return p
        }
        defer { for p in burners { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() } }
        return try body()
    }

    /// 1080p x265 beside six busy processes runs well under real time on two cores (beside
    /// two, with its threads at the process's level as a live take has them, it kept up); on a
    /// faster two-core machine (an AVX-512 host: 0 of 582 frames skipped beside six) it takes
    /// twelve. A take must not be lost to that: stopped (SIGINT) at 20 s, it exits within 5 s
    /// with a finished file, having skipped frames, its memory at 20 s within 10 % of what it
    /// was at 5 s; killed (SIGKILL) at 8 s beside as many, the file holds most of it (at least
    /// 4.5 s of picture and sound). Six first; twelve only where six left the encoder in time,
    /// so the premise holds wherever it runs.
    @Test(.timeLimit(.minutes(3)))
    func aTakeOnAMachineTooBusyForTheEncoderIsKept() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let killed = dir.path("killed.mov"), stopped = dir.path("stopped.mov")
        let options = ["record", "--back", try Self.camera(in: dir, seconds: 30), "--front", Reference.front,
                       "--skip-speed-check", "--encode", "live", "--json", "--overwrite"]
        for busy in [6, 12] {
            let keptUp = try Self.withBusyCores(busy) { () throws -> Bool in
                var memory: [Int] = [], stopTook = 0.0
                let s = try dualcam(options + ["-o", stopped]) { p, said in
                    let started = said.waitForTake(of: 5) ?? Date()
                    memory.append(Self.residentKB(p.processIdentifier) ?? 0)
                    waitUntil(20, after: started)
                    memory.append(Self.residentKB(p.processIdentifier) ?? 0)
                    let asked = ProcessInfo.processInfo.systemUptime
                    kill(p.processIdentifier, SIGINT)
                    p.waitUntilExit()
                    stopTook = ProcessInfo.processInfo.systemUptime - asked
                }
                print(String(format: "beside %d: stopped at 20 s: exited in %.2f s; resident %d kB at 5 s, %d kB at 20 s", busy, stopTook,
                             memory[0], memory[1]))
                #expect(s.status == 0 || s.status == 130, "\(s.stderr)")
                #expect(stopTook < 5, "the stop took \(stopTook) s")
                #expect(memory.count == 2 && Double(memory[1]) <= 1.1 * Double(memory[0]), "resident kB at 5 s and 20 s: \(memory)")
                try Self.expectRegularFaststart(stopped)
                #expect(try Self.packetsEnd(stopped, stream: "v:0") > 15)
                let summary = try #require(try JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as? [String: Any], "\(s.stderr)")
                let skipped = summary["encoder_skipped_frames"] as? Int ?? 0
                if skipped == 0 && busy < 12 { return true }
                #expect(skipped > 0, "the encoder kept up beside \(busy): nothing here was tested \(summary)")

                let k = try dualcam(options + ["-o", killed]) { p, said in
                    said.waitForTake(of: 8)
                    kill(p.processIdentifier, SIGKILL)
                }
                #expect(k.status != 0)
                let video = try Self.packetsEnd(killed, stream: "v:0"), audio = try Self.packetsEnd(killed, stream: "a:0")
                print(String(format: "beside %d: killed at 8 s: %.2f s of picture, %.2f s of sound kept", busy, video, audio))
                // What is lost: half a second of backlog, the frame being encoded and the few in
                // x265's lookahead (each standing for several skipped slots here), and the
                // fragment being built. Measured 6.1-6.6 s kept (1080p, the encoder at about 20
                // fps, beside six); 4.4-5.1 while x265's pool ran 10 below the rest of the
                // encoder; 5.1-5.3 beside twelve on the AVX-512 host.
                #expect(video >= 4.5 && audio >= 4.5, "killed at 8 s: \(video) s of picture, \(audio) s of sound")
                return false
            }
            if !keptUp { break }
        }
    }

    /// 1080p of black with sensor-like noise (work for the encoder), a white flash and a 1 kHz
    /// beep (44.1 kHz) from 1.0 to 1.2 s into every 2 s.
    static func busyMarkedCamera(in dir: TempDir, seconds: Int) throws -> String {
        let path = dir.path("marked-1080p.mp4"), when = "between(mod(t,2),1,1.2)"
        try makeClip(path, ["-f", "lavfi", "-i", "color=black:s=1920x1080:r=30:d=\(seconds),noise=alls=8:allf=t,"
                            + "drawbox=c=white:t=fill:enable='\(when)'",
                            "-f", "lavfi", "-i", "aevalsrc='if(\(when),0.3*sin(2*PI*1000*t),0)':s=44100:d=\(seconds)",
                            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"])
        return path
    }

    /// Beside as many busy processes as it has CPUs x265 makes a few 1080p frames a second
    /// (here, two), far under real time. By default (--encode auto) no frame is lost to that:
    /// the take goes on in the intermediate and is encoded after the stop. Counted in frames,
    /// not seconds, so a slower machine only takes longer: every slot of 10 s holds its own
    /// picture, the flashes and beeps meet within a frame, and a take killed at 10 s gives
    /// `finish` all but what the kill may lose (a fragment and the encoder's allowed lag). Composing itself competes with the busy
    /// processes: where it kept its 16 ms budget (p99; 8.7-12.1 ms here) no slot may be skipped;
    /// where the machine could not compose in real time beside them (a fresh machine of this
    /// kind: p99 65.6 ms) the slots skipped are reported, and must be the file's only gaps, with
    /// the sound in sync around them.
    @Test(.timeLimit(.minutes(5)))
    func aTakeOnABusyMachineKeepsEveryFrame() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("busy.mov"), killed = dir.path("killed.mov")
        let back = try Self.busyMarkedCamera(in: dir, seconds: 32)
        let options = ["record", "--back", back, "--front", Reference.front, "--audio", "back", "--skip-speed-check", "--json"]
        let busy = CPUAllowance.current().wholeCPUs
        try Self.withBusyCores(busy) {
            let r = try dualcam(options + ["--duration", "10", "-o", out])
            try #require(r.status == 0, "\(r.stderr)")
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stderr)")
            let skipped = try #require(summary["encoder_skipped_frames"] as? Int), p99 = try #require(summary["latency_p99_ms"] as? Double)
            print("busy take beside \(busy): \(summary["frames"] ?? "?") frames, \(skipped) skipped, p99 \(p99) ms, "
                  + "\(summary["frames_encoded_after_stop"] ?? "?") encoded after the stop, finished \(summary["finishing_seconds"] ?? "?") s after it")
            #expect(summary["frames"] as? Int == 300)
            if p99 < 16 {
                #expect(skipped == 0, "composing kept its budget (p99 \(p99) ms), yet slots were skipped: \(summary)")
            } else {
                print("busy take: this machine composed late beside \(busy) busy processes (p99 \(p99) ms, budget 16): "
                      + "\(skipped) slots skipped, reported, not judged")
            }
            #expect((summary["frames_encoded_after_stop"] as? Int ?? 0) > 0, "the encoder kept up: nothing here was tested \(summary)")
            #expect(OutputPath.entry(Intermediate.path(for: out)) == nil, "the intermediate was left behind")
            try Self.expectRegularFaststart(out)
            let video = try #require(try Probe(out).stream("video"))
            #expect(video["codec_name"] as? String == "hevc" && video["codec_tag_string"] as? String == "hvc1", "\(video)")
            // Every slot is a picture or a skip counted: none lost between the loop and the file.
            #expect(try Self.decoded(out).frames == 300 - skipped)
            try Probe.expectPicturesOnTheirSlots(out)
            // The flash is white for 0.2 s: its first six slots are surely its own.
            try SyncTests.expectInSyncAroundSkippedSlots(out, flashes: [1, 3, 5, 7, 9], flashSlots: 6)

            // Killed 10 s into the take (its first picture, which the "recording to" line marks).
            // A kill loses what no fragment holds yet: the one being built (half a second) and
            // the slots waiting for the intermediate's encoder, which it skips rather than let
            // wait more than --max-encoder-lag (1 s by default). Here 0.50 s was lost, on two
            // CPUs and on one (a cgroup's quota, composing late: p99 53 ms); killed 10 s after
            // the file appeared instead, the one-CPU take had 1.17 s less, its start included.
            let k = try dualcam(options + ["--duration", "30", "-o", killed]) { p, said in
                said.waitForTake(of: 10)
                kill(p.processIdentifier, SIGKILL)
            }
            #expect(k.status != 0)
            let f = try dualcam(["finish", killed])
            #expect(f.status == 0, "\(f.stderr)")
            let v = try Self.packetsEnd(killed, stream: "v:0"), a = try Self.packetsEnd(killed, stream: "a:0")
            print(String(format: "killed at 10 s of take on a busy machine: %.2f s of picture, %.2f s of sound after finish", v, a))
            // That bound holds where the loop composes in real time. Where it composed late beside
            // the busy processes (the first take's p99 over 16 ms), the loop itself is behind the
            // take's clock when the kill comes, by as much as the host is slow: then what was kept
            // is reported, and the file must still hold both tracks together (CI, 2026-11-29: p99
            // 55 ms, 51 slots skipped; 8.27 s of picture and 8.28 s of sound kept of a kill at 10 s).
            let mayLose = RecordingFile.fragmentSeconds + 1 + 1.0 / 30
            if p99 < 16 {
                #expect(v >= 10 - mayLose && a >= 10 - mayLose, "killed at 10 s: \(v) s of picture, \(a) s of sound: \(f.stdout)")
            } else {
                print(String(format: "killed at 10 s while composing late (p99 %.1f ms): %.2f s kept, reported, not judged", p99, v))
                #expect(v > 2 && abs(v - a) <= 0.1, "killed at 10 s: \(v) s of picture, \(a) s of sound: \(f.stdout)")
            }
            try Self.expectRegularFaststart(killed)
        }
    }

    @Test func sigkillLeavesAFileThatPlaysAndFinishMakesItRegular() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let cam = try Self.camera(in: dir), out = dir.path("killed.mov")
        let r = try dualcam(["record", "--skip-speed-check", "--back", cam, "--front", Reference.front, "-o", out]) { p, said in
            said.waitForTake(of: 4.2)
            kill(p.processIdentifier, SIGKILL)
        }
        #expect(r.status == SIGKILL)
        #expect(try Self.topLevel(out).contains("moof"), "a killed recording is the fragmented file")
        let p = try Probe(out)
        #expect(p.stream("video")?["codec_name"] as? String == "hevc" && p.stream("video")?["codec_tag_string"] as? String == "hvc1")
        #expect(p.stream("audio")?["codec_name"] as? String == "aac")
        let killed = try Self.decoded(out), kept = try Self.packetsEnd(out, stream: "v:0")
        // Frames, not seconds: no slot is skipped. A machine too busy for the encoder sends the
        // rest of the take to the intermediate, which plays as it is too.
        let rest = Intermediate.path(for: out)
        let restFrames = OutputPath.entry(rest) == nil ? 0 : try Self.decoded(rest).frames
        print("killed at 4.2 s: \(kept) s, \(killed.frames) frames (+\(restFrames) in the intermediate), "
              + "\(killed.audioSeconds) s of audio decode")
        #expect(killed.frames + restFrames >= 90, "only \(killed.frames) + \(restFrames) frames survived the kill")
        #expect(killed.audioSeconds >= kept - 0.15, "audio \(killed.audioSeconds) s for \(kept) s of picture")
        // Already so in the fragmented file, not only once finished.
        try Probe.expectPicturesOnTheirSlots(out)
        // A second, independent demuxer: GStreamer's qtdemux decodes the same.
        let gst = try Self.decodedByGStreamer(out, in: dir)
        #expect(gst.frames == killed.frames && abs(gst.audioSeconds - killed.audioSeconds) < 0.05,
                "GStreamer: \(gst), FFmpeg: \(killed)")

        let f = try dualcam(["finish", out])
        try #require(f.status == 0, "\(f.stderr)")
        try Self.expectRegularFaststart(out)
        try Probe.expectPicturesOnTheirSlots(out)
        let finished = try Self.decoded(out)
        #expect(finished.frames == killed.frames + restFrames, "finish kept \(finished.frames) of \(killed.frames) + \(restFrames) frames")
        if restFrames == 0 { #expect(abs(finished.audioSeconds - killed.audioSeconds) < 0.1) }
        #expect(Set(dir.contents) == ["camera.mp4", "killed.mov"], "left behind: \(dir.contents)")
        // Once regular, there is nothing more to do.
        let again = try dualcam(["finish", out])
        #expect(again.status == 0 && again.stdout.contains("already a finished movie"), "\(again.stdout) \(again.stderr)")
    }

    /// A hang-up (terminal closed, SSH dropped) with stdout and stderr gone: the recording
    /// is finished as on Ctrl-C, not lost to a write error.
    @Test func sighupWithTheTerminalGoneFinishesTheFile() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let cam = try Self.camera(in: dir), out = dir.path("hup.mov")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Env.dualcam)
        p.arguments = ["record", "--skip-speed-check", "--back", cam, "--front", Reference.front, "-o", out]
        let stdout = Pipe(), stderr = Pipe()
        p.standardOutput = stdout
        p.standardError = stderr
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let watchdog = ChildWatchdog(p)
        defer { watchdog.disarm() }
        // 2 s after the file starts (start-up under a sanitizer on a busy machine can take
        // longer than that by itself).
        var said = Data()
        let deadline = Date().addingTimeInterval(30)
        while !String(decoding: said, as: UTF8.self).contains("recording to"), Date() < deadline, p.isRunning {
            said.append(stderr.fileHandleForReading.availableData)
        }
        waitUntil(2, after: Date())
        try stdout.fileHandleForReading.close()
        try stderr.fileHandleForReading.close()
        kill(p.processIdentifier, SIGHUP)
        p.waitUntilExit()
        // What it said before the pipes closed: a sanitizer's report (exit 66) is there.
        #expect(p.terminationReason == .exit && p.terminationStatus == 0,
                "status \(p.terminationStatus): \(String(decoding: said, as: UTF8.self).suffix(4000))\(watchdog.verdict("dualcam"))")
        try Self.expectRegularFaststart(out)
        let d = try Self.decoded(out)
        let video = try #require(Probe.number(try Probe(out).stream("video")?["duration"]))
        #expect((45...81).contains(d.frames), "\(d.frames) frames for a 2 s recording")
        // The sound against the picture track's length, not its frame count: a slot the live
        // encoder skipped is time without a frame of its own (ThreadSanitizer, once: 51
        // frames on a 1.9 s track, 1.92 s of sound). Where none is skipped the two are one.
        #expect(d.frames <= Int((video * 30).rounded()), "\(d.frames) frames on a \(video) s track")
        #expect(abs(d.audioSeconds - video) < 0.1, "\(d.audioSeconds) s of sound, \(d.frames) frames, picture track \(video) s")
        #expect(Set(dir.contents) == ["camera.mp4", "hup.mov"])
    }

    @Test func sigintGivesARegularFaststartFileOfTheRightLength() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let cam = try Self.camera(in: dir), out = dir.path("int.mov")
        let r = try dualcam(["record", "--skip-speed-check", "--back", cam, "--front", Reference.front, "-o", out, "--location", "+48.8584+002.2945/"]) { p, said in
            said.waitForTake(of: 2.8)
            kill(p.processIdentifier, SIGINT)
        }
        try #require(r.status == 0, "\(r.stderr)")
        try Self.expectRegularFaststart(out)
        let probe = try Probe(out)
        let v = try #require(probe.stream("video"))
        let frames = Int(v["nb_frames"] as? String ?? "") ?? 0
        // Stopped 2.8 s into the take: 84 frames, and what the stop's latency adds.
        #expect((75...91).contains(frames), "\(frames) frames")
        #expect(Probe.number(v["start_time"]) == 0)
        let tags = probe.format["tags"] as? [String: Any] ?? [:]
        #expect(tags["location"] as? String == "+48.8584+002.2945/" && tags["creation_time"] != nil, "\(tags)")
        #expect(try Self.decoded(out).frames == frames)
    }

    /// The disk fills up mid-recording: a clear line, a non-zero exit, and what was written
    /// still plays at OUT. The start warned that space was short.
    @Test func aDiskThatFillsUpKeepsWhatWasRecorded() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        guard let mountPoint = try smallDisk("tiny", size: "10m", in: dir, for: "full-disk") else { return }
        defer { unmount(mountPoint) }
        let cam = try Self.camera(in: dir, seconds: 8, noisy: true), out = mountPoint + "/full.mov"
        let r = try dualcam(["record", "--skip-speed-check", "--back", cam, "--front", Reference.front, "-o", out])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("warning:") && r.stderr.contains("MB free"), "no low-space warning: \(r.stderr)")
        let last = r.stderrLines.last.map(String.init) ?? ""
        #expect(last.contains("No space left") && last.contains("kept at \(out)") && last.contains("dualcam finish"), "\(last)")
        let d = try Self.decoded(out)
        print("disk full: \(d.frames) frames kept; \(last)")
        #expect(d.frames >= 15, "\(d.frames) frames")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: mountPoint)) == ["full.mov"])
        // Finishing it where it is needs room the disk has not: said with the way out, the
        // take untouched; finished onto another disk, it is whole.
        let inPlace = try dualcam(["finish", out])
        #expect(inPlace.status == 1 && inPlace.stderrLines.count == 1 && inPlace.stderr.contains("No space left")
                && inPlace.stderr.contains("dualcam finish \(out) -o OTHER-DISK/NAME.mov"), "\(inPlace.stderr)")
        #expect(try Self.decoded(out).frames == d.frames)
        let elsewhere = try dualcam(["finish", out, "-o", dir.path("finished.mov")])
        #expect(elsewhere.status == 0, "\(elsewhere.stderr)")
        try Self.expectRegularFaststart(dir.path("finished.mov"))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: mountPoint)) == ["full.mov"])
    }

    /// A disk too small for the take's first fragment: one line that nothing was recorded, no
    /// file at OUT (it was kept, "as a fragmented file that plays", holding no picture: the
    /// options fuzzer found it), and with --overwrite the OUT that was there is untouched.
    @Test(.timeLimit(.minutes(1)))
    func aDiskFullBeforeTheFirstFragmentLeavesNoFile() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        guard let mountPoint = try smallDisk("tiny", size: "64k", in: dir, for: "full-disk") else { return }
        defer { unmount(mountPoint) }
        let cam = try Self.camera(in: dir, seconds: 3, noisy: true), out = mountPoint + "/full.mov"
        let record = ["record", "--skip-speed-check", "--back", cam, "--audio", "none", "--duration", "2", "-o", out]
        let r = try dualcam(record)
        #expect(r.status == 1 && r.stderr.hasSuffix("No space left on device: nothing recorded, no file written\n"), "\(r.stderr)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: mountPoint)) == [], "left: \(dir.contents)")

        let before = Data("an older take".utf8)
        try before.write(to: URL(fileURLWithPath: out))
        let again = try dualcam(record + ["--overwrite"])
        #expect(again.status == 1 && again.stderr.contains("nothing recorded, no file written"), "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == before)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: mountPoint)) == ["full.mov"])
    }

    /// A back source that opens but never gives a picture: an error, and no empty file.
    @Test func noPictureAtAllIsAnErrorAndNoFile() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let src = dir.path("src.mkv"), zeroed = dir.path("zeroed.mkv"), out = dir.path("empty.mov")
        try makeClip(src, ["-f", "lavfi", "-i", "testsrc=s=320x240:r=25:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        let z = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-y", "-i", src, "-c", "copy",
                                               "-bsf:v", "noise=amount=1:drop=0", zeroed])
        try #require(z.status == 0, "\(z.stderr)")
        let r = try dualcam(["record", "--skip-speed-check", "--back", zeroed, "-o", out])
        #expect(r.status == 1)
        #expect(r.stderrLines.last?.contains("nothing recorded, no file written") == true, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        // With --overwrite, the take that was at OUT is kept: it is replaced only by a take
        // that holds a picture. Nothing hidden is left beside it.
        let old = Data("the previous take".utf8)
        try old.write(to: URL(fileURLWithPath: out))
        let again = try dualcam(["record", "--skip-speed-check", "--back", zeroed, "--overwrite", "-o", out])
        #expect(again.status == 1, "\(again.stderr)")
        #expect(FileManager.default.contents(atPath: out) == old, "the old take was destroyed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".") }.isEmpty)
    }

    /// A live recording holds its file: `finish` and another `record --overwrite` on it
    /// refuse in one line (before, both reported success and the take lost everything after),
    /// and the recording ends complete, at OUT, as long as asked.
    @Test(.timeLimit(.minutes(2)))
    func aLiveRecordingsFileIsNotTakenFromUnderIt() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("live.mov"), camera = try Self.camera(in: dir)
        try Data("an older take".utf8).write(to: URL(fileURLWithPath: out))
        var finish: RunResult?, second: RunResult?
        let r = try dualcam(["record", "--skip-speed-check", "--back", camera, "--duration", "4", "--size", "640x360",
                             "--overwrite", "-o", out]) { _, said in
            // A second in: the older take at OUT is replaced once the take holds a picture.
            said.waitForTake(of: 1)
            finish = try? dualcam(["finish", out])
            second = try? dualcam(["record", "--skip-speed-check", "--back", camera, "--duration", "1", "--overwrite", "-o", out])
        }
        #expect(r.status == 0, "\(r.stderr)")
        for (name, refused) in [("finish", finish), ("record --overwrite", second)] { Self.expectRefusedAsHeld(refused, name) }
        try Self.expectRegularFaststart(out)
        #expect(abs(try Self.packetsEnd(out, stream: "v:0") - 4) < 0.1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".") }.isEmpty)
    }

    /// A link planted at OUT (the classic attack on a program run as root writing a
    /// predictable name): `record --overwrite` and `compose --overwrite` replace the link,
    /// never what it points to. A link swapped in while recording does not redirect the
    /// writes (they go through the descriptor opened at the start), and the take is not
    /// finalized by name into the link's target: it stays, fragmented, where it was moved.
    @Test(.timeLimit(.minutes(2)))
    func aLinkAtOutIsNeverFollowed() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let victim = dir.path("victim"), out = dir.path("take.mov"), composed = dir.path("composed.mov")
        let precious = Data("precious, not a video".utf8)
        try precious.write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: out, withDestinationPath: victim)
        try FileManager.default.createSymbolicLink(atPath: composed, withDestinationPath: victim)
        let camera = try Self.camera(in: dir, seconds: 6)
        let r = try dualcam(["record", "--skip-speed-check", "--back", camera, "--duration", "1", "--size", "640x360",
                             "--audio", "none", "--overwrite", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        let c = try dualcam(["compose", Reference.back, Reference.front, "--overwrite", "-o", composed])
        #expect(c.status == 0, "\(c.stderr)")
        for name in [out, composed] {
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: name)) == nil, "\(name) is still a link")
            try Self.expectRegularFaststart(name)
        }
        #expect(FileManager.default.contents(atPath: victim) == precious, "the link's target was written")

        // Swapped in mid-recording.
        let moved = dir.path("moved.mov"), swapped = dir.path("swapped.mov")
        let s = try dualcam(["record", "--skip-speed-check", "--back", camera, "--duration", "3", "--size", "640x360",
                             "--audio", "none", "-o", swapped]) { _, said in
            said.waitForTake(of: 1)
            _ = rename(swapped, moved)
            _ = symlink(victim, swapped)
        }
        #expect(s.status == 1 && s.stderrLines.last?.contains("moved or replaced while recording") == true, "\(s.stderr)")
        #expect(FileManager.default.contents(atPath: victim) == precious, "the link's target was written")
        #expect(try Self.topLevel(moved).contains("moof"), "the take is not where it was moved")
        #expect(abs(try Self.packetsEnd(moved, stream: "v:0") - 3) < 0.1, "the writes did not all reach the moved take")
    }

    /// A box size damaged in the middle of a killed recording makes the demuxer stop there as
    /// if at the end: `finish` refuses in one line and leaves the fragmented file as it was,
    /// rather than replace it with the part before the damage. A recording merely cut short
    /// at its end is still finished.
    @Test(.timeLimit(.minutes(2)))
    func finishKeepsAFileItCannotReadToItsEnd() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("killed.mov")
        let r = try dualcam(["record", "--skip-speed-check", "--back", try Self.camera(in: dir), "--size", "640x360",
                             "--audio", "none", "-o", out]) { p in
            // Killed once the file holds the fragments the damage is put among.
            waitUntil("5 fragments in \(out)", timeout: 60) {
                ((try? MovAtoms.topLevel(out)) ?? []).filter { $0.type == "mdat" }.count >= 5
            }
            kill(p.processIdentifier, SIGKILL)
        }
        #expect(r.status != 0)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        let mdats = try MovAtoms.topLevel(out).filter { $0.type == "mdat" }
        try #require(mdats.count >= 4, "\(mdats)")
        let middle = Int(mdats[mdats.count / 2].offset)
        for i in 0..<4 { bytes[middle + i] = [0x7F, 0xFF, 0xFF, 0xFF][i] }
        let damaged = dir.path("damaged.mov")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let f = try dualcam(["finish", damaged])
        #expect(f.status == 1 && f.stderrLines.count == 1 && f.stderr.contains("the fragmented file is kept as it is"), "\(f.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: damaged)) == Data(bytes), "the damaged recording was replaced")
        let cut = dir.path("cut.mov")
        try Data(bytes.prefix(middle)).write(to: URL(fileURLWithPath: cut))
        let c = try dualcam(["finish", cut])
        #expect(c.status == 0, "\(c.stderr)")
        try Self.expectRegularFaststart(cut)
    }

    /// Hidden files a kill left beside OUT (compose's and finish's temporary file, a take
    /// kept beside an --overwrite'd OUT) are removed by the next run to that OUT: nobody
    /// holds their lock. Another name's are left alone.
    @Test(.timeLimit(.minutes(2)))
    func leftoversOfAKilledRunAreRemovedByTheNext() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let leftovers = [".pip.mov.Ab12Cd.dualcam-tmp", ".rec.mov.dualcam-99999.recording"]
        let unrelated = ".other.mov.Ab12Cd.dualcam-tmp"
        // What a kill leaves is a movie cut short: its first box, ftyp, and some of the rest.
        // (A file under such a name that is no movie is someone's and stays: MistakeTests.)
        let cutShort = Data([0, 0, 0, 20] + Array("ftypqt  ".utf8) + [0, 0, 2, 0] + Array("qt  ".utf8) + Array("left by a kill".utf8))
        for name in leftovers + [unrelated] { try cutShort.write(to: dir.url.appendingPathComponent(name)) }
        let c = try dualcam(["compose", Reference.back, Reference.front, "-o", dir.path("pip.mov"), "--size", "320x180", "--quiet"])
        #expect(c.status == 0, "\(c.stderr)")
        let r = try dualcam(["record", "--skip-speed-check", "--back", Reference.back, "--duration", "1", "--size", "320x180",
                             "--audio", "none", "-o", dir.path("rec.mov")])
        #expect(r.status == 0, "\(r.stderr)")
        let hidden = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix(".") }
        #expect(hidden == [unrelated], "\(hidden)")
    }

    @Test func finishRejectsWhatIsNotARecording() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let junk = dir.path("junk.mov")
        try Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: junk))
        let r = try dualcam(["finish", junk, "-o", dir.path("out.mov")])
        #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.contains("junk.mov"), "\(r.stderr)")
        #expect(Set(dir.contents) == ["junk.mov"])
        let missing = try dualcam(["finish", dir.path("nope.mov")])
        #expect(missing.status == 1 && missing.stderrLines.count == 1, "\(missing.stderr)")
    }
}
