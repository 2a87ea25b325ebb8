import Foundation
import Testing

/// The composed picture as a camera: a v4l2loopback device in the VM (exclusive_caps=1, as
/// browsers need it), read by ffmpeg as any program reads a webcam.
extension VividTests {
    /// Two slowly changing files recorded with --virtual-camera while ffmpeg reads the device
    /// for 30 frames, stops, and reads 30 more a second later. What the readers saw is the
    /// composition of the two files (each sampled frame matches one of `compose`'s lossless
    /// output of them at > 35 dB, the second reader's later ones; not the take's frames: the
    /// encoder, behind in the emulated VM, may drop a frame the device was shown), and the
    /// readers coming and going cost the recording nothing: the file is whole and no write
    /// failed. The take lasts until the second reader is done. How
    /// many of the frames the device took is the emulated VM's speed (480 of 480 here, 253 on
    /// a fresh machine of this kind): reported; each frame composed is written or counted as
    /// skipped (a newer one replaced it, or the device had no room), none lost but the one
    /// the stop may catch; a slot the file's encoder had no room for is composed for the
    /// device alone, so its picture goes on while the file is behind. (A slot that repeats a
    /// late camera's picture is not composed at all.)
    @Test(.timeLimit(.minutes(10)))
    func aVirtualCameraShowsWhatIsRecordedAndItsReadersComeAndGo() throws {
        try Env.requireFFmpegTools()
        let env = try Self.loopbackModule()
        guard let dir = try Self.scenario("virtual-camera", cameras: 0, environment: env, prepare: Self.slowlyChangingClips)
        else { return }
        let log = Self.stderr(dir)
        let readers = (try? String(contentsOfFile: dir.path("readers.txt"), encoding: .utf8)) ?? ""
        #expect(Self.status(dir) == 0, "\(log)")
        let summary = try Self.summary(dir)
        let camera = try #require(summary["virtual_camera"] as? [String: Any], "\(summary)")
        #expect(camera["device"] as? String == "/dev/video5" && camera["failure"] == nil, "\(camera)")
        let written = try #require(camera["frames_written"] as? Int), skipped = try #require(camera["frames_skipped"] as? Int)
        let frames = try #require(summary["frames"] as? Int), repeated = try #require(summary["repeated_frames"] as? Int)
        let encoderSkipped = try #require(summary["encoder_skipped_frames"] as? Int)
        print("virtual camera: \(written) frames written, \(skipped) skipped, of \(frames) (\(repeated) repeated, "
              + "\(encoderSkipped) skipped for the encoder)")
        // Every slot but those repeating a late camera's picture is composed for the device,
        // those the file's encoder had no room for too (beside a busy loop: 591 written of 591,
        // 508 of them skipped for the file; before, the device got 166 of 600 and its reader
        // 6 frames in 30 s).
        let composed = frames - repeated
        #expect(written > 0 && written + skipped >= composed - 1, "\(composed) frames composed: \(camera)")
        let seconds = try Self.takeSeconds(dir)
        #expect(abs(seconds - Double(frames) / 30) < 1e-6, "\(seconds) s, \(frames) frames")
        _ = try Self.checkFile(dir.path("out.mov"), seconds: seconds, small: true)

        #expect(try Self.decodedLuma(dir.path("out.mov"), in: dir).count == frames)
        let reference = try Self.composedReference(dir)
        var matched: [[Int]] = []
        for name in ["reader1", "reader2"] {
            matched.append(try Self.matchReader(name, in: dir, against: reference, readers: readers))
        }
        // 30 frames, then a second without a reader: the second reader's are later by more.
        #expect((matched[1].min() ?? 0) > (matched[0].max() ?? 0) + 15, "file frames matched: \(matched)")
    }

    /// `-o none`: the virtual camera alone. What the reader saw is the composition of the two
    /// files (matched against `compose`'s lossless output of them, > 35 dB), and nothing at
    /// all is written: the folder it ran in stays empty.
    @Test(.timeLimit(.minutes(10)))
    func withNoFileTheVirtualCameraAloneShowsThePictures() throws {
        try Env.requireFFmpegTools()
        let env = try Self.loopbackModule()
        guard let dir = try Self.scenario("virtual-camera-only", cameras: 0, environment: env, prepare: Self.slowlyChangingClips)
        else { return }
        let log = Self.stderr(dir)
        let readers = (try? String(contentsOfFile: dir.path("readers.txt"), encoding: .utf8)) ?? ""
        #expect(Self.status(dir) == 0, "\(log)")
        #expect(log.contains("showing it, no file written (-o none)"), "\(log)")
        #expect(dir.contents.allSatisfy { !$0.hasSuffix(".mov") } && (try? FileManager.default.contentsOfDirectory(
            atPath: dir.path("cwd")))?.isEmpty == true, "\(dir.contents)")
        let summary = try Self.summary(dir)
        let camera = try #require(summary["virtual_camera"] as? [String: Any], "\(summary)")
        #expect(summary["output"] as? String == "none" && summary["frames"] as? Int == 360, "\(summary)")
        // No file, so no encoder to skip for: every slot composed, written or counted as skipped.
        // A slot whose camera had no new picture repeats the last one and is not composed (the
        // emulated VM's cameras were late for 4 of 360 in one run).
        let written = try #require(camera["frames_written"] as? Int), skipped = try #require(camera["frames_skipped"] as? Int)
        let repeated = try #require(summary["repeated_frames"] as? Int)
        print("virtual camera alone: \(written) frames written, \(skipped) skipped, of 360 (\(repeated) repeated)")
        #expect(camera["failure"] == nil && written > 0 && written + skipped >= 359 - repeated, "\(camera), \(repeated) repeated")
        let matched = try Self.matchReader("reader1", in: dir, against: try Self.composedReference(dir), readers: readers)
        #expect(matched == matched.sorted(), "reference frames matched: \(matched)")
    }

    /// `compose`'s lossless composition of the scenario's two files at 640x360, luma only.
    static func composedReference(_ dir: TempDir) throws -> [[UInt8]] {
        let reference = dir.path("reference.mov")
        let composed = try dualcam(["compose", dir.path("back.mkv"), dir.path("front.mkv"), "--size", "640x360", "--codec", "h264",
                                    "--crf", "0", "-o", reference])
        try #require(composed.status == 0, "\(composed.stderr)")
        return try decodedLuma(reference, in: dir)
    }

    /// Neighbouring frames nearly alike, frames a second apart not: a frame the encoder
    /// skipped (the emulated VM is slow) still has a match, and order can be told. The
    /// gradient turns 0.0068 rad a frame, under one turn in the clip's 900 frames: at 0.03 it
    /// came round every 209 frames, and a reader's frame 15 (the inset a frame off) matched
    /// frame 271 of the reference (62 + 209) in a CI run. At 0.008 no frame over a second away
    /// matched better than 26 dB on the back picture alone. 30 s: the take ends when the
    /// files do, and beside a busy loop the second reader started 18.6 s in, 1.4 s before
    /// the end of 20 s clips.
    static func slowlyChangingClips(_ dir: TempDir) throws {
        try makeClip(dir.path("back.mkv"), ["-f", "lavfi", "-i", "gradients=s=640x360:r=30:d=30:speed=0.0068:n=4",
                                            "-c:v", "libx264", "-preset", "ultrafast", "-qp", "10", "-pix_fmt", "yuv420p"])
        try makeClip(dir.path("front.mkv"), ["-f", "lavfi", "-i", "testsrc=s=320x240:r=30:d=30", "-c:v", "libx264",
                                             "-preset", "ultrafast", "-qp", "10", "-pix_fmt", "yuv420p"])
    }

    static let frameBytes = 640 * 360 * 3 / 2, lumaBytes = 640 * 360

    /// The luma planes of the 640x360 I420 frames in a raw file.
    static func lumaFrames(_ path: String) throws -> [[UInt8]] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return stride(from: 0, to: bytes.count - frameBytes + 1, by: frameBytes).map { Array(bytes[$0..<($0 + lumaBytes)]) }
    }

    /// A 640x360 file's frames decoded by ffmpeg, luma only.
    static func decodedLuma(_ movie: String, in dir: TempDir) throws -> [[UInt8]] {
        let decoded = dir.path(URL(fileURLWithPath: movie).deletingPathExtension().lastPathComponent + ".yuv")
        let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", movie, "-f", "rawvideo",
                                               "-pix_fmt", "yuv420p", "-y", decoded])
        try #require(r.status == 0, "\(r.stderr)")
        return try lumaFrames(decoded)
    }

    /// Which of `frames` the reader's 30 frames 5, 15 and 25 are, each at > 35 dB.
    static func matchReader(_ name: String, in dir: TempDir, against frames: [[UInt8]], readers: String) throws -> [Int] {
        // Luma on a coarse grid picks the candidate; the whole luma plane is compared then.
        let grid = stride(from: 0, to: lumaBytes, by: 7).map { $0 }
        func coarse(_ a: [UInt8], _ b: [UInt8]) -> Double { psnr(grid.map { a[$0] }, grid.map { b[$0] }) }
        let seen = try lumaFrames(dir.path("\(name).yuv"))
        #expect(seen.count == 30 && readers.contains("\(name): exit 0"), "\(name): \(seen.count) frames; \(readers)")
        return try [5, 15, 25].filter { $0 < seen.count }.map { sample in
            let best = frames.indices.max { coarse(seen[sample], frames[$0]) < coarse(seen[sample], frames[$1]) }!
            let quality = psnr(seen[sample], frames[best])
            print(String(format: "virtual camera: %@ frame %d is frame %d at %.1f dB", name, sample, best, quality))
            #expect(quality > 35, "\(name) frame \(sample): \(quality) dB at best (frame \(best))")
            try #require(quality > 20, "\(name) frame \(sample) is nothing it should be (\(quality) dB)")
            return best
        }
    }
}
