import CFFmpeg
import CFFmpegPolicy
import Compositor
import Foundation

/// FFmpeg's small allocations (a packet, a frame, a codec context) fail only when the
/// machine is out of memory, where nothing can be done but say so: one line and exit 1
/// instead of a trap on a nil pointer. A recording's fragmented file stays playable.
func allocated<T>(_ pointer: UnsafeMutablePointer<T>?, _ what: String) -> UnsafeMutablePointer<T> {
    if let pointer { return pointer }
    outOfMemory(what)
}

func outOfMemory(_ what: String) -> Never {
    let line = Array("dualcam: out of memory (allocating \(what))\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

/// Owns an AVPacket.
final class Packet {
    let pointer: UnsafeMutablePointer<AVPacket>
    init() { pointer = allocated(av_packet_alloc(), "a packet") }
    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }
    func unref() { av_packet_unref(pointer) }
}

/// Owns an AVBufferPool of equal-sized buffers. Buffers handed out return to it when their
/// last reference goes, so a steady stream of them allocates nothing.
final class BufferPool {
    let size: Int
    private let pool: OpaquePointer
    init(size: Int) {
        self.size = size
        guard let p = av_buffer_pool_init(size, nil) else { outOfMemory("a buffer pool") }
        pool = p
    }
    deinit {
        var p: OpaquePointer? = pool
        av_buffer_pool_uninit(&p)
    }
    /// A buffer of `size` bytes, referenced once.
    func take() -> UnsafeMutablePointer<AVBufferRef> { allocated(av_buffer_pool_get(pool), "a pooled buffer") }
}

/// Owns an AVFrame.
// Sendable: one AVFrame, used by one thread at a time and handed over through a lock (a queue, an exchange).
public final class Frame: @unchecked Sendable {
    public let pointer: UnsafeMutablePointer<AVFrame>
    public init() { pointer = allocated(av_frame_alloc(), "a frame") }
    deinit {
        var p: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&p)
    }
}

/// Owns an AVCodecContext.
final class CodecContext {
    let pointer: UnsafeMutablePointer<AVCodecContext>
    init?(codec: UnsafePointer<AVCodec>) {
        guard let p = avcodec_alloc_context3(codec) else { return nil }
        pointer = p
    }
    deinit {
        var p: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&p)
    }
}

/// Owns a demuxer (AVFormatContext opened for input).
final class InputContext {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    let path: String

    static let maxPixels = PictureLimit.maxPixels

    /// /dev/stdin, /proc/self/fd/N, a shell's <(...): there, but with no name to resolve
    /// ("pipe:[N]"), so they were said not to exist.
    static func isAnonymousPipe(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO && realpath(path, nil).map { free($0) } == nil
    }

    /// A local file, and only that: see `dc_open_local_input` (a name with a colon is a
    /// file; a playlist reads nothing outside its own folder).
    init(path: String) throws(MediaError) {
        self.path = path
        // Where it really is is found in C, in bytes (realpath on both sides of each nested
        // open): the folder of the file itself, a link followed (the user named it; a link to
        // a video elsewhere was refused as "naming files outside its folder").
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let rc = dc_open_local_input(&ctx, Self.fileURL(path), DurableFile.folder(of: path))
        guard rc >= 0, let ctx else {
            throw .cannotOpen(path: path, reason: rc == dc_averror_invaliddata()
                              ? "not a media file FFmpeg can read"
                              : rc == dc_averror(EPERM) ? "it names files outside its folder, which are not read"
                              : rc == dc_averror_playlist_loop() ? "its playlists are read again and again (one names itself, or a live "
                                + "playlist never ends): compose and record read finished files"
                              : rc == dc_averror(ENOENT) && Self.isAnonymousPipe(path)
                                ? "it is a pipe with no name (/dev/stdin, <(...)): give a file, or a named pipe (mkfifo)"
                              : averrorText(rc))
        }
        pointer = ctx
        // Probing decodes a picture where the container does not say its size (a PNG): the
        // decoders' limit applies there too, or a 16000x16000 one took 800 MB before the
        // refusal that follows from the size probing then finds.
        let streams = Int(ctx.pointee.nb_streams)
        var options = [OpaquePointer?](repeating: nil, count: max(streams, 1))
        for i in 0..<streams { av_dict_set(&options[i], "max_pixels", String(Self.maxPixels), 0) }
        let info = avformat_find_stream_info(ctx, &options)
        for i in 0..<streams { av_dict_free(&options[i]) }
        if info < 0 {
            var p: UnsafeMutablePointer<AVFormatContext>? = ctx
            dc_close_local_input(&p)
            throw .cannotOpen(path: path, reason: averrorText(info))
        }
    }

    /// `path` as FFmpeg's file protocol names it: never taken for another protocol's URL.
    static func fileURL(_ path: String) -> String { "file:" + path }

    deinit {
        var p: UnsafeMutablePointer<AVFormatContext>? = pointer
        dc_close_local_input(&p)
    }

    func stream(_ index: Int32) -> UnsafeMutablePointer<AVStream> { pointer.pointee.streams[Int(index)]! }

    func bestStream(_ type: AVMediaType) -> Int32? {
        let i = av_find_best_stream(pointer, type, -1, -1, nil, 0)
        return i >= 0 ? i : nil
    }

    /// Opens a decoder for stream `index`.
    func openDecoder(stream index: Int32, threads: Int32 = 0) throws(MediaError) -> CodecContext {
        let st = stream(index)
        let par = st.pointee.codecpar!
        guard let codec = avcodec_find_decoder(par.pointee.codec_id), let ctx = CodecContext(codec: codec) else {
            throw .unsupportedCodec(path: path, codec: String(cString: avcodec_get_name(par.pointee.codec_id)))
        }
        if Int64(par.pointee.width) * Int64(par.pointee.height) > Self.maxPixels {
            throw .undecodable(path: path, reason: "its \(par.pointee.width)x\(par.pointee.height) pictures are larger than 8192x8192")
        }
        try check(avcodec_parameters_to_context(ctx.pointer, par)) { .undecodable(path: path, reason: $0) }
        ctx.pointer.pointee.max_pixels = Self.maxPixels
        ctx.pointer.pointee.pkt_timebase = st.pointee.time_base
        ctx.pointer.pointee.thread_count = threads
        try check(avcodec_open2(ctx.pointer, codec, nil)) { .undecodable(path: path, reason: $0) }
        return ctx
    }
}

/// Owns a QuickTime muxer (an output AVFormatContext) and the I/O context it writes through
/// over a descriptor (which stays the caller's): both released together, whatever failed.
final class OutputContext {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    /// Whether the I/O context is still open: `closeFile` ends it once.
    private(set) var isFileOpen = false

    init(path: String, descriptor: Int32, reportedPath: String) throws(MediaError) {
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        // The container follows OUT's name (the file being written has a hidden one).
        let muxer = OutputPath.container(of: reportedPath)?.muxer ?? OutputPath.Container.quickTime.muxer
        try check(avformat_alloc_output_context2(&ctx, nil, muxer, path)) { .cannotWrite(path: reportedPath, reason: $0) }
        pointer = allocated(ctx, "the muxer")
        do throws(MediaError) {
            try check(dc_output_use_descriptor(pointer, descriptor)) { .cannotWrite(path: reportedPath, reason: $0) }
        } catch {
            avformat_free_context(pointer)
            throw error
        }
        isFileOpen = true
    }

    /// Flushes and closes the I/O context (not the descriptor); FFmpeg's code for a write
    /// that failed on the way, 0 when there was none or it was closed already.
    @discardableResult
    func closeFile() -> Int32 {
        guard isFileOpen else { return 0 }
        isFileOpen = false
        return dc_avio_close_descriptor(&pointer.pointee.pb)
    }

    deinit {
        closeFile()
        avformat_free_context(pointer)
    }
}

/// Owns a SwsContext (libswscale's converter for one input and output size and format).
package final class ScalerContext {
    package let pointer: OpaquePointer

    /// nil when libswscale cannot convert between the two.
    package init?(from source: Size, _ sourceFormat: AVPixelFormat, to destination: Size, _ destinationFormat: AVPixelFormat,
                  flags: Int32) {
        guard let c = sws_getContext(Int32(source.width), Int32(source.height), sourceFormat,
                                     Int32(destination.width), Int32(destination.height), destinationFormat,
                                     flags, nil, nil, nil) else { return nil }
        pointer = c
    }

    deinit { sws_freeContext(pointer) }
}

/// Owns an initialised SwrContext (libswresample's converter between two sample formats,
/// rates and channel layouts).
final class ResamplerContext {
    let pointer: OpaquePointer

    /// nil when libswresample cannot convert between the two.
    init?(to outLayout: AVChannelLayout, _ outFormat: AVSampleFormat, _ outRate: Int32,
          from inLayout: AVChannelLayout, _ inFormat: AVSampleFormat, _ inRate: Int32) {
        var swr: OpaquePointer?
        var outLayout = outLayout, inLayout = inLayout
        guard swr_alloc_set_opts2(&swr, &outLayout, outFormat, outRate, &inLayout, inFormat, inRate, 0, nil) >= 0, swr != nil else {
            swr_free(&swr)
            return nil
        }
        if swr_init(swr) < 0 {
            // No mix libswresample knows (a 64-channel track has no layout it can rematrix):
            // the even channels go left and the odd ones right, each side their mean, rather
            // than the track being left out for silence.
            let inputs = Int(inLayout.nb_channels), outputs = Int(outLayout.nb_channels)
            guard inputs > 0, outputs == 2 else {
                swr_free(&swr)
                return nil
            }
            var matrix = [Double](repeating: 0, count: outputs * inputs)
            let left = (inputs + 1) / 2, right = inputs / 2
            for channel in 0..<inputs {
                if inputs == 1 || channel % 2 == 0 { matrix[channel] = 1 / Double(inputs == 1 ? 1 : left) }
                if inputs == 1 || channel % 2 == 1 { matrix[inputs + channel] = 1 / Double(inputs == 1 ? 1 : right) }
            }
            guard swr_set_matrix(swr, matrix, Int32(inputs)) >= 0, swr_init(swr) >= 0 else {
                swr_free(&swr)
                return nil
            }
        }
        pointer = swr!
    }

    deinit {
        var p: OpaquePointer? = pointer
        swr_free(&p)
    }
}

/// The largest picture taken from a file or a camera: 8192x8192 (a crafted file's header or a
/// driver's answer could otherwise make it allocate gigabytes).
public enum PictureLimit {
    public static let maxPixels: Int64 = 8192 * 8192
}

/// Stops what every local input is waiting on (a read, a playlist's reload) at once, for
/// good: a composition asked to stop must not wait for its inputs. Async-signal-safe.
public enum InputInterruption {
    public static func interruptAll() { dc_interrupt_inputs() }
}
