import Compositor
import Foundation
import MediaIO
import Testing

/// vivid has no MJPEG, so the camera MJPEG path is tested on buffers shaped like a webcam's:
/// one full-range 4:2:2 JPEG per buffer, checked against ffmpeg's own decoding.
@Suite(.timeLimit(.minutes(10))) struct MJPEGTests {
    /// Splits a raw MJPEG stream into its JPEGs (start-of-image FF D8 to end-of-image FF D9).
    func jpegs(_ data: [UInt8]) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var start: Int?
        var i = 0
        while i + 1 < data.count {
            if data[i] == 0xFF && data[i + 1] == 0xD8 && start == nil { start = i }
            if data[i] == 0xFF && data[i + 1] == 0xD9, let s = start {
                result.append(Array(data[s...(i + 1)]))
                start = nil
            }
            i += 1
        }
        return result
    }

    /// Nine camera-like JPEGs (640x480, full-range 4:2:2) and the stream they came from.
    func cameraBuffers(_ dir: TempDir) throws -> (stream: String, buffers: [[UInt8]]) {
        let stream = dir.path("cam.mjpeg")
        try makeClip(stream, ["-f", "lavfi", "-i", "testsrc2=s=640x480:r=30:d=0.3", "-c:v", "mjpeg",
                              "-pix_fmt", "yuvj422p", "-q:v", "5", "-f", "mjpeg"])
        let buffers = jpegs([UInt8](try Data(contentsOf: URL(fileURLWithPath: stream))))
        try #require(buffers.count == 9)
        return (stream, buffers)
    }

    func planes(_ b: I420Buffer) -> [UInt8] {
        var out = [UInt8]()
        for p in b.view.planes { for y in 0..<p.height { out.append(contentsOf: UnsafeBufferPointer(start: p.row(y), count: p.width)) } }
        return out
    }

    @Test func cameraLikeBuffersDecodeLikeFFmpeg() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let (stream, buffers) = try cameraBuffers(dir)
        let decoder = try MJPEGDecoder(name: "test camera")
        let buffer = I420Buffer(size: Size(width: 640, height: 480))
        for (n, jpeg) in buffers.enumerated() {
            let matrix = try jpeg.withUnsafeBytes { try decoder.decode($0, into: buffer) }
            #expect(matrix == .bt601, "JPEG is BT.601")
            // ffmpeg's decode of the same JPEG, converted to limited-range I420 the same way.
            let reference = try Decode.frame(stream, index: n, filter: "scale=out_range=tv", pixelFormat: "yuv420p")
            let p = psnr(planes(buffer), reference)
            #expect(p > 45, "frame \(n): \(p) dB")
            // Re-encoded to BT.709 as its range is rescaled: exactly our two passes, and
            // close to ffmpeg's own BT.601 -> BT.709 conversion.
            let reencoded = I420Buffer(size: buffer.size)
            let outMatrix = try jpeg.withUnsafeBytes { try decoder.decode($0, into: reencoded, output: .bt709) }
            #expect(outMatrix == .bt709)
            ColorConversion(from: .bt601, to: .bt709)!.apply(to: buffer.view, lumaRect: Rect(x: 0, y: 0, width: 640, height: 480))
            #expect(planes(reencoded) == planes(buffer), "frame \(n): one pass differs from two")
            let reference709 = try Decode.frame(stream, index: n, filter: "scale=out_range=tv:in_color_matrix=bt601:out_color_matrix=bt709",
                                                pixelFormat: "yuv420p")
            let p709 = psnr(planes(reencoded), reference709)
            #expect(p709 > 40, "frame \(n): \(p709) dB against ffmpeg's BT.709")
        }
        // A buffer cut short (a USB transfer that lost its tail) is an error, not a crash.
        let cut = Array(buffers[0].prefix(buffers[0].count / 3))
        #expect(throws: MediaError.self) { _ = try cut.withUnsafeBytes { try decoder.decode($0, into: buffer) } }
        // So is one whose entropy-coded data is garbage but whose markers are intact: libavcodec
        // would conceal it (grey blocks), the camera path must skip it.
        var garbled = buffers[1]
        let scan = garbled.count / 2
        for i in scan..<(scan + 400) { garbled[i] = garbled[i] == 0xFF ? 0x00 : UInt8(truncatingIfNeeded: i &* 37) | 0x80 }
        #expect(throws: MediaError.self) { _ = try garbled.withUnsafeBytes { try decoder.decode($0, into: buffer) } }
    }

    /// The decoder keeps a pool of buffers for the JPEGs it is sent, sized by the largest
    /// yet: a camera that switches to a bigger picture (JPEGs several times larger) is
    /// decoded right on the first bigger one, and after it the small ones still are.
    @Test func largerJPEGsGrowThePacketBuffers() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let (smallStream, small) = try cameraBuffers(dir)
        let bigStream = dir.path("big.mjpeg")
        try makeClip(bigStream, ["-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=30:d=0.1", "-c:v", "mjpeg",
                                 "-pix_fmt", "yuvj422p", "-q:v", "2", "-f", "mjpeg"])
        let big = jpegs([UInt8](try Data(contentsOf: URL(fileURLWithPath: bigStream))))
        try #require(!big.isEmpty && big[0].count > 3 * small[0].count, "\(big.first?.count ?? 0) vs \(small[0].count) bytes")
        let decoder = try MJPEGDecoder(name: "camera")
        let smallBuffer = I420Buffer(size: Size(width: 640, height: 480)), bigBuffer = I420Buffer(size: Size(width: 1920, height: 1080))
        for (stream, jpeg, buffer) in [(smallStream, small[0], smallBuffer), (bigStream, big[0], bigBuffer),
                                       (smallStream, small[0], smallBuffer)] {
            _ = try jpeg.withUnsafeBytes { try decoder.decode($0, into: buffer) }
            let reference = try Decode.frame(stream, index: 0, filter: "scale=out_range=tv", pixelFormat: "yuv420p")
            let p = psnr(planes(buffer), reference)
            #expect(p > 45, "\(buffer.size): \(p) dB")
        }
    }

    /// The inset camera's JPEGs decoded at 1/4 size match ffmpeg's own reduced decode
    /// (`-lowres 2`), and a JPEG of another size than the buffer is scaled into it.
    @Test func reducedDecodingMatchesFFmpegLowresAndOddSizesAreScaled() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let (stream, buffers) = try cameraBuffers(dir)
        let quarter = try MJPEGDecoder(name: "inset camera", shift: 2)
        let small = I420Buffer(size: Size(width: 160, height: 120))
        _ = try buffers[3].withUnsafeBytes { try quarter.decode($0, into: small) }
        let lowres = try Decode.frame(stream, index: 3, filter: "scale=out_range=tv", pixelFormat: "yuv420p",
                                      decoderOptions: ["-lowres", "2"])
        try #require(lowres.count == 160 * 120 * 3 / 2, "ffmpeg's lowres frame is \(lowres.count) bytes")
        #expect(psnr(planes(small), lowres) > 40)
        // A 640x480 JPEG from a camera negotiated at 320x240: scaled, like ffmpeg's scaler does.
        let full = try MJPEGDecoder(name: "camera")
        let other = I420Buffer(size: Size(width: 320, height: 240))
        _ = try buffers[4].withUnsafeBytes { try full.decode($0, into: other) }
        let scaled = try Decode.frame(stream, index: 4, filter: "scale=320:240:flags=bilinear:out_range=tv", pixelFormat: "yuv420p")
        #expect(psnr(planes(other), scaled) > 30)
    }

    /// One 1920x1080 JPEG of `pixelFormat` (a webcam's size), and the file it is in.
    func hdJPEG(_ dir: TempDir, _ name: String, pixelFormat: String) throws -> (path: String, jpeg: [UInt8]) {
        let path = dir.path("\(name).jpg")
        try makeClip(path, ["-f", "lavfi", "-i", "testsrc2=s=1920x1080,noise=alls=8:allf=t", "-frames:v", "1",
                            "-c:v", "mjpeg", "-pix_fmt", pixelFormat, "-q:v", "4"])
        return (path, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// A 1080p JPEG is converted band by band on a second thread while it is decoded: the
    /// picture must be the one decoding it whole and converting it after gives, to the bit,
    /// for both of the samplings webcams send; and close to ffmpeg's own decoding.
    @Test func convertingWhileDecodingGivesTheWholeDecodesPicture() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let fork = ForkJoin(name: "test-convert")
        for format in ["yuvj422p", "yuvj420p"] {
            let (path, jpeg) = try hdJPEG(dir, format, pixelFormat: format)
            let size = Size(width: 1920, height: 1080)
            let banded = I420Buffer(size: size), whole = I420Buffer(size: size)
            let decoder = try MJPEGDecoder(name: "camera")
            for _ in 0..<3 {  // and again, the same decoder and planes reused
                #expect(try jpeg.withUnsafeBytes { try decoder.decode($0, into: banded, output: .bt709, fork: fork) } == .bt709)
            }
            _ = try jpeg.withUnsafeBytes { try decoder.decode($0, into: whole, output: .bt709) }
            #expect(planes(banded) == planes(whole), "\(format): converted while decoding differs")
            let reference = try Decode.frame(path, index: 0, filter: "scale=out_range=tv:in_color_matrix=bt601:out_color_matrix=bt709",
                                             pixelFormat: "yuv420p")
            let p = psnr(planes(banded), reference)
            #expect(p > 40, "\(format): \(p) dB against ffmpeg")
        }
    }

    /// What a camera's USB transfer can do to a JPEG, through the decoder that converts while
    /// it decodes: garbled data and a JPEG cut short whose buffer still holds an older one's
    /// tail (so it does end with an end-of-image marker) are errors, and the next good JPEG
    /// decodes; a few bytes of padding before the end marker, which many webcams add, are not.
    @Test func damagedJPEGsAreRefusedAndPaddingIsNot() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let (_, good) = try hdJPEG(dir, "good", pixelFormat: "yuvj422p")
        let (_, older) = try hdJPEG(dir, "older", pixelFormat: "yuvj420p")
        let fork = ForkJoin(name: "test-convert")
        let decoder = try MJPEGDecoder(name: "camera")
        let size = Size(width: 1920, height: 1080)
        let buffer = I420Buffer(size: size), expected = I420Buffer(size: size)
        _ = try good.withUnsafeBytes { try decoder.decode($0, into: expected, output: .bt709, fork: fork) }

        var garbled = good
        for i in (good.count / 2)..<(good.count / 2 + 400) { garbled[i] = garbled[i] == 0xFF ? 0 : UInt8(truncatingIfNeeded: i &* 37) | 0x80 }
        let cut = good.count * 3 / 5
        let stale = Array(good.prefix(cut)) + Array(older.suffix(from: min(cut, older.count - 2000)))
        for (name, damaged) in [("garbled", garbled), ("cut short over an older tail", stale)] {
            #expect(throws: MediaError.self, "\(name)") {
                _ = try damaged.withUnsafeBytes { try decoder.decode($0, into: buffer, output: .bt709, fork: fork) }
            }
            _ = try good.withUnsafeBytes { try decoder.decode($0, into: buffer, output: .bt709, fork: fork) }
            #expect(planes(buffer) == planes(expected), "the JPEG after a \(name) one")
        }
        // Two bytes of padding before the end-of-image marker.
        let padded = Array(good.dropLast(2)) + [0x00, 0x00, 0xFF, 0xD9]
        _ = try padded.withUnsafeBytes { try decoder.decode($0, into: buffer, output: .bt709, fork: fork) }
        #expect(planes(buffer) == planes(expected), "padding changed the picture")
    }

    /// A JPEG whose header says 65500x65500 (damaged, or made to) is refused before anything
    /// is allocated for it (about 8 GB of planes), by both decoders: one line, and the memory
    /// of the process stays where it was.
    @Test(.timeLimit(.minutes(1)))
    func aHugeJPEGHeaderIsRefusedBeforeAllocating() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        for format in ["yuvj422p", "yuvj444p"] {
            var (_, jpeg) = try hdJPEG(dir, format, pixelFormat: format)
            let sof = try #require((0..<(jpeg.count - 9)).first { jpeg[$0] == 0xFF && (jpeg[$0 + 1] == 0xC0 || jpeg[$0 + 1] == 0xC2) })
            for offset in [5, 7] { jpeg[sof + offset] = 0xFF; jpeg[sof + offset + 1] = 0xDC }  // 65500
            let before = residentKB()
            let buffer = I420Buffer(size: Size(width: 1920, height: 1080))
            let decoder = try MJPEGDecoder(name: "camera")
            do {
                _ = try jpeg.withUnsafeBytes { try decoder.decode($0, into: buffer) }
                Issue.record("\(format): a 65500x65500 JPEG decoded")
            } catch {
                print("\(format): \(error)")
                #expect(!"\(error)".contains("\n"))
            }
            #expect(residentKB() - before < 200_000, "\(format): resident memory grew by \(residentKB() - before) kB")
        }
    }

    /// This process's resident memory, in kB.
    func residentKB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    /// JPEGs webcams do not send (4:4:4, greyscale) are left to libavcodec, and still right.
    @Test func otherSamplingsAreStillDecoded() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        for format in ["yuvj444p", "gray"] {
            let (path, jpeg) = try hdJPEG(dir, format, pixelFormat: format)
            let buffer = I420Buffer(size: Size(width: 1920, height: 1080))
            _ = try jpeg.withUnsafeBytes { try MJPEGDecoder(name: "camera").decode($0, into: buffer) }
            let reference = try Decode.frame(path, index: 0, filter: "scale=out_range=tv", pixelFormat: "yuv420p")
            let p = psnr(planes(buffer), reference)
            #expect(p > 40, "\(format): \(p) dB")
        }
    }
}
