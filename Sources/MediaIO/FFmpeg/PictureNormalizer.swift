import CFFmpeg
import Compositor

/// Turns a decoded frame into limited-range I420: borrowed when it already is, converted by
/// libswscale (format, bit depth, range, and size when one is asked for) when not. The Y'CbCr matrix is not changed here;
/// the compositor re-encodes it. Owns its SwsContext, rebuilt only when the input changes.
final class PictureNormalizer {
    private var scaler: ScalerContext?
    private var key: (Int32, Int32, Int32, Int32, Int, Int) = (0, 0, 0, 0, 0, 0)
    /// HDR and 10-bit pictures in another matrix: their 10-bit 4:2:0 planes when the decoder
    /// gives another layout or size, and the tone mapping.
    private var tenBitScaler: ScalerContext?
    private var tenBitKey: (Int32, Int32, Int32, Int32, Int, Int) = (0, 0, 0, 0, 0, 0)
    private var tenBitBuffer: UnsafeMutablePointer<UInt16>?
    private var toneMap: ToneMap?
    /// Tone mapping is the heaviest step of a source's frame: it takes both cores. Made with
    /// the first HDR frame, so SDR sources start no thread.
    private var toneFork: (fork: ForkJoin, job: ToneMap.Job)?

    deinit {
        tenBitBuffer?.deallocate()
    }

    /// The YUVJ formats (JPEG's full range, named in the format) as the plain ones: the
    /// range goes to libswscale separately, which otherwise warns on every new context.
    static func withoutJ(_ f: AVPixelFormat) -> AVPixelFormat {
        switch f {
        case AV_PIX_FMT_YUVJ420P: return AV_PIX_FMT_YUV420P
        case AV_PIX_FMT_YUVJ422P: return AV_PIX_FMT_YUV422P
        case AV_PIX_FMT_YUVJ444P: return AV_PIX_FMT_YUV444P
        case AV_PIX_FMT_YUVJ440P: return AV_PIX_FMT_YUV440P
        default: return f
        }
    }

    /// `into`: where a conversion goes (allocated per frame when nil). `size`: the size
    /// wanted, when it may differ from the frame's.
    func normalise(_ f: UnsafeMutablePointer<AVFrame>, path: String, into reuse: I420Buffer? = nil, size wanted: Size? = nil)
        throws(MediaError) -> (I420View, I420Buffer?, YCbCrMatrix) {
        let w = f.pointee.width, h = f.pointee.height
        let size = wanted ?? Size(width: Int(w), height: Int(h))
        let format = AVPixelFormat(rawValue: f.pointee.format)
        let fullRange = f.pointee.color_range == AVCOL_RANGE_JPEG
            || format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P || format == AV_PIX_FMT_YUVJ444P
        let desc = av_pix_fmt_desc_get(format)
        let isRGB = desc.map { ($0.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB)) != 0 } ?? false
        let matrix = isRGB ? .bt709 : VideoReader.matrix(of: f.pointee.colorspace, height: Int(h))
        if !isRGB, let transfer = ToneMap.transfer(ffmpegTRC: Int32(f.pointee.color_trc.rawValue)) {
            return try toneMapped(f, transfer: transfer, path: path, fullRange: fullRange, into: reuse, size: size)
        }
        if !isRGB, (desc?.pointee.comp.0.depth ?? 8) > 8,
           let conversion = ColorConversion.between(matrix, PiPCompositor.outputMatrix) {
            return try narrowed(f, conversion: conversion, path: path, fullRange: fullRange, into: reuse, size: size)
        }

        if format == AV_PIX_FMT_YUV420P && !fullRange && f.pointee.linesize.0 > 0
            && size == Size(width: Int(w), height: Int(h)) {
            return (VideoReader.view(of: f), nil, matrix)
        }
        let k = (w, h, f.pointee.format, fullRange ? 1 as Int32 : 0, size.width, size.height)
        if scaler == nil || k != key {
            scaler = ScalerContext(from: Size(width: Int(w), height: Int(h)), Self.withoutJ(format), to: size, AV_PIX_FMT_YUV420P,
                                   flags: Int32(SWS_BILINEAR | SWS_ACCURATE_RND))
            guard let scaler else {
                throw .undecodable(path: path, reason: "unsupported pixel format "
                                   + (desc.map { String(cString: $0.pointee.name) } ?? "\(format.rawValue)"))
            }
            key = k
            // RGB sources are encoded straight to BT.709; YUV sources keep their matrix.
            let table = sws_getCoefficients(isRGB ? SWS_CS_ITU709 : SWS_CS_DEFAULT)
            sws_setColorspaceDetails(scaler.pointer, table, fullRange || isRGB ? 1 : 0, table, 0, 0, 1 << 16, 1 << 16)
        }
        let buffer = reuse.flatMap { $0.size == size ? $0 : nil } ?? I420Buffer(size: size)
        let v = buffer.view
        let rc = Self.scale(scaler?.pointer, f, into: (UnsafeMutableRawPointer(v.y.base), UnsafeMutableRawPointer(v.u.base), UnsafeMutableRawPointer(v.v.base)), strides: (v.y.stride, v.u.stride, v.v.stride))
        guard rc > 0 else { throw .undecodable(path: path, reason: "pixel format conversion failed") }
        return (v, buffer, matrix)
    }
}

extension PictureNormalizer {
    /// libswscale from the frame's planes into three planes of ours (strides in bytes).
    static func scale(_ context: OpaquePointer?, _ f: UnsafeMutablePointer<AVFrame>,
                      into planes: (UnsafeMutableRawPointer, UnsafeMutableRawPointer, UnsafeMutableRawPointer),
                      strides: (Int, Int, Int)) -> Int32 {
        withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<UInt8>?.self, capacity: 4) { dst in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: 4) { dstStride in
                dst[0] = planes.0.assumingMemoryBound(to: UInt8.self)
                dst[1] = planes.1.assumingMemoryBound(to: UInt8.self)
                dst[2] = planes.2.assumingMemoryBound(to: UInt8.self)
                dst[3] = nil
                dstStride[0] = Int32(strides.0); dstStride[1] = Int32(strides.1); dstStride[2] = Int32(strides.2)
                dstStride[3] = 0
                return withUnsafePointer(to: f.pointee.data) { data in
                    withUnsafePointer(to: f.pointee.linesize) { lines in
                        data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { src in
                            lines.withMemoryRebound(to: Int32.self, capacity: 8) { srcStride in
                                sws_scale(context, src, srcStride, 0, f.pointee.height, dst.baseAddress, dstStride.baseAddress)
                            }
                        }
                    }
                }
            }
        }
    }

    /// An HDR picture (PQ or HLG) tone-mapped to SDR BT.709 (`ToneMap`).
    func toneMapped(_ f: UnsafeMutablePointer<AVFrame>, transfer: ToneMap.Transfer, path: String, fullRange: Bool,
                    into reuse: I420Buffer?, size: Size) throws(MediaError) -> (I420View, I420Buffer?, YCbCrMatrix) {
        if toneMap?.transfer != transfer { toneMap = ToneMap(transfer: transfer) }
        let source = try tenBitPlanes(f, path: path, fullRange: fullRange, size: size)
        let buffer = reuse.flatMap { $0.size == size ? $0 : nil } ?? I420Buffer(size: size)
        let split = toneFork ?? (ForkJoin(name: "dualcam-tonemap"), ToneMap.Job())
        toneFork = split
        split.job.map = toneMap
        split.job.source = source
        split.job.output = buffer.view
        split.fork.run(split.job)
        split.job.source = nil
        return (buffer.view, buffer, .bt709)
    }

    /// A 10-bit (or deeper) SDR picture in another matrix than the output's, re-encoded and
    /// cut to 8 bits in one rounding (`ColorConversion.narrowSIMD`).
    func narrowed(_ f: UnsafeMutablePointer<AVFrame>, conversion: ColorConversion, path: String, fullRange: Bool,
                  into reuse: I420Buffer?, size: Size) throws(MediaError) -> (I420View, I420Buffer?, YCbCrMatrix) {
        let source = try tenBitPlanes(f, path: path, fullRange: fullRange, size: size)
        let buffer = reuse.flatMap { $0.size == size ? $0 : nil } ?? I420Buffer(size: size)
        conversion.narrowSIMD(source, into: buffer.view)
        return (buffer.view, buffer, PiPCompositor.outputMatrix)
    }

    /// The picture's 10-bit limited-range 4:2:0 planes at `size`: the decoder's own when it
    /// gives yuv420p10 at that size, else libswscale's (another layout, bit depth, range or
    /// size), kept across frames. The matrix is left as it is.
    func tenBitPlanes(_ f: UnsafeMutablePointer<AVFrame>, path: String, fullRange: Bool, size: Size) throws(MediaError) -> TenBitPlanes {
        let w = f.pointee.width, h = f.pointee.height
        let format = AVPixelFormat(rawValue: f.pointee.format)
        let chroma = Size(width: (size.width + 1) / 2, height: (size.height + 1) / 2)
        if format == AV_PIX_FMT_YUV420P10LE && !fullRange && size == Size(width: Int(w), height: Int(h))
            && f.pointee.linesize.0 > 0 && f.pointee.linesize.1 > 0 && f.pointee.linesize.1 == f.pointee.linesize.2,
           let y = f.pointee.data.0, let u = f.pointee.data.1, let v = f.pointee.data.2 {
            return TenBitPlanes(y: UnsafeRawPointer(y).assumingMemoryBound(to: UInt16.self), yStride: Int(f.pointee.linesize.0) / 2,
                                u: UnsafeRawPointer(u).assumingMemoryBound(to: UInt16.self),
                                v: UnsafeRawPointer(v).assumingMemoryBound(to: UInt16.self), chromaStride: Int(f.pointee.linesize.1) / 2)
        }
        let k = (w, h, f.pointee.format, fullRange ? 1 as Int32 : 0, size.width, size.height)
        if tenBitScaler == nil || k != tenBitKey {
            tenBitBuffer?.deallocate()
            tenBitBuffer = nil
            tenBitScaler = ScalerContext(from: Size(width: Int(w), height: Int(h)), Self.withoutJ(format), to: size,
                                         AV_PIX_FMT_YUV420P10LE, flags: Int32(SWS_BILINEAR | SWS_ACCURATE_RND))
            guard let tenBitScaler else {
                throw .undecodable(path: path, reason: "unsupported 10-bit pixel format \(format.rawValue)")
            }
            tenBitKey = k
            // The same table on both sides: only the range and the layout change here.
            let table = sws_getCoefficients(SWS_CS_BT2020)
            sws_setColorspaceDetails(tenBitScaler.pointer, table, fullRange ? 1 : 0, table, 0, 0, 1 << 16, 1 << 16)
            tenBitBuffer = .allocate(capacity: size.width * size.height + 2 * chroma.width * chroma.height)
        }
        guard let planes = tenBitBuffer else { throw .undecodable(path: path, reason: "no memory for a 10-bit picture") }
        let u = planes + size.width * size.height, v = u + chroma.width * chroma.height
        let rc = Self.scale(tenBitScaler?.pointer, f, into: (UnsafeMutableRawPointer(planes), UnsafeMutableRawPointer(u), UnsafeMutableRawPointer(v)),
                            strides: (2 * size.width, 2 * chroma.width, 2 * chroma.width))
        guard rc > 0 else { throw .undecodable(path: path, reason: "10-bit pixel format conversion failed") }
        return TenBitPlanes(y: planes, yStride: size.width, u: u, v: v, chromaStride: chroma.width)
    }
}
