import CFFmpeg
import Compositor
import Foundation

/// A file's video packets as they are stored, undecoded, each with its time: an MJPEG
/// file's JPEGs, for playing it through the camera path as a USB webcam would send them.
/// Times are on the file's `SourceTimeline`, as `VideoReader` gives them, so its sound is
/// read in sync by an `AudioReader` on the same timeline.
public final class PacketReader {
    public let path: String
    public let codecName: String
    public let isMJPEG: Bool
    /// The pictures' stored size (packets are not turned upright).
    public let size: Size
    public let rotation: QuarterTurn
    public let nominalFrameDuration: Double
    public let timeline = SourceTimeline()

    private let input: InputContext
    private let streamIndex: Int32
    private let packet = Packet()
    private let timeBase: Double
    private var cursor = SourceTimeline.Cursor()
    private var lastRawTime: Double?
    public private(set) var packetsRead = 0

    public init(path: String) throws(MediaError) {
        self.path = path
        input = try InputContext(path: path)
        guard let index = input.bestStream(AVMEDIA_TYPE_VIDEO) else { throw .noVideoStream(path: path) }
        streamIndex = index
        let stream = input.stream(index)
        let par = stream.pointee.codecpar!
        codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
        isMJPEG = par.pointee.codec_id == AV_CODEC_ID_MJPEG
        guard par.pointee.width > 0, par.pointee.height > 0 else {
            throw .undecodable(path: path, reason: "video stream has no picture size")
        }
        guard Int64(par.pointee.width) * Int64(par.pointee.height) <= InputContext.maxPixels else {
            throw .undecodable(path: path, reason: "its \(par.pointee.width)x\(par.pointee.height) pictures are larger than 8192x8192")
        }
        size = Size(width: Int(par.pointee.width), height: Int(par.pointee.height))
        rotation = QuarterTurn(displayMatrixDegrees: dc_stream_rotation(stream))
        timeBase = av_q2d(stream.pointee.time_base)
        let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        let nominal = rate.num > 0 && rate.den > 0 ? Double(rate.den) / Double(rate.num) : 1.0 / 30
        nominalFrameDuration = nominal >= 0.001 && nominal <= 1 ? nominal : 1.0 / 30
    }

    /// Calls `body` with the next video packet's bytes (valid only during the call) and its
    /// time in seconds from the first picture; false at the end of the file. A container
    /// that cannot be read to its end is an error, as with `VideoReader`.
    public func next(_ body: (UnsafeRawBufferPointer, Double) -> Void) throws(MediaError) -> Bool {
        while true {
            let rc = av_read_frame(input.pointer, packet.pointer)
            if rc == AVCode.eof { return false }
            if rc < 0 { throw .damaged(path: path, reason: averrorText(rc)) }
            defer { packet.unref() }
            let p = packet.pointer.pointee
            guard p.stream_index == streamIndex, p.size > 0, let data = p.data else { continue }
            let stamp = p.pts != AVCode.noPTS ? p.pts : p.dts
            var duration = p.duration > 0 ? Double(p.duration) * timeBase : nominalFrameDuration
            if !(duration <= SourceTimeline.maxGap) { duration = nominalFrameDuration }
            // In seconds (a Double): Int64 arithmetic on arbitrary timestamps can overflow.
            let raw = stamp == AVCode.noPTS ? (lastRawTime ?? 0) + nominalFrameDuration : Double(stamp) * timeBase
            lastRawTime = raw
            timeline.setOrigin(raw)
            let time = timeline.place(raw, duration: duration, cursor: &cursor)
            packetsRead += 1
            body(UnsafeRawBufferPointer(start: data, count: Int(p.size)), time)
            return true
        }
    }
}
