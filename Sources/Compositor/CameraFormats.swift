/// Conversions of what cameras send into I420, each as a scalar reference and a SIMD version
/// that must agree to the bit. 4:2:2 chroma becomes 4:2:0 by the rounded-up mean of each
/// pair of rows (an odd last row keeps its own chroma).
public enum CameraFormats {
    @inline(__always)
    static func mean(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> SIMD16<UInt8> { (a | b) &- ((a ^ b) &>> 1) }
    @inline(__always)
    static func mean(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8((Int(a) + Int(b) + 1) >> 1) }

    // Even and odd bytes as lane loops, which LLVM makes pand/psrlw + packuswb. (Through
    // `init(truncatingIfNeeded:)` of 16-bit lanes they were calls wherever the caller was
    // large; see Lanes in ColorConversionLanes.swift.)
    @inline(__always)
    static func evens(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> SIMD16<UInt8> {
        var r = SIMD16<UInt8>()
        for i in 0..<8 { r[i] = a[2 &* i]; r[i &+ 8] = b[2 &* i] }
        return r
    }
    @inline(__always)
    static func odds(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> SIMD16<UInt8> {
        var r = SIMD16<UInt8>()
        for i in 0..<8 { r[i] = a[2 &* i &+ 1]; r[i &+ 8] = b[2 &* i &+ 1] }
        return r
    }

    // MARK: YUYV and UYVY (4:2:2 packed: Y0 U0 Y1 V0, or U0 Y0 V0 Y1)

    /// Where the bytes of a packed 4:2:2 pixel pair sit: YUYV has luma in the even bytes,
    /// UYVY in the odd ones; chroma fills the others, U before V in both.
    public enum Packed422: Sendable {
        case yuyv, uyvy
        var lumaOffset: Int { self == .yuyv ? 0 : 1 }
        var chromaOffset: Int { self == .yuyv ? 1 : 0 }
    }

    public static func yuyvScalar(_ src: UnsafePointer<UInt8>, stride: Int, into out: I420View) {
        packed422Scalar(src, stride: stride, order: .yuyv, into: out)
    }
    public static func yuyvSIMD(_ src: UnsafePointer<UInt8>, stride: Int, into out: I420View) {
        packed422SIMD(src, stride: stride, order: .yuyv, into: out)
    }
    public static func uyvyScalar(_ src: UnsafePointer<UInt8>, stride: Int, into out: I420View) {
        packed422Scalar(src, stride: stride, order: .uyvy, into: out)
    }
    public static func uyvySIMD(_ src: UnsafePointer<UInt8>, stride: Int, into out: I420View) {
        packed422SIMD(src, stride: stride, order: .uyvy, into: out)
    }

    public static func packed422Scalar(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, into out: I420View) {
        let w = out.y.width, h = out.y.height
        let lo = order.lumaOffset, co = order.chromaOffset
        for y in 0..<h {
            let row = src + y * stride
            let luma = out.y.row(y)
            for x in 0..<w { luma[x] = row[2 * x + lo] }
        }
        for cy in 0..<out.u.height {
            let r0 = src + 2 * cy * stride
            let r1 = src + min(2 * cy + 1, h - 1) * stride
            let u = out.u.row(cy), v = out.v.row(cy)
            for cx in 0..<out.u.width {
                u[cx] = mean(r0[4 * cx + co], r1[4 * cx + co])
                v[cx] = mean(r0[4 * cx + co + 2], r1[4 * cx + co + 2])
            }
        }
    }

    /// The even or odd bytes of the 32 at `p + offset`.
    @inline(__always)
    static func pick(_ p: UnsafeRawPointer, _ offset: Int, odd: Bool) -> SIMD16<UInt8> {
        let a = p.loadUnaligned(fromByteOffset: offset, as: SIMD16<UInt8>.self)
        let b = p.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD16<UInt8>.self)
        return odd ? odds(a, b) : evens(a, b)
    }

    /// One pass over the source, a pair of rows at a time: both rows' luma, then their
    /// chroma while the rows are still in the L1 cache. (Two passes, all luma then all
    /// chroma, read a 1080p frame's 4 MB from memory twice.)
    public static func packed422SIMD(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, into out: I420View) {
        let w = out.y.width, h = out.y.height
        guard w >= 32 else { return packed422Scalar(src, stride: stride, order: order, into: out) }
        let raw = UnsafeRawPointer(src)
        for cy in 0..<out.u.height {
            let y0 = 2 * cy, y1 = min(y0 + 1, h - 1)
            packed422Luma(raw + y0 * stride, order: order, into: out.y.row(y0), width: w)
            if y1 != y0 { packed422Luma(raw + y1 * stride, order: order, into: out.y.row(y1), width: w) }
            packed422Chroma(raw + y0 * stride, raw + y1 * stride, order: order,
                            u: out.u.row(cy), v: out.v.row(cy), width: out.u.width)
        }
    }

    @inline(__always)
    static func packed422Luma(_ row: UnsafeRawPointer, order: Packed422, into luma: UnsafeMutablePointer<UInt8>, width w: Int) {
        let lumaOdd = order == .uyvy
        let out = UnsafeMutableRawPointer(luma)
        var x = 0
        while x < w {
            if x &+ 16 > w { x = w &- 16 }  // overlap the last block rather than go scalar
            out.storeBytes(of: pick(row, 2 &* x, odd: lumaOdd), toByteOffset: x, as: SIMD16<UInt8>.self)
            x &+= 16
        }
    }

    @inline(__always)
    static func packed422Chroma(_ r0: UnsafeRawPointer, _ r1: UnsafeRawPointer, order: Packed422,
                                u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>, width cw: Int) {
        let chromaOdd = order == .yuyv
        let uOut = UnsafeMutableRawPointer(u), vOut = UnsafeMutableRawPointer(v)
        var cx = 0
        while cx < cw {
            if cx &+ 16 > cw { cx = cw &- 16 }
            // 16 chroma pairs are 64 bytes: the chroma bytes are U V U V ...
            let a0 = pick(r0, 4 &* cx, odd: chromaOdd), a1 = pick(r0, 4 &* cx &+ 32, odd: chromaOdd)
            let b0 = pick(r1, 4 &* cx, odd: chromaOdd), b1 = pick(r1, 4 &* cx &+ 32, odd: chromaOdd)
            uOut.storeBytes(of: mean(evens(a0, a1), evens(b0, b1)), toByteOffset: cx, as: SIMD16<UInt8>.self)
            vOut.storeBytes(of: mean(odds(a0, a1), odds(b0, b1)), toByteOffset: cx, as: SIMD16<UInt8>.self)
            cx &+= 16
        }
    }

    // MARK: NV12 (Y plane, then interleaved U V at half size)

    public static func nv12Scalar(luma: UnsafePointer<UInt8>, lumaStride: Int, chroma: UnsafePointer<UInt8>,
                                  chromaStride: Int, into out: I420View) {
        for y in 0..<out.y.height { out.y.row(y).update(from: luma + y * lumaStride, count: out.y.width) }
        for cy in 0..<out.u.height {
            let row = chroma + cy * chromaStride
            let u = out.u.row(cy), v = out.v.row(cy)
            for cx in 0..<out.u.width {
                u[cx] = row[2 * cx]
                v[cx] = row[2 * cx + 1]
            }
        }
    }

    public static func nv12SIMD(luma: UnsafePointer<UInt8>, lumaStride: Int, chroma: UnsafePointer<UInt8>,
                                chromaStride: Int, into out: I420View) {
        let cw = out.u.width
        guard cw >= 16 else {
            return nv12Scalar(luma: luma, lumaStride: lumaStride, chroma: chroma, chromaStride: chromaStride, into: out)
        }
        for y in 0..<out.y.height { out.y.row(y).update(from: luma + y * lumaStride, count: out.y.width) }
        for cy in 0..<out.u.height {
            let row = UnsafeRawPointer(chroma + cy * chromaStride)
            let u = UnsafeMutableRawPointer(out.u.row(cy)), v = UnsafeMutableRawPointer(out.v.row(cy))
            var cx = 0
            while cx < cw {
                if cx &+ 16 > cw { cx = cw &- 16 }
                let a = row.loadUnaligned(fromByteOffset: 2 &* cx, as: SIMD16<UInt8>.self)
                let b = row.loadUnaligned(fromByteOffset: 2 &* cx &+ 16, as: SIMD16<UInt8>.self)
                u.storeBytes(of: evens(a, b), toByteOffset: cx, as: SIMD16<UInt8>.self)
                v.storeBytes(of: odds(a, b), toByteOffset: cx, as: SIMD16<UInt8>.self)
                cx &+= 16
            }
        }
    }
}
