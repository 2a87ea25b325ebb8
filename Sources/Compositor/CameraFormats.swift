/// Conversions of what cameras send into I420, each as a scalar reference and a SIMD version
/// that must agree to the bit. 4:2:2 chroma becomes 4:2:0 by the rounded-up mean of each
/// pair of rows (an odd last row keeps its own chroma).
public enum CameraFormats {
    @inline(__always)
    static func mean(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> SIMD16<UInt8> { (a | b) &- ((a ^ b) &>> 1) }
    @inline(__always)
    static func mean(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8((Int(a) + Int(b) + 1) >> 1) }

    // Even and odd lanes as explicit picks, not SIMD32's evenHalf/oddHalf: see Transpose.swift.
    @inline(__always)
    static func evens(_ v: SIMD32<UInt8>) -> SIMD16<UInt8> {
        SIMD16(v[0], v[2], v[4], v[6], v[8], v[10], v[12], v[14], v[16], v[18], v[20], v[22], v[24], v[26], v[28], v[30])
    }
    @inline(__always)
    static func odds(_ v: SIMD32<UInt8>) -> SIMD16<UInt8> {
        SIMD16(v[1], v[3], v[5], v[7], v[9], v[11], v[13], v[15], v[17], v[19], v[21], v[23], v[25], v[27], v[29], v[31])
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

    @inline(__always)
    static func pick(_ v: SIMD32<UInt8>, odd: Bool) -> SIMD16<UInt8> { odd ? odds(v) : evens(v) }

    public static func packed422SIMD(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, into out: I420View) {
        let w = out.y.width, h = out.y.height
        guard w >= 32 else { return packed422Scalar(src, stride: stride, order: order, into: out) }
        let lumaOdd = order == .uyvy, chromaOdd = !lumaOdd
        let raw = UnsafeRawPointer(src)
        for y in 0..<h {
            let row = raw + y * stride
            let luma = UnsafeMutableRawPointer(out.y.row(y))
            var x = 0
            while x < w {
                if x &+ 16 > w { x = w &- 16 }  // overlap the last block rather than go scalar
                let pairs = row.loadUnaligned(fromByteOffset: 2 &* x, as: SIMD32<UInt8>.self)
                luma.storeBytes(of: pick(pairs, odd: lumaOdd), toByteOffset: x, as: SIMD16<UInt8>.self)
                x &+= 16
            }
        }
        let cw = out.u.width
        for cy in 0..<out.u.height {
            let r0 = raw + 2 * cy * stride, r1 = raw + min(2 * cy + 1, h - 1) * stride
            let u = UnsafeMutableRawPointer(out.u.row(cy)), v = UnsafeMutableRawPointer(out.v.row(cy))
            var cx = 0
            while cx < cw {
                if cx &+ 16 > cw { cx = cw &- 16 }
                // 16 chroma pairs are 64 bytes: the chroma bytes are U V U V ...
                let a = SIMD32<UInt8>(
                    lowHalf: pick(r0.loadUnaligned(fromByteOffset: 4 &* cx, as: SIMD32<UInt8>.self), odd: chromaOdd),
                    highHalf: pick(r0.loadUnaligned(fromByteOffset: 4 &* cx &+ 32, as: SIMD32<UInt8>.self), odd: chromaOdd))
                let b = SIMD32<UInt8>(
                    lowHalf: pick(r1.loadUnaligned(fromByteOffset: 4 &* cx, as: SIMD32<UInt8>.self), odd: chromaOdd),
                    highHalf: pick(r1.loadUnaligned(fromByteOffset: 4 &* cx &+ 32, as: SIMD32<UInt8>.self), odd: chromaOdd))
                u.storeBytes(of: mean(evens(a), evens(b)), toByteOffset: cx, as: SIMD16<UInt8>.self)
                v.storeBytes(of: mean(odds(a), odds(b)), toByteOffset: cx, as: SIMD16<UInt8>.self)
                cx &+= 16
            }
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
                let pairs = row.loadUnaligned(fromByteOffset: 2 &* cx, as: SIMD32<UInt8>.self)
                u.storeBytes(of: evens(pairs), toByteOffset: cx, as: SIMD16<UInt8>.self)
                v.storeBytes(of: odds(pairs), toByteOffset: cx, as: SIMD16<UInt8>.self)
                cx &+= 16
            }
        }
    }
}
