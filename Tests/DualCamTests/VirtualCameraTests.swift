import Foundation
import Testing

/// The composed picture as a camera: a v4l2loopback device in the VM (exclusive_caps=1, as
/// browsers need it), read by ffmpeg as any program reads a webcam.
extension VividTests {
    /// Two slowly changing files recorded with --virtual-camera while ffmpeg reads the device
    /// for 30 frames, stops, and reads 30 more a second later. What the readers saw is what
    /// the file holds (each sampled frame matches one of the file's at > 35 dB, the second
    /// reader's later ones), and the readers coming and going cost the recording nothing: the
    /// file is whole and the device was written every frame, none failed.
    @Test(.timeLimit(.minutes(10)))
    func aVirtualCameraShowsWhatIsRecordedAndItsReadersComeAndGo() throws {
        try Env.requireFFmpegTools()
        let env = try Self.loopbackModule()
        guard let dir = try Self.scenario("virtual-camera", cameras: 0, environment: env, prepare: { dir in
            // Neighbouring frames nearly alike, frames a second apart not: a frame the encoder
            // skipped (the emulated VM is slow) still has a match, and order can be told.
            try makeClip(dir.path("back.mkv"), ["-f", "lavfi", "-i", "gradients=s=640x360:r=30:d=20:speed=0.03:n=4",
                                                "-c:v", "libx264", "-preset", "ultrafast", "-qp", "10", "-pix_fmt", "yuv420p"])
            try makeClip(dir.path("front.mkv"), ["-f", "lavfi", "-i", "testsrc=s=320x240:r=30:d=20", "-c:v", "libx264",
                                                 "-preset", "ultrafast", "-qp", "10", "-pix_fmt", "yuv420p"])
        }) else { return }
        let log = Self.stderr(dir)
        let readers = (try? String(contentsOfFile: dir.path("readers.txt"), encoding: .utf8)) ?? ""
        #expect(Self.status(dir) == 0, "\(log)")
        let summary = try Self.summary(dir)
        let camera = try #require(summary["virtualCamera"] as? [String: Any], "\(summary)")
        #expect(camera["device"] as? String == "/dev/video5" && camera["failure"] == nil, "\(camera)")
        #expect((camera["framesWritten"] as? Int ?? 0) >= 400, "\(camera)")
        #expect(summary["frames"] as? Int == 480, "\(summary)")
        _ = try Self.checkFile(dir.path("out.mov"), seconds: 16, small: true)

        let frameBytes = 640 * 360 * 3 / 2, lumaBytes = 640 * 360
        func frames(_ path: String) throws -> [[UInt8]] {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            return stride(from: 0, to: bytes.count - frameBytes + 1, by: frameBytes).map { Array(bytes[$0..<($0 + lumaBytes)]) }
        }
        let decoded = dir.path("out.yuv")
        let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", dir.path("out.mov"), "-f", "rawvideo",
                                               "-pix_fmt", "yuv420p", "-y", decoded])
        try #require(r.status == 0, "\(r.stderr)")
        let file = try frames(decoded)
        #expect(file.count == 480)
        // Luma on a coarse grid picks the candidate; the whole luma plane is compared then.
        let grid = stride(from: 0, to: lumaBytes, by: 7).map { $0 }
        func coarse(_ a: [UInt8], _ b: [UInt8]) -> Double { psnr(grid.map { a[$0] }, grid.map { b[$0] }) }
        var matched: [[Int]] = []
        for name in ["reader1", "reader2"] {
            let seen = try frames(dir.path("\(name).yuv"))
            #expect(seen.count == 30 && readers.contains("\(name): exit 0"), "\(name): \(seen.count) frames; \(readers)")
            matched.append(try [5, 15, 25].filter { $0 < seen.count }.map { sample in
                let best = file.indices.max { coarse(seen[sample], file[$0]) < coarse(seen[sample], file[$1]) }!
                let quality = psnr(seen[sample], file[best])
                print(String(format: "virtual camera: %@ frame %d is file frame %d at %.1f dB", name, sample, best, quality))
                #expect(quality > 35, "\(name) frame \(sample): \(quality) dB at best (file frame \(best))")
                try #require(quality > 20, "\(name) frame \(sample) is nothing the file holds (\(quality) dB)")
                return best
            })
        }
        // 30 frames, then a second without a reader: the second reader's are later by more.
        #expect((matched[1].min() ?? 0) > (matched[0].max() ?? 0) + 15, "file frames matched: \(matched)")
    }
}
