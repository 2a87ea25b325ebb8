import CFFmpeg
import Compositor
import MediaIO

/// Makes JPEGs as a USB webcam sends them (full-range 4:2:2, one per frame), for benchmarks
/// and tests of the MJPEG camera path that need no camera.
public final class CameraJPEGEncoder: Encoder {
    public let size: Size
    private let frame = Frame()

    /// `quality`: FFmpeg's qscale, 2 (best) to 31; webcams send about 4 at 1080p30.
    public init(size: Size, quality: Int = 4) throws(MediaError) {
        self.size = size
        try super.init(name: "mjpeg", configure: { c in
            c.pointee.width = Int32(size.width)
            c.pointee.height = Int32(size.height)
            c.pointee.pix_fmt = AV_PIX_FMT_YUVJ422P
            c.pointee.color_range = AVCOL_RANGE_JPEG
            c.pointee.time_base = AVRational(num: 1, den: 30)
            c.pointee.flags |= dc_codec_flag_qscale()
            c.pointee.global_quality = Int32(quality) * dc_ff_qp2lambda()
        }, options: [:])
        let f = frame.pointer
        f.pointee.width = Int32(size.width)
        f.pointee.height = Int32(size.height)
        f.pointee.format = AV_PIX_FMT_YUVJ422P.rawValue
        try check(av_frame_get_buffer(f, 0)) { .encoderFailed(name: "mjpeg", reason: $0) }
    }

    /// One JPEG of a picture `fill` draws: it gets each plane's (index, base, width,
    /// height, stride), luma first.
    public func encode(fill: (Int, UnsafeMutablePointer<UInt8>, Int, Int, Int) -> Void) throws(MediaError) -> [UInt8] {
        let f = frame.pointer
        try check(av_frame_make_writable(f)) { .encoderFailed(name: "mjpeg", reason: $0) }
        let planes = withUnsafePointer(to: f.pointee.data) { $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 3) { p in
            (0..<3).map { p[$0]! } } }
        let strides = withUnsafePointer(to: f.pointee.linesize) { $0.withMemoryRebound(to: Int32.self, capacity: 3) { p in
            (0..<3).map { Int(p[$0]) } } }
        for i in 0..<3 {
            fill(i, planes[i], i == 0 ? size.width : (size.width + 1) / 2, size.height, strides[i])
        }
        var out: [UInt8] = []
        try encode(f) { (p: UnsafeMutablePointer<AVPacket>) throws(MediaError) in
            out = Array(UnsafeBufferPointer(start: p.pointee.data, count: Int(p.pointee.size)))
        }
        return out
    }
}
