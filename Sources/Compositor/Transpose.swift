// A 16x16 byte transpose in four interleaving stages of widening elements (bytes, then
// 2, 4 and 8 bytes: punpckl/punpckh, zip1/zip2), each pairing neighbouring registers and
// putting the low halves' result first; after the fourth, register i holds column
// bitreverse(i). One instruction per half where unzipping (even and odd lanes, which
// LLVM lowers to two shuffles, two masks and a pack) took five: 337 instructions a tile
// before, under half of that now. Interleaving bytes at every stage instead gives the
// same transpose on paper, but LLVM merges four byte shuffles of the same width into
// pshufb and blend chains (832 instructions a tile, measured).
extension Kernels {
    // Each a lane loop over the element width, which LLVM turns into one unpack per half.
    @inline(__always)
    static func zipLanes<V: SIMD>(_ a: V, _ b: V) -> (V, V) {
        var low = V(), high = V()
        let half = V.scalarCount / 2
        for i in 0..<half {
            low[2 &* i] = a[i]
            low[2 &* i &+ 1] = b[i]
            high[2 &* i] = a[i &+ half]
            high[2 &* i &+ 1] = b[i &+ half]
        }
        return (low, high)
    }

    /// `zipLanes` on 16 bytes seen as lanes of `V` (2, 4 or 8 bytes wide).
    @inline(__always)
    static func zipAs<V: SIMD>(_ lanes: V.Type, _ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> (SIMD16<UInt8>, SIMD16<UInt8>) {
        let (low, high) = zipLanes(unsafeBitCast(a, to: V.self), unsafeBitCast(b, to: V.self))
        return (unsafeBitCast(low, to: SIMD16<UInt8>.self), unsafeBitCast(high, to: SIMD16<UInt8>.self))
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
        let (b0, b8) = zipLanes(a0, a1)
        let (b1, b9) = zipLanes(a2, a3)
        let (b2, b10) = zipLanes(a4, a5)
        let (b3, b11) = zipLanes(a6, a7)
        let (b4, b12) = zipLanes(a8, a9)
        let (b5, b13) = zipLanes(a10, a11)
        let (b6, b14) = zipLanes(a12, a13)
        let (b7, b15) = zipLanes(a14, a15)
        let (c0, c8) = zipAs(SIMD8<UInt16>.self, b0, b1)
        let (c1, c9) = zipAs(SIMD8<UInt16>.self, b2, b3)
        let (c2, c10) = zipAs(SIMD8<UInt16>.self, b4, b5)
        let (c3, c11) = zipAs(SIMD8<UInt16>.self, b6, b7)
        let (c4, c12) = zipAs(SIMD8<UInt16>.self, b8, b9)
        let (c5, c13) = zipAs(SIMD8<UInt16>.self, b10, b11)
        let (c6, c14) = zipAs(SIMD8<UInt16>.self, b12, b13)
        let (c7, c15) = zipAs(SIMD8<UInt16>.self, b14, b15)
        let (d0, d8) = zipAs(SIMD4<UInt32>.self, c0, c1)
        let (d1, d9) = zipAs(SIMD4<UInt32>.self, c2, c3)
        let (d2, d10) = zipAs(SIMD4<UInt32>.self, c4, c5)
        let (d3, d11) = zipAs(SIMD4<UInt32>.self, c6, c7)
        let (d4, d12) = zipAs(SIMD4<UInt32>.self, c8, c9)
        let (d5, d13) = zipAs(SIMD4<UInt32>.self, c10, c11)
        let (d6, d14) = zipAs(SIMD4<UInt32>.self, c12, c13)
        let (d7, d15) = zipAs(SIMD4<UInt32>.self, c14, c15)
        let (e0, e8) = zipAs(SIMD2<UInt64>.self, d0, d1)
        let (e1, e9) = zipAs(SIMD2<UInt64>.self, d2, d3)
        let (e2, e10) = zipAs(SIMD2<UInt64>.self, d4, d5)
        let (e3, e11) = zipAs(SIMD2<UInt64>.self, d6, d7)
        let (e4, e12) = zipAs(SIMD2<UInt64>.self, d8, d9)
        let (e5, e13) = zipAs(SIMD2<UInt64>.self, d10, d11)
        let (e6, e14) = zipAs(SIMD2<UInt64>.self, d12, d13)
        let (e7, e15) = zipAs(SIMD2<UInt64>.self, d14, d15)
        d.storeBytes(of: e0, toByteOffset: 0 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e1, toByteOffset: 8 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e2, toByteOffset: 4 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e3, toByteOffset: 12 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e4, toByteOffset: 2 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e5, toByteOffset: 10 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e6, toByteOffset: 6 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e7, toByteOffset: 14 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e8, toByteOffset: 1 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e9, toByteOffset: 9 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e10, toByteOffset: 5 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e11, toByteOffset: 13 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e12, toByteOffset: 3 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e13, toByteOffset: 11 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e14, toByteOffset: 7 &* dstStride, as: SIMD16<UInt8>.self)
        d.storeBytes(of: e15, toByteOffset: 15 &* dstStride, as: SIMD16<UInt8>.self)
    }

    public static func transposeTileScalar(_ src: UnsafePointer<UInt8>, srcStride: Int,
                                           _ dst: UnsafeMutablePointer<UInt8>, dstStride: Int) {
        for r in 0..<16 { for c in 0..<16 { dst[c * dstStride + r] = src[r * srcStride + c] } }
    }
}
