// Generated shapes, written out by hand: a 16x16 byte transpose as four perfect-unshuffle
// stages. Each stage takes the even and odd lanes of neighbouring rows; after four, element
// (r, c) sits at (c, r). Swift lowers evenHalf/oddHalf to constant shuffles (vpshufb +
// vpackuswb on AVX2), so the whole tile stays in registers with no per-lane moves.
extension Kernels {
    // Keep evenHalf/oddHalf on SIMD32<UInt8> to this file and Kernels.halveSIMD: measured, a
    // third user in the module (CameraFormats) made the compiler stop inlining them, turning
    // this transpose into 64 calls per tile (2.5x slower insets). CameraFormats picks lanes itself.
    @inline(__always)
    static func unzip(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> (SIMD16<UInt8>, SIMD16<UInt8>) {
        let c = SIMD32<UInt8>(lowHalf: a, highHalf: b)
        return (c.evenHalf, c.oddHalf)
    }

    /// Transposes the 16x16 tile at `src` (rows `srcStride` apart) into `dst` (rows `dstStride` apart).
    public static func transposeTileSIMD(_ src: UnsafePointer<UInt8>, srcStride: Int,
                                         _ dst: UnsafeMutablePointer<UInt8>, dstStride: Int) {
        let s = UnsafeRawPointer(src), d = UnsafeMutableRawPointer(dst)
        let a0 = s.loadUnaligned(fromByteOffset: 0 &* srcStride, as: SIMD16<UInt8>.self)
        let a1 = s.loadUnaligned(fromByteOffset: 1 &* srcStride, as: SIMD16<UInt8>.self)
        let a2 = s.loadUnaligned(fromByteOffset: 2 &* srcStride, as: SIMD16<UInt8>.self)
        let a3 = s.loadUnaligned(fromByteOffset: 3 &* srcStride, as: SIMD16<UInt8>.self)
        let a4 = s.loadUnaligned(fromByteOffset: 4 &* srcStride, as: SIMD16<UInt8>.self)
        let a5 = s.loadUnaligned(fromByteOffset: 5 &* srcStride, as: SIMD16<UInt8>.self)
        let a6 = s.loadUnaligned(fromByteOffset: 6 &* srcStride, as: SIMD16<UInt8>.self)
        let a7 = s.loadUnaligned(fromByteOffset: 7 &* srcStride, as: SIMD16<UInt8>.self)
        let a8 = s.loadUnaligned(fromByteOffset: 8 &* srcStride, as: SIMD16<UInt8>.self)
        let a9 = s.loadUnaligned(fromByteOffset: 9 &* srcStride, as: SIMD16<UInt8>.self)
        let a10 = s.loadUnaligned(fromByteOffset: 10 &* srcStride, as: SIMD16<UInt8>.self)
        let a11 = s.loadUnaligned(fromByteOffset: 11 &* srcStride, as: SIMD16<UInt8>.self)
        let a12 = s.loadUnaligned(fromByteOffset: 12 &* srcStride, as: SIMD16<UInt8>.self)
        let a13 = s.loadUnaligned(fromByteOffset: 13 &* srcStride, as: SIMD16<UInt8>.self)
        let a14 = s.loadUnaligned(fromByteOffset: 14 &* srcStride, as: SIMD16<UInt8>.self)
        let a15 = s.loadUnaligned(fromByteOffset: 15 &* srcStride, as: SIMD16<UInt8>.self)
        let (b0, b8) = unzip(a0, a1)
        let (b1, b9) = unzip(a2, a3)
        let (b2, b10) = unzip(a4, a5)
        let (b3, b11) = unzip(a6, a7)
        let (b4, b12) = unzip(a8, a9)
        let (b5, b13) = unzip(a10, a11)
        let (b6, b14) = unzip(a12, a13)
        let (b7, b15) = unzip(a14, a15)
        let (c0, c8) = unzip(b0, b1)
        let (c1, c9) = unzip(b2, b3)
        let (c2, c10) = unzip(b4, b5)
        let (c3, c11) = unzip(b6, b7)
        let (c4, c12) = unzip(b8, b9)
        let (c5, c13) = unzip(b10, b11)
        let (c6, c14) = unzip(b12, b13)
        let (c7, c15) = unzip(b14, b15)
        let (d0, d8) = unzip(c0, c1)
        let (d1, d9) = unzip(c2, c3)
        let (d2, d10) = unzip(c4, c5)
        let (d3, d11) = unzip(c6, c7)
        let (d4, d12) = unzip(c8, c9)
        let (d5, d13) = unzip(c10, c11)
        let (d6, d14) = unzip(c12, c13)
        let (d7, d15) = unzip(c14, c15)
        let (e0, e8) = unzip(d0, d1)
        let (e1, e9) = unzip(d2, d3)
        let (e2, e10) = unzip(d4, d5)
        let (e3, e11) = unzip(d6, d7)
        let (e4, e12) = unzip(d8, d9)
        let (e5, e13) = unzip(d10, d11)
        let (e6, e14) = unzip(d12, d13)
        let (e7, e15) = unzip(d14, d15)
        d.storeBytes(of: e0, toByteOffset: 0 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e1, toByteOffset: 1 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e2, toByteOffset: 2 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e3, toByteOffset: 3 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e4, toByteOffset: 4 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e5, toByteOffset: 5 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e6, toByteOffset: 6 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e7, toByteOffset: 7 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e8, toByteOffset: 8 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e9, toByteOffset: 9 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e10, toByteOffset: 10 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e11, toByteOffset: 11 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e12, toByteOffset: 12 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e13, toByteOffset: 13 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e14, toByteOffset: 14 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e15, toByteOffset: 15 &* dstStride, as: SIMD16<UInt8>.self)
    }

    public static func transposeTileScalar(_ src: UnsafePointer<UInt8>, srcStride: Int,
                                           _ dst: UnsafeMutablePointer<UInt8>, dstStride: Int) {
        for r in 0..<16 { for c in 0..<16 { dst[c * dstStride + r] = src[r * srcStride + c] } }
    }
}
