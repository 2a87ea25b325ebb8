import CFFmpeg
import Compositor
import Foundation

/// A file's video packets as they are stored, undecoded, each with its time: an MJPEG
/// file's JPEGs, for playing it through the camera path as a USB webcam would send them.
/// Times are on the file's `SourceTimeline`, as `VideoReader` gives them, so its sound is
/// read in sync by an `AudioReader` on the same timeline.
public final class PacketReader {
    public let path: String
    public var codecName: String { clock.codecName }
    public var isMJPEG: Bool { clock.codecID == AV_CODEC_ID_MJPEG }
    /// The pictures' stored size (packets are not turned upright).
    public var size: Size { clock.storedSize }
    public var rotation: QuarterTurn { clock.rotation }
    public var nominalFrameDuration: Double { clock.nominalFrameDuration }
    public var timeline: SourceTimeline { clock.timeline }

    private let input: InputContext
    private var clock: VideoStreamClock
    private let packet = Packet()

    public init(path: String) throws(MediaError) {
        self.path = path
        input = try InputContext(path: path)
        clock = try VideoStreamClock(input)
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
            guard p.stream_index == clock.streamIndex, p.size > 0, let data = p.data else { continue }
            let time = clock.place(stamp: p.pts != AVCode.noPTS ? p.pts : p.dts, durationTicks: p.duration).time
            body(UnsafeRawBufferPointer(start: data, count: Int(p.size)), time)
            return true
        }
    }
}
