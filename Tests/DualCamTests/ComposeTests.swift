import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10))) struct ComposeTests {
    /// Colons are ordinary in file names (times of day): an input and an output named with
    /// them are files, not URLs of some protocol; a playlist inside its own folder is read.
    @Test(.timeLimit(.minutes(3)))
    func namesWithColonsAreFilesAndAPlaylistInItsFolderIsRead() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let input = dir.path("take 12:30.mp4"), out = dir.path("pip 12:31.mov")
        try FileManager.default.copyItem(atPath: Env.fixture("back-16x9-30fps.mp4"), toPath: input)
        let r = try dualcam(["compose", input, Reference.front, "-o", out, "--size", "640x360", "--quiet"])
        try #require(r.status == 0, "\(r.stderr)")
        #expect(Probe.number(try Probe("file:" + out).stream("video")?["duration"]).map { abs($0 - 3) < 0.1 } == true)
        let recorded = dir.path("rec-12:30.mov")
        let rec = try dualcam(["record", "--back", input, "--front", Reference.front, "--duration", "1", "--audio", "none",
                               "--size", "640x360", "--skip-speed-check", "-o", recorded])
        try #require(rec.status == 0, "\(rec.stderr)")
        #expect(Probe.number(try Probe("file:" + recorded).stream("video")?["duration"]).map { abs($0 - 1) < 0.1 } == true)
        let hls = dir.path("hls")
        try FileManager.default.createDirectory(atPath: hls, withIntermediateDirectories: true)
        let seg = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", "file:" + input, "-c", "copy",
                                                 "-f", "hls", "-hls_time", "1", "-hls_list_size", "0", "file:" + hls + "/in.m3u8"])
        try #require(seg.status == 0, "\(seg.stderr)")
        let fromPlaylist = try dualcam(["compose", hls + "/in.m3u8", Reference.front, "-o", dir.path("hls.mov"), "--size", "640x360", "--quiet"])
        #expect(fromPlaylist.status == 0, "\(fromPlaylist.stderr)")
    }

    /// One standard composition shared by the read-only checks below.
    static let standard: Result<(TempDir, String), any Error> = Result {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("pip.mov")
        let r = try dualcam(["compose", Reference.back, Reference.front, "-o", out])
        guard r.status == 0 else { throw ProbeError(message: "compose failed: \(r.stderr)") }
        return (dir, out)
    }

    @Test func outputIsHEVCInQuickTimeAsSpecified() throws {
        let (dir, out) = try Self.standard.get()
        let p = try Probe(out)
        let v = try #require(p.stream("video"))
        #expect(v["codec_name"] as? String == "hevc")
        #expect(v["codec_tag_string"] as? String == "hvc1")
        #expect(v["width"] as? Int == 1920 && v["height"] as? Int == 1080)
        #expect(v["r_frame_rate"] as? String == "30/1" && v["avg_frame_rate"] as? String == "30/1")
        #expect(v["pix_fmt"] as? String == "yuv420p")
        #expect(v["color_space"] as? String == "bt709")
        #expect(v["color_primaries"] as? String == "bt709")
        #expect(v["color_transfer"] as? String == "bt709")
        #expect(v["color_range"] as? String == "tv")
        let a = try #require(p.stream("audio"))
        #expect(a["codec_name"] as? String == "aac")
        #expect(a["profile"] as? String == "LC")
        #expect(a["sample_rate"] as? String == "48000")
        #expect(a["channels"] as? Int == 2)
        #expect((p.format["format_name"] as? String)?.contains("mov") == true)
        #expect(dir.contents == ["pip.mov"], "no temporary file left beside the output")
    }

    @Test func durationFollowsBackAndTracksEndTogether() throws {
        let (_, out) = try Self.standard.get()
        let p = try Probe(out)
        let backVideo = try #require(try Probe(Reference.back).stream("video"))
        let backDuration = try #require(Probe.number(backVideo["duration"]))
        let video = try #require(Probe.number(p.stream("video")?["duration"]))
        let audio = try #require(Probe.number(p.stream("audio")?["duration"]))
        #expect(abs(video - backDuration) <= 1.0 / 30, "video \(video) s, back \(backDuration) s")
        #expect(abs(audio - video) <= 0.050, "audio \(audio) s, video \(video) s")
        #expect(p.stream("video")?["nb_frames"] as? String == "90")
    }

    @Test func creationTimeIsWritten() throws {
        let (_, out) = try Self.standard.get()
        let tags = try #require(try Probe(out).format["tags"] as? [String: Any])
        let stamp = try #require(tags["creation_time"] as? String)
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = try #require(f.date(from: stamp), "creation_time \(stamp)")
        #expect(abs(date.timeIntervalSinceNow) < 3600)
    }

    @Test func locationAndUprightOrientationAreWritten() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("here.mov")
        try #require(try dualcam(["compose", Reference.back, Reference.portrait, "-o", out,
                                  "--location", "+48.8584+002.2945"]).status == 0)
        let p = try Probe(out)
        #expect((p.format["tags"] as? [String: Any])?["location"] as? String == "+48.8584+002.2945/")
        // A southern latitude starts with '-': still the option's value (it was taken for an option).
        let south = dir.path("south.mov")
        let sydney = try dualcam(["compose", Reference.back, Reference.front, "--size", "320x180", "-o", south,
                                  "--location", "-33.8568+151.2153+58/"])
        #expect(sydney.status == 0, "\(sydney.stderr)")
        #expect((try Probe(south).format["tags"] as? [String: Any])?["location"] as? String == "-33.8568+151.2153+58/")
        // The picture is composed upright: no display rotation for players to apply.
        let side = p.stream("video")?["side_data_list"] as? [[String: Any]] ?? []
        #expect(side.allSatisfy { ($0["rotation"] as? Int ?? 0) == 0 })
    }

    @Test func insetShowsFrontAndTheRestShowsBack() throws {
        let (_, out) = try Self.standard.get()
        // Output frame 40 is t = 1.333 s: back frame 40 (30 fps), front frame 33 (25 fps).
        let frame = try Decode.frame(out, index: 40)
        let frontInset = try Reference.insetLuma(Reference.front, frame: 33, filter: Reference.frontAsInset)
        let backFull = try Reference.fullLuma(Reference.back, frame: 40, filter: Reference.backAsFull)
        let inset = psnr(Canvas.insetLuma(frame), frontInset)
        let rest = psnr(Canvas.outsideInsetLuma(frame), Canvas.outsideInsetLuma(backFull))
        let insetVsBack = psnr(Canvas.insetLuma(frame), Canvas.insetLuma(backFull))
        print("PSNR inset/front \(inset) dB, rest/back \(rest) dB, inset/back \(insetVsBack) dB")
        #expect(inset >= samePicture)
        #expect(rest >= samePicture)
        #expect(insetVsBack < otherPicture, "negative control: the inset must not look like BACK")
    }

    @Test func swapAtExchangesRolesFromThatFrameAndSwapsBack() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("swap.mov")
        let r = try dualcam(["compose", Reference.back, Reference.front, "-o", out, "--swap-at", "1", "--swap-at", "2"])
        try #require(r.status == 0, "\(r.stderr)")
        // Frame 29 (t = 0.967 s) is before the swap, 30 (t = 1.0 s) the first swapped one,
        // 60 (t = 2.0 s) the first swapped back.
        func roles(_ n: Int) throws -> (insetIsFront: Double, insetIsBack: Double, fullIsFront: Double, fullIsBack: Double) {
            let f = try Decode.frame(out, index: n)
            let frontFrame = Int((Double(n) / 30 * 25 + 1e-6).rounded(.down))
            return (psnr(Canvas.insetLuma(f), try Reference.insetLuma(Reference.front, frame: frontFrame, filter: Reference.frontAsInset)),
                    psnr(Canvas.insetLuma(f), try Reference.insetLuma(Reference.back, frame: n, filter: Reference.backAsInset)),
                    psnr(Canvas.outsideInsetLuma(f), Canvas.outsideInsetLuma(try Reference.fullLuma(Reference.front, frame: frontFrame, filter: Reference.frontAsFull))),
                    psnr(Canvas.outsideInsetLuma(f), Canvas.outsideInsetLuma(try Reference.fullLuma(Reference.back, frame: n, filter: Reference.backAsFull))))
        }
        let before = try roles(29), swapped = try roles(30), back = try roles(60)
        print("PSNR before \(before), swapped \(swapped), swapped back \(back)")
        #expect(before.insetIsFront >= samePicture && before.fullIsBack >= samePicture)
        #expect(before.insetIsBack < otherPicture && before.fullIsFront < otherPicture)
        #expect(swapped.insetIsBack >= samePicture && swapped.fullIsFront >= samePicture)
        #expect(swapped.insetIsFront < otherPicture && swapped.fullIsBack < otherPicture)
        #expect(back.insetIsFront >= samePicture && back.fullIsBack >= samePicture)
    }

    /// The portrait fixture shows red above blue when upright.
    @Test func rotatedClipComesOutUpright() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let asBack = dir.path("portrait-back.mov"), asFront = dir.path("portrait-front.mov")
        try #require(try dualcam(["compose", Reference.portrait, Reference.front, "-o", asBack]).status == 0)
        try #require(try dualcam(["compose", Reference.back, Reference.portrait, "-o", asFront]).status == 0)

        func isRed(_ c: (Int, Int, Int)) -> Bool { c.0 > 180 && c.2 < 80 }
        func isBlue(_ c: (Int, Int, Int)) -> Bool { c.2 > 180 && c.0 < 80 }

        // Full frame: the centre band of the portrait picture, red over blue.
        let full = try Decode.frame(asBack, index: 5, pixelFormat: "rgb24")
        let top = meanRGB(full, width: 1920, x: 200, y: 100, w: 400, h: 300)
        let bottom = meanRGB(full, width: 1920, x: 200, y: 700, w: 400, h: 300)
        #expect(isRed(top) && isBlue(bottom), "top \(top), bottom \(bottom)")
        // Inset.
        let pip = try Decode.frame(asFront, index: 5, pixelFormat: "rgb24")
        let insetTop = meanRGB(pip, width: 1920, x: 1744 + 40, y: 16 + 20, w: 80, h: 60)
        let insetBottom = meanRGB(pip, width: 1920, x: 1744 + 40, y: 16 + 140, w: 80, h: 60)
        #expect(isRed(insetTop) && isBlue(insetBottom), "inset top \(insetTop), bottom \(insetBottom)")
    }
    /// A 1080p BT.709 back picture that the decoder has let go of is composed in place and
    /// encoded as it is: the output shows the same pictures (against ffmpeg's overlay of
    /// the sources), and keeps its own keyframe interval rather than the source's (a decoded
    /// frame's I-picture type would otherwise force keyframes every 10 frames here).
    @Test func fullHDBackIsComposedInPlaceWithTheOutputsOwnKeyframes() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let back = dir.path("back.mp4"), front = dir.path("front.mp4"), out = dir.path("out.mov")
        for (path, source, size) in [(back, "testsrc2", "1920x1080"), (front, "mandelbrot", "1280x720")] {
            try #require(try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-f", "lavfi", "-i",
                "\(source)=s=\(size):r=30,trim=duration=3", "-c:v", "libx264", "-preset", "ultrafast", "-g", "10",
                "-bf", "0", "-pix_fmt", "yuv420p", "-colorspace", "bt709", path]).status == 0)
        }
        let r = try dualcam(["compose", back, front, "-o", out, "--json"])
        try #require(r.status == 0, "\(r.stderr)")
        let inPlace = try #require(r.stdout.firstMatch(of: /"composed_in_place":(\d+)/).flatMap { Int($0.1) })
        #expect(inPlace >= 45, "\(r.stdout)")
        let keys = try run(Env.tool("ffprobe")!, ["-v", "error", "-select_streams", "v", "-show_entries", "packet=flags",
                                                  "-of", "csv=p=0", out]).stdout
        let keyframes = keys.split(separator: "\n").filter { $0.hasPrefix("K") }.count
        #expect(keyframes >= 1 && keyframes <= 2, "\(keyframes) keyframes in 90 frames (the output's interval is 60)")
        for n in [15, 45, 80] {
            let f = try Decode.frame(out, index: n)
            let inset = psnr(Canvas.insetLuma(f), try Reference.insetLuma(front, frame: n, filter: "crop=541:720:370:0,scale=160:213:flags=area"))
            let full = psnr(Canvas.outsideInsetLuma(f), Canvas.outsideInsetLuma(try Reference.fullLuma(back, frame: n, filter: "null")))
            #expect(inset >= samePicture && full >= samePicture, "frame \(n): inset \(inset) dB, full \(full) dB")
        }
    }
}

extension ComposeTests {
    /// `--layout side-by-side`: each picture aspect-filled into its half (back left, front
    /// right), swapped by --swap-at; checked against ffmpeg's own composition of the same
    /// stills (scale to fill, centre crop, hstack), and against the other order. At 960x540:
    /// the sanitizers' builds run it too.
    @Test(.timeLimit(.minutes(2)))
    func sideBySidePutsEachPictureInItsHalfAsFFmpegDoes() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        try makeClip(dir.path("back.png"), ["-f", "lavfi", "-i", "testsrc2=s=640x360", "-frames:v", "1"])
        try makeClip(dir.path("front.png"), ["-f", "lavfi", "-i", "smptehdbars=s=1280x720", "-frames:v", "1"])
        for (name, first, second) in [("back-left.rgb", "back.png", "front.png"), ("front-left.rgb", "front.png", "back.png")] {
            try makeClip(dir.path(name), ["-i", dir.path(first), "-i", dir.path(second), "-filter_complex",
                                          "[0]scale=960:540,crop=480:540[l];[1]scale=960:540,crop=480:540[r];[l][r]hstack",
                                          "-pix_fmt", "rgb24", "-f", "rawvideo"])
        }
        // Tagged BT.709, converted so: an untagged HD clip is read as BT.709 here and as
        // BT.601 by ffmpeg's RGB conversion, which is not what this test is about.
        for still in ["back", "front"] {
            try makeClip(dir.path("\(still).mkv"), ["-loop", "1", "-framerate", "30", "-t", "2", "-i", dir.path("\(still).png"),
                                                    "-vf", "scale=out_color_matrix=bt709:out_range=tv", "-colorspace", "bt709",
                                                    "-color_primaries", "bt709", "-color_trc", "bt709",
                                                    "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p"])
        }
        let out = dir.path("sbs.mov")
        let r = try dualcam(["compose", dir.path("back.mkv"), dir.path("front.mkv"), "--layout", "side-by-side", "--swap-at", "1",
                             "--size", "960x540", "--crf", "6", "-o", out])
        try #require(r.status == 0, "\(r.stderr)")
        let backLeft = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.path("back-left.rgb"))))
        let frontLeft = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.path("front-left.rgb"))))
        func halves(_ rgb: [UInt8]) -> (left: [UInt8], right: [UInt8]) {
            (cut(rgb, width: 960 * 3, x: 0, y: 0, w: 480 * 3, h: 540), cut(rgb, width: 960 * 3, x: 480 * 3, y: 0, w: 480 * 3, h: 540))
        }
        for (at, expected, other) in [(0.5, backLeft, frontLeft), (1.5, frontLeft, backLeft)] {
            let ours = halves(try Decode.frame(out, atSeconds: at, pixelFormat: "rgb24"))
            let want = halves(expected), wrong = halves(other)
            let (left, right) = (psnr(ours.left, want.left), psnr(ours.right, want.right))
            let (wrongLeft, wrongRight) = (psnr(ours.left, wrong.left), psnr(ours.right, wrong.right))
            print(String(format: "side by side at %.1f s: left %.1f dB, right %.1f dB (%.1f, %.1f against the other order)",
                         at, left, right, wrongLeft, wrongRight))
            #expect(left > 28 && right > 28 && wrongLeft < 15 && wrongRight < 15, "at \(at) s")
        }
    }
}
