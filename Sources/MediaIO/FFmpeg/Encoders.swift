import CFFmpeg
import Foundation
import Compositor

/// Owns an opened encoder; packets come out through `drain`.
open class Encoder {
    let name: String
    let context: CodecContext
    private let packet = Packet()

    package init(name: String, configure: (UnsafeMutablePointer<AVCodecContext>) -> Void,
         options: [String: String]) throws(MediaError) {
        self.name = name
        guard let codec = avcodec_find_encoder_by_name(name), let ctx = CodecContext(codec: codec) else {
            throw .encoderUnavailable(name: name)
        }
        context = ctx
        configure(ctx.pointer)
        // mov keeps parameter sets in the sample description, not in the stream.
        ctx.pointer.pointee.flags |= dc_codec_flag_global_header()
        var dict: OpaquePointer?
        for (k, v) in options { av_dict_set(&dict, k, v, 0) }
        defer { av_dict_free(&dict) }
        try check(avcodec_open2(ctx.pointer, codec, &dict)) { .encoderFailed(name: name, reason: $0) }
    }

    var timeBase: AVRational { context.pointer.pointee.time_base }

    /// Sends one frame, or nil to flush, and hands every packet that is ready to `sink`.
    package func encode(_ frame: UnsafeMutablePointer<AVFrame>?,
                sink: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        try check(avcodec_send_frame(context.pointer, frame)) { .encoderFailed(name: name, reason: $0) }
        while true {
            let rc = avcodec_receive_packet(context.pointer, packet.pointer)
            if rc == AVCode.again || rc == AVCode.eof { return }
            try check(rc) { .encoderFailed(name: name, reason: $0) }
            defer { av_packet_unref(packet.pointer) }
            try sink(packet.pointer)
        }
    }
}

/// How an encoder spreads its work over the CPUs. x265 makes a pool of worker threads
/// (`pools=N`: N threads; it pins them to NUMA nodes itself, so a count taken from the CPUs
/// allowed is what keeps it inside a mask or a quota), encodes several frames at once
/// (frame threads) and the rows of each frame in a wave (wpp); x264 and libavcodec's other
/// encoders take a thread count.
public struct EncoderThreading: Sendable, Hashable, Codable, CustomStringConvertible {
    /// x265's pool, x264's threads; 0: the library's own choice (a thread per CPU of the machine).
    public var threads = 0
    /// x265's frames encoded at once; 0: x265's choice from its pool.
    public var frameThreads = 0
    /// x265's wavefront: the rows of a frame encoded in parallel.
    public var wavefront = true

    public init(threads: Int = 0, frameThreads: Int = 0, wavefront: Bool = true) {
        self.threads = threads
        self.frameThreads = frameThreads
        self.wavefront = wavefront
    }

    /// What x265's parameters say of it (after a colon each).
    var x265Parameters: String {
        (threads > 0 ? ":pools=\(threads)" : "") + (frameThreads > 0 ? ":frame-threads=\(frameThreads)" : "")
            + (wavefront ? "" : ":wpp=0")
    }

    /// "4 threads, 2 frame threads, wpp" in x265's terms.
    public var description: String { text(for: "libx265") }

    /// As `encoder` takes it: x265's frame threads and wavefront, the others' thread count.
    public func text(for encoder: String) -> String {
        let count = threads > 0 ? "\(threads) thread\(threads == 1 ? "" : "s")" : "threads auto"
        guard encoder == "libx265" else { return count }
        return count + (frameThreads > 0 ? ", \(frameThreads) frame thread\(frameThreads == 1 ? "" : "s")" : "")
            + (wavefront ? ", wpp" : ", no wpp")
    }
}

public struct VideoEncoderSettings: Sendable {
    /// What the picture is stored as; each has its software encoder and its QuickTime tag.
    public enum Codec: String, Sendable, CaseIterable {
        case hevc, h264
        public var softwareEncoder: String { self == .hevc ? "libx265" : "libx264" }
        public var displayName: String { self == .hevc ? "HEVC" : "H.264" }
    }
    public var codec = Codec.hevc {
        didSet { encoder = codec.softwareEncoder }
    }
    public var encoder = "libx265"
    /// What a line names the encoder: the codec where its own software encoder makes it
    /// ("the HEVC encoder"), else the encoder given (`--video-encoder mpeg4`, NVENC).
    public var encoderDisplayName: String { encoder == codec.softwareEncoder ? codec.displayName : encoder }
    public var size = PiPLayout.defaultCanvas
    public var framesPerSecond: Int32 = 30
    public var preset = "ultrafast"
    /// x264's and x265's presets, fastest first.
    public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower",
                                 "veryslow", "placebo"]
    public var crf = 28
    /// Average bits per second instead of a constant quality (`crf`), when set.
    public var bitrate: Int?
    /// The AAC track's bits per second.
    public var audioBitrate = 160_000
    /// No B-frames and a short lookahead: pictures leave the encoder in order, a few frames sooner. A live
    /// recording wants that, and its fragmented file needs it: without an edit list (which
    /// a fragmented file cannot have) reordered frames would start the picture two frames
    /// after the sound.
    public var inOrder = false
    /// How the encoder spreads its work over the CPUs: chosen by `StagePlan` for this machine
    /// (and for a live recording, measured: `LiveEncoderChoice`).
    public var threading = EncoderThreading()
    public init() {}

    /// The threads x265's pool starts (each lowers itself 10 below its creator): `pools=N`
    /// makes N, its default one per CPU online, 64 at most; none for the other encoders.
    public var poolThreads: Int {
        guard encoder == "libx265" else { return 0 }
        return threading.threads > 0 ? threading.threads : min(64, ProcessInfo.processInfo.processorCount)
    }
}

/// HEVC or H.264 (software or NVENC) in BT.709 limited range, constant frame rate. Frames are composed into `canvas`
/// (the encoder's own frame) or into any `EncoderFrame`, and sent without a copy.
public final class VideoEncoder: Encoder {
    public let settings: VideoEncoderSettings
    private let own: EncoderFrame

    public init(settings: VideoEncoderSettings) throws(MediaError) {
        self.settings = settings
        own = try EncoderFrame(size: settings.size)
        try super.init(name: settings.encoder, configure: { c in
            c.pointee.width = Int32(settings.size.width)
            c.pointee.height = Int32(settings.size.height)
            c.pointee.pix_fmt = AV_PIX_FMT_YUV420P
            c.pointee.time_base = AVRational(num: 1, den: settings.framesPerSecond)
            c.pointee.framerate = AVRational(num: settings.framesPerSecond, den: 1)
            c.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
            c.pointee.color_primaries = AVCOL_PRI_BT709
            c.pointee.color_trc = AVCOL_TRC_BT709
            c.pointee.colorspace = AVCOL_SPC_BT709
            c.pointee.color_range = AVCOL_RANGE_MPEG
            c.pointee.gop_size = settings.framesPerSecond * 2
            // x265 takes its threads from its own parameters (pools); x264 and the others from here.
            if settings.encoder != "libx265" { c.pointee.thread_count = Int32(settings.threading.threads) }
            if let bitrate = settings.bitrate { c.pointee.bit_rate = Int64(bitrate) }
        }, options: Self.options(settings))
        if settings.encoder == "libx265" { CPUAllowance.confineThreads() }
    }

    /// The private options of each encoder: libx265 and libx264 take `preset` and `crf`;
    /// NVENC its own presets (p1 fastest ... p7 best) and a constant quality `cq`.
    static func options(_ settings: VideoEncoderSettings) -> [String: String] {
        if settings.encoder.hasSuffix("_nvenc") {
            var o = ["preset": nvencPreset(settings.preset)]
            if settings.bitrate == nil { o["rc"] = "vbr"; o["cq"] = String(settings.crf) }
            if settings.inOrder { o["bf"] = "0" }
            return o
        }
        var o = ["preset": settings.preset]
        if settings.bitrate == nil { o["crf"] = String(settings.crf) }
        if settings.inOrder { o["bf"] = "0" }
        if settings.encoder == "libx265" {
            // x265 prints banners and stats on stderr by itself; errors come back as codes.
            // A recording also keeps x265's lookahead short: frames inside the encoder are what a
            // kill loses beyond the last fragment, and on a machine too slow for real time each
            // stands for several skipped slots. 2 frames instead of ultrafast's 5: the same
            // SSIM for the same file size here (1080p, testsrc2 and a camera clip).
            o["x265-params"] = "log-level=none" + (settings.inOrder ? ":bframes=0:rc-lookahead=2" : "")
                + settings.threading.x265Parameters
        }
        return o
    }

    /// x264/x265's preset names on NVENC's scale: ultrafast and superfast p1 ... placebo p7.
    static func nvencPreset(_ x26x: String) -> String {
        let order = VideoEncoderSettings.presets
        let i = order.firstIndex(of: x26x) ?? 5
        return "p\(min(7, 1 + i * 7 / order.count))"
    }

    /// Every packet out of the encoder, with a decode time the muxer can take.
    override package func encode(_ frame: UnsafeMutablePointer<AVFrame>?,
                                 sink: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        try super.encode(frame) { (p) throws(MediaError) in
            decodeTimes.correct(p.pointee.pts, &p.pointee.dts)
            try sink(p)
        }
        // x265's pool threads pin themselves as they start, which may be after the open:
        // by the first frames every one has.
        if settings.encoder == "libx265" && framesSent < 3 {
            framesSent += 1
            CPUAllowance.confineThreads()
        }
    }

    private var framesSent = 0

    private var decodeTimes = DecodeTimes()

    /// The encoder's own frame, ready to compose into. Valid until `send`.
    public func canvasFrame() throws(MediaError) -> EncoderFrame {
        try own.prepareForWriting()
        return own
    }

    /// The picture the next frame is composed into. Valid until `send`.
    public func canvas() throws(MediaError) -> I420View { try canvasFrame().view }

    func send(frameIndex: Int64, sink: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        try send(own.frame.pointer, frameIndex: frameIndex, sink: sink)
    }

    /// Sends a picture composed elsewhere (a pool frame, a decoded frame composed in place):
    /// it must be I420 of the output size.
    func send(_ f: UnsafeMutablePointer<AVFrame>, frameIndex: Int64,
              sink: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        precondition(f.pointee.format == AV_PIX_FMT_YUV420P.rawValue && Int(f.pointee.width) == settings.size.width
                     && Int(f.pointee.height) == settings.size.height, "not a picture of the output size")
        f.pointee.pts = frameIndex
        f.pointee.color_primaries = AVCOL_PRI_BT709
        f.pointee.color_trc = AVCOL_TRC_BT709
        f.pointee.colorspace = AVCOL_SPC_BT709
        f.pointee.color_range = AVCOL_RANGE_MPEG
        try encode(f, sink: sink)
    }
}

/// x265 gives an encode of fewer frames than its reorder delay (two with B-pyramid) decode
/// times made from a field it never set (`m_bframeDelayTime`, set when the third frame
/// comes): a composition of a one-frame clip got -23030882466 against a presentation time of
/// 0, and the muxer refused the file ("pts/dts pair unsupported"). A decode time that is after
/// its picture's presentation, not after the one before it, or further ahead than any
/// encoder reorders, is replaced by the next one in line.
package struct DecodeTimes {
    /// x264 and x265 decode at most two frames early (B-pyramid), NVENC no more: 16 is room to spare.
    package static let mostFramesEarly: Int64 = 16
    private var last: Int64?

    package init() {}

    package mutating func correct(_ presentation: Int64, _ decode: inout Int64) {
        guard presentation != AVCode.noPTS else { return }
        // The field is any number: the difference of two can overflow (a composition of a
        // two-frame HEVC clip crashed on it).
        let early = presentation.subtractingReportingOverflow(decode)
        let plausible = decode != AVCode.noPTS && decode <= presentation && !early.overflow
            && early.partialValue <= Self.mostFramesEarly && last.map { decode > $0 } ?? true
        if !plausible { decode = last.map { $0 + 1 } ?? presentation }
        last = decode
    }
}

/// AAC-LC, 48 kHz stereo, fed from a `SampleQueue`.
public final class AudioEncoder: Encoder {
    private let frame = Frame()
    public private(set) var samplesSent: Int64 = 0
    private(set) var frameSize = 1024

    public init(bitrate: Int = 160_000) throws(MediaError) {
        try super.init(name: "aac", configure: { c in
            c.pointee.sample_fmt = OutputAudio.sampleFormat
            c.pointee.sample_rate = OutputAudio.sampleRate
            av_channel_layout_default(&c.pointee.ch_layout, OutputAudio.channels)
            c.pointee.bit_rate = Int64(bitrate)
            c.pointee.time_base = AVRational(num: 1, den: OutputAudio.sampleRate)
            c.pointee.profile = dc_profile_aac_low()
        }, options: [:])
        frameSize = Int(context.pointer.pointee.frame_size > 0 ? context.pointer.pointee.frame_size : 1024)
        let f = frame.pointer
        f.pointee.format = OutputAudio.sampleFormat.rawValue
        f.pointee.sample_rate = OutputAudio.sampleRate
        av_channel_layout_default(&f.pointee.ch_layout, OutputAudio.channels)
        f.pointee.nb_samples = Int32(frameSize)
        try check(av_frame_get_buffer(f, 0)) { .encoderFailed(name: name, reason: $0) }
    }

    /// Encodes whole frames from `queue`; with `final`, also the short last one.
    func encode(from queue: SampleQueue, final: Bool,
                sink: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        if queue.failed { throw .encoderFailed(name: name, reason: "out of memory for the audio queue") }
        while queue.count >= frameSize || (final && queue.count > 0) {
            try check(av_frame_make_writable(frame.pointer)) { .encoderFailed(name: name, reason: $0) }
            let n = min(queue.count, frameSize)
            frame.pointer.pointee.nb_samples = Int32(n)
            _ = queue.read(into: frame, count: n)
            frame.pointer.pointee.pts = samplesSent
            samplesSent += Int64(n)
            try encode(frame.pointer, sink: sink)
        }
    }
}

/// The output's two encoders: pictures and sound in, packets out to the muxer they are
/// given. The muxer only takes packets, so one encoding can feed more than one of them.
public final class OutputEncoders {
    public let video: VideoEncoder
    public let audio: AudioEncoder
    /// Shown every packet (video: true) before the muxer takes it, on the encoding thread,
    /// each in the order it subscribed: a live stream, the catch-up of an intermediate. Each
    /// takes its own reference and returns.
    private var subscribers: [(UnsafeMutablePointer<AVPacket>, Bool) -> Void] = []

    /// Adds `subscriber` to those shown every packet; before the first frame is encoded.
    public func subscribe(_ subscriber: @escaping (UnsafeMutablePointer<AVPacket>, Bool) -> Void) {
        subscribers.append(subscriber)
    }

    private func tap(_ packet: UnsafeMutablePointer<AVPacket>, isVideo: Bool) {
        for subscriber in subscribers { subscriber(packet, isVideo) }
    }

    /// The video encoder first: it is the one that may not open (a codec this FFmpeg lacks).
    public init(settings: VideoEncoderSettings) throws(MediaError) {
        video = try VideoEncoder(settings: settings)
        audio = try AudioEncoder(bitrate: settings.audioBitrate)
    }

    /// Another picture encoder beside an existing sound encoder: the intermediate a recording
    /// falls back to carries on the sound of the file it continues, packet for packet.
    public init(video: VideoEncoder, audio: AudioEncoder) {
        self.video = video
        self.audio = audio
    }

    /// Encodes `frame` (I420, output size: a pool frame or a decoded one composed in place)
    /// as frame `index`, without copying it first.
    public func encode(_ frame: EncoderFrame, index: Int64, into writer: MovWriter) throws(MediaError) {
        try encode(frame, index: index) { (p, _) throws(MediaError) in try writer.writeVideo(p) }
    }

    /// Encodes the whole AAC frames waiting in `queue`; with `final`, the short last one too.
    public func encode(from queue: SampleQueue, final: Bool, into writer: MovWriter) throws(MediaError) {
        try encode(from: queue, final: final) { (p, _) throws(MediaError) in try writer.writeAudio(p) }
    }

    /// As `encode(_:index:into:)`, each packet handed to `deliver` (video: true) after the tap.
    public func encode(_ frame: EncoderFrame, index: Int64,
                       deliver: (UnsafeMutablePointer<AVPacket>, Bool) throws(MediaError) -> Void) throws(MediaError) {
        try video.send(frame.frame.pointer, frameIndex: index) { (p) throws(MediaError) in
            lastPictureOut = max(lastPictureOut, p.pointee.pts)
            tap(p, isVideo: true)
            try deliver(p, true)
        }
    }

    /// As `encode(from:final:into:)`, each packet handed to `deliver` after the tap.
    public func encode(from queue: SampleQueue, final: Bool,
                       deliver: (UnsafeMutablePointer<AVPacket>, Bool) throws(MediaError) -> Void) throws(MediaError) {
        try audio.encode(from: queue, final: final) { (p) throws(MediaError) in
            tap(p, isVideo: false)
            try deliver(p, false)
        }
    }

    /// Samples of sound encoded so far.
    public var soundSamplesSent: Int64 { audio.samplesSent }

    /// The index of the last picture whose packet has come out of the video encoder (-1
    /// before the first): those after it are still inside it.
    public private(set) var lastPictureOut: Int64 = -1

    /// Hands over what both encoders still hold (the video encoder's lookahead, the last AAC
    /// frame): after the last picture and sound, before the muxer's `finish`.
    public func drain(into writer: MovWriter) throws(MediaError) {
        try drain { (p, isVideo) throws(MediaError) in
            if isVideo { try writer.writeVideo(p) } else { try writer.writeAudio(p) }
        }
    }

    /// As `drain(into:)`, each packet handed to `deliver` after the tap.
    public func drain(deliver: (UnsafeMutablePointer<AVPacket>, Bool) throws(MediaError) -> Void) throws(MediaError) {
        try video.encode(nil) { (p) throws(MediaError) in
            tap(p, isVideo: true)
            try deliver(p, true)
        }
        try audio.encode(nil) { (p) throws(MediaError) in
            tap(p, isVideo: false)
            try deliver(p, false)
        }
    }
}
