import CFFmpeg
import Compositor
import Foundation

/// What both video readers (`VideoReader` decoding, `PacketReader` not) take from a file's
/// video stream, and how they put its pictures on the file's `SourceTimeline`: one place
/// for the checks on the stream and for the rules on missing or absurd stamps.
struct VideoStreamClock {
    let streamIndex: Int32
    let codecID: AVCodecID
    let codecName: String
    /// The pictures' stored size (before the display matrix turns them).
    let storedSize: Size
    let rotation: QuarterTurn
    /// The nominal frame duration, for frames that do not say their own.
    let nominalFrameDuration: Double
    /// Duration of the stream by the container's index, when it has one.
    let declaredDuration: Double?
    let timeline = SourceTimeline()
    private let timeBase: Double
    private var cursor = SourceTimeline.Cursor()
    private var lastRawTime: Double?

    /// The best video stream of `input`, or the error that says why it has none usable.
    init(_ input: InputContext) throws(MediaError) {
        guard let index = input.bestStream(AVMEDIA_TYPE_VIDEO) else { throw .noVideoStream(path: input.path) }
        streamIndex = index
        let stream = input.stream(index)
        let par = stream.pointee.codecpar!
        codecID = par.pointee.codec_id
        codecName = String(cString: avcodec_get_name(codecID))
        guard par.pointee.width > 0, par.pointee.height > 0 else {
            // A size only decoding tells is found only up to the decoders' limit (`InputContext`).
            throw .undecodable(path: input.path, reason: "its picture size cannot be read: no size, or larger than 8192x8192 "
                               + "(nothing larger is decoded)")
        }
        // The decoders' limit (`InputContext.openDecoder`), here too for readers that open none.
        guard Int64(par.pointee.width) * Int64(par.pointee.height) <= InputContext.maxPixels else {
            throw .undecodable(path: input.path, reason: "its \(par.pointee.width)x\(par.pointee.height) pictures are larger than 8192x8192")
        }
        storedSize = Size(width: Int(par.pointee.width), height: Int(par.pointee.height))
        rotation = QuarterTurn(displayMatrixDegrees: dc_stream_rotation(stream))
        timeBase = av_q2d(stream.pointee.time_base)
        let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        declaredDuration = stream.pointee.duration > 0 && stream.pointee.duration != AVCode.noPTS
            ? Double(stream.pointee.duration) * timeBase : nil
        let nominal = rate.num > 0 && rate.den > 0 ? Double(rate.den) / Double(rate.num) : 1.0 / 30
        nominalFrameDuration = nominal >= 0.001 && nominal <= 1 ? nominal : 1.0 / 30
    }

    /// A picture stamped `stamp` (stream ticks, or no stamp) lasting `durationTicks` (0 or
    /// less: unknown): its raw time on the file's own clock, its time from the first
    /// picture on the timeline, and its duration in seconds.
    mutating func place(stamp: Int64, durationTicks: Int64) -> (raw: Double, time: Double, duration: Double) {
        var duration = durationTicks > 0 ? Double(durationTicks) * timeBase : nominalFrameDuration
        // A frame that claims to last longer than a gap may is a broken stamp, not a pause.
        if !(duration <= SourceTimeline.maxGap) { duration = nominalFrameDuration }
        // In seconds (a Double): Int64 arithmetic on arbitrary timestamps can overflow.
        let raw = stamp == AVCode.noPTS ? (lastRawTime ?? 0) + nominalFrameDuration : Double(stamp) * timeBase
        lastRawTime = raw
        timeline.setOrigin(raw)
        return (raw, timeline.place(raw, duration: duration, cursor: &cursor), duration)
    }
}
