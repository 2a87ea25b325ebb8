/// What a JPEG decoder gives (full-range planar Y'CbCr, 4:2:2 as webcams send or 4:2:0) to
/// limited-range I420 in one pass: each sample scaled exactly (Y' by 219/255, chroma by
/// 224/255, rounded), 4:2:2 chroma rows paired by their rounded-up mean first. A scalar
/// reference and a SIMD version that must agree to the bit; libswscale did the same job in
/// more time than the decode itself.
public enum JPEGRange {
    /// Full-range planes: chroma at half width, and at full height (4:2:2) or half (4:2:0).
    public struct Source {
        public var y: UnsafePointer<UInt8>, yStride: Int
        public var u: UnsafePointer<UInt8>, v: UnsafePointer<UInt8>, chromaStride: Int
        public var chromaFullHeight: Bool
        public init(y: UnsafePointer<UInt8>, yStride: Int, u: UnsafePointer<UInt8>, v: UnsafePointer<UInt8>,
                    chromaStride: Int, chromaFullHeight: Bool) {
            self.y = y
            self.yStride = yStride
            self.u = u
            self.v = v
            self.chromaStride = chromaStride
            self.chromaFullHeight = chromaFullHeight
        }
    }

    /// round(x * scale / 255) + 16, for x in 0...255 (exact: the divide-by-255 identity).
    @inline(__always)
    static func limited(_ x: UInt8, scale: UInt16) -> UInt8 {
        let t = UInt16(x) &* scale &+ 128
        return UInt8(truncatingIfNeeded: (t &+ (t &>> 8)) &>> 8 &+ 16)
    }

    @inline(__always)
    static func limited(_ x: SIMD16<UInt16>, scale: UInt16) -> SIMD16<UInt16> {
        let t = x &* scale &+ 128
        return (t &+ (t &>> 8)) &>> 8 &+ 16
    }

    static let lumaScale: UInt16 = 219, chromaScale: UInt16 = 224

    public static func convertScalar(_ s: Source, into out: I420View) {
        for y in 0..<out.y.height {
            let src = s.y + y * s.yStride, dst = out.y.row(y)
            for x in 0..<out.y.width { dst[x] = limited(src[x], scale: lumaScale) }
        }
        chromaScalar(s.u, s, into: out.u, lumaHeight: out.y.height)
        chromaScalar(s.v, s, into: out.v, lumaHeight: out.y.height)
    }

    static func chromaScalar(_ plane: UnsafePointer<UInt8>, _ s: Source, into out: PlaneView, lumaHeight: Int) {
        let rows = s.chromaFullHeight ? lumaHeight : out.height
        for cy in 0..<out.height {
            let r0 = plane + (s.chromaFullHeight ? 2 * cy : cy) * s.chromaStride
            let r1 = s.chromaFullHeight ? plane + min(2 * cy + 1, rows - 1) * s.chromaStride : r0
            let dst = out.row(cy)
            for cx in 0..<out.width { dst[cx] = limited(CameraFormats.mean(r0[cx], r1[cx]), scale: chromaScale) }
        }
    }

    /// 32 bytes at a time as 16-bit lanes: the even bytes (AND) and the odd ones (shift)
    /// scaled apart and put back together, which stays in vector registers.
    @inline(__always)
    static func limitedPairs(_ pairs: SIMD16<UInt16>, scale: UInt16) -> SIMD16<UInt16> {
        limited(pairs & 0x00FF, scale: scale) | limited(pairs &>> 8, scale: scale) &<< 8
    }

    public static func convertSIMD(_ s: Source, into out: I420View) {
        guard out.y.width >= 32, out.u.width >= 32 else { return convertScalar(s, into: out) }
        for y in 0..<out.y.height {
            convertRow(UnsafeRawPointer(s.y + y * s.yStride), UnsafeMutableRawPointer(out.y.row(y)),
                       width: out.y.width, scale: lumaScale)
        }
        chromaSIMD(s.u, s, into: out.u, lumaHeight: out.y.height)
        chromaSIMD(s.v, s, into: out.v, lumaHeight: out.y.height)
    }

    static func chromaSIMD(_ plane: UnsafePointer<UInt8>, _ s: Source, into out: PlaneView, lumaHeight: Int) {
        for cy in 0..<out.height { chromaRowSIMD(plane, s, cy, into: out, lumaHeight: lumaHeight) }
    }

    /// Chroma row `cy`: the source row as it is (4:2:0), or the mean of the two it pairs (4:2:2).
    @inline(__always)
    static func chromaRowSIMD(_ plane: UnsafePointer<UInt8>, _ s: Source, _ cy: Int, into out: PlaneView, lumaHeight: Int) {
        let cw = out.width
        let dst = UnsafeMutableRawPointer(out.row(cy))
        let r0 = UnsafeRawPointer(plane + (s.chromaFullHeight ? 2 * cy : cy) * s.chromaStride)
        guard s.chromaFullHeight else { return convertRow(r0, dst, width: cw, scale: chromaScale) }
        let r1 = UnsafeRawPointer(plane + min(2 * cy + 1, lumaHeight - 1) * s.chromaStride)
        var x = 0
        while x < cw {
            if x &+ 32 > cw { x = cw &- 32 }
            let a = r0.loadUnaligned(fromByteOffset: x, as: SIMD32<UInt8>.self)
            let b = r1.loadUnaligned(fromByteOffset: x, as: SIMD32<UInt8>.self)
            let m = SIMD32<UInt8>(lowHalf: CameraFormats.mean(a.lowHalf, b.lowHalf),
                                  highHalf: CameraFormats.mean(a.highHalf, b.highHalf))
            dst.storeBytes(of: limitedPairs(unsafeBitCast(m, to: SIMD16<UInt16>.self), scale: chromaScale),
                           toByteOffset: x, as: SIMD16<UInt16>.self)
            x &+= 32
        }
    }

    @inline(__always)
    static func convertRow(_ src: UnsafeRawPointer, _ dst: UnsafeMutableRawPointer, width: Int, scale: UInt16) {
        var x = 0
        while x < width {
            if x &+ 32 > width { x = width &- 32 }  // overlap the last block rather than go scalar
            dst.storeBytes(of: limitedPairs(src.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt16>.self), scale: scale),
                           toByteOffset: x, as: SIMD16<UInt16>.self)
            x &+= 32
        }
    }
}

/// The range rescaled and the matrix re-encoded in one pass: a pair of rows rescaled, then
/// re-encoded while it is in the L1 cache (`ColorConversion.apply` on the pair). A webcam's JPEG is BT.601 and
/// the output BT.709; two passes read the decoded 1080p frame twice.
extension JPEGRange {
    /// The reference: the range rescaled, then the matrix, one pixel at a time.
    public static func convertScalar(_ s: Source, into out: I420View, converting conversion: ColorConversion) {
        convertScalar(s, into: out)
        conversion.applyScalar(to: out, lumaRect: Rect(x: 0, y: 0, width: out.y.width, height: out.y.height))
    }

    /// The same result as the reference, to the bit. `chromaRows` limits the work to those
    /// chroma rows and the luma rows they cover, so two threads can share a frame.
    public static func convertSIMD(_ s: Source, into out: I420View, converting conversion: ColorConversion,
                                   chromaRows: Range<Int>? = nil) {
        let rows = chromaRows ?? 0..<out.u.height, h = out.y.height
        guard !rows.isEmpty else { return }
        guard out.y.width >= 32, out.u.width >= 32 else {
            let part = out.chromaRows(rows), top = 2 * rows.lowerBound
            let chromaTop = s.chromaFullHeight ? top : rows.lowerBound
            convertSIMD(Source(y: s.y + top * s.yStride, yStride: s.yStride, u: s.u + chromaTop * s.chromaStride,
                               v: s.v + chromaTop * s.chromaStride, chromaStride: s.chromaStride,
                               chromaFullHeight: s.chromaFullHeight), into: part)
            conversion.apply(to: part, lumaRect: Rect(x: 0, y: 0, width: part.y.width, height: part.y.height))
            return
        }
        for cy in rows {
            let y0 = 2 * cy, y1 = min(y0 + 1, h - 1)
            convertRow(UnsafeRawPointer(s.y + y0 * s.yStride), UnsafeMutableRawPointer(out.y.row(y0)),
                       width: out.y.width, scale: lumaScale)
            if y1 != y0 {
                convertRow(UnsafeRawPointer(s.y + y1 * s.yStride), UnsafeMutableRawPointer(out.y.row(y1)),
                           width: out.y.width, scale: lumaScale)
            }
            chromaRowSIMD(s.u, s, cy, into: out.u, lumaHeight: h)
            chromaRowSIMD(s.v, s, cy, into: out.v, lumaHeight: h)
            conversion.apply(to: out, lumaRect: Rect(x: 0, y: y0, width: out.y.width, height: y1 - y0 + 1))
        }
    }
}

extension JPEGRange {
    /// One decoded JPEG's conversion for `ForkJoin`: each half does half the chroma rows.
    public final class Job: ForkJoinJob {
        public var source: Source?, output: I420View?, conversion: ColorConversion?
        public init() {}
        public func run(part: Int, of parts: Int) {
            guard let source, let output, let conversion else { return }
            convertSIMD(source, into: output, converting: conversion, chromaRows: ForkJoin.rows(part, of: output.u.height, parts: parts))
        }
    }
}
