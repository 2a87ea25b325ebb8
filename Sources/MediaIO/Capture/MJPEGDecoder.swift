import CFFmpeg
import Compositor

extension MJPEGDecoder {
    /// What webcams send, full-range 4:2:2 or 4:2:0 at the size wanted, converted by our
    /// own kernel (`JPEGRange`), re-encoded to `output` in the same pass when that is given,
    /// on two threads with `fork`; nil for anything else, which goes to libswscale.
    static func convertFullRange(_ f: UnsafeMutablePointer<AVFrame>, into buffer: I420Buffer,
                                 output: YCbCrMatrix?, fork: (fork: ForkJoin, job: JPEGRange.Job)?) -> YCbCrMatrix? {
        let format = AVPixelFormat(rawValue: f.pointee.format)
        let jpegRange = f.pointee.color_range == AVCOL_RANGE_JPEG
        let fullHeight: Bool
        switch format {
        case AV_PIX_FMT_YUVJ422P: fullHeight = true
        case AV_PIX_FMT_YUVJ420P: fullHeight = false
        case AV_PIX_FMT_YUV422P where jpegRange: fullHeight = true
        case AV_PIX_FMT_YUV420P where jpegRange: fullHeight = false
        default: return nil
        }
        guard buffer.size == Size(width: Int(f.pointee.width), height: Int(f.pointee.height)),
              f.pointee.linesize.0 > 0, f.pointee.linesize.1 > 0, f.pointee.linesize.1 == f.pointee.linesize.2,
              let y = f.pointee.data.0, let u = f.pointee.data.1, let v = f.pointee.data.2 else { return nil }
        let source = JPEGRange.Source(y: y, yStride: Int(f.pointee.linesize.0), u: u, v: v,
                                      chromaStride: Int(f.pointee.linesize.1), chromaFullHeight: fullHeight)
        let matrix = VideoReader.matrix(of: f.pointee.colorspace, height: Int(f.pointee.height))
        return convert(source, matrix: matrix, into: buffer, output: output, fork: fork)
    }

    /// Full-range planes to limited-range I420 in `buffer`, re-encoded from `matrix` to
    /// `output` when that is given, on two threads with `fork` for a picture 540 rows or
    /// taller. Returns the picture's matrix.
    static func convert(_ source: JPEGRange.Source, matrix: YCbCrMatrix, into buffer: I420Buffer, output: YCbCrMatrix?,
                        fork: (fork: ForkJoin, job: JPEGRange.Job)?) -> YCbCrMatrix {
        guard let output, let conversion = ColorConversion.between(matrix, output) else {
            JPEGRange.convertSIMD(source, into: buffer.view)
            return matrix
        }
        let out = buffer.view
        // A picture the inset's size is done before a second thread would have woken.
        guard let fork, out.y.height >= 540 else {
            JPEGRange.convertSIMD(source, into: out, converting: conversion)
            return output
        }
        let job = fork.job
        (job.source, job.output, job.conversion) = (source, out, conversion)
        fork.fork.run(job)
        (job.source, job.output) = (nil, nil)
        return output
    }
}

/// Decodes camera MJPEG buffers (one JPEG each) into limited-range I420, at full size or,
/// with `shift`, at 1/2^shift (the IDCT makes the smaller picture directly, for a fraction
/// of the work). What webcams send goes to libjpeg-turbo (`JPEGPlanarDecoder`), anything
/// else to libavcodec (`lowres`).
public final class MJPEGDecoder {
    private let codec: CodecContext
    private let packet = Packet()
    /// Buffers for the JPEGs sent, a quarter larger than the largest seen yet.
    private var packetBuffers: BufferPool?
    /// libjpeg-turbo, for the JPEGs webcams send (libavcodec takes the rest).
    private let planar: JPEGPlanarDecoder
    /// Decoding and converting at once, when a `ForkJoin` is given.
    private let banded = BandedJPEGConversion()
    /// The range conversion's halves, when a `ForkJoin` is given.
    private let job = JPEGRange.Job()
    private let frame = Frame()
    private let normaliser = PictureNormalizer()
    public let name: String
    public let shift: Int

    public init(name: String, shift: Int = 0) throws(MediaError) {
        self.name = name
        self.shift = shift
        guard let c = avcodec_find_decoder(AV_CODEC_ID_MJPEG), let ctx = CodecContext(codec: c) else {
            throw .unsupportedCodec(path: name, codec: "mjpeg")
        }
        codec = ctx
        planar = try JPEGPlanarDecoder(name: name)
        ctx.pointer.pointee.thread_count = 1
        ctx.pointer.pointee.lowres = Int32(min(max(shift, 0), Int(c.pointee.max_lowres)))
        // Errors in the entropy-coded data are concealed by default: a camera frame with
        // them is skipped instead, not shown patched with grey.
        ctx.pointer.pointee.err_recognition = AV_EF_EXPLODE
        ctx.pointer.pointee.max_pixels = InputContext.maxPixels
        try check(avcodec_open2(ctx.pointer, c, nil)) { .undecodable(path: name, reason: $0) }
    }

    /// Decodes one JPEG into `buffer`, whatever size the JPEG is: one whose reduced size
    /// differs from `buffer`'s (a camera that changed its mind) is scaled to it. With
    /// `output`, a webcam's JPEG is re-encoded to that matrix as its range is rescaled (on
    /// two threads with `fork`). Returns the picture's matrix; a damaged JPEG throws.
    public func decode(_ jpeg: UnsafeRawBufferPointer, into buffer: I420Buffer, output: YCbCrMatrix? = nil,
                       fork: ForkJoin? = nil) throws(MediaError) -> YCbCrMatrix {
        try checkWhole(jpeg)
        if let matrix = try decodeWebcamJPEG(jpeg, into: buffer, output: output, fork: fork) { return matrix }
        return try withDecodedFrame(jpeg) { frame throws(MediaError) in
            if let matrix = Self.convertFullRange(frame, into: buffer, output: output, fork: fork.map { ($0, job) }) {
                return matrix
            }
            return try normalised(frame, into: buffer)
        }
    }

    /// `jpeg` decoded by libavcodec (what libjpeg-turbo's path does not take), given to `body`
    /// and let go after it. A JPEG cut short or damaged throws.
    package func withLibavcodecFrame<T>(_ jpeg: UnsafeRawBufferPointer,
                                        _ body: (UnsafeMutablePointer<AVFrame>) throws(MediaError) -> T) throws(MediaError) -> T {
        try checkWhole(jpeg)
        return try withDecodedFrame(jpeg, body)
    }

    /// As `withLibavcodecFrame`, for a JPEG found whole.
    private func withDecodedFrame<T>(_ jpeg: UnsafeRawBufferPointer,
                                     _ body: (UnsafeMutablePointer<AVFrame>) throws(MediaError) -> T) throws(MediaError) -> T {
        let base = jpeg.baseAddress!
        // The JPEG goes in a pooled, padded buffer that the decoder references: handed a
        // plain pointer, libavcodec allocated and filled a copy of its own for every frame.
        let padded = jpeg.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)
        if packetBuffers.map({ $0.size < padded }) ?? true { packetBuffers = BufferPool(size: padded * 5 / 4) }
        let pooled = packetBuffers!.take()
        let bytes = pooled.pointee.data!
        bytes.update(from: base.assumingMemoryBound(to: UInt8.self), count: jpeg.count)
        (bytes + jpeg.count).initialize(repeating: 0, count: Int(AV_INPUT_BUFFER_PADDING_SIZE))
        packet.pointer.pointee.buf = pooled
        packet.pointer.pointee.data = bytes
        packet.pointer.pointee.size = Int32(jpeg.count)
        defer { packet.unref() }
        try check(avcodec_send_packet(codec.pointer, packet.pointer)) { .undecodable(path: name, reason: $0) }
        try check(avcodec_receive_frame(codec.pointer, frame.pointer)) { .undecodable(path: name, reason: $0) }
        defer { av_frame_unref(frame.pointer) }
        if frame.pointer.pointee.decode_error_flags != 0 {
            throw .undecodable(path: name, reason: "damaged JPEG data")
        }
        return try body(frame.pointer)
    }

    /// A decoded frame made limited-range I420 of `buffer`'s size by libswscale.
    package func normalised(_ frame: UnsafeMutablePointer<AVFrame>, into buffer: I420Buffer) throws(MediaError) -> YCbCrMatrix {
        let (view, converted, matrix) = try normaliser.normalise(frame, path: name, into: buffer, size: buffer.size)
        // Already limited-range I420 of the right size (rare for JPEG): copy it out.
        if converted == nil { buffer.view.copy(from: view) }
        return matrix
    }

    /// A frame that lost its tail in transfer has no end-of-image marker; libavcodec would
    /// conceal the loss with grey, so it is refused (some cameras pad after the marker).
    private func checkWhole(_ jpeg: UnsafeRawBufferPointer) throws(MediaError) {
        guard jpeg.baseAddress != nil, jpeg.count > 4 else { throw .undecodable(path: name, reason: "empty frame") }
        let tail = jpeg.suffix(256)
        guard zip(tail, tail.dropFirst()).contains(where: { $0 == 0xFF && $1 == 0xD9 }) else {
            throw .undecodable(path: name, reason: "truncated JPEG (no end-of-image marker)")
        }
    }

    /// A webcam's JPEG (4:2:2 or 4:2:0 Y'CbCr) through libjpeg-turbo and `JPEGRange`, the
    /// rows converted as they are decoded when there is a matrix to change and a second
    /// thread; nil for a JPEG it does not take, or of another size than `buffer`.
    private func decodeWebcamJPEG(_ jpeg: UnsafeRawBufferPointer, into buffer: I420Buffer, output: YCbCrMatrix?,
                                  fork: ForkJoin?) throws(MediaError) -> YCbCrMatrix? {
        guard let picture = try planar.start(jpeg, shift: shift) else { return nil }
        guard picture.size == buffer.size else {
            planar.abort()
            return nil
        }
        // JFIF's Y'CbCr is BT.601's, whatever the picture's size.
        guard let fork, buffer.size.height >= 540, let output, let conversion = ColorConversion.between(.bt601, output) else {
            // What is left is too small to share, or has no matrix to change: one thread.
            try planar.readAll(picture)
            return Self.convert(picture.source, matrix: .bt601, into: buffer, output: output, fork: nil)
        }
        banded.prepare(decoder: planar, picture: picture, output: buffer.view, conversion: conversion)
        fork.run(banded)
        banded.clear()
        if let error = banded.error { throw error }
        try planar.finish()
        return output
    }
}
