import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// Ordinary mistakes that are not a one-line error of ErrorTests' kind: each ends as a user
/// would want, checked from outside (exit status, what stderr says, ffprobe, the bytes).
@Suite(.timeLimit(.minutes(10))) struct MistakeTests {
    static let back = Reference.back, front = Reference.front

    @Test(.timeLimit(.minutes(2)))
    func anInputAsOutIsRefusedAndLeftAsItWas() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let same = dir.path("same.mp4"), alias = dir.path("alias.mp4")
        try FileManager.default.copyItem(atPath: Self.back, toPath: same)
        try FileManager.default.linkItem(atPath: same, toPath: alias)
        let original = try Data(contentsOf: URL(fileURLWithPath: same))
        for args in [["compose", same, Self.front, "-o", same, "--overwrite"],
                     ["compose", Self.back, same, "-o", alias, "--overwrite"],
                     ["record", "--back", same, "--duration", "1", "--audio", "none", "-o", alias, "--overwrite"]] {
            let r = try dualcam(args)
            #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.contains("it is also an input"), "\(args): \(r.stderr)")
        }
        // A file a playlist names is an input too.
        try "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:3.0,\nsame.mp4\n#EXT-X-ENDLIST\n"
            .write(toFile: dir.path("list.m3u8"), atomically: true, encoding: .utf8)
        let named = try dualcam(["compose", dir.path("list.m3u8"), Self.front, "-o", same, "--overwrite"])
        #expect(named.status == 1 && named.stderrLines.count == 1 && named.stderr.contains("it is also an input"), "\(named.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: same)) == original)
        #expect(Set(dir.contents) == ["same.mp4", "alias.mp4", "list.m3u8"])
    }

    /// --iso writes OUT.back.mov and OUT.front.mov beside the take: a camera file played as a
    /// camera under one of those names is an input, and --overwrite does not make it fair
    /// game (a new user's trial replaced a 12 s clip with a 1 s camera file). An output that
    /// is an input says so, not "use --overwrite".
    @Test(.timeLimit(.minutes(2)))
    func anIsoFileThatIsAnInputIsRefused() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let camera = dir.path("take.front.mov")
        try FileManager.default.copyItem(atPath: Self.front, toPath: camera)
        let original = try Data(contentsOf: URL(fileURLWithPath: camera))
        let r = try dualcam(["record", "--back", Self.back, "--front", camera, "--iso", "--overwrite", "--duration", "1",
                             "--audio", "none", "--skip-speed-check", "-o", dir.path("take.mov")])
        #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.contains("take.front.mov: cannot write: it is also an input"),
                "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: camera)) == original)
        #expect(Set(dir.contents) == ["take.front.mov"])
        let same = try dualcam(["compose", Self.back, camera, "-o", camera])
        #expect(same.status == 1 && same.stderr.contains("it is also an input") && !same.stderr.contains("--overwrite"),
                "\(same.stderr)")
    }

    /// A named pipe no one writes, given as a camera: its open never returns. A stop signal
    /// then ends the recording at once, in one line, with nothing written (an attacking
    /// helper's `timeout 20 dualcam record --back FIFO` was still waiting ten minutes on).
    /// With no speed table yet (a fresh machine, as CI's) the signal comes during the speed
    /// check, before the open: that stop ended nothing, and the open then waited for ever.
    @Test(.timeLimit(.minutes(1)))
    func aRecordingWaitingOnAPipeStopsOnSIGTERM() throws {
        let dir = try TempDir()
        let pipe = dir.path("camera.mp4")
        try #require(mkfifo(pipe, 0o600) == 0)
        // Signalled while a thread measures (no table: a fresh cache), then while the open waits
        // (this machine's own table, measured by then; else once the measuring is done).
        for (environment, wait) in [(["XDG_CACHE_HOME": dir.path("fresh-cache")], "the speed check"), ([:], "the open")] {
            var signalled = Date()
            let r = try run(Env.dualcam, ["record", "--back", pipe, "--audio", "none", "--duration", "2", "-o", dir.path("out.mov")],
                            environment: environment, whileRunning: { p, _ in
                waitUntil(wait, timeout: 30) {
                    let threads = Self.threads(p.processIdentifier)
                    return !p.isRunning || (environment.isEmpty ? threads.contains { $0.wchan == "wait_for_partner" }
                                                                : threads.contains { $0.name == "dualcam-measure" })
                }
                signalled = Date()
                kill(p.processIdentifier, SIGTERM)
            })
            #expect(r.status == 128 + SIGTERM && r.stderrLines.count == 1 && r.stderr.contains("interrupted; no output written"),
                    "during \(wait): \(r.status) \(r.stderr)")
            #expect(Date().timeIntervalSince(signalled) < 5, "during \(wait): ended \(Date().timeIntervalSince(signalled)) s after the signal")
            #expect(Set(dir.contents).subtracting(["fresh-cache"]) == ["camera.mp4"])
        }
    }

    /// Each thread of `pid`: its name, and where in the kernel it waits (a FIFO's open waits in
    /// wait_for_partner).
    static func threads(_ pid: Int32) -> [(name: String, wchan: String)] {
        let tids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tids.map { tid in
            func read(_ what: String) -> String {
                ((try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/\(what)", encoding: .utf8)) ?? "")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            return (read("comm"), read("wchan"))
        }
    }

    /// Playlists an attacking helper crafted: one that names itself (it was re-read without
    /// end, memory growing 250 MB a second) fails in one line; a live one that never ends is
    /// given up after a few reloads (it held compose for 500 s). Neither may take long.
    @Test(.timeLimit(.minutes(1)))
    func playlistsThatNeverEndDoNotHoldCompose() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\nself.m3u8\n".write(toFile: dir.path("self.m3u8"), atomically: true, encoding: .utf8)
        let started = Date()
        let loop = try dualcam(["compose", dir.path("self.m3u8"), Self.front, "-o", dir.path("a.mov")])
        #expect(loop.status == 1 && loop.stderrLines.count == 1 && Date().timeIntervalSince(started) < 10, "\(loop.stderr)")
        let segment = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", Self.back, "-t", "2", "-c", "copy",
                                                     "-f", "mpegts", dir.path("seg0.ts")])
        try #require(segment.status == 0, "\(segment.stderr)")
        try "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:2.0,\nseg0.ts\n"
            .write(toFile: dir.path("live.m3u8"), atomically: true, encoding: .utf8)
        let again = Date()
        let live = try dualcam(["compose", dir.path("live.m3u8"), Self.front, "-o", dir.path("b.mov"), "--size", "320x180"])
        #expect(live.status == 0 && Date().timeIntervalSince(again) < 30, "\(live.stderr)")
    }

    /// finish of a named pipe is refused at once (its open waited for a writer); an empty
    /// take (killed before its first fragment) says so rather than "not QuickTime".
    @Test(.timeLimit(.minutes(1)))
    func finishRefusesAPipeAndSaysWhatAnEmptyTakeIs() throws {
        let dir = try TempDir()
        try #require(mkfifo(dir.path("p.mov"), 0o600) == 0)
        let pipe = try dualcam(["finish", dir.path("p.mov")])
        #expect(pipe.status == 1 && pipe.stderrLines.count == 1 && pipe.stderr.contains("not a regular file"), "\(pipe.stderr)")
        _ = FileManager.default.createFile(atPath: dir.path("e.mov"), contents: Data())
        let empty = try dualcam(["finish", dir.path("e.mov")])
        #expect(empty.status == 1 && empty.stderr.contains("is empty: no frame was written to it"), "\(empty.stderr)")
    }

    /// An intermediate (TAKE.intermediate.mov) holds the end of a take not yet encoded: a new
    /// recording to TAKE refuses rather than lose it; finish refuses one dualcam did not make,
    /// one that claims to continue a file that is not its take (an attacking helper's whole
    /// take, and a text file, were replaced by a crafted one), one whose pictures are not what
    /// it says, and the intermediate itself given as the take, each in one line with every
    /// file left as it was; a made-up one whose tag holds, with no take there, is finished
    /// into an HEVC take and removed.
    @Test(.timeLimit(.minutes(2)))
    func anIntermediateIsNeverLostNorTakenOnItsWord() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let take = dir.path("t.mov"), rest = dir.path("t.mov.intermediate.mov")
        try makeClip(rest, ["-f", "lavfi", "-i", "testsrc=s=640x480:r=30:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        let before = try Data(contentsOf: URL(fileURLWithPath: rest))
        let record = try dualcam(["record", "--back", Self.back, "--front", Self.front, "--duration", "1", "-o", take])
        #expect(record.status == 1 && record.stderrLines.count == 1 && record.stderr.contains("dualcam finish \(take)"), "\(record.stderr)")
        let untagged = try dualcam(["finish", take])
        #expect(untagged.status == 1 && untagged.stderr.contains("no intermediate of a dualcam take"), "\(untagged.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: rest)) == before && !FileManager.default.fileExists(atPath: take))

        let tag = "dualcam-intermediate take=0123abcd from=%d encoder=libx265 preset=ultrafast crf=28 bitrate=0 fps=30 audio=160000"
        for (from, mine) in [(30, "not a take"), (0, "my thesis, only copy")] {
            try makeClip(rest, ["-f", "lavfi", "-i", "testsrc=s=640x480:r=30:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                "-metadata", "comment=" + String(format: tag, from)])
            _ = FileManager.default.createFile(atPath: take, contents: Data(mine.utf8))
            let notThatTake = try dualcam(["finish", take])
            #expect(notThatTake.status == 1 && notThatTake.stderrLines.count == 1 && notThatTake.stderr.contains("nothing was changed"),
                    "\(notThatTake.stderr)")
            #expect(try String(contentsOfFile: take, encoding: .utf8) == mine && FileManager.default.fileExists(atPath: rest))
        }
        let itself = try dualcam(["finish", rest])
        #expect(itself.status == 1 && itself.stderr.contains("is the intermediate of a take") && itself.stderr.contains("finish \(take)"),
                "\(itself.stderr)")

        try FileManager.default.removeItem(atPath: take)
        try makeClip(rest, ["-f", "lavfi", "-i", "testsrc=s=640x480:r=30:d=1", "-c:v", "libx264", "-pix_fmt", "yuv422p",
                            "-metadata", "comment=" + String(format: tag, 0)])
        let wrongPictures = try dualcam(["finish", take])
        #expect(wrongPictures.status == 1 && wrongPictures.stderrLines.count == 1, "\(wrongPictures.stderr)")
        #expect(FileManager.default.fileExists(atPath: rest) && !FileManager.default.fileExists(atPath: take))

        try makeClip(rest, ["-f", "lavfi", "-i", "testsrc=s=640x480:r=30:d=1", "-f", "lavfi", "-i", "sine=r=48000:d=1",
                            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-metadata", "comment=" + String(format: tag, 0)])
        let made = try dualcam(["finish", take])
        #expect(made.status == 0, "\(made.stderr)")
        let video = try Probe(take).stream("video")
        #expect(video?["codec_name"] as? String == "hevc" && video?["nb_frames"] as? String == "30", "\(String(describing: video))")
        #expect(!FileManager.default.fileExists(atPath: rest))
    }

    /// The sidecar --iso writes never replaces a file someone made at its name while the take
    /// ran (it did, silently); relayout reads no sidecar through a link (one led outside the
    /// take's folder and its startsSwapped was applied).
    @Test(.timeLimit(.minutes(2)))
    func theSidecarIsNeitherClobberedNorReadThroughALink() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let take = dir.path("t.mov"), sidecar = IsoFiles.sidecar(for: dir.path("t.mov"))
        let r = try dualcam(["record", "--back", Self.back, "--front", Self.front, "--iso", "--duration", "2", "--audio", "none",
                             "--skip-speed-check", "-o", take]) { _, said in
            said.waitFor("recording to")
            try? "precious\n".write(toFile: sidecar, atomically: false, encoding: .utf8)
        }
        #expect(r.status == 0 && r.stderr.contains("was made by something else while recording"), "\(r.stderr)")
        #expect(try String(contentsOfFile: sidecar, encoding: .utf8) == "precious\n")
        try FileManager.default.createDirectory(atPath: dir.path("outside"), withIntermediateDirectories: false)
        try #"{"cameras":{"back":"t.back.mov","front":"t.front.mov"},"startsSwapped":true,"swaps":[],"take":"t.mov"}"#
            .write(toFile: dir.path("outside/evil.json"), atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: sidecar)
        try FileManager.default.createSymbolicLink(atPath: sidecar, withDestinationPath: dir.path("outside/evil.json"))
        let re = try dualcam(["relayout", take, "-o", dir.path("re.mov"), "--size", "320x180"])
        #expect(re.status == 0 && re.stderr.contains("missing or unreadable: laid out with no swaps"), "\(re.stderr)")
    }

    /// A sidecar relayout reads is checked: swap times that are not times of the take in
    /// order are said in one line and left out, never warned of as a --swap-at the user gave.
    @Test(.timeLimit(.minutes(3)))
    func relayoutChecksTheSidecarItReads() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let take = dir.path("take.mov")
        let r = try dualcam(["record", "--back", Self.back, "--front", Self.front, "--iso", "--duration", "1",
                             "--audio", "none", "--skip-speed-check", "-o", take])
        try #require(r.status == 0, "\(r.stderr)")
        let sidecar = IsoFiles.sidecar(for: take)
        // The take's own sidecar, its swaps changed (another take's is not read at all).
        let written = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sidecar))) as? [String: Any]
        let takeID = try #require(written?["take_id"] as? String)
        for swaps in ["[-5, 1e308]", "[2.0, 1.0]"] {
            try #"{"schema":"dualcam.iso/1","version":"0.9.0","cameras":{"back":"take.back.mov","front":"take.front.mov"},"starts_swapped":false,"swaps":\#(swaps),"take":"take.mov","take_id":"\#(takeID)"}"#
                .write(toFile: sidecar, atomically: true, encoding: .utf8)
            let out = dir.path("re.mov")
            let re = try dualcam(["relayout", take, "-o", out, "--overwrite", "--size", "320x180"])
            #expect(re.status == 0 && re.stderr.contains("its swaps are not times of the take in order")
                    && !re.stderr.contains("at or past the end"), "\(swaps): \(re.stderr)")
        }
    }

    /// The container follows the name: .mp4 is MP4 (brand isom), .mov QuickTime (brand qt),
    /// both with HEVC tagged hvc1; for record's fragmented-then-finished file too.
    @Test(.timeLimit(.minutes(2)))
    func anMP4NameGetsAnMP4File() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let composed = dir.path("pip.mp4"), recorded = dir.path("rec.MP4"), quickTime = dir.path("pip.mov")
        for (args, out) in [(["compose", Self.back, Self.front, "--size", "640x360", "-o", composed], composed),
                            (["compose", Self.back, Self.front, "--size", "640x360", "-o", quickTime], quickTime),
                            (["record", "--back", Self.back, "--duration", "1", "--size", "640x360", "--audio", "none",
                              "--skip-speed-check", "-o", recorded], recorded)] {
            let r = try dualcam(args)
            try #require(r.status == 0, "\(r.stderr)")
            let probe = try Probe(out)
            let brand = (probe.format["tags"] as? [String: Any])?["major_brand"] as? String
            #expect(brand == (out == quickTime ? "qt  " : "isom"), "\(out): \(brand ?? "no brand")")
            #expect(probe.stream("video")?["codec_tag_string"] as? String == "hvc1")
        }
    }

    /// Negative numbers reach the range check; an inset below the minimum says the minimum;
    /// a small inset gets a corner radius that fits it unless one is given.
    @Test(.timeLimit(.minutes(2)))
    func numbersAtTheEdgesAreNamedOrTaken() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("out.mov")
        for (extra, says) in [(["--swap-at", "-1"], "dualcam: --swap-at must be 0 or more seconds, got -1.0"),
                              (["--margin", "-3"], "dualcam: margin must be 0 or more, got -3"),
                              (["--crf", "-1"], "dualcam: --crf must be 0-51; got -1"),
                              (["--inset", "0x0"], "dualcam: --inset must be at least 16x16 (a smaller one shows nothing); got 0x0"),
                              (["--inset", "15x40"], "dualcam: --inset must be at least 16x16"),
                              (["--inset", "2x2", "--corner-radius", "1"], "dualcam: --inset must be at least 16x16")] {
            let r = try dualcam(["compose", Self.back, Self.front, "-o", out] + extra)
            #expect(r.status == 64 && r.stderrLines.first.map { $0.hasPrefix(says) } == true, "\(extra): \(r.stderr)")
        }
        #expect(dir.contents.isEmpty)
        // The smallest inset, with the radius derived (no --corner-radius) and a 1080p front.
        let big = dir.path("big.mp4")
        try makeClip(big, ["-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=30:d=1", "-c:v", "libx264", "-preset", "ultrafast"])
        for inset in ["16x16", "32x32"] {
            let r = try dualcam(["compose", Self.back, big, "--inset", inset, "--size", "640x360", "-o", dir.path("\(inset).mov")])
            #expect(r.status == 0, "\(inset): \(r.stderr)")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aSwapPastTheEndIsToldOf() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let r = try dualcam(["compose", Self.back, Self.front, "--size", "320x180", "--swap-at", "1", "--swap-at", "10",
                             "-o", dir.path("out.mov")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderrLines == ["dualcam: warning: --swap-at 10 is at or past the end of \(Self.back) (3.00 s): it never shows"])
    }

    /// Inputs of different lengths are said to be, on stderr and in the JSON: a FRONT that
    /// ends early holds its last picture, a longer one is cut; equal lengths say nothing.
    @Test(.timeLimit(.minutes(2)))
    func inputsOfDifferentLengthsAreToldOf() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let short = dir.path("short.mp4")
        try makeClip(short, ["-f", "lavfi", "-i", "testsrc2=s=320x240:r=30:d=1", "-c:v", "libx264", "-preset", "ultrafast"])
        let early = try dualcam(["compose", Self.back, short, "--size", "320x180", "-o", dir.path("early.mov")])
        #expect(early.status == 0, "\(early.stderr)")
        #expect(early.stderrLines == ["dualcam: warning: \(short) ends at 1.00 s, 2.00 s before the output: its last picture holds from there"],
                "\(early.stderr)")
        let late = try dualcam(["compose", short, Self.back, "--size", "320x180", "-o", dir.path("late.mov"), "--json"])
        #expect(late.status == 0, "\(late.stderr)")
        #expect(late.stdout.contains("\"warnings\":[\"\(Self.back) lasts 3.00 s, the output 1.00 s: it ends with \(short) "
                                     + "(BACK sets the length), the rest of \(Self.back) is left out\"]"), "\(late.stdout)")
        let same = try dualcam(["compose", Self.back, Self.front, "--size", "320x180", "-o", dir.path("same.mov")])
        #expect(same.status == 0 && same.stderrLines.isEmpty, "\(same.stderr)")
    }

    /// A clip of one or two pictures is a composition of one or two frames: x265 gave such
    /// short encodes decode times from a field it never set, and the muxer refused the file
    /// ("Not yet implemented in FFmpeg") for 4 of these 10 clips as BACK, before the mend.
    @Test(.timeLimit(.minutes(3)))
    func aClipOfOneOrTwoPicturesIsComposed() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        for frames in [1, 2] {
            for (codec, name) in [("mjpeg", "mjpeg.mov"), ("mjpeg", "mjpeg.mp4"), ("mjpeg", "mjpeg.mkv"),
                                  ("mpeg4", "mpeg4.mov"), ("libvpx-vp9", "vp9.mp4"), ("libx265", "hevc.mkv")] {
                let clip = dir.path("\(frames)-\(name)")
                try makeClip(clip, ["-f", "lavfi", "-i", "testsrc2=s=640x360:r=30", "-frames:v", String(frames),
                                    "-c:v", codec, "-pix_fmt", codec == "mjpeg" ? "yuvj420p" : "yuv420p"])
                for partner in [Self.back, Self.front] {
                let out = dir.path("\(frames)-\(name)-\(partner == Self.back ? "b" : "f").mov")
                let r = try dualcam(["compose", clip, partner, "-o", out])
                #expect(r.status == 0, "\(clip): \(r.stderr)")
                guard r.status == 0 else { continue }
                let packets = try Probe.packets(out, stream: "v:0")
                #expect(packets.times.map(\.pts) == (0..<frames).map { $0 * 512 }, "\(clip)")
                let decoded = try run(Env.tool("ffmpeg")!, ["-v", "error", "-i", out, "-f", "null", "-"])
                #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(clip): \(decoded.stderr)")
                }
            }
        }
    }

    /// What the muxer is given: a decode time after its picture's, not after the one before,
    /// or further ahead than any encoder reorders is the next in line; a plausible one stays.
    @Test(.timeLimit(.minutes(1)))
    func impossibleDecodeTimesAreReplacedByTheNextInLine() {
        func corrected(_ pairs: [(Int64, Int64)]) -> [Int64] {
            var times = DecodeTimes()
            return pairs.map { pts, dts in
                var d = dts
                times.correct(pts, &d)
                return d
            }
        }
        // x264/x265 with B-pyramid: two frames early, then reordered; nothing changes.
        #expect(corrected([(0, -2), (4, -1), (2, 0), (1, 1), (3, 2)]) == [-2, -1, 0, 1, 2])
        // x265's unset field: any number.
        #expect(corrected([(0, -23_030_882_466)]) == [0])
        #expect(corrected([(0, 5_859_553_999_884_210_513), (1, 5_859_553_999_884_210_514)]) == [0, 1])
        #expect(corrected([(0, Int64.min)]) == [0])
        // So far below that the difference overflows (CI of 2026-11-27: a crash).
        #expect(corrected([(5, Int64.min + 3)]) == [5])
        #expect(corrected([(0, -1), (1, -9_223_372_036_854_775_000)]) == [-1, 0])
        #expect(corrected([(0, -3), (1, -3), (2, 7)]) == [-3, -2, -1])
        #expect(corrected([(100, 100 - DecodeTimes.mostFramesEarly - 1)]) == [100])
    }

    /// With no -o the take is named after the time: a name an earlier take has (or one being
    /// written) is passed over, never a reason to ask for --overwrite.
    @Test(.timeLimit(.minutes(2)))
    func aTakeNamedAfterTheTimeNeverMeetsAnEarlierOne() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let stamp = DateFormatter()
        stamp.dateFormat = "yyyyMMdd-HHmmss"
        let now = Date()
        // Earlier takes under every name of the next 30 seconds.
        let earlier = (-1...30).map { "dualcam-\(stamp.string(from: now.addingTimeInterval(Double($0)))).mov" }
        for name in earlier { try "an earlier take".write(toFile: dir.path(name), atomically: false, encoding: .utf8) }
        let r = try run("/bin/bash", ["-c", "cd \"$1\" && exec \"$0\" record --back \"$2\" --duration 1 --audio none --size 320x180",
                                      Env.dualcam, dir.url.path, Self.back])
        #expect(r.status == 0, "\(r.stderr)")
        let new = Set(dir.contents).subtracting(earlier)
        #expect(new.count == 1 && new.first?.hasSuffix("-2.mov") == true, "\(new)")
        for name in earlier { #expect(try String(contentsOfFile: dir.path(name), encoding: .utf8) == "an earlier take") }
    }

    /// Options only a camera takes, given for files played as cameras: one warning, and the
    /// take is recorded.
    @Test(.timeLimit(.minutes(2)))
    func cameraOptionsForFilesAreSaidToBeUnused() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let r = try dualcam(["record", "--back", Self.back, "--front", Self.front, "--capture", "640x480", "--fps", "15",
                             "--control", "front:brightness=1", "--duration", "1", "--audio", "none", "--size", "320x180",
                             "-o", dir.path("files.mov")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("warning: --capture, --fps, --control front: apply to cameras only, and these are files: left unused"),
                "\(r.stderr)")
        #expect(try Probe(dir.path("files.mov")).stream("video") != nil)
    }

    /// --audio is a microphone's name, not ALSA's whole language: `file:'|cmd'` ran cmd and
    /// `file:PATH` truncated PATH and filled it with hundreds of MB (an attacker's finding).
    /// Refused before anything runs; the engine's open refuses them too.
    @Test(.timeLimit(.minutes(2)))
    func anAudioNameIsACaptureDeviceNeverACommandOrAFile() throws {
        let dir = try TempDir()
        let victim = dir.path("victim.txt"), ran = dir.path("ran")
        try "important".write(toFile: victim, atomically: false, encoding: .utf8)
        for name in ["file:'|touch \(ran); cat >/dev/null'", "file:\(victim)", "plug:'file:\(victim)'", "tee:default,\(victim)",
                     "hw:0;touch \(ran)", "{ type file file \(victim) }"] {
            let r = try dualcam(["record", "--back", Self.back, "--duration", "1", "--size", "320x180", "--audio", name,
                                 "-o", dir.path("take.mov")])
            #expect(r.status == 64 && r.stderr.hasPrefix("dualcam: --audio must name a capture device"), "\(name): \(r.stderr)")
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "important")
        #expect(Set(dir.contents) == ["victim.txt"])
        for good in ["default", "pipewire", "hw:1", "hw:Loopback,1,0", "plughw:CARD=C920,DEV=0", "sysdefault:CARD=Dummy", "dsnoop:1"] {
            #expect(ALSADevices.isCaptureName(good), "\(good)")
        }
        #expect(throws: MediaError.self) { try ALSACapture(device: "file:\(victim)") }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "important")
    }

    /// Long but legal names: compose writes under a 254-byte name (its hidden name beside
    /// OUT went over 255 bytes and the write failed at the end), a take under a 234-byte one
    /// is recorded and its files fit, and a name too long for the take's files is refused
    /// before anything is recorded, not after.
    @Test(.timeLimit(.minutes(2)))
    func longNamesAreWrittenOrRefusedAtTheStart() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let longest = String(repeating: "é", count: 125) + ".mov"  // 254 bytes
        let composed = try dualcam(["compose", Self.back, Self.front, "--size", "320x180", "-o", dir.path(longest)])
        #expect(composed.status == 0, "\(composed.stderr)")
        let take = String(repeating: "t", count: 230) + ".mov", tooLong = String(repeating: "u", count: 240) + ".mov"
        let recorded = try dualcam(["record", "--back", Self.back, "--duration", "1", "--audio", "none", "--size", "320x180",
                                    "--iso", "-o", dir.path(take)])
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let refused = try dualcam(["record", "--back", Self.back, "--duration", "1", "--audio", "none", "-o", dir.path(tooLong)])
        #expect(refused.status == 1 && refused.stderrLines.count == 1 && refused.stderr.contains("at most 238 bytes"), "\(refused.stderr)")
        #expect(Set(dir.contents) == [longest, take, String(take.dropLast(4)) + ".back.mov", String(take.dropLast(4)) + ".dualcam.json"],
                "\(dir.contents.map { $0.prefix(8) + "..." + $0.suffix(16) })")
    }

    /// What a killed take leaves beside OUT is removed, but only what is ours: a file of
    /// someone else's under a name like ours (".take.mov.dualcam-2.recording") stays.
    @Test(.timeLimit(.minutes(2)))
    func onlyOurOwnLeftoversAreRemoved() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let notOurs = dir.path(".take.mov.dualcam-2.recording"), ours = dir.path(".take.mov.dualcam-3.recording")
        let notOursTmp = dir.path(".c.mov.1-0-7.dualcam-tmp")
        try "someone's notes".write(toFile: notOurs, atomically: false, encoding: .utf8)
        try "someone's notes".write(toFile: notOursTmp, atomically: false, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: ours, contents: Data())
        let r = try dualcam(["record", "--back", Self.back, "--duration", "1", "--audio", "none", "--size", "320x180",
                             "-o", dir.path("take.mov")])
        #expect(r.status == 0, "\(r.stderr)")
        let c = try dualcam(["compose", Self.back, Self.front, "--size", "320x180", "-o", dir.path("c.mov")])
        #expect(c.status == 0, "\(c.stderr)")
        #expect(Set(dir.contents) == ["take.mov", "c.mov", ".take.mov.dualcam-2.recording", ".c.mov.1-0-7.dualcam-tmp"],
                "\(dir.contents)")
        #expect(try String(contentsOfFile: notOurs, encoding: .utf8) == "someone's notes")
    }

    /// A link the user names is followed to its video, wherever that is (it was refused as
    /// "naming files outside its folder"); a playlist beside the link still reads nothing
    /// outside the folder it is in.
    @Test(.timeLimit(.minutes(2)))
    func aLinkToAVideoElsewhereIsRead() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.path("here"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.path("here/back.mp4"), withDestinationPath: Self.back)
        let r = try dualcam(["compose", dir.path("here/back.mp4"), Self.front, "--size", "320x180", "-o", dir.path("here/out.mov")])
        #expect(r.status == 0, "\(r.stderr)")
        try "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:3.0,\n../outside.ts\n#EXT-X-ENDLIST\n"
            .write(toFile: dir.path("here/list.m3u8"), atomically: false, encoding: .utf8)
        try makeClip(dir.path("outside.ts"), ["-i", Self.back, "-c", "copy"])
        let list = try dualcam(["compose", dir.path("here/list.m3u8"), Self.front, "-o", dir.path("here/list.mov")])
        #expect(list.status == 1 && list.stderr.contains("names files outside its folder"), "\(list.stderr)")
        // A playlist with one segment of three outside: composed without it, and said so.
        try makeClip(dir.path("here/mixed.m3u8"), ["-i", Self.back, "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-an",
                                                   "-f", "hls", "-hls_time", "1", "-hls_list_size", "0"])
        try FileManager.default.moveItem(atPath: dir.path("here/mixed1.ts"), toPath: dir.path("mixed1.ts"))
        let playlist = try String(contentsOfFile: dir.path("here/mixed.m3u8"), encoding: .utf8)
        try playlist.replacingOccurrences(of: "\nmixed1.ts", with: "\n../mixed1.ts")
            .write(toFile: dir.path("here/mixed.m3u8"), atomically: false, encoding: .utf8)
        let mixed = try dualcam(["compose", dir.path("here/mixed.m3u8"), Self.front, "--size", "320x180", "-o", dir.path("here/mixed.mov")])
        #expect(mixed.status == 0 && mixed.stderr.contains("mixed.m3u8: what it names outside its folder was left out (not read)"),
                "\(mixed.stderr)")
    }

    /// A link at OUT pointing nowhere is something there: kept as the link it is.
    @Test(.timeLimit(.minutes(2)))
    func aDanglingLinkAtOutIsKeptWithoutOverwrite() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("out.mov")
        try FileManager.default.createSymbolicLink(atPath: out, withDestinationPath: "nowhere.mov")
        for args in [["compose", Self.back, Self.front, "-o", out],
                     ["record", "--back", Self.back, "--duration", "1", "--audio", "none", "-o", out],
                     ["finish", Self.back, "-o", out]] {
            let r = try dualcam(args)
            #expect(r.status == 1 && r.stderrLines.count == 1, "\(args[0]): \(r.stderr)")
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: out) == "nowhere.mov")
        #expect(dir.contents == ["out.mov"])
    }

    /// What gives access to a stream never shows: user info, the RTMP key, SRT's secrets.
    @Test func streamURLsAreShownWithTheirSecretsMasked() {
        let cases = [
            ("rtmp://live.example.com/app/sk_live_12345", "rtmp://live.example.com/app/***"),
            ("rtmps://user:pw@live.example.com:443/app/key/more?x=1", "rtmps://***@live.example.com:443/app/***?x=1"),
            ("srt://10.0.0.1:9000?mode=caller&passphrase=hunter2hunter2&latency=200",
             "srt://10.0.0.1:9000?mode=caller&passphrase=***&latency=200"),
            ("srt://host:9000?streamid=publish/key9&pbkeylen=16", "srt://host:9000?streamid=***&pbkeylen=16"),
            ("udp://239.0.0.1:1234?pkt_size=1316", "udp://239.0.0.1:1234?pkt_size=1316"),
            ("tcp://u@host:1", "tcp://***@host:1"),
        ]
        for (url, shown) in cases { #expect(LiveStreamWriter.masked(url) == shown) }
    }

    /// A driver that reports rows shorter than the picture (planar YU12 with bytesperline <
    /// width), or a size over the pixel cap, is not read as it says: refused, never read past
    /// the end of its buffer.
    @Test func aCameraBufferWithAShortStrideIsRefused() {
        let short = StreamFormat(fourcc: .yu12, width: 640, height: 360, bytesPerLine: 320, imageSize: 0, framesPerSecond: 30)
        #expect(!RawFrameConverter.isSound(short))
        let bytes = [UInt8](repeating: 128, count: RawFrameConverter.requiredBytes(short) + 64)
        let out = I420Buffer(size: Size(width: 640, height: 360))
        let matrix = bytes.withUnsafeBytes { RawFrameConverter.convert($0, short, into: out.view, output: .bt709) }
        #expect(matrix == nil)
        for (fourcc, line) in [(FourCC.yuyv, 1279), (.nv12, 639), (.yu12, 639)] {
            #expect(!RawFrameConverter.isSound(StreamFormat(fourcc: fourcc, width: 640, height: 360, bytesPerLine: line,
                                                            imageSize: 0, framesPerSecond: 30)), "\(fourcc) \(line)")
        }
        #expect(!RawFrameConverter.isSound(StreamFormat(fourcc: .yuyv, width: 16384, height: 8192, bytesPerLine: 32768,
                                                        imageSize: 0, framesPerSecond: 30)))
        #expect(RawFrameConverter.isSound(StreamFormat(fourcc: .yu12, width: 640, height: 360, bytesPerLine: 640,
                                                       imageSize: 0, framesPerSecond: 30)))
        #expect(RawFrameConverter.isSound(StreamFormat(fourcc: .yuyv, width: 640, height: 360, bytesPerLine: 1280,
                                                       imageSize: 0, framesPerSecond: 30)))
    }

    /// Help in every form people type it prints the help and exits 0 (the argument parser's
    /// own requests pass through the one place that maps errors to exits untouched).
    @Test func helpInEveryFormIsHelp() throws {
        for args in [["--help"], ["-h"], ["help"], ["help", "compose"], ["compose", "--help"], ["record", "-h"],
                     ["help", "finish"], ["relayout", "--help"]] {
            let r = try dualcam(args)
            #expect(r.status == 0 && r.stdout.contains("USAGE: dualcam") && r.stderr.isEmpty, "\(args): \(r.stdout) \(r.stderr)")
        }
        let version = try dualcam(["--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("dualcam "))
        let typo = try dualcam(["compose", "a.mp4", "b.mp4", "-o", "c.mov", "--colour", "red"])
        #expect(typo.status == 64 && typo.stderr.hasPrefix("dualcam: Unknown option '--colour'"), "\(typo.stderr)")
    }

    /// `finish` of what is no recording at all (text, an empty file, Matroska, a folder, a
    /// finished movie cut short at 2000 or 100 bytes) says so in one line, exit 1 (it said
    /// "already a regular QuickTime file", exit 0, and of the cut ones "already a finished
    /// movie"), and changes nothing.
    @Test func finishRefusesWhatIsNoQuickTimeFile() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        try "notes\n".write(toFile: dir.path("t.mov"), atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: dir.path("empty.mov"), contents: Data())
        try FileManager.default.copyItem(atPath: Self.front, toPath: dir.path("f.mkv"))
        try FileManager.default.createDirectory(atPath: dir.path("folder"), withIntermediateDirectories: false)
        let whole = try #require(FileManager.default.contents(atPath: Self.back))
        for cut in [2000, 100] { _ = FileManager.default.createFile(atPath: dir.path("cut\(cut).mp4"), contents: whole.prefix(cut)) }
        let before = Set(dir.contents)
        for name in ["t.mov", "empty.mov", "f.mkv", "folder", "cut2000.mp4", "cut100.mp4"] {
            let r = try dualcam(["finish", dir.path(name)])
            #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.contains(name) && r.stdout.isEmpty, "\(name): \(r.stderr)")
        }
        #expect(Set(dir.contents) == before)
        let regular = try dualcam(["finish", Self.back])
        #expect(regular.status == 0 && regular.stdout.contains("is already a finished movie (a regular file, index first): nothing to do"), "\(regular.stderr)")
        // Another program's file with its index last is not said to have it first.
        let indexLast = dir.path("index-last.mp4")
        let made = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", Self.back, "-c", "copy", indexLast])
        try #require(made.status == 0, "\(made.stderr)")
        let last = try dualcam(["finish", indexLast])
        #expect(last.status == 0 && last.stdout.contains("is already a finished movie (a regular file, index at the end): nothing to do"),
                "\(last.stdout) \(last.stderr)")
    }

    /// A composition cut short by SIGTERM or SIGHUP exits 128 + the signal, as shells report
    /// (SIGINT's 130 stays), leaving nothing; one stopped at its very start too (it may be
    /// blocked in an open then).
    @Test(.timeLimit(.minutes(2)))
    func aStopSignalGivesItsOwnExitCode() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let long = dir.path("long.mkv")
        try makeClip(long, ["-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=60", "-c:v", "libx264", "-preset", "ultrafast"])
        try FileManager.default.createDirectory(atPath: dir.path("out"), withIntermediateDirectories: false)
        // nil: once it composes.
        let cases: [(Int32, Int32, Double?)] = [(SIGTERM, 143, nil), (SIGHUP, 129, nil), (SIGTERM, 143, 0.3)]
        for (signal, code, after) in cases {
            let r = try dualcam(["compose", long, Self.front, "-o", dir.path("out/out.mov")]) { p, _ in
                if let after {
                    // The thing tested: a signal in the first moments, whatever the command is doing.
                    Thread.sleep(forTimeInterval: after)
                } else {
                    // Composing: pictures reach its file (unnamed until whole), in a folder of its own.
                    waitUntil("compose's first pictures", timeout: 30) {
                        !p.isRunning || bytesWritten(by: p.processIdentifier, in: dir.path("out")) > 64 * 1024
                    }
                }
                kill(p.processIdentifier, signal)
            }
            #expect(r.status == code && r.stderrLines == ["dualcam: interrupted; no output written"], "\(signal) \(after.map { "at \($0) s" } ?? "while composing"): \(r.stderr)")
            #expect(dir.contents.sorted() == ["long.mkv", "out"] && (try? FileManager.default.contentsOfDirectory(atPath: dir.path("out"))) == [],
                    "\(dir.contents)")
        }
    }
}
