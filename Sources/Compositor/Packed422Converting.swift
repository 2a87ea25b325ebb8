/// Packed 4:2:2 camera buffers (YUYV, UYVY) to I420 re-encoded to another matrix in the
/// same pass. A webcam says BT.601 and the output is BT.709: converting the layout and then
/// the matrix walked a 1080p frame twice, and the second pass cost more than the first
/// (record-yuyv-1080p). Here each pair of rows is unpacked and re-encoded while it is still
/// in the L1 cache (`ColorConversion.apply` on the pair), and the frame is read from memory once.
extension CameraFormats {
    /// The reference: the layout converted, then the matrix, one pixel at a time.
    public static func packed422Scalar(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, into out: I420View,
                                       converting conversion: ColorConversion) {
        packed422Scalar(src, stride: stride, order: order, into: out)
        conversion.applyScalar(to: out, lumaRect: Rect(x: 0, y: 0, width: out.y.width, height: out.y.height))
    }

    /// The same result as the reference, to the bit. `chromaRows` limits the work to those
    /// chroma rows and the luma rows they cover, so two threads can share a frame.
    public static func packed422SIMD(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, into out: I420View,
                                     converting conversion: ColorConversion, chromaRows: Range<Int>? = nil) {
        let w = out.y.width, h = out.y.height
        let rows = chromaRows ?? 0..<out.u.height
        guard !rows.isEmpty else { return }
        // Odd widths and narrow frames (no camera sends them) take the two passes.
        guard w >= 32, w % 2 == 0 else {
            let part = out.chromaRows(rows)
            packed422SIMD(src + 2 * rows.lowerBound * stride, stride: stride, order: order, into: part)
            conversion.apply(to: part, lumaRect: Rect(x: 0, y: 0, width: w, height: part.y.height))
            return
        }
        let raw = UnsafeRawPointer(src)
        let lastRow = min(2 * rows.upperBound, h) - 1
        for cy in rows {
            let y0 = 2 * cy, y1 = min(y0 + 1, h - 1)
            let r0 = raw + y0 * stride, r1 = raw + y1 * stride
            // The next pair but one, asked for now: the hardware prefetcher alone left a cold
            // 1080p frame at 1.9 ms; two pairs ahead, 1.4 (four, 2.1: evicted before use).
            if y0 + 4 <= lastRow { Prefetch.bytes(raw + (y0 + 4) * stride, count: 2 * w * min(2, lastRow - y0 - 3)) }
            packed422Luma(r0, order: order, into: out.y.row(y0), width: w)
            if y1 != y0 { packed422Luma(r1, order: order, into: out.y.row(y1), width: w) }
            packed422Chroma(r0, r1, order: order, u: out.u.row(cy), v: out.v.row(cy), width: out.u.width)
            // The pair's rows are still in the L1 cache: re-encoding them now costs no memory
            // traffic.
            conversion.apply(to: out, lumaRect: Rect(x: 0, y: y0, width: w, height: y1 - y0 + 1))
        }
    }
}

extension CameraFormats {
    /// A packed 4:2:2 camera buffer as the picture its role needs: reduced by `shift`
    /// (`packed422ReducedSIMD`) or whole, re-encoded by `conversion` or (nil) in the camera's
    /// matrix; `chromaRows` limits the work to those output chroma rows and the luma rows
    /// they cover, so two threads can share a frame.
    public static func packed422Picture(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, shift: Int,
                                        into out: I420View, converting conversion: ColorConversion?,
                                        chromaRows: Range<Int>? = nil) {
        if shift > 0 {
            packed422ReducedSIMD(src, stride: stride, order: order, shift: shift, into: out, converting: conversion,
                                 chromaRows: chromaRows)
        } else if let conversion {
            packed422SIMD(src, stride: stride, order: order, into: out, converting: conversion, chromaRows: chromaRows)
        } else {
            let rows = chromaRows ?? 0..<out.u.height
            packed422SIMD(src + 2 * rows.lowerBound * stride, stride: stride, order: order, into: out.chromaRows(rows))
        }
    }

    /// One camera buffer's `packed422Picture` for `ForkJoin`: each half does half the chroma
    /// rows. The camera's capture thread keeps one and refills it for every buffer.
    public final class Packed422Job: ForkJoinJob {
        public var source: UnsafePointer<UInt8>?, stride = 0, order = Packed422.yuyv, shift = 0
        public var output: I420View?, conversion: ColorConversion?
        public init() {}
        public func run(half: Int) {
            guard let source, let output else { return }
            packed422Picture(source, stride: stride, order: order, shift: shift, into: output, converting: conversion,
                             chromaRows: ForkJoin.rows(half, of: output.u.height))
        }
    }
}
