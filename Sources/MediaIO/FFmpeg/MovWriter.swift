import CFFmpeg
import CFFmpegPolicy
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writes encoded packets, video (HEVC or H.264) and AAC, into a QuickTime file: owns the
/// muxer and its duplicate of the file's descriptor. The encoders feed it (`OutputEncoders`).
public final class MovWriter {
    public let path: String
    private let muxer: OutputContext
    private var context: UnsafeMutablePointer<AVFormatContext> { muxer.pointer }
    private let videoStream: UnsafeMutablePointer<AVStream>
    private let audioStream: UnsafeMutablePointer<AVStream>
    private let videoTimeBase: AVRational
    private let audioTimeBase: AVRational
    /// The file and its folder, for fsync: what the muxer has written survives a power cut.
    private var durable: DurableFile?
    /// Where the file stood when last put on disk.
    private var syncedPosition: Int64 = 0
    /// Our own duplicate of the caller's descriptor, which the muxer writes through; -1 once
    /// closed.
    private var descriptor: Int32
    private let handed = Atomic<Int>(0)
    /// Bytes of the packets handed to the muxer so far, the fragment it is building included:
    /// what the file will hold. Read from any thread.
    public var bytesHandedOver: Int { handed.load(ordering: .relaxed) }

    /// How the file is laid out on disk.
    public enum Layout: Sendable {
        /// One index (moov) before the media: what players expect; the file is only
        /// readable once finished.
        case faststart
        /// An empty index, then self-contained fragments of at most `seconds` (each a
        /// moof+mdat pair): everything up to the last complete fragment plays even when the
        /// process is killed or the machine loses power.
        case fragmented(seconds: Double)
    }

    public struct Metadata: Sendable {
        public var creationTime = Date()
        /// ISO 6709, e.g. "+48.8584+002.2945/".
        public var location: String?
        /// Degrees players turn the picture clockwise when showing it (0, 90, 180 or 270):
        /// the track's display matrix, the picture itself is not touched.
        public var rotation = 0
        /// The file's comment tag (an intermediate says there what it continues).
        public var comment: String?
        public init() {}
    }

    /// Writes through `descriptor` (an empty file the caller created, open for reading and
    /// writing; it stays the caller's), never opening `path` by name. `reportedPath` is the
    /// name errors give: the destination a temporary file stands in for. The tracks take
    /// their parameters from `encoders`.
    public init(path: String, descriptor: Int32, reportedPath: String? = nil, encoders: OutputEncoders,
                metadata: Metadata, layout: Layout) throws(MediaError) {
        let shown = reportedPath ?? path
        self.path = shown
        let video = encoders.video, audio = encoders.audio
        let duplicate: Int32
        do { duplicate = try systemCall { fcntl(descriptor, F_DUPFD_CLOEXEC, 0) } } catch {
            throw .system(path: shown, writing: true, errno: error)
        }
        do { muxer = try OutputContext(path: path, descriptor: duplicate, reportedPath: shown) } catch {
            Glibc.close(duplicate)
            throw error
        }
        // From here on, `close` releases both whatever fails.
        self.descriptor = duplicate
        videoStream = allocated(avformat_new_stream(muxer.pointer, nil), "a stream")
        audioStream = allocated(avformat_new_stream(muxer.pointer, nil), "a stream")
        videoTimeBase = video.timeBase
        audioTimeBase = audio.timeBase
        do throws(MediaError) {
            try check(avcodec_parameters_from_context(videoStream.pointee.codecpar, video.context.pointer)) {
                .cannotWrite(path: shown, reason: $0)
            }
            // Apple players open HEVC in QuickTime only when tagged hvc1 (not hev1).
            if videoStream.pointee.codecpar.pointee.codec_id == AV_CODEC_ID_HEVC {
                videoStream.pointee.codecpar.pointee.codec_tag = Self.fourcc("hvc1")
            }
            if metadata.rotation % 360 != 0 {
                // Measured: the matrix av_display_rotation_set makes for +90 reads back as -90
                // (ffprobe), which players (ffmpeg's autorotate, QuickTime) turn clockwise.
                try check(dc_stream_set_rotation(videoStream, Double(metadata.rotation))) { .cannotWrite(path: shown, reason: $0) }
            }
            videoStream.pointee.time_base = video.timeBase
            videoStream.pointee.avg_frame_rate = video.context.pointer.pointee.framerate
            try check(avcodec_parameters_from_context(audioStream.pointee.codecpar, audio.context.pointer)) {
                .cannotWrite(path: shown, reason: $0)
            }
            audioStream.pointee.time_base = audio.timeBase

            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            av_dict_set(&context.pointee.metadata, "creation_time", formatter.string(from: metadata.creationTime), 0)
            if let comment = metadata.comment { av_dict_set(&context.pointee.metadata, "comment", comment, 0) }
            if let location = metadata.location {
                av_dict_set(&context.pointee.metadata, "location", location, 0)
            }
            var options: OpaquePointer?
            switch layout {
            case .faststart:
                av_dict_set(&options, "movflags", "+faststart", 0)
            case let .fragmented(seconds):
                // The AAC encoder's priming (1024 samples before the first real one) needs an
                // edit list; without one the muxer shifts every track by it, so each picture
                // lands 21 ms after its slot. An edit list is only known once packets have
                // come: the index waits for the first fragment (delay_moov).
                av_dict_set(&options, "movflags", "+frag_keyframe+empty_moov+default_base_moof+delay_moov", 0)
                av_dict_set(&options, "use_editlist", "1", 0)
                av_dict_set(&options, "frag_duration", String(Int64(seconds * 1e6)), 0)
                durable = try DurableFile(descriptor: self.descriptor, path: path, reportedPath: shown)
                if let pb = context.pointee.pb { dc_avio_stage_until_commit(pb) }
            }
            defer { av_dict_free(&options) }
            try check(avformat_write_header(context, &options)) { .cannotWrite(path: shown, reason: $0) }
            try syncToDisk()
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private func close() {
        muxer.closeFile()
        if descriptor >= 0 { Glibc.close(descriptor); descriptor = -1 }
    }

    package func writeVideo(_ packet: UnsafeMutablePointer<AVPacket>) throws(MediaError) {
        // libx265 leaves durations at 0, which would make the track one frame short.
        if packet.pointee.duration == 0 { packet.pointee.duration = 1 }
        try write(packet, stream: videoStream, from: videoTimeBase)
    }

    func writeAudio(_ packet: UnsafeMutablePointer<AVPacket>) throws(MediaError) {
        try write(packet, stream: audioStream, from: audioTimeBase)
    }

    private func write(_ packet: UnsafeMutablePointer<AVPacket>, stream: UnsafeMutablePointer<AVStream>,
                       from timeBase: AVRational) throws(MediaError) {
        av_packet_rescale_ts(packet, timeBase, stream.pointee.time_base)
        packet.pointee.stream_index = stream.pointee.index
        handed.add(Int(packet.pointee.size), ordering: .relaxed)
        try check(av_interleaved_write_frame(context, packet)) { .cannotWrite(path: path, reason: $0) }
        // A fragmented file grows only when the muxer completes a fragment: that is the
        // moment to put it on disk, rather than leave it in the I/O buffer for a kill to lose.
        if let durable, let pb = context.pointee.pb, avio_tell(pb) != syncedPosition {
            try flush(pb)
            try durable.syncSoon()
        }
    }

    /// Writes out what the muxer holds (its interleaving queue and the fragment being built)
    /// and puts it on disk: a fragmented file the take stops writing to is whole at once.
    public func flushFragment() throws(MediaError) {
        try check(av_interleaved_write_frame(context, nil)) { .cannotWrite(path: path, reason: $0) }
        // With delay_moov the muxer's first flush writes the file's header alone and keeps the
        // samples for the next: flushed again, they are on disk too (a take whose encoder fell
        // behind at once kept only its header, and a kill then lost the 0.11-0.15 s of sound
        // its worker had encoded).
        let headerOnly = context.pointee.pb.map { avio_tell($0) == 0 } ?? false
        try check(av_write_frame(context, nil)) { .cannotWrite(path: path, reason: $0) }
        if headerOnly { try check(av_write_frame(context, nil)) { .cannotWrite(path: path, reason: $0) } }
        try syncToDisk()
    }

    /// Writes the index and closes the file (after the encoders' `drain`).
    public func finish() throws(MediaError) {
        try check(av_write_trailer(context)) { .cannotWrite(path: path, reason: $0) }
        try syncToDisk()
        try check(muxer.closeFile()) { .cannotWrite(path: path, reason: $0) }
    }

    /// Pushes what the muxer has handed to its I/O buffer to the kernel and, for a
    /// fragmented file, to the disk (file and folder). The fragment being built stays in
    /// the muxer's memory until it is complete; everything before it is then safe.
    public func syncToDisk() throws(MediaError) {
        guard muxer.isFileOpen, let pb = context.pointee.pb else { return }
        try flush(pb)
        try durable?.sync()
    }

    /// Hands the I/O buffer to the kernel (a fragmented file's whole fragments, each so that a
    /// kill leaves it whole or hidden); a write that failed there (disk full) is thrown.
    private func flush(_ pb: UnsafeMutablePointer<AVIOContext>) throws(MediaError) {
        dc_avio_commit(pb)
        if pb.pointee.error < 0 { try check(pb.pointee.error) { .cannotWrite(path: path, reason: $0) } }
        syncedPosition = avio_tell(pb)
    }

    /// Closes the file as it is, without the encoders' last frames or the trailer: after a
    /// write error (disk full) or an encoder failure, when a fragmented file's complete
    /// fragments are what there is to keep.
    public func abandon() {
        guard muxer.isFileOpen else { return }
        if let pb = context.pointee.pb { dc_avio_commit(pb) }
        try? durable?.sync()
        muxer.closeFile()
    }

    static func fourcc(_ s: String) -> UInt32 {
        let b = Array(s.utf8)
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }
}
