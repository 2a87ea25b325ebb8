import Compositor
import Foundation
import MediaIO
import Testing

/// vivid has no MJPEG, so the camera MJPEG path is tested on buffers shaped like a webcam's:
/// one full-range 4:2:2 JPEG per buffer, checked against ffmpeg's own decoding.
@Suite struct MJPEGTests {
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

    @Test func cameraLikeBuffersDecodeLikeFFmpeg() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let stream = dir.path("cam.mjpeg")
        try makeClip(stream, ["-f", "lavfi", "-i", "testsrc2=s=640x480:r=30:d=0.3", "-c:v", "mjpeg",
                              "-pix_fmt", "yuvj422p", "-q:v", "5", "-f", "mjpeg"])
        let buffers = jpegs([UInt8](try Data(contentsOf: URL(fileURLWithPath: stream))))
        try #require(buffers.count == 9)
        let decoder = try MJPEGDecoder(name: "test camera")
        var buffer = I420Buffer(size: Size(width: 640, height: 480))
        for (n, jpeg) in buffers.enumerated() {
            let (picture, matrix) = try jpeg.withUnsafeBytes { try decoder.decode($0, into: buffer) }
            buffer = picture
            #expect(picture.size == Size(width: 640, height: 480))
            #expect(matrix == .bt601, "JPEG is BT.601")
            // ffmpeg's decode of the same JPEG, converted to limited-range I420 the same way.
            let reference = try Decode.frame(stream, index: n, filter: "scale=out_range=tv", pixelFormat: "yuv420p")
            var ours = [UInt8]()
            for p in picture.view.planes { for y in 0..<p.height { ours.append(contentsOf: UnsafeBufferPointer(start: p.row(y), count: p.width)) } }
            let p = psnr(ours, reference)
            #expect(p > 45, "frame \(n): \(p) dB")
        }
        // A buffer cut short (a USB transfer that lost its tail) is an error, not a crash.
        let cut = Array(buffers[0].prefix(buffers[0].count / 3))
        #expect(throws: MediaError.self) { _ = try cut.withUnsafeBytes { try decoder.decode($0, into: buffer) } }
    }
}
