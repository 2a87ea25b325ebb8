import CFFmpeg
import CFFmpegPolicy
import Compositor

/// One decoded picture, normalised to limited-range I420 and turned upright.
/// It owns what `image` points into, so it stays valid for as long as it is held.
// Sendable: not written once decoded; handed from the decoding thread through DecodeAhead's lock.
public final class VideoPicture: @unchecked Sendable {
    /// Seconds from the first frame of the stream.
    public let time: Double
    /// How long the picture is meant to be shown, in seconds.
    public let duration: Double
    public let picture: SourcePicture
    private let frame: Frame
    private let converted: I420Buffer?

    init(time: Double, duration: Double, picture: SourcePicture, frame: Frame, converted: I420Buffer?) {
        self.time = time
        self.duration = duration
        self.picture = picture
        self.frame = frame
        self.converted = converted
    }

    /// A decoded I420 frame as a decoder hands it over (for benchmarks and tests).
    public convenience init(decoded frame: Frame, matrix: YCbCrMatrix, time: Double = 0, duration: Double = 1.0 / 30) {
        self.init(time: time, duration: duration,
                  picture: SourcePicture(image: VideoReader.view(of: frame.pointer), matrix: matrix),
                  frame: frame, converted: nil)
    }

    /// The decoded frame itself, to draw the inset into and hand to the encoder, when that
    /// is safe and saves a copy: limited-range I420 of `size` as decoded (not converted or
    /// turned), and referenced by nothing else. Decoders keep the pictures later ones are
    /// predicted from; those are shared, and drawing into one would corrupt what follows.
    public func composableFrame(size: Size) -> EncoderFrame? {
        let f = frame.pointer
        guard converted == nil, picture.image.size == size, f.pointee.format == AV_PIX_FMT_YUV420P.rawValue,
              f.pointee.buf.0 != nil, av_frame_is_writable(f) != 0 else { return nil }
        dc_frame_forget_source(f)
        return EncoderFrame(decoded: frame)
    }
}

/// Decodes the video stream of a file into upright limited-range I420 pictures: anything
/// libavcodec decodes, in any pixel format, with the display rotation applied.
public final class VideoReader {
    public let path: String
    /// Upright size of the pictures.
    public let displaySize: Size
    public let rotation: QuarterTurn
    /// The nominal frame duration, for frames that do not say their own.
    public var nominalFrameDuration: Double { clock.nominalFrameDuration }
    public var codecName: String { clock.codecName }

    private let input: InputContext
    private let decoder: StreamDecoder
    private var clock: VideoStreamClock
    /// The file's clock, shared with its audio reader.
    public var timeline: SourceTimeline { clock.timeline }
    /// The latest end of a frame on the file's own clock.
    private var rawEnd: Double?
    private let normaliser = PictureNormalizer()
    private(set) public var framesDecoded = 0
    /// Duration of the stream by the container's index, when it has one.
    public var declaredDuration: Double? { clock.declaredDuration }
    private var lastTime = 0.0, lastDuration = 0.0, endTime = 0.0
    static let truncationTolerance = 0.5
    /// Packets the decoder rejected and skipped.
    public var damagedPackets: Int { decoder.damagedPackets }
    /// Whether a part of it outside its folder (a playlist's segment) was left out, unread.
    public var leftPartsOutside: Bool { dc_local_input_left_out(input.pointer) != 0 }

    /// `decoderThreads`: 0 lets libavcodec choose (a frame thread per core, and one more);
    /// a reader decoded on a thread of its own beside another does better with 1. A
    /// composition takes `StagePlan.decoderThreads`.
    public init(path: String, decoderThreads: Int = 0) throws(MediaError) {
        self.path = path
        input = try InputContext(path: path)
        clock = try VideoStreamClock(input)
        decoder = try StreamDecoder(input: input, streamIndex: clock.streamIndex, threads: Int32(decoderThreads))
        rotation = clock.rotation
        displaySize = rotation.rotated(clock.storedSize)
    }

    /// The next picture, or nil at the end of the stream.
    public func next() throws(MediaError) -> VideoPicture? {
        let frame = Frame()
        guard try decoder.next(into: frame) else {
            if framesDecoded == 0 {
                throw .undecodable(path: path, reason: decoder.lastError < 0
                                   ? averrorText(decoder.lastError) : "no frames in the video stream")
            }
            // A file cut short still demuxes cleanly up to the cut; only its index knows.
            // Measured on the file's own clock as well: a timeline closed up over a jump is
            // shorter than the index says, and that is not a cut.
            let rawSpan = (rawEnd ?? 0) - (timeline.origin ?? 0)
            if let declared = declaredDuration, declared - endTime > Self.truncationTolerance,
               declared - rawSpan > Self.truncationTolerance {
                throw .damaged(path: path, reason: String(format: "video ends at %.2f s of the %.2f s its index declares",
                                                          endTime, declared))
            }
            return nil
        }
        framesDecoded += 1
        let f = frame.pointer
        defer { endTime = max(endTime, lastTime + lastDuration) }
        var pts = f.pointee.best_effort_timestamp
        if pts == AVCode.noPTS { pts = f.pointee.pts }
        let (raw, time, duration) = clock.place(stamp: pts, durationTicks: dc_frame_duration(f))
        rawEnd = max(rawEnd ?? raw, raw + duration)
        lastTime = time
        lastDuration = duration

        let (view, owned, matrix) = try normalise(f)
        var image = view
        var rotated: I420Buffer? = owned
        if rotation != .none {
            let turned = I420Buffer(size: rotation.rotated(view.size))
            rotation.apply(view, into: turned.view)
            image = turned.view
            rotated = turned
        }
        return VideoPicture(time: time, duration: duration, picture: SourcePicture(image: image, matrix: matrix),
                            frame: frame, converted: rotated)
    }

    private func normalise(_ f: UnsafeMutablePointer<AVFrame>) throws(MediaError) -> (I420View, I420Buffer?, YCbCrMatrix) {
        try normaliser.normalise(f, path: path)
    }

    static func view(of f: UnsafeMutablePointer<AVFrame>) -> I420View {
        let w = Int(f.pointee.width), h = Int(f.pointee.height)
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        return I420View(
            y: PlaneView(base: f.pointee.data.0!, width: w, height: h, stride: Int(f.pointee.linesize.0)),
            u: PlaneView(base: f.pointee.data.1!, width: cw, height: ch, stride: Int(f.pointee.linesize.1)),
            v: PlaneView(base: f.pointee.data.2!, width: cw, height: ch, stride: Int(f.pointee.linesize.2)))
    }

    /// The matrix a frame's Y'CbCr uses. Untagged video follows the usual convention:
    /// BT.601 below HD, BT.709 from 720 lines up.
    static func matrix(of space: AVColorSpace, height: Int) -> YCbCrMatrix {
        switch space {
        case AVCOL_SPC_BT709: return .bt709
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_FCC: return .bt601
        case AVCOL_SPC_SMPTE240M: return .bt709  // within 0.015 of BT.709 on every weight
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: return .bt2020
        default: return height >= 720 ? .bt709 : .bt601
        }
    }
}
