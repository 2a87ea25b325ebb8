import Foundation
import Testing

/// Output size, rate, codec, bitrates and display rotation, as ffprobe and ffmpeg see them.
@Suite(.serialized, .timeLimit(.minutes(10))) struct OutputChoicesTests {
    /// A blue back and a red front, 2 s, with a tone: colours that are easy to find.
    static let sources: Result<(TempDir, String, String), any Error> = Result {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let back = dir.path("blue.mkv"), front = dir.path("red.mkv")
        try makeClip(back, ["-f", "lavfi", "-i", "color=blue:s=1280x720:r=30:d=2", "-f", "lavfi", "-i", "sine=f=440:d=2",
                            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"])
        try makeClip(front, ["-f", "lavfi", "-i", "color=red:s=640x480:r=30:d=2", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        return (dir, back, front)
    }

    static func rotation(_ stream: [String: Any]?) -> Double? {
        ((stream?["side_data_list"] as? [[String: Any]])?.first { $0["side_data_type"] as? String == "Display Matrix" })
            .flatMap { Probe.number($0["rotation"]) }
    }

    @Test func h264At720pAnd25fpsWithTheInsetInProportion() throws {
        let (dir, back, front) = try Self.sources.get()
        let out = dir.path("small.mov")
        let r = try dualcam(["compose", back, front, "-o", out, "--overwrite", "--codec", "h264", "--size", "1280x720",
                             "--rate", "25", "--corner-radius", "0", "--audio-bitrate", "96k"])
        try #require(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("1280x720 H.264 25 fps"))
        let p = try Probe(out)
        let v = try #require(p.stream("video"))
        #expect(v["codec_name"] as? String == "h264" && v["codec_tag_string"] as? String == "avc1")
        #expect(v["width"] as? Int == 1280 && v["height"] as? Int == 720)
        #expect(v["r_frame_rate"] as? String == "25/1" && v["nb_frames"] as? String == "50")
        let a = try #require(p.stream("audio"))
        #expect(abs((Probe.number(a["duration"]) ?? 0) - (Probe.number(v["duration"]) ?? 9)) <= 0.05)
        let audioRate = Probe.number(a["bit_rate"]) ?? 0
        #expect(audioRate > 70_000 && audioRate < 120_000, "AAC at \(audioRate) b/s for 96k")
        // 160x213 at 1080p is 107x142 at 720p, 11 px from the edges (16 at 1080p).
        let rgb = try Decode.frame(out, index: 25, pixelFormat: "rgb24")
        let inset = (x: 1280 - 11 - 107, y: 11, w: 107, h: 142)
        func colour(_ x: Int, _ y: Int) -> (Int, Int, Int) { meanRGB(rgb, width: 1280, x: x, y: y, w: 2, h: 2) }
        let red = { (c: (Int, Int, Int)) in c.0 > 180 && c.2 < 80 }, blue = { (c: (Int, Int, Int)) in c.2 > 180 && c.0 < 80 }
        #expect(red(colour(inset.x + 3, inset.y + 3)) && red(colour(inset.x + inset.w - 5, inset.y + inset.h - 5)))
        #expect(blue(colour(inset.x - 5, inset.y + 50)) && blue(colour(inset.x + 50, inset.y + inset.h + 3)))
        #expect(blue(colour(inset.x + 50, inset.y - 6)) && blue(colour(1280 - 6, inset.y + 50)))
    }

    @Test func rotateWritesTheDisplayMatrixAndPlayersTurnThePicture() throws {
        let (dir, back, front) = try Self.sources.get()
        let out = dir.path("turned.mov")
        let r = try dualcam(["compose", back, front, "-o", out, "--overwrite", "--rotate", "90", "--size", "640x360"])
        try #require(r.status == 0, "\(r.stderr)")
        let v = try #require(try Probe(out).stream("video"))
        // Stored as composed (no re-encode); ffprobe's angle runs the other way from ours.
        #expect(v["width"] as? Int == 640 && v["height"] as? Int == 360)
        #expect(Self.rotation(v) == -90)
        // ffmpeg turns it on decoding: the top-right inset lands bottom-right.
        let rgb = try Decode.frame(out, index: 10, pixelFormat: "rgb24")
        #expect(rgb.count == 360 * 640 * 3)
        let bottomRight = meanRGB(rgb, width: 360, x: 360 - 30, y: 640 - 40, w: 10, h: 10)
        let topRight = meanRGB(rgb, width: 360, x: 360 - 30, y: 30, w: 10, h: 10)
        #expect(bottomRight.0 > 180 && bottomRight.2 < 80, "bottom right \(bottomRight)")
        #expect(topRight.2 > 150 && topRight.0 < 80, "top right \(topRight)")
    }

    /// `--encoder auto` on a machine with no usable hardware encoder (this one: FFmpeg has
    /// NVENC, but there is no NVIDIA GPU): the software encoder, and one line saying so and why.
    @Test func autoEncoderSaysWhichItChoseAndWhy() throws {
        let dir = try TempDir()
        let out = dir.path("auto.mov")
        let r = try dualcam(["compose", Reference.back, Reference.front, "-o", out, "--encoder", "auto", "--size", "640x360"])
        try #require(r.status == 0, "\(r.stderr)")
        let line = try #require(r.stderrLines.first { $0.hasPrefix("dualcam: encoder: ") }, "\(r.stderr)")
        #expect(r.stderrLines.count == 1)
        if line.hasPrefix("dualcam: encoder: libx265 (software; ") {
            for name in ["hevc_nvenc", "hevc_qsv", "hevc_vaapi"] { #expect(line.contains("\(name): "), "\(line)") }
            #expect(try Probe(out).stream("video")?["codec_name"] as? String == "hevc")
        } else {
            // A machine with a GPU FFmpeg can use: the hardware encoder, still HEVC in hvc1.
            #expect(line.contains("(hardware)"), "\(line)")
            #expect(try Probe(out).stream("video")?["codec_tag_string"] as? String == "hvc1")
        }
    }

    @Test func bitrateReplacesTheConstantQuality() throws {
        let dir = try TempDir()
        var rates: [Double] = []
        for target in ["300k", "1200k"] {
            let out = dir.path("abr-\(target).mov")
            let r = try dualcam(["compose", Reference.back, Reference.front, "-o", out, "--bitrate", target, "--size", "640x360"])
            try #require(r.status == 0, "\(r.stderr)")
            rates.append(Probe.number(try Probe(out).stream("video")?["bit_rate"]) ?? 0)
        }
        // The fixtures' moving test pattern takes what it is given, within x265's rate control.
        #expect(rates[0] > 150_000 && rates[0] < 600_000, "\(rates[0]) b/s for 300k")
        #expect(rates[1] > 600_000 && rates[1] < 2_400_000, "\(rates[1]) b/s for 1200k")
    }

    /// Names in another case, and the codec's other names, are what people type.
    @Test(.timeLimit(.minutes(2)))
    func codecAndPresetNamesInAnyCase() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("h264.mov")
        let r = try dualcam(["compose", Reference.back, Reference.front, "--size", "320x180", "--codec", "H264", "--preset", "UltraFast",
                             "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Probe(out).stream("video")?["codec_name"] as? String == "h264")
        let x265 = try dualcam(["compose", Reference.back, Reference.front, "--size", "320x180", "--codec", "x265", "-o", dir.path("x.mov")])
        #expect(x265.status == 0, "\(x265.stderr)")
        #expect(try Probe(dir.path("x.mov")).stream("video")?["codec_name"] as? String == "hevc")
    }

    @Test(arguments: [
        (["--rate", "7"], "--rate must divide 48000"),
        (["--rate", "1000"], "--rate must be from 1 to 120 frames per second; got 1000"),
        (["--size", "641x360"], "--size must have even sides"),
        (["--size", "99999x99999"], "--size must have even sides"),
        (["--rotate", "45"], "--rotate must be 0, 90, 180 or 270"),
        (["--codec", "vp9"], "codec"),
        (["--preset", "ultrafst"], "--preset ultrafst: did you mean ultrafast?"),
        (["--bitrate", "2M", "--crf", "20"], "--bitrate and --crf exclude each other"),
        (["--bitrate", "lots"], "--bitrate must be 100k to 200M"),
        (["--audio-bitrate", "1M"], "--audio-bitrate must be 32k to 512k"),
        (["--size", "320x180", "--inset", "400x300"], "does not fit"),
        (["--corner-radius", "200"], "corner radius 200 px is more than half"),
        (["--location", "+91.0+200.0/"], "--location must be a place on Earth"),
        (["--location", "+4861+00217/"], "--location must be a place on Earth"),
    ])
    func absurdOutputChoicesAreOneClearLine(arguments: [String], message: String) throws {
        let dir = try TempDir()
        let out = dir.path("never.mov")
        let r = try dualcam(["compose", Reference.back, Reference.front, "-o", out] + arguments)
        #expect(r.status != 0)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stdout.isEmpty && !FileManager.default.fileExists(atPath: out))
    }
}
