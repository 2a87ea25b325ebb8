import Foundation
import Testing

/// Every way a user can hand us bad input ends the same way: a non-zero exit, one line on
/// stderr naming what is wrong, and nothing at OUT (nor any temporary file beside it).
@Suite(.timeLimit(.minutes(10))) struct ErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        /// Makes the inputs in `dir`, returns the dualcam arguments and what stderr must mention.
        let setUp: @Sendable (TempDir) throws -> (args: [String], mentions: String)
        var testDescription: String { name }
    }

    static let good = Env.fixture("back-16x9-30fps.mp4")
    static let front = Env.fixture("front-4x3-25fps.mkv")

    static let cases: [Case] = [
        Case(name: "a playlist naming a file outside its folder") { dir in
            // An HLS playlist whose segments are in another folder (as one could name
            // ../../secret): nothing outside the playlist's folder is read.
            let playlist = try outsidePlaylist(in: dir)
            return (["compose", playlist, front, "-o", dir.path("out.mov")], "names files outside its folder")
        },
        // A concat list opens each file it names in a context of FFmpeg's own, beyond the
        // folder check: lists are not read at all, whether what they name leads outside
        // through a link or through a playlist that names an outside segment.
        Case(name: "a concat list naming a link to a file outside its folder") { dir in
            let mine = dir.path("mine"), secret = dir.path("secret")
            for folder in [mine, secret] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            try FileManager.default.copyItem(atPath: good, toPath: secret + "/private.mp4")
            try FileManager.default.createSymbolicLink(atPath: mine + "/link.mp4", withDestinationPath: "../secret/private.mp4")
            try "ffconcat version 1.0\nfile 'link.mp4'\n".write(toFile: mine + "/list.txt", atomically: true, encoding: .utf8)
            return (["compose", mine + "/list.txt", front, "-o", dir.path("out.mov")], "list.txt: cannot open")
        },
        Case(name: "a concat list naming a playlist whose segment is outside its folder") { dir in
            let mine = (try outsidePlaylist(in: dir) as NSString).deletingLastPathComponent
            try "ffconcat version 1.0\nfile 'pip.m3u8'\n".write(toFile: mine + "/list.txt", atomically: true, encoding: .utf8)
            return (["compose", mine + "/list.txt", front, "-o", dir.path("out.mov")], "list.txt: cannot open")
        },
        // DASH opens its segments with FFmpeg's own avio_open2, past the folder check: a
        // manifest is not read at all.
        Case(name: "a DASH manifest naming segments outside its folder") { dir in
            let media = dir.path("media"), mine = dir.path("mine")
            for folder in [media, mine] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", good, "-an", "-c", "copy", "-f", "dash",
                                                   "-seg_duration", "1", media + "/s.mpd"])
            guard r.status == 0 else { throw ProbeError(message: r.stderr) }
            let manifest = try String(contentsOfFile: media + "/s.mpd", encoding: .utf8)
                .replacingOccurrences(of: "initialization=\"", with: "initialization=\"../media/")
                .replacingOccurrences(of: "media=\"", with: "media=\"../media/")
            try manifest.write(toFile: mine + "/evil.mpd", atomically: true, encoding: .utf8)
            return (["compose", mine + "/evil.mpd", front, "-o", dir.path("out.mov")], "evil.mpd: cannot open")
        },
        // A named pipe (or device) gives its bytes once, and an input is read twice; one that
        // no one writes would hold the open for ever.
        Case(name: "a named pipe as an input") { dir in
            guard mkfifo(dir.path("pipe.mp4"), 0o600) == 0 else { throw ProbeError(message: "mkfifo failed") }
            return (["compose", good, dir.path("pipe.mp4"), "-o", dir.path("out.mov")], "pipe.mp4 is not a regular file")
        },
        // OUT: a dangling link is something there (kept without --overwrite); so is an input as
        // OUT. (Standard output and other containers' names are usage errors: CommandLineTests.)
        Case(name: "a dangling link at OUT") { dir in
            try FileManager.default.createSymbolicLink(atPath: dir.path("out.mov"), withDestinationPath: "nowhere.mov")
            return (["compose", good, front, "-o", dir.path("out.mov")], "out.mov: already exists (use --overwrite")
        },
        Case(name: "a dangling link at an --iso camera file") { dir in
            try FileManager.default.createSymbolicLink(atPath: dir.path("out.front.mov"), withDestinationPath: "nowhere.mov")
            return (["record", "--back", good, "--front", front, "--iso", "-o", dir.path("out.mov")], "out.front.mov: already exists")
        },
        // A source named and not there fails the recording: no single-camera take.
        Case(name: "a --front file that does not exist") { dir in
            (["record", "--back", good, "--front", dir.path("typo.mp4"), "--duration", "1", "-o", dir.path("out.mov")],
             "--front \(dir.path("typo.mp4")): No such file or directory")
        },
        Case(name: "a --back that is a folder") { dir in
            (["record", "--back", dir.url.path, "--duration", "1", "-o", dir.path("out.mov")], "is a folder")
        },
        Case(name: "a --front device that does not exist") { dir in
            (["record", "--back", good, "--front", "/dev/video97", "--duration", "1", "-o", dir.path("out.mov")], "--front /dev/video97")
        },
        // Sound asked of a file that has none: refused by compose as by record.
        Case(name: "compose --audio front of a soundless front") { dir in
            (["compose", good, front, "--audio", "front", "-o", dir.path("out.mov")],
             "front-4x3-25fps.mkv has no sound track: --audio front takes its sound (--audio none records a silent track)")
        },
        Case(name: "record --audio front of a soundless front") { dir in
            (["record", "--back", good, "--front", front, "--audio", "front", "-o", dir.path("out.mov")],
             "front-4x3-25fps.mkv has no sound track: --audio front takes its sound (--audio none records a silent track)")
        },
        Case(name: "missing file") { dir in
            (["compose", dir.path("nope.mp4"), front, "-o", dir.path("out.mov")], "nope.mp4")
        },
        Case(name: "not a video (text)") { dir in
            let p = dir.path("notes.mp4")
            try "just some text\n".write(toFile: p, atomically: true, encoding: .utf8)
            return (["compose", good, p, "-o", dir.path("out.mov")], "notes.mp4")
        },
        Case(name: "random bytes") { dir in
            let p = dir.path("noise.mov")
            var rng = SystemRandomNumberGenerator()
            try Data((0..<65536).map { _ in UInt8.random(in: 0...255, using: &rng) }).write(to: URL(fileURLWithPath: p))
            return (["compose", p, front, "-o", dir.path("out.mov")], "noise.mov")
        },
        Case(name: "no video stream") { _ in
            (["compose", good, Env.fixture("audio-only.m4a"), "-o", NSTemporaryDirectory() + "/never-\(UUID()).mov"],
             "no video stream")
        },
        Case(name: "truncated file") { dir in
            let p = dir.path("cut.mp4")
            let whole = try Data(contentsOf: URL(fileURLWithPath: good))
            try whole.prefix(whole.count / 3).write(to: URL(fileURLWithPath: p))
            return (["compose", p, front, "-o", dir.path("out.mov")], "truncated")
        },
        Case(name: "undecodable video data") { dir in
            // A real container whose every video payload byte is zero.
            let p = dir.path("zeroed.mkv")
            let src = dir.path("src.mkv")
            try makeClip(src, ["-f", "lavfi", "-i", "testsrc=s=320x240:r=25:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
            let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-y", "-i", src, "-c", "copy",
                                                   "-bsf:v", "noise=amount=1:drop=0", p])
            guard r.status == 0 else { throw ProbeError(message: r.stderr) }
            return (["compose", good, p, "-o", dir.path("out.mov")], "zeroed.mkv")
        },
        Case(name: "input missing") { dir in
            (["compose", good, dir.path("missing.mp4"), "-o", dir.path("out.mov")], "missing.mp4: cannot open: No such file or directory")
        },
        // --virtual-camera is checked before anything is recorded: a device that is not
        // there says how to load the module, one that is no V4L2 output says so.
        Case(name: "virtual camera missing") { dir in
            (["record", "--back", good, "--virtual-camera", "/dev/video97", "-o", dir.path("out.mov")],
             "/dev/video97 does not exist: load v4l2loopback: sudo modprobe v4l2loopback exclusive_caps=1 card_label=DualCam video_nr=97")
        },
        // -o none writes no file: with nothing to show the pictures on, it is refused.
        Case(name: "no file and nowhere to show it") { _ in
            (["record", "--back", good, "-o", "none"], "-o none writes no file: it needs --virtual-camera DEV, --preview or --stream URL")
        },
        // --stream is checked before anything is recorded too.
        Case(name: "stream to a URL that is not one") { dir in
            (["record", "--back", good, "--stream", "http://127.0.0.1/live", "-o", dir.path("out.mov")],
             "http://127.0.0.1/live: cannot write: --stream takes srt://, rtmp://, rtmps://, udp:// or tcp:// URLs")
        },
        Case(name: "HEVC to RTMP") { dir in
            (["record", "--back", good, "--stream", "rtmp://127.0.0.1/live/key", "-o", dir.path("out.mov")],
             "RTMP carries H.264 with this FFmpeg, not HEVC: add --codec h264, or stream over srt://")
        },
        // --iso and relayout: what they would write or read, checked first.
        Case(name: "iso with no file") { _ in
            (["record", "--back", good, "--iso", "-o", "none"], "--iso keeps each camera's picture beside the take: with -o none there is no take")
        },
        Case(name: "iso over a camera file") { dir in
            _ = FileManager.default.createFile(atPath: dir.path("out.back.mov"), contents: Data("kept".utf8))
            return (["record", "--back", good, "--iso", "-o", dir.path("out.mov")], "out.back.mov: already exists (use --overwrite")
        },
        Case(name: "relayout of a take without its cameras") { dir in
            (["relayout", good, "-o", dir.path("out.mov")], "has no cameras' own files beside it (back-16x9-30fps.mp4.back.mov): record with --iso")
        },
        Case(name: "virtual camera not a device") { dir in
            (["record", "--back", good, "--virtual-camera", "/dev/null", "-o", dir.path("out.mov")], "/dev/null is not a V4L2 device")
        },
        Case(name: "unwritable destination") { _ in
            (["compose", good, front, "-o", "/proc/dualcam-\(UUID()).mov"], "cannot write")
        },
        Case(name: "destination folder missing") { dir in
            (["compose", good, front, "-o", dir.path("no/such/dir/out.mov")], "out.mov")
        },
        Case(name: "encoder missing") { dir in
            (["compose", good, front, "-o", dir.path("out.mov"), "--video-encoder", "libnonexistent265"],
             "libnonexistent265")
        },
    ]

    /// DIR/mine/pip.m3u8, an HLS playlist of BACK whose segments are in DIR/media.
    static func outsidePlaylist(in dir: TempDir) throws -> String {
        let media = dir.path("media"), mine = dir.path("mine")
        for folder in [media, mine] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", good, "-c", "copy", "-f", "hls", "-hls_time", "1",
                                               "-hls_list_size", "0", media + "/in.m3u8"])
        guard r.status == 0 else { throw ProbeError(message: r.stderr) }
        let playlist = try String(contentsOfFile: media + "/in.m3u8", encoding: .utf8)
            .replacingOccurrences(of: "\nin", with: "\n../media/in")
        try playlist.write(toFile: mine + "/pip.m3u8", atomically: true, encoding: .utf8)
        return mine + "/pip.m3u8"
    }

    @Test(arguments: cases)
    func failsInOneLineAndLeavesNothing(_ c: Case) throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let (args, mentions) = try c.setUp(dir)
        let before = Set(dir.contents)
        let r = try dualcam(args)
        #expect(r.status != 0)
        #expect(r.stderrLines.count == 1, "stderr: \(r.stderr)")
        #expect(r.stderr.hasPrefix("dualcam: ") && r.stderr.contains(mentions), "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("Stack"))
        let out = args[args.firstIndex(of: "-o")! + 1]
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: out, isDirectory: &isDir) { #expect(isDir.boolValue, "\(out) was written") }
        #expect(Set(dir.contents) == before, "left behind: \(Set(dir.contents).subtracting(before))")
    }

    @Test func existingOutputIsKeptUnlessOverwrite() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("out.mov")
        try "precious".write(toFile: out, atomically: true, encoding: .utf8)
        let r = try dualcam(["compose", Self.good, Self.front, "-o", out])
        #expect(r.status != 0 && r.stderrLines.count == 1 && r.stderr.contains("--overwrite"))
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "precious")
        let again = try dualcam(["compose", Self.good, Self.front, "-o", out, "--overwrite"])
        #expect(again.status == 0)
        #expect(try Probe(out).stream("video")?["codec_name"] as? String == "hevc")
        #expect(dir.contents == ["out.mov"])
    }

    @Test func interruptedRunLeavesNoFile() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let long = dir.path("long.mkv")
        // Long enough that the interrupt lands mid-encode.
        try makeClip(long, ["-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=60", "-c:v", "libx264", "-preset", "ultrafast"])
        // OUT in a folder of its own, where its (unnamed) file is told from the input's.
        let outDir = try TempDir()
        let r = try dualcam(["compose", long, Self.front, "-o", outDir.path("out.mov")]) { process in
            waitUntil("compose's first pictures", timeout: 30) {
                !process.isRunning || bytesWritten(by: process.processIdentifier, in: outDir.url.path) > 64 * 1024
            }
            kill(process.processIdentifier, SIGINT)
        }
        #expect(r.status == 130)
        #expect(r.stderrLines.count == 1 && r.stderr.contains("interrupted"), "stderr: \(r.stderr)")
        #expect(Set(dir.contents) == ["long.mkv"])
        #expect(outDir.contents.isEmpty, "\(outDir.contents)")
    }

    /// A disk that fills up mid-write: a 300 KB tmpfs holds the header and a few frames.
    @Test func fullDiskLeavesNothingAndSaysSo() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        guard let mountPoint = try smallDisk("tiny", size: "300k", in: dir, for: "full-disk") else { return }
        defer { unmount(mountPoint) }
        let out = mountPoint + "/out.mov"
        let r = try dualcam(["compose", Self.good, Self.front, "-o", out])
        #expect(r.status != 0)
        #expect(r.stderrLines.count == 1 && r.stderr.contains("out.mov") && r.stderr.contains("No space left"),
                "stderr: \(r.stderr)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: mountPoint)) == [])
    }

    @Test func badOptionValuesAreRejectedBeforeAnyWork() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        for extra in [["--inset", "10"], ["--inset", "1920x100"], ["--corner", "middle"], ["--crf", "99"],
                      ["--preset", "ludicrous"], ["--swap-at", "-1"], ["--audio", "left"], ["--margin", "-3"]] {
            let r = try dualcam(["compose", Self.good, Self.front, "-o", dir.path("out.mov")] + extra)
            #expect(r.status != 0, "\(extra) accepted")
            #expect(r.stderr.hasPrefix("dualcam: ") && r.stderr.contains("Usage: dualcam compose"), "\(extra): \(r.stderr)")
        }
        #expect(dir.contents.isEmpty)
    }

    /// Values at the edges of what the types hold: each is refused in one line before any
    /// work, never a trap on overflow or on converting NaN.
    @Test func absurdValuesAreRefusedNotTrappedOn() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("out.mov")
        let cases: [[String]] = [
            ["compose", Self.good, Self.front, "-o", out, "--margin", "9223372036854775807"],
            ["compose", Self.good, Self.front, "-o", out, "--inset", "9223372036854775807x9223372036854775807"],
            ["compose", Self.good, Self.front, "-o", out, "--swap-at", "nan"],
            ["compose", Self.good, Self.front, "-o", out, "--swap-at", "inf"],
            ["record", "--back", Self.good, "-o", out, "--duration", "1e18"],
            ["record", "--back", Self.good, "-o", out, "--duration", "nan"],
            ["record", "--back", Self.good, "-o", out, "--fps", "1e300"],
            ["record", "--back", Self.good, "-o", out, "--capture", "0x0"],
            ["record", "--back", Self.good, "-o", out, "--margin", "-9223372036854775808"],
        ]
        for args in cases {
            let r = try dualcam(args)
            #expect(r.status != 0, "\(args.suffix(2)) accepted")
            #expect(r.stderr.hasPrefix("dualcam: ") && !r.stderr.contains("Fatal error"), "\(args.suffix(2)): \(r.stderr)")
        }
        #expect(dir.contents.isEmpty)
    }
}
