import Foundation
import Testing

@Suite(.serialized, .timeLimit(.minutes(10))) struct ContentTests {
    /// Colours shot in BT.601 (SD, most webcams) must look the same after going into our BT.709
    /// file, in the inset and full-frame alike: ffmpeg decodes the result by its BT.709 tags.
    @Test func bt601SourcesKeepTheirColours() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let red601 = dir.path("red601.mkv"), green709 = dir.path("green709.mkv")
        try makeClip(red601, ["-f", "lavfi", "-i", "color=0xff0000:s=640x480:r=25:d=1", "-vf",
                              "scale=out_color_matrix=bt601,format=yuv420p", "-colorspace", "smpte170m",
                              "-c:v", "libx264", "-crf", "10"])
        try makeClip(green709, ["-f", "lavfi", "-i", "color=0x00c000:s=1280x720:r=30:d=1", "-vf",
                                "scale=out_color_matrix=bt709,format=yuv420p", "-colorspace", "bt709",
                                "-c:v", "libx264", "-crf", "10"])
        let out = dir.path("out.mov"), swapped = dir.path("swapped.mov")
        try #require(try dualcam(["compose", green709, red601, "-o", out, "--crf", "18"]).status == 0)
        try #require(try dualcam(["compose", red601, green709, "-o", swapped, "--crf", "18"]).status == 0)
        let a = try Decode.frame(out, index: 10, pixelFormat: "rgb24")
        let inset = meanRGB(a, width: 1920, x: 1764, y: 40, w: 120, h: 160)
        let full = meanRGB(a, width: 1920, x: 200, y: 300, w: 800, h: 500)
        let b = try Decode.frame(swapped, index: 10, pixelFormat: "rgb24")
        let fullRed = meanRGB(b, width: 1920, x: 200, y: 300, w: 800, h: 500)
        // Without the matrix conversion red comes out as about (255, 24, 0).
        func near(_ c: (Int, Int, Int), _ e: (Int, Int, Int)) -> Bool {
            abs(c.0 - e.0) <= 8 && abs(c.1 - e.1) <= 8 && abs(c.2 - e.2) <= 8
        }
        #expect(near(inset, (255, 0, 0)), "inset \(inset)")
        #expect(near(fullRed, (255, 0, 0)), "full-frame \(fullRed)")
        #expect(near(full, (0, 192, 0)), "BT.709 back \(full)")
    }

    @Test func audioComesFromBackResampledTo48kStereo() throws {
        try Env.requireFFmpegTools()
        let (_, out) = try ComposeTests.standard.get()
        let s = try Decode.audio(out)
        // The back fixture carries a 440 Hz tone at 44.1 kHz mono.
        for ch in 0..<2 {
            #expect(rms(s, channel: ch, from: 24000, count: 96000) > 0.05)
            let f = dominantFrequency(s, channel: ch, from: 24000, count: 96000)
            #expect(abs(f - 440) < 5, "channel \(ch): \(f) Hz")
        }
    }

    @Test func audioFrontOrNoneOrMissingGivesTheSameShape() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let fromPortrait = dir.path("front.mov"), none = dir.path("none.mov"), missing = dir.path("missing.mov")
        try #require(try dualcam(["compose", Reference.back, Reference.portrait, "-o", fromPortrait, "--audio", "front"]).status == 0)
        try #require(try dualcam(["compose", Reference.back, Reference.front, "-o", none, "--audio", "none"]).status == 0)
        // BACK (the front fixture here) has no audio at all and no --audio names it: a silent
        // track, not a failure. (Named, `--audio front` of a soundless file is refused, as
        // record refuses it: ErrorTests.)
        try #require(try dualcam(["compose", Reference.front, Reference.back, "-o", missing]).status == 0)
        for path in [fromPortrait, none, missing] {
            let a = try #require(try Probe(path).stream("audio"), "\(path) has no audio track")
            #expect(a["codec_name"] as? String == "aac" && a["sample_rate"] as? String == "48000" && a["channels"] as? Int == 2)
            let v = try #require(Probe.number(try Probe(path).stream("video")?["duration"]))
            #expect(abs(try #require(Probe.number(a["duration"])) - v) <= 0.05)
            #expect(abs(v - 3.0) <= 1.0 / 30, "length follows BACK (3 s) whatever the audio")
        }
        let front = try Decode.audio(fromPortrait)
        #expect(abs(dominantFrequency(front, channel: 0, from: 12000, count: 48000) - 880) < 5)
        // FRONT's audio (2 s) ends before BACK's picture (3 s): silence fills the rest.
        #expect(rms(front, channel: 0, from: 2 * 48000 + 4800, count: 24000) < 0.001)
        for path in [none, missing] {
            let silent = try Decode.audio(path)
            #expect(silent.count >= 2 * 48000 * 29 / 10)
            #expect(silent.allSatisfy { abs($0) < 0.001 }, "\(path) should be silent")
        }
    }

    @Test func lengthFollowsBackAndFrontHoldsItsLastPicture() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let shortBack = dir.path("short-back.mov"), shortFront = dir.path("short-front.mov")
        try #require(try dualcam(["compose", Reference.portrait, Reference.back, "-o", shortBack]).status == 0)
        try #require(try dualcam(["compose", Reference.back, Reference.portrait, "-o", shortFront]).status == 0)
        #expect(try Probe(shortBack).stream("video")?["nb_frames"] as? String == "60")
        #expect(try Probe(shortFront).stream("video")?["nb_frames"] as? String == "90")
        // FRONT (2 s) has ended by frame 80 (2.67 s): its last picture is still in the inset.
        let last = try Decode.frame(shortFront, index: 80, pixelFormat: "rgb24")
        let top = meanRGB(last, width: 1920, x: 1784, y: 36, w: 80, h: 60)
        #expect(top.0 > 180 && top.2 < 80, "inset top \(top) should still be the portrait's red")
    }

    @Test func oddSizesAndWebcamMJPEGCompose() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let odd = dir.path("odd.mkv")
        // FFV1 allows odd sizes in 4:2:0; 641x479 at 24 fps, untagged.
        try makeClip(odd, ["-f", "lavfi", "-i", "testsrc=s=641x479:r=24:d=1", "-pix_fmt", "yuv420p", "-c:v", "ffv1"])
        let out = dir.path("odd.mov"), mjpeg = dir.path("mjpeg.mov")
        let r = try dualcam(["compose", odd, Env.fixture("webcam-mjpeg-30fps.avi"), "-o", out])
        try #require(r.status == 0, "\(r.stderr)")
        #expect(try Probe(out).stream("video")?["nb_frames"] as? String == "30")
        let m = try dualcam(["compose", Env.fixture("webcam-mjpeg-30fps.avi"), odd, "-o", mjpeg, "--crf", "18"])
        try #require(m.status == 0, "\(m.stderr)")
        // MJPEG is full-range 4:2:2: compare with ffmpeg's own conversion of it.
        let ours = Canvas.outsideInsetLuma(Canvas.luma(try Decode.frame(mjpeg, index: 20)))
        let reference = Canvas.outsideInsetLuma(Canvas.luma(try Decode.frame(
            Env.fixture("webcam-mjpeg-30fps.avi"), index: 20,
            filter: "crop=320:180:0:30,scale=1920:1080:flags=bilinear:out_range=tv:\(Reference.toBT709),format=yuv420p")))
        let p = psnr(ours, reference)
        print("PSNR MJPEG full frame \(p) dB")
        #expect(p >= samePicture)
    }

    /// A flash and a beep at the same instant in BACK must stay together in the output.
    @Test func pictureAndSoundStayInSync() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let clip = dir.path("flash.mp4")
        // Black, white from 1.5 s; silence, a 1 kHz tone from 1.5 s. 25 fps and 44.1 kHz so
        // neither lines up with the output's grid by accident.
        try makeClip(clip, ["-f", "lavfi", "-i", "color=black:s=320x240:r=25:d=3,drawbox=c=white:t=fill:enable='gte(t,1.5)'",
                            "-f", "lavfi", "-i", "sine=f=1000:r=44100:d=3,volume=enable='lt(t,1.5)':volume=0",
                            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"])
        let out = dir.path("sync.mov")
        try #require(try dualcam(["compose", clip, Reference.front, "-o", out]).status == 0)
        var firstWhite: Int?
        for n in 40..<50 {
            let f = try Decode.frame(out, index: n)
            if f[540 * 1920 + 400] > 128 { firstWhite = n; break }
        }
        let flash = Double(try #require(firstWhite)) / 30
        let s = try Decode.audio(out)
        // The tone peaks at 0.125 in mono; spread to stereo it is 3 dB lower (0.088).
        let onsetSample = try #require((0..<(s.count / 2)).first { abs(s[$0 * 2]) > 0.05 })
        let beep = Double(onsetSample) / 48000
        print("flash at \(flash) s, beep at \(beep) s")
        #expect(abs(flash - 1.5) <= 1.0 / 30 + 1e-6)
        #expect(abs(beep - flash) <= 1.0 / 30 + 0.005, "audio \(beep) s vs picture \(flash) s")
    }
}
