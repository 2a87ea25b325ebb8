import CFFmpeg
import CFFmpegPolicy
import Foundation

/// The two tracks' parameters, copied from the encoders once (before the recording starts),
/// so that a stream connecting later never reads an encoder another thread is using.
// Sendable: copies made before the recording starts, never written after.
public final class StreamParameters: @unchecked Sendable {
    let video: UnsafeMutablePointer<AVCodecParameters>
    let audio: UnsafeMutablePointer<AVCodecParameters>
    let videoTimeBase: AVRational
    let audioTimeBase: AVRational
    let frameRate: AVRational

    public init(encoders: OutputEncoders) throws(MediaError) {
        video = allocated(avcodec_parameters_alloc(), "codec parameters")
        audio = allocated(avcodec_parameters_alloc(), "codec parameters")
        videoTimeBase = encoders.video.timeBase
        audioTimeBase = encoders.audio.timeBase
        frameRate = encoders.video.context.pointer.pointee.framerate
        try check(avcodec_parameters_from_context(video, encoders.video.context.pointer)) { .encoderFailed(name: "video", reason: $0) }
        try check(avcodec_parameters_from_context(audio, encoders.audio.context.pointer)) { .encoderFailed(name: "aac", reason: $0) }
    }

    public var isHEVC: Bool { video.pointee.codec_id == AV_CODEC_ID_HEVC }

    deinit {
        var v: UnsafeMutablePointer<AVCodecParameters>? = video, a: UnsafeMutablePointer<AVCodecParameters>? = audio
        avcodec_parameters_free(&v)
        avcodec_parameters_free(&a)
    }
}

/// One encoded packet kept for a stream: a new reference to the encoder's data (no copy).
// Sendable: a packet reference no one writes once made; read by the stream's thread alone.
public final class StreamPacket: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVPacket>
    public let isVideo: Bool
    public var isKeyframe: Bool { pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }
    public var size: Int { Int(pointer.pointee.size) }

    /// Its time in seconds.
    public var seconds: Double {
        let tb = isVideo ? videoTimeBase : audioTimeBase
        return Double(pointer.pointee.pts) * Double(tb.num) / Double(tb.den)
    }
    private let videoTimeBase: AVRational, audioTimeBase: AVRational

    public init?(referencing packet: UnsafeMutablePointer<AVPacket>, isVideo: Bool, parameters: StreamParameters) {
        videoTimeBase = parameters.videoTimeBase
        audioTimeBase = parameters.audioTimeBase
        guard let clone = av_packet_clone(packet) else { return nil }
        pointer = clone
        self.isVideo = isVideo
        // libx265 leaves durations at 0; MPEG-TS and FLV want them.
        if isVideo && pointer.pointee.duration == 0 { pointer.pointee.duration = 1 }
    }

    /// A new reference to the same data (no copy), kept while this one is written.
    public func copy() -> StreamPacket? {
        StreamPacket(referencing: pointer, isVideo: isVideo, timeBases: (videoTimeBase, audioTimeBase))
    }

    private init?(referencing packet: UnsafeMutablePointer<AVPacket>, isVideo: Bool, timeBases: (AVRational, AVRational)) {
        (videoTimeBase, audioTimeBase) = timeBases
        guard let clone = av_packet_clone(packet) else { return nil }
        pointer = clone
        self.isVideo = isVideo
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }
}

/// One connection of a live stream: MPEG-TS over SRT, UDP or TCP, FLV over RTMP, through
/// FFmpeg's protocols. Every network call (the connection, each write, the end) waits at
/// most the time it is given, and `interrupt` ends a wait at once from another thread.
// Sendable: used by the stream's thread alone; `interrupt`, from others, only sets the deadline's flag.
public final class LiveStreamWriter: @unchecked Sendable {
    public let url: String
    /// `url` as it may be shown (`masked`).
    public let shown: String
    private let context: UnsafeMutablePointer<AVFormatContext>
    private let deadline: UnsafeMutablePointer<dc_deadline>
    private let videoStream: UnsafeMutablePointer<AVStream>
    private let audioStream: UnsafeMutablePointer<AVStream>
    private let parameters: StreamParameters
    /// MPEG-TS carries no global header: the parameter sets go in front of each keyframe,
    /// so a receiver that joins (or a connection that resumes) can start there.
    private var parameterSets: OpaquePointer?
    private var opened = false

    /// Query keys whose values open a stream to whoever reads them.
    static let secretKeys: Set<String> = ["passphrase", "pass", "password", "pwd", "key", "streamid", "token", "secret", "auth"]

    /// `url` with what gives access to the stream masked, for logs, the status line and the
    /// summary: user and password, an RTMP URL's path after its application (the stream
    /// key), and query values such as SRT's passphrase and streamid.
    public static func masked(_ url: String) -> String { parts(of: url).shown }

    /// What `masked` hides in `url`: the user information, an RTMP stream key, secret query values.
    /// With any value of a secret key wherever it stands (`srt://host:9&passphrase=...` or
    /// `;passphrase=`, which no query parsing finds, printed it in full).
    public static func secrets(in url: String) -> [String] {
        let loose = url.matches(of: looseSecret).map { String($0.1) }.filter { !$0.isEmpty }
        return parts(of: url).secrets + loose
    }
    nonisolated(unsafe) private static let looseSecret =
        try! Regex<(Substring, Substring)>("(?i)(?:passphrase|pass|password|pwd|key|streamid|token|secret|auth)=([^&;?#\\s]+)")

    private static func parts(of url: String) -> (shown: String, secrets: [String]) {
        guard let schemeEnd = url.range(of: "://") else { return (url, []) }
        let scheme = url[..<schemeEnd.lowerBound]
        var rest = url[schemeEnd.upperBound...]
        var query = "", secrets: [String] = []
        if let q = rest.firstIndex(of: "?") {
            query = "?" + rest[rest.index(after: q)...].split(separator: "&", omittingEmptySubsequences: false).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2 && secretKeys.contains(parts[0].lowercased()) else { return String(pair) }
                secrets.append(String(parts[1]))
                return "\(parts[0])=***"
            }.joined(separator: "&")
            rest = rest[..<q]
        }
        // User information ends at the last @ before the host, a slash in a password
        // notwithstanding (rtmp://user:pa/ss@host showed "ss@host").
        var userInfo = ""
        if let at = rest.lastIndex(of: "@") {
            userInfo = String(rest[..<at])
            rest = rest[rest.index(after: at)...]
            secrets.append(userInfo)
            if let colon = userInfo.firstIndex(of: ":") { secrets.append(String(userInfo[userInfo.index(after: colon)...])) }
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = (userInfo.isEmpty ? "" : "***@") + rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if scheme.lowercased().hasPrefix("rtmp") {
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)  // "", app, key...
            if parts.count > 2 {
                secrets.append(parts[2...].joined(separator: "/"))
                path = "/\(parts[1])/***"
            } else if parts.count == 2, !parts[1].isEmpty {
                // One part only: it may be the key itself (rtmp://host/KEY), or an application
                // with a common name ("live"): masked in the URL, not in every line.
                path = "/***"
            }
        }
        return ("\(scheme)://\(authority)\(path)\(query)", secrets)
    }

    /// The container a URL's protocol carries, or nil for one we do not stream to.
    public static func container(for url: String) -> String? {
        guard let scheme = url.split(separator: ":", maxSplits: 1).first?.lowercased() else { return nil }
        switch scheme {
        case "srt", "udp", "tcp", "rist": return "mpegts"
        case "rtmp", "rtmps": return "flv"
        default: return nil
        }
    }

    /// Whether this FFmpeg has the protocol `url` names.
    public static func hasProtocol(for url: String) -> Bool {
        url.withCString { avio_find_protocol_name($0) } != nil
    }

    /// Sets the stream up, without touching the network yet (`connect`).
    public init(url: String, parameters: StreamParameters) throws(MediaError) {
        self.url = url
        shown = Self.masked(url)
        self.parameters = parameters
        guard let container = Self.container(for: url) else {
            throw .cannotWrite(path: shown, reason: "not a stream URL (srt://, rtmp://, udp:// or tcp://)")
        }
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let shown = self.shown
        try check(avformat_alloc_output_context2(&ctx, nil, container, url)) { .cannotWrite(path: shown, reason: $0) }
        context = allocated(ctx, "the stream muxer")
        deadline = .allocate(capacity: 1)
        deadline.initialize(to: dc_deadline(deadline_us: 0, stop: 0))
        videoStream = allocated(avformat_new_stream(context, nil), "a stream")
        audioStream = allocated(avformat_new_stream(context, nil), "a stream")
        do throws(MediaError) {
            try check(avcodec_parameters_copy(videoStream.pointee.codecpar, parameters.video)) { .cannotWrite(path: shown, reason: $0) }
            try check(avcodec_parameters_copy(audioStream.pointee.codecpar, parameters.audio)) { .cannotWrite(path: shown, reason: $0) }
            videoStream.pointee.codecpar.pointee.codec_tag = 0
            audioStream.pointee.codecpar.pointee.codec_tag = 0
            videoStream.pointee.time_base = parameters.videoTimeBase
            videoStream.pointee.avg_frame_rate = parameters.frameRate
            audioStream.pointee.time_base = parameters.audioTimeBase
            if container == "mpegts" { try openParameterSetFilter() }
        } catch {
            release()
            throw error
        }
    }

    /// Connects within `timeout` seconds (or until `interrupt`) and writes the container's header.
    public func connect(timeout: Double) throws(MediaError) {
        do throws(MediaError) {
            dc_deadline_set(deadline, timeout)
            var options: OpaquePointer?
            defer { av_dict_free(&options) }
            // SRT drops what is still in flight when the socket closes: the stream's last
            // quarter second was lost. Up to two seconds to deliver it.
            if url.lowercased().hasPrefix("srt:") && !url.contains("linger=") { av_dict_set(&options, "linger", "2", 0) }
            try check(dc_open_live_output(context, url, deadline, &options)) { .cannotWrite(path: shown, reason: $0) }
            opened = true
            try check(avformat_write_header(context, nil)) { .cannotWrite(path: shown, reason: $0) }
        } catch {
            release()
            // The deadline's interruption reads as FFmpeg's "Immediate exit requested" (AVERROR_EXIT).
            if case let .cannotWrite(path, reason) = error, reason.hasSuffix("Immediate exit requested") {
                throw .cannotWrite(path: path, reason: String(format: "nothing answered within %g s", timeout))
            }
            throw error
        }
    }

    private func openParameterSetFilter() throws(MediaError) {
        guard let filter = av_bsf_get_by_name("dump_extra") else {
            throw .cannotWrite(path: shown, reason: "this FFmpeg lacks the dump_extra bitstream filter")
        }
        var bsf: UnsafeMutablePointer<AVBSFContext>?
        try check(av_bsf_alloc(filter, &bsf)) { .cannotWrite(path: shown, reason: $0) }
        guard let bsf else { outOfMemory("a bitstream filter") }
        parameterSets = OpaquePointer(bsf)
        try check(avcodec_parameters_copy(bsf.pointee.par_in, parameters.video)) { .cannotWrite(path: shown, reason: $0) }
        bsf.pointee.time_base_in = parameters.videoTimeBase
        try check(av_opt_set(bsf.pointee.priv_data, "freq", "keyframe", 0)) { .cannotWrite(path: shown, reason: $0) }
        try check(av_bsf_init(bsf)) { .cannotWrite(path: shown, reason: $0) }
    }

    /// Writes `packet` (its own timestamps, the encoder's time base) within `timeout` seconds.
    public func write(_ packet: StreamPacket, timeout: Double) throws(MediaError) {
        dc_deadline_set(deadline, timeout)
        // Each kept packet is written once: the filter and the muxer take its reference as it
        // is (the kept packet is left blank), no second reference is made.
        let p = packet.pointer
        let stream = packet.isVideo ? videoStream : audioStream
        if packet.isVideo, let parameterSets {
            let bsf = UnsafeMutablePointer<AVBSFContext>(parameterSets)
            try check(av_bsf_send_packet(bsf, p)) { .cannotWrite(path: shown, reason: $0) }
            try check(av_bsf_receive_packet(bsf, p)) { .cannotWrite(path: shown, reason: $0) }
        }
        av_packet_rescale_ts(p, packet.isVideo ? parameters.videoTimeBase : parameters.audioTimeBase, stream.pointee.time_base)
        p.pointee.stream_index = stream.pointee.index
        try check(av_interleaved_write_frame(context, p)) { .cannotWrite(path: shown, reason: $0) }
    }

    /// Ends the stream (the container's trailer, within `timeout` seconds) and disconnects.
    public func finish(timeout: Double) {
        if opened {
            dc_deadline_set(deadline, timeout)
            av_write_trailer(context)
        }
        release()
    }

    /// Ends any wait on the network now (from any thread): the call waiting fails.
    public func interrupt() { dc_deadline_stop(deadline) }

    private func release() {
        if opened {
            avio_closep(&context.pointee.pb)
            opened = false
        }
    }

    deinit {
        release()
        if let parameterSets {
            var bsf: UnsafeMutablePointer<AVBSFContext>? = UnsafeMutablePointer(parameterSets)
            av_bsf_free(&bsf)
        }
        avformat_free_context(context)
        deadline.deallocate()
    }
}
