import Foundation
import Testing

/// `record` and `devices` against real V4L2 cameras: the kernel's vivid driver in a VM
/// (Scripts/vivid-vm.sh, Tests/vivid/scenario.sh). The back camera shows solid blue, the
/// front solid red. The scenarios of a run share one VM (`VIVID_VM_SESSION`, this process),
/// which unloads and loads the drivers between them: every one starts from fresh devices, and
/// none waits for a boot.
@Suite(.serialized, .timeLimit(.minutes(10))) struct VividTests {
    /// Runs a scenario in the VM; nil (having said why) when this machine cannot.
    /// `prepare`: puts what the scenario needs (media files) in its directory first.
    static func scenario(_ name: String, cameras: Int, vividOptions: String? = nil, environment: [String: String] = [:],
                         prepare: (TempDir) throws -> Void = { _ in }) throws -> TempDir? {
        guard Env.canRun(getuid() == 0, otherwise: "the vivid VM needs root (qemu, 9p export of /)") else { return nil }
        let vm = Env.repoRoot.appendingPathComponent("Scripts/vivid-vm.sh").path
        let script = Env.repoRoot.appendingPathComponent("Tests/vivid/scenario.sh").path
        let dir = try TempDir()
        try prepare(dir)
        let devices = vividOptions.map { ["--vivid-opts", $0] } ?? ["--devices", "\(cameras)"]
        // The VM is stopped before the test's limit, so a scenario that hangs says where (once
        // the harness killed it at the limit, and nothing of the VM's log came back).
        let r = try run(vm, devices + ["--", script, name, dir.url.path],
                        environment: environment.merging(["DUALCAM": Env.dualcam, "VIVID_VM_TIMEOUT": "540",
                                                          "VIVID_VM_SESSION": String(getpid())]) { $1 })
        guard Env.canRun(r.status != 125, otherwise: "the vivid VM could not start: \(r.stderr.suffix(600))") else { return nil }
        try #require(r.status == 0, "scenario \(name) exited \(r.status): \(r.stderr.suffix(2000))")
        // Latency is counted from when a frame was captured, never from a stamp in the future.
        for summary in ["summary.json", "hd-summary.json"] {
            guard let data = try? Data(contentsOf: URL(fileURLWithPath: dir.path(summary))),
                  let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let p50 = json["latency_p50_ms"] as? Double else { continue }
            #expect(p50 >= 0, "\(name): live latency p50 \(p50) ms")
        }
        return dir
    }

    static func status(_ dir: TempDir) -> Int32? {
        (try? String(contentsOfFile: dir.path("status"), encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// How long a take the scenario stopped itself (SIGINT, once what it tests was done) is,
    /// by its summary.
    static func takeSeconds(_ dir: TempDir) throws -> Double {
        try #require(Probe.number(try summary(dir)["seconds"]), "no length in the summary: \(stderr(dir))")
    }

    static func stderr(_ dir: TempDir) -> String { (try? String(contentsOfFile: dir.path("stderr.txt"), encoding: .utf8)) ?? "" }

    enum Colour { case red, blue }
    static func looks(_ c: (Int, Int, Int), like colour: Colour) -> Bool {
        switch colour {
        case .red: return c.0 > 160 && c.2 < 90
        case .blue: return c.2 > 160 && c.0 < 90
        }
    }
    static func inset(_ rgb: [UInt8]) -> (Int, Int, Int) { meanRGB(rgb, width: 1920, x: 1764, y: 40, w: 120, h: 160) }
    static func full(_ rgb: [UInt8]) -> (Int, Int, Int) { meanRGB(rgb, width: 1920, x: 200, y: 300, w: 800, h: 500) }
    /// The same places on the 640x360 canvas of the scenarios that must run in real time.
    static func smallInset(_ rgb: [UInt8]) -> (Int, Int, Int) { meanRGB(rgb, width: 640, x: 484, y: 40, w: 120, h: 160) }
    static func smallFull(_ rgb: [UInt8]) -> (Int, Int, Int) { meanRGB(rgb, width: 640, x: 40, y: 240, w: 300, h: 100) }

    /// The file is as long as asked, HEVC 1080p30 (or the small real-time canvas) with audio to match.
    static func checkFile(_ path: String, seconds: Double, small: Bool = false) throws -> Int {
        let p = try Probe(path)
        let v = try #require(p.stream("video"))
        if small {
            #expect(v["codec_name"] as? String == "mpeg4" && v["width"] as? Int == 640 && v["height"] as? Int == 360)
        } else {
            #expect(v["codec_name"] as? String == "hevc" && v["codec_tag_string"] as? String == "hvc1")
            #expect(v["width"] as? Int == 1920 && v["height"] as? Int == 1080)
        }
        #expect(v["r_frame_rate"] as? String == "30/1")
        let d = try #require(Probe.number(v["duration"]))
        #expect(abs(d - seconds) <= 1.0 / 30, "duration \(d) s, asked \(seconds) s")
        let a = try #require(p.stream("audio"))
        #expect(abs(try #require(Probe.number(a["duration"])) - d) <= 0.05)
        // Real cameras as well as files: every picture on its slot, the priming in the edit
        // list; a frame rate of exactly 30 where no slot was skipped.
        try Probe.expectPicturesOnTheirSlots(path)
        let frames = Int(v["nb_frames"] as? String ?? "") ?? 0
        if frames == Int((seconds * 30).rounded()) { #expect(v["avg_frame_rate"] as? String == "30/1") }
        return frames
    }

    /// Both cameras recorded: the file checks out, and near its end the front (red) is the
    /// inset over the back (blue).
    static func expectPictureInPicture(_ dir: TempDir, seconds: Double, frameFromEnd: Int, small: Bool = false) throws {
        let frames = try checkFile(dir.path("out.mov"), seconds: seconds, small: small)
        let rgb = try Decode.frame(dir.path("out.mov"), index: frames - frameFromEnd, pixelFormat: "rgb24")
        let (i, f) = small ? (smallInset(rgb), smallFull(rgb)) : (inset(rgb), full(rgb))
        #expect(looks(i, like: .red), "inset \(i)")
        #expect(looks(f, like: .blue), "full frame \(f)")
    }

    @Test func devicesListsBothCamerasWithFormatsSizesAndRates() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("devices", cameras: 2) else { return }
        #expect(Self.status(dir) == 0)
        let text = try String(contentsOfFile: dir.path("devices.txt"), encoding: .utf8)
        for needle in ["/dev/video0:", "/dev/video1:", "vivid", "YUYV", "NV12", "640x360 @", "1920x1080 @"] {
            #expect(text.contains(needle), "devices output lacks \(needle)")
        }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("devices.json"))))
                                as? [String: Any])
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.count == 2)
        let formats = devices.first?["formats"] as? [[String: Any]] ?? []
        #expect(formats.contains { $0["fourcc"] as? String == "YUYV" && !(($0["modes"] as? [Any])?.isEmpty ?? true) })
        try CommandLineTests.expectValid("devices", [dir.path("devices.json")])
        let cameras = try String(contentsOfFile: dir.path("complete-back.txt"), encoding: .utf8).split(separator: "\n")
        #expect(cameras.contains("/dev/video0") && cameras.contains("/dev/video1"), "bash after --back /dev/vi: \(cameras)")
        let controls = try String(contentsOfFile: dir.path("complete-control.txt"), encoding: .utf8).split(separator: "\n")
        #expect(controls.contains("back:brightness=") && !controls.contains { !$0.hasPrefix("back:") }, "\(controls)")
    }

    /// The README's camera recipes (Tests/readme/recipes.py) run as written against two
    /// virtual webcams, with the VM's small canvas and cheap encoder added to each record (at
    /// 1080p HEVC the emulated VM took over ten minutes): each exits 0 and every file it
    /// names plays.
    @Test(.timeLimit(.minutes(10)))
    func theReadmesCameraRecipesRunAsWritten() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("readme", cameras: 2) else { return }
        let report = (try? String(contentsOfFile: dir.path("recipes.txt"), encoding: .utf8)) ?? ""
        #expect(Self.status(dir) == 0 && report.contains("recipes: 2 of 2 cameras recipes ran as written"), "\(report)")
    }

    @Test(arguments: [("two-nv12", "NV12"), ("two-uyvy", "UYVY")])
    func twoCamerasRecordPictureInPicture(scenario: String, format: String) throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario(scenario, cameras: 2) else { return }
        #expect(Self.status(dir) == 0, "\(Self.stderr(dir))")
        #expect(Self.stderr(dir).contains("/dev/video0: \(format)") && Self.stderr(dir).contains("/dev/video1: \(format)"))
        try Self.expectPictureInPicture(dir, seconds: 3, frameFromEnd: 10, small: true)
    }

    /// A new user's first `record`, with no size, format, rate or audio option, on cameras
    /// that are slow at large sizes as webcams are (vivid's webcam input: 1920x1080 at 5 fps,
    /// 1280x720 at 12.5, 640x360 at 40). Both stream at 30 fps, and the log says what was
    /// chosen and why; the microphone is the system's default device (snd-aloop, the only
    /// card, with a tone playing into it). A size and rate asked for are what is streamed.
    @Test(.timeLimit(.minutes(10)))
    func aNewUsersRecordStreamsBothWebcamsAt30FpsWithTheDefaultMicrophone() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("webcam-default", cameras: 2) else { return }
        let log = Self.stderr(dir)
        #expect(Self.status(dir) == 0, "\(log)")
        for camera in ["/dev/video0", "/dev/video1"] {
            #expect(log.contains("\(camera): YUYV 640x360 @ 30 fps (YUYV 1920x1080 reaches only 5 fps: 640x360 at 30 fps)"), "\(log)")
        }
        // ALSA's default is the card itself, or, where pipewire-alsa is installed (CI's host,
        // whose files the VM shares) and no server runs, the first capture device.
        #expect(log.contains("dualcam: default: S16_LE")
                || log.contains("ALSA's default device cannot be opened (no sound server (PipeWire or PulseAudio) answers: Host is down): "
                             + "recording hw:0,0 (Loopback)"),
                "the default microphone: \(log)")
        let summary = try Self.summary(dir)
        let frames = try #require(summary["frames"] as? Int), repeated = try #require(summary["repeated_frames"] as? Int)
        print("webcam-default: \(repeated) of \(frames) frames repeated, \(summary["encoder_skipped_frames"] ?? "?") skipped "
              + "while the encoder was behind, latency p50 \(summary["latency_p50_ms"] ?? "?") ms")
        // At the 12.5 fps the old choice gave, 58 % of the frames repeated; at 30 fps on an
        // idle machine 1-3 of 180 do (vivid under emulation drops one now and then), with a
        // busy process beside the VM 3-10, and 38 once; on a fresh machine of this kind 3 %
        // or more. How many the emulation drops is the machine's: reported. What the choice
        // decides is judged: more than two slots in three have a new picture, which no mode
        // of 20 fps or less (the next ones down) could give.
        #expect(frames >= 179 && 3 * repeated < frames, "\(repeated) of \(frames) frames repeated")
        // The emulated VM's encoder falls behind once after the start (80-100 frames frozen,
        // now skipped, whatever the canvas): that is the encoder's side, not the cameras'.
        let probe = try Probe(dir.path("out.mov"))
        let video = try #require(probe.stream("video")), sound = try #require(probe.stream("audio"))
        #expect(video["width"] as? Int == 320 && video["r_frame_rate"] as? String == "30/1", "\(video)")
        let seconds = try #require(Probe.number(video["duration"]))
        #expect(abs(seconds - 6) <= 1.0 / 30 && abs((Probe.number(sound["duration"]) ?? 0) - seconds) <= 0.05)
        // By time: the emulated VM's 1080p x265 runs at under 2 fps, so most slots are skipped.
        let end = try Decode.frame(dir.path("out.mov"), atSeconds: 5.6, pixelFormat: "rgb24")
        let (inset, full) = (meanRGB(end, width: 320, x: 256, y: 14, w: 48, h: 36), meanRGB(end, width: 320, x: 20, y: 80, w: 180, h: 90))
        #expect(Self.looks(inset, like: .red) && Self.looks(full, like: .blue), "inset \(inset), full frame \(full)")
        let audio = try Decode.audio(dir.path("out.mov"))
        for second in [1, 4] {
            let level = rms(audio, channel: 0, from: second * 48_000, count: 24_000)
            let tone = dominantFrequency(audio, channel: 0, from: second * 48_000, count: 24_000)
            #expect(level > 0.05 && abs(tone - 440) < 10, "at \(second) s: rms \(level), \(tone) Hz")
        }

        let hdLog = (try? String(contentsOfFile: dir.path("hd-stderr.txt"), encoding: .utf8)) ?? ""
        #expect((try? String(contentsOfFile: dir.path("hd-status"), encoding: .utf8))?.hasPrefix("0") == true, "\(hdLog)")
        #expect(hdLog.contains("/dev/video0: YUYV 1280x720 @ 10 fps") && hdLog.contains("/dev/video1: YUYV 1280x720 @ 10 fps"),
                "\(hdLog)")
        #expect(!hdLog.contains("warning"), "\(hdLog)")
    }

    /// Two YUYV webcams and an inset they fill at 1/4: the camera in the inset converts only
    /// the columns the inset reads, a picture never to be shown full frame. Swapped there and
    /// back (SIGUSR1): every frame's full-frame part is all one camera's colour, never a
    /// picture made for the inset (its other columns were never written: dark green where
    /// it was shown), and the roles are the ones asked for before and after.
    @Test(.timeLimit(.minutes(10)))
    func swappingWebcamsNeverShowsAPictureMadeForTheInset() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("two-swapped", cameras: 2) else { return }
        let log = Self.stderr(dir)
        #expect(Self.status(dir) == 0, "\(log)")
        #expect(log.components(separatedBy: "swap at ").count == 7, "six swaps: \(log)")
        for camera in ["/dev/video0", "/dev/video1"] {
            #expect(log.contains("\(camera): converting YUYV at 1/4 size for the inset"), "\(log)")
        }
        let out = dir.path("out.mov"), seconds = try Self.takeSeconds(dir)
        let frames = try Self.checkFile(out, seconds: seconds, small: true)
        // 16x16 cells of 40x22 pixels; rows 6 and below are full frame only, away from the inset.
        let cells = try Decode.thumbnails(out, side: 16)
        #expect(cells.count == frames)
        var mixed: [Int] = []
        for (n, t) in cells.enumerated() {
            let row = (6..<16).flatMap { y in (0..<16).map { x in Array(t[3 * (16 * y + x)..<3 * (16 * y + x) + 3]) } }
            let blue = row.allSatisfy { Self.looks((Int($0[0]), Int($0[1]), Int($0[2])), like: .blue) }
            let red = row.allSatisfy { Self.looks((Int($0[0]), Int($0[1]), Int($0[2])), like: .red) }
            if !blue && !red { mixed.append(n) }
        }
        #expect(mixed.isEmpty, "frames whose full frame is not one camera's: \(mixed.prefix(20))")
        #expect(Set(cells.map { $0[3 * (16 * 10 + 8) + 2] > 160 }).count == 2, "the full frame never changed camera")
        for at in [0.5, seconds - 0.2] {
            let rgb = try Decode.frame(out, atSeconds: at, pixelFormat: "rgb24")
            let (i, f) = (meanRGB(rgb, width: 640, x: 548, y: 18, w: 72, h: 50), Self.smallFull(rgb))
            #expect(Self.looks(f, like: .blue) && Self.looks(i, like: .red), "at \(at) s: inset \(i), full frame \(f)")
        }
    }

    /// Two YUYV webcams side by side, swapped three times: every frame's halves are each all
    /// one camera's colour and never the same camera (a picture converted only in the
    /// columns its half reads is never shown on the other side before it is whole), back
    /// on the left at first, front at the end.
    @Test(.timeLimit(.minutes(10)))
    func sideBySideWebcamsSwapWithoutAHalfMadePicture() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("two-side-by-side", cameras: 2) else { return }
        let log = Self.stderr(dir)
        #expect(Self.status(dir) == 0, "\(log)")
        #expect(log.components(separatedBy: "swap at ").count == 4, "three swaps: \(log)")
        let out = dir.path("out.mov")
        let frames = try Self.checkFile(out, seconds: try Self.takeSeconds(dir), small: true)
        let cells = try Decode.thumbnails(out, side: 16)
        #expect(cells.count == frames)
        var wrong: [Int] = [], sides: [String] = []
        for (n, t) in cells.enumerated() {
            // Columns 1-6 and 9-14 of each row: inside each half, away from the seam.
            func colour(_ columns: Range<Int>) -> Colour? {
                let all = (0..<16).flatMap { y in columns.map { x in Array(t[3 * (16 * y + x)..<3 * (16 * y + x) + 3]) } }
                if all.allSatisfy({ Self.looks((Int($0[0]), Int($0[1]), Int($0[2])), like: .blue) }) { return .blue }
                if all.allSatisfy({ Self.looks((Int($0[0]), Int($0[1]), Int($0[2])), like: .red) }) { return .red }
                return nil
            }
            let (left, right) = (colour(1..<7), colour(9..<15))
            if left == nil || right == nil || left == right { wrong.append(n) }
            let side = left == .blue ? "B" : "R"
            if sides.last != side { sides.append(side) }
        }
        #expect(wrong.isEmpty, "frames whose halves are not one camera each: \(wrong.prefix(20))")
        // Every side the swaps gave is in the file where no slot was skipped. The emulated VM's
        // encoder can be behind for a whole swap's span (its slots skipped, the picture before
        // held): there the file starts with the back on the left and ends as the three swaps
        // leave it, and what it skipped is reported.
        let skipped = try #require(try Self.summary(dir)["encoder_skipped_frames"] as? Int)
        if skipped == 0 {
            #expect(sides == ["B", "R", "B", "R"], "the left half's camera over time: \(sides)")
        } else {
            print("side by side: \(skipped) slots skipped by an encoder behind; the left half's camera over time: \(sides)")
            #expect(sides.first == "B" && sides.last == "R", "the left half's camera over time: \(sides)")
        }
    }

    @Test func oneCameraRecordsAlone() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("single", cameras: 1) else { return }
        #expect(Self.status(dir) == 0, "\(Self.stderr(dir))")
        #expect(Self.stderr(dir).contains("single-camera mode"))
        let frames = try Self.checkFile(dir.path("out.mov"), seconds: 2, small: true)
        let rgb = try Decode.frame(dir.path("out.mov"), index: frames - 5, pixelFormat: "rgb24")
        #expect(Self.looks(Self.smallInset(rgb), like: .blue) && Self.looks(Self.smallFull(rgb), like: .blue))
    }

    /// The two failures a user can mend, each with its mending: a camera another program
    /// holds (recording goes on with the other), and cameras this user may not open.
    @Test func aBusyCameraAndALockedOutUserAreToldWhatToDo() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("busy-and-locked-out", cameras: 2) else { return }
        #expect(Self.status(dir) == 0, "\(Self.stderr(dir))")
        #expect(Self.stderr(dir).contains("/dev/video1 is busy: another program has it open (close it; `fuser -v /dev/video1` names it)"),
                "\(Self.stderr(dir))")
        #expect(Self.stderr(dir).contains("single-camera mode"))
        _ = try Self.checkFile(dir.path("out.mov"), seconds: 2, small: true)
        let locked = (try? String(contentsOfFile: dir.path("locked-out.txt"), encoding: .utf8)) ?? ""
        let status = (try? String(contentsOfFile: dir.path("locked-out-status"), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(status == "1", "exit \(status ?? "?"): \(locked)")
        #expect(locked == "dualcam: no camera found: /dev/video0, /dev/video1 cannot be opened by this user: is the user in the "
                + "'video' group? (`sudo usermod -aG video $USER`, then log in again)\n", "\(locked)")
    }

    @Test func aCameraRefusingToStreamIsRetriedWithTheNextFormat() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("streamon-refused", cameras: 2) else { return }
        #expect(Self.status(dir) == 0, "\(Self.stderr(dir))")
        #expect(Self.stderr(dir).contains("/dev/video0: cannot stream YUYV 640x360: Invalid argument; trying UYVY 640x360"),
                "\(Self.stderr(dir))")
        #expect(Self.stderr(dir).contains("/dev/video0: UYVY 640x360") && Self.stderr(dir).contains("/dev/video1: YUYV 640x360"))
        #expect(!Self.stderr(dir).contains("libv4l2"), "libv4l2 printed its own error: \(Self.stderr(dir))")
        try Self.expectPictureInPicture(dir, seconds: 2, frameFromEnd: 5, small: true)
    }

    /// Cameras offered only as multi-planar devices (vivid's multiplanar=2) are driven
    /// directly, not through libv4l2's plugin.
    @Test func multiplanarCamerasRecordPictureInPicture() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("two-mplane", cameras: 2, vividOptions:
            "n_devs=2 multiplanar=2,2 node_types=0x1,0x1 num_inputs=1,1 input_types=0,0 vid_cap_nr=0,1") else { return }
        #expect(Self.status(dir) == 0, "\(Self.stderr(dir))")
        #expect(Self.stderr(dir).contains("/dev/video0: YUYV") && Self.stderr(dir).contains("/dev/video1: YUYV"), "\(Self.stderr(dir))")
        #expect(!Self.stderr(dir).contains("plugin"), "libv4l2's plugin spoke: \(Self.stderr(dir))")
        try Self.expectPictureInPicture(dir, seconds: 3, frameFromEnd: 10, small: true)
    }

    /// Camera controls against vivid's: listed by `devices`; `--control` brightens the
    /// recorded picture, and an out-of-range or read-only one is a line while the recording
    /// goes on; controls saved with `dualcam controls --save` are written when the next
    /// `record` opens the camera, and again when it is plugged back in (read back with
    /// v4l2-ctl).
    @Test(.timeLimit(.minutes(10)))
    func controlsAreSetWhenACameraOpensSavedOnesAgainAfterAReplug() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("controls", cameras: 2) else { return }
        func text(_ name: String) -> String { (try? String(contentsOfFile: dir.path(name), encoding: .utf8)) ?? "" }
        #expect(text("devices.txt").contains("brightness (int): 0 to 255, default 128, now"), "\(text("devices.txt"))")
        #expect(text("controls.json").contains("\"name\":\"brightness\""), "\(text("controls.json"))\(text("controls-stderr.txt"))")
        try CommandLineTests.expectValid("controls", [dir.path("controls.json")])
        #expect(text("base-status").hasPrefix("0") && text("bright-status").hasPrefix("0"), "\(text("bright-stderr.txt"))")
        let bright = text("bright-stderr.txt")
        #expect(bright.contains("/dev/video0: control contrast=9999 not set: 9999 is out of its range, 0 to 255"), "\(bright)")
        #expect(bright.contains("/dev/video0: control read_only_integer_32_bits=3 not set: it is read-only"), "\(bright)")
        #expect(bright.contains("/dev/video0: controls set: brightness=230"), "\(bright)")
        // The back camera's picture (full frame) is brighter with brightness at 230 than at 128.
        func luma(_ file: String) throws -> Double {
            let y = try Decode.frame(dir.path(file), index: 40, pixelFormat: "gray")
            let region = cut(y, width: 320, x: 20, y: 80, w: 180, h: 90)
            return Double(region.reduce(0) { $0 + Int($1) }) / Double(region.count)
        }
        let (base, brighter) = (try luma("base.mov"), try luma("bright.mov"))
        print(String(format: "back camera's mean luma: %.1f at brightness 128, %.1f at 230", base, brighter))
        #expect(brighter > base + 30, "luma \(base) -> \(brighter)")

        #expect(text("save.txt").contains("saved for vivid (platform:vivid-000)") && text("save.txt").hasSuffix("0\n"), "\(text("save.txt"))")
        let log = Self.stderr(dir)
        #expect(Self.status(dir) == 0, "\(log)")
        #expect(log.contains("/dev/video0: controls set: brightness=60 (saved)"), "\(log)")
        // The front camera, the same model on another bus, has nothing saved; it was told to
        // drop most of its buffers, and that is said while recording.
        #expect(log.contains("/dev/video1: controls set: percentage_of_dropped_buffers=60")
                && !log.contains("(saved)\n/dev/video1") && !log.contains("/dev/video1: controls set: brightness"), "\(log)")
        #expect(log.contains("/dev/video1 delivers ") && log.contains("fps, under the 30 fps asked: pictures repeat"), "\(log)")
        #expect(text("brightness-at-open.txt") == "brightness: 60\n", "at open: \(text("brightness-at-open.txt"))")
        #expect(log.contains("/dev/video0 is back"), "\(log)")
        #expect(text("brightness-after-replug.txt") == "brightness: 60\n", "after the replug: \(text("brightness-after-replug.txt"))")
    }

    /// The front camera is unplugged 3 s into the recording, and plugged back in 2 s after
    /// record says it is lost: the back goes on alone meanwhile, the loss is noticed within
    /// 2 s of the unplug, the camera found again within 2.5 s of the replug, and in the inset
    /// within a second of being found.
    @Test func anUnpluggedCameraPluggedBackInReturnsToTheInset() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("front-replugged", cameras: 2) else { return }
        let log = Self.stderr(dir)
        #expect(Self.status(dir) == 0, "\(log)")
        #expect(log.contains("/dev/video1 lost"), "\(log)")
        let back = try #require(Self.eventTime(log, "/dev/video1 is back"), "\(log)")
        let lost = try #require(Self.eventTime(log, "/dev/video1 lost"), "\(log)")
        // The VM's uptime at the unplug and the replug, and the monotonic times record saw the
        // camera go and come back: one clock in a VM that never sleeps. Times in the take
        // follow the script's only loosely: on a slow host the emulated VM ran its sleeps and
        // process starts seconds late (a camera unplugged "3 s" in was lost at 6.9 s).
        let unplugged = try Self.uptime(dir, "unplugged-at"), plugged = try Self.uptime(dir, "plugged-at")
        let gone = try Self.monotonic(log, "/dev/video1: camera gone"), found = try Self.monotonic(log, "/dev/video1: camera back as")
        print(String(format: "front camera unplugged at %.2f s of uptime, seen gone at %.2f s, plugged in at %.2f s, found at "
                     + "%.2f s; in the take lost at %.2f s, back in the inset at %.2f s", unplugged, gone, plugged, found, lost, back))
        #expect(gone >= unplugged && gone < unplugged + 2, "unplugged at \(unplugged) s, seen gone at \(gone) s")
        // Found within a rescan (0.5 s) and an open; the emulated VM stalls now and then, so 2 s
        // more is allowed. In the inset at its first frame.
        #expect(found >= plugged && found < plugged + 2.5, "plugged in at \(plugged) s, found at \(found) s")
        #expect(lost > 2 && back > lost + 2 && back < lost + (found - gone) + 1, "\(log)")
        let summary = try Self.summary(dir)
        #expect(summary["camera_reopened"] as? Int == 1)
        let frames = try Self.checkFile(dir.path("out.mov"), seconds: try Self.takeSeconds(dir), small: true)
        func corner(_ seconds: Double) throws -> (Int, Int, Int) {
            Self.smallInset(try Decode.frame(dir.path("out.mov"), atSeconds: seconds, pixelFormat: "rgb24"))
        }
        #expect(Self.looks(try corner(lost - 1), like: .red), "inset before the unplug")
        #expect(Self.looks(try corner((lost + back) / 2), like: .blue), "corner while the front is out")
        let end = Self.smallInset(try Decode.frame(dir.path("out.mov"), index: frames - 3, pixelFormat: "rgb24"))
        #expect(Self.looks(end, like: .red), "inset at the end \(end)")
    }

    /// The VM's uptime when the scenario wrote `name` (unplugged-at, plugged-at).
    static func uptime(_ dir: TempDir, _ name: String) throws -> Double {
        try #require(Double((try? String(contentsOfFile: dir.path(name), encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""), "no \(name)")
    }

    /// The time on record's "... at T s on the monotonic clock" line that contains `text`.
    static func monotonic(_ log: String, _ text: String) throws -> Double {
        let line = try #require(log.split(separator: "\n").first { $0.contains(text) }, "\(log)")
        let end = try #require(line.range(of: " s on the monotonic clock"), "\(line)")
        return try #require(Double(line[..<end.lowerBound].split(separator: " ").last ?? ""), "\(line)")
    }

    /// The only camera is unplugged 1 s into a 4 s recording and never comes back: the loss
    /// is noticed within 2 s of the unplug, the recording waits for it no longer than the
    /// duration asked (it says so and ends by itself), and keeps what it had. Judged
    /// on the VM's one clock, as the replug test is: the emulated VM runs the script's sleep
    /// late on a slow host (CI: 2.5 s kept of a camera unplugged "1 s" in).
    @Test func aSingleCameraGoneForGoodEndsTheRecordingAtItsDuration() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("single-unplugged", cameras: 1) else { return }
        let log = Self.stderr(dir)
        #expect(Self.status(dir) == 0, "\(log)")
        #expect(log.contains("waiting for a camera to come back") && log.contains("have passed with no camera"), "\(log)")
        let unplugged = try Self.uptime(dir, "unplugged-at"), gone = try Self.monotonic(log, "/dev/video0: camera gone")
        let lost = try #require(Self.eventTime(log, "/dev/video0 lost"), "\(log)")
        let finished = try #require(Self.eventTime(log, "finishing the file at"), "\(log)")
        let v = try #require(try Probe(dir.path("out.mov")).stream("video"))
        let seconds = try #require(Probe.number(v["duration"]))
        print(String(format: "single camera unplugged at %.2f s of uptime, seen gone at %.2f s; in the take lost at %.2f s, "
                     + "finished at %.2f s, %.2f s kept", unplugged, gone, lost, finished, seconds))
        #expect(gone >= unplugged && gone < unplugged + 2, "unplugged at \(unplugged) s, seen gone at \(gone) s")
        // Where the file was finished is where it ends: nothing written after the loss.
        #expect(abs(finished - seconds) <= 2.0 / 30, "finished at \(finished) s, \(seconds) s kept")
        #expect(seconds > 0.5 && seconds <= lost + 0.1, "\(seconds) s kept, the camera lost at \(lost) s")
    }

    /// The back camera's stream breaks (EIO) 2 s into the recording: the front goes full
    /// frame, the back is reopened and takes the full frame back; the take ends (SIGINT) 2 s
    /// after that.
    @Test func aBackCameraWhoseStreamBreaksIsReopened() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("back-fatal-error", cameras: 2) else { return }
        let log = Self.stderr(dir)
        #expect(Self.status(dir) == 0, "\(log)")
        let lost = try #require(Self.eventTime(log, "/dev/video0 lost"), "\(log)")
        let back = try #require(Self.eventTime(log, "/dev/video0 is back"), "\(log)")
        print(String(format: "back camera lost at %.2f s, full frame again at %.2f s", lost, back))
        // Reopened within a rescan (0.5 s) and a restart; the emulated VM can take a second.
        #expect(back < lost + 2, "\(log)")
        let frames = try Self.checkFile(dir.path("out.mov"), seconds: try Self.takeSeconds(dir), small: true)
        let between = try Decode.frame(dir.path("out.mov"), atSeconds: (lost + back) / 2, pixelFormat: "rgb24")
        #expect(Self.looks(Self.smallFull(between), like: .red), "full frame while the back is out \(Self.smallFull(between))")
        let late = try Decode.frame(dir.path("out.mov"), index: frames - 3, pixelFormat: "rgb24")
        #expect(Self.looks(Self.smallFull(late), like: .blue) && Self.looks(Self.smallInset(late), like: .red),
                "at the end: full frame \(Self.smallFull(late)), inset \(Self.smallInset(late))")
    }

    /// "at 3.02 s NAME lost (...)": the recording time of the first event containing `text`.
    static func eventTime(_ log: String, _ text: String) -> Double? {
        for line in log.split(separator: "\n") where line.contains(text) {
            let words = line.split(separator: " ")
            if let i = words.firstIndex(of: "at"), i + 1 < words.count, let t = Double(words[i + 1]) { return t }
        }
        return nil
    }

    static func summary(_ dir: TempDir) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("summary.json"))))
                     as? [String: Any])
    }

    /// A/V sync to within one frame, against one reference event for camera and microphone:
    /// dualcam-av-marker beeps into ALSA's loopback and flips vivid's test pattern (blue/red)
    /// at the monotonic instant each beep is heard. The camera shows a flip in the first frame
    /// it starts after the flip, so with sound and picture placed right, each beep starts
    /// 0 to 33.3 ms before the first flipped frame of the file. The 8 markers step 4.17 ms
    /// against the frame clock, so together they cover that whole interval, and their mean
    /// measures the error.
    @Test func audioAndPictureAreInSyncToOneFrame() throws {
        try Self.expectMarkersInSync(scenario: "av-sync", seconds: 10)
    }

    /// The same markers after a pause (SIGUSR2 from 0.3 s to 1 s): the microphone ran on, and
    /// the sound it heard while paused was left out exactly where the picture's clock moved
    /// on, so every beep is still with its flip. The file is still 10 s: --duration counts
    /// what is recorded.
    @Test func aPausedRecordingIsInSyncWithTheMicrophoneAfterIt() throws {
        let summary = try Self.expectMarkersInSync(scenario: "av-pause", seconds: 10)
        let paused = summary?["paused_seconds"] as? Double ?? 0
        #expect(summary?["pauses"] as? Int == 1 && paused > 0.4 && paused < 1.5, "paused \(paused) s")
    }

    /// The microphone's clock runs 0.45 % slow (snd-aloop's PCM Rate Shift at 100450):
    /// uncorrected, sound would be 90 ms behind the picture by the markers, which come after
    /// 20 s; each must stay within one frame. (It ran 0.3 % slow for 70 s, 135 ms by the
    /// markers at 45 s: the corrector's loop settles in a few seconds, so the extra 42 s of
    /// emulated take tested nothing more; DriftCorrectorTests follow ±5000 ppm for an hour.)
    @Test func aMicrophoneClockRunningSlowStaysInSync() throws {
        let seconds = 28.0, slow = 0.0045
        let summary = try Self.expectMarkersInSync(scenario: "av-drift", seconds: seconds)
        // Samples the device never delivered, which the corrector adds back (the emulated
        // loopback's own wander is ~0.07 %; over 70 s at 0.3 % 8970-10284 were added of 10080).
        let expected = slow * seconds * 48_000
        let corrected = summary?["audio_drift_correction"] as? Int ?? 0
        print("audio drift correction over \(seconds) s: \(corrected) samples, \(Int(expected)) expected")
        #expect(Double(corrected) >= 0.6 * expected && Double(corrected) <= 1.4 * expected, "correction \(corrected) samples")
    }

    /// Runs a marker scenario and checks every beep against the first frame showing its
    /// flip. A beep's offset from that frame is the A/V error less the flip's phase within
    /// its frame (0-33 ms), and the markers step that phase evenly across a frame: so the
    /// mean offset plus half a frame is the A/V error, and the spread is the jitter. The
    /// error must be under one frame (the issue's bar), the spread at most a frame plus
    /// 5 ms either way (snd-aloop's 4 ms jiffies) once the one marker furthest from the
    /// others is set aside (the emulated camera now and then delivers a frame 30-40 ms
    /// late). The emulated VM itself biases the measure: twelve runs in one session on these
    /// machines gave anything from sound 7 ms late to 19 ms early; an
    /// uncorrected drift of 0.3 % would be 135 ms, a start off by a frame 33 ms. Returns
    /// the summary.
    @discardableResult
    static func expectMarkersInSync(scenario name: String, seconds: Double) throws -> [String: Any]? {
        try Env.requireFFmpegTools()
        let marker = Env.built("dualcam-av-marker")
        try #require(FileManager.default.isExecutableFile(atPath: marker), "build dualcam-av-marker first (swift build)")
        guard let dir = try Self.scenario(name, cameras: 1, environment: ["MARKER": marker]) else { return nil }
        #expect(Self.status(dir) == 0, "\(Self.stderr(dir))")
        let markerLog = (try? String(contentsOfFile: dir.path("marker-stderr.txt"), encoding: .utf8)) ?? ""
        try #require((try? String(contentsOfFile: dir.path("marker-status"), encoding: .utf8))?.hasPrefix("0") == true, "\(markerLog)")
        // "marker I beep=T control=T0..T1": how late the flip came after its beep.
        let lines = try String(contentsOfFile: dir.path("markers.txt"), encoding: .utf8).split(separator: "\n")
        let flipLate: [Double] = lines.compactMap { line in
            let f = line.split(separator: " ")
            guard f.count == 4, let beep = Double(f[2].dropFirst(5)),
                  let after = f[3].components(separatedBy: "..").last.flatMap(Double.init)
            else { return nil }
            return after - beep
        }
        try #require(flipLate.count == 8, "markers: \(lines)")

        let path = dir.path("out.mov")
        let v = try #require(try Probe(path).stream("video"))
        // --duration counts what is recorded: a pause does not shorten the file.
        #expect(abs((Probe.number(v["duration"]) ?? 0) - seconds) <= 1.0 / 30)
        // Picture: each frame's colour; a flip is a frame whose colour differs from the last.
        // On the file's 30 fps grid, by timestamp: a slot skipped while the encoder was behind
        // is not a frame in the file.
        let colours: [Colour?] = try Decode.thumbnails(path, onGridOf: 30).map { t in
            let c = meanRGB(t, width: 8, x: 0, y: 0, w: 8, h: 8)
            return Self.looks(c, like: .red) ? .red : Self.looks(c, like: .blue) ? .blue : nil
        }
        var flips: [Double] = []
        for n in 1..<colours.count where colours[n] != nil && colours[n - 1] != nil && colours[n] != colours[n - 1] {
            flips.append(Double(n) / 30)
        }
        // Sound: a beep starts where the signal first reaches half its amplitude after silence.
        let audio = try Decode.audio(path)
        var beeps: [Double] = [], lastLoud = -48_000
        for i in 0..<(audio.count / 2) where abs(audio[2 * i]) > 0.25 {
            if i - lastLoud > 4_800 { beeps.append(Double(i) / 48_000) }
            lastLoud = i
        }
        try #require(flips.count == 8 && beeps.count == 8, "picture flips at \(flips), beeps at \(beeps)")
        // And they are the helper's 1 kHz beeps, not noise.
        let tone = dominantFrequency(audio, channel: 0, from: Int(beeps[0] * 48_000) + 480, count: 3_840)
        #expect(abs(tone - 1000) < 15, "beep at \(tone) Hz")
        let frame = 1000.0 / 30, slack = 5.0  // snd-aloop moves samples on 4 ms jiffies
        var offsets: [Double] = []
        for i in 0..<8 {
            // Beep minus picture, less the flip's own lateness after the beep.
            let offset = (beeps[i] - flips[i]) * 1000 + flipLate[i] * 1000
            offsets.append(offset)
            print(String(format: "%@ marker %d: beep %.4f s, first flipped frame %.4f s, beep - picture %+.1f ms (flip %.1f ms late)",
                         name, i, beeps[i], flips[i], offset, flipLate[i] * 1000))
            #expect(offset >= -2 * frame && offset <= frame, "marker \(i): beep - picture \(offset) ms")
        }
        let mean = offsets.reduce(0, +) / 8
        let error = mean + frame / 2
        let median = offsets.sorted()[4]
        let kept = offsets.sorted { abs($0 - median) < abs($1 - median) }.prefix(7)
        let spread = kept.max()! - kept.min()!
        print(String(format: "%@: mean beep - picture %.1f ms, so sound is %.1f ms %@ the picture; spread %.1f ms (%.1f with all 8)",
                     name, mean, abs(error), error < 0 ? "ahead of" : "behind", spread, offsets.max()! - offsets.min()!))
        #expect(abs(error) < frame, "A/V error \(error) ms (mean offset \(mean) ms)")
        #expect(spread <= frame + 2 * slack, "offsets spread over \(spread) ms: more than one frame of phase")
        let summary = try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("summary.json")))) as? [String: Any]
        print("\(name): \(summary?["repeated_frames"] ?? "?") repeated, \(summary?["encoder_skipped_frames"] ?? "?") skipped "
              + "while the encoder was behind")
        return summary
    }

    /// A microphone that only captures mono 44.1 kHz (snd-aloop fed a mono 44.1 kHz tone):
    /// `devices` lists it, and the recording has its tone in 48 kHz stereo.
    @Test func aMono44kHzMicrophoneRecords48kHzStereo() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("mic-mono-44k", cameras: 1) else { return }
        let log = Self.stderr(dir)
        #expect(Self.status(dir) == 0, "\(log)")
        #expect(log.contains("hw:Loopback,1,0: S16_LE mono 44100 Hz, converted to 48 kHz mono"), "\(log)")
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("devices.json"))))
                                   as? [String: Any])
        let microphones = try #require(listing["audio"] as? [[String: Any]])
        #expect(microphones.contains { ($0["card"] as? String) == "Loopback" && ($0["device"] as? String)?.hasPrefix("hw:") == true },
                "\(microphones)")
        let a = try #require(try Probe(dir.path("out.mov")).stream("audio"))
        #expect(a["sample_rate"] as? String == "48000" && a["channels"] as? Int == 2, "\(a)")
        let audio = try Decode.audio(dir.path("out.mov"))
        for second in [1, 3] {
            for channel in 0..<2 {
                let level = rms(audio, channel: channel, from: second * 48_000, count: 24_000)
                let tone = dominantFrequency(audio, channel: channel, from: second * 48_000, count: 24_000)
                #expect(level > 0.05 && abs(tone - 441) < 10, "at \(second) s, channel \(channel): rms \(level), \(tone) Hz")
            }
        }
    }

    /// The microphone is unplugged 2.5 s into a 6 s recording: the recording goes on with
    /// silence, says so, and the sound track is as long as the picture.
    @Test func aMicrophoneUnpluggedMidRecordingLeavesSilenceNotAFailure() throws {
        try Env.requireFFmpegTools()
        guard let dir = try Self.scenario("mic-unplugged", cameras: 1) else { return }
        #expect(Self.status(dir) == 0, "\(Self.stderr(dir))")
        #expect(Self.stderr(dir).contains("microphone lost"), "\(Self.stderr(dir))")
        let path = dir.path("out.mov")
        let p = try Probe(path)
        let video = try #require(Probe.number(p.stream("video")?["duration"]))
        let audioTrack = try #require(Probe.number(p.stream("audio")?["duration"]))
        #expect(abs(video - 6) <= 1.0 / 30 && abs(audioTrack - video) <= 0.05, "video \(video) s, audio \(audioTrack) s")
        let audio = try Decode.audio(path)
        // The tone before the plug was pulled, silence after.
        let loudness = stride(from: 0, to: audio.count / 2 - 24_000, by: 24_000).map {
            String(format: "%.2f", rms(audio, channel: 0, from: $0, count: 24_000))
        }
        let player = (try? String(contentsOfFile: dir.path("tone-status.txt"), encoding: .utf8)) ?? "?"
        #expect(rms(audio, channel: 0, from: 48_000, count: 24_000) > 0.05,
                "no tone at 1 s; loudness each half second: \(loudness); tone player: \(player)")
        let tone = dominantFrequency(audio, channel: 0, from: 48_000, count: 24_000)
        #expect(abs(tone - 440) < 10, "\(tone) Hz")
        #expect(rms(audio, channel: 0, from: 5 * 48_000, count: 24_000) < 0.001, "sound after the unplug")
    }
}
