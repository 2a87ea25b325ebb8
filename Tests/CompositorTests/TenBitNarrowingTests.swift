import Foundation
@testable import Compositor
import Testing

/// 10-bit SDR in another matrix to 8-bit BT.709 in one rounding (`narrowSIMD`): the SIMD
/// kernel against its scalar reference to the bit, and the reference against the exact
/// re-encoding in double precision.
@Suite(.timeLimit(.minutes(10))) struct TenBitNarrowingTests {
    static func narrow(_ p: (y: [UInt16], u: [UInt16], v: [UInt16], yStride: Int, cStride: Int), size: Size,
                       _ conversion: ColorConversion, simd: Bool) -> I420Buffer {
        let out = I420Buffer(size: size)
        out.view.fill(y: 7, u: 8, v: 9)
        p.y.withUnsafeBufferPointer { y in
            p.u.withUnsafeBufferPointer { u in
                p.v.withUnsafeBufferPointer { v in
                    let s = TenBitPlanes(y: y.baseAddress!, yStride: p.yStride, u: u.baseAddress!, v: v.baseAddress!, chromaStride: p.cStride)
                    if simd { conversion.narrowSIMD(s, into: out.view) } else { conversion.narrowScalar(s, into: out.view) }
                }
            }
        }
        return out
    }

    @Test(.timeLimit(.minutes(1)), arguments: [Size(width: 2, height: 2), Size(width: 17, height: 5), Size(width: 33, height: 18),
                                               Size(width: 64, height: 31), Size(width: 1921, height: 7)])
    func simdGivesTheReferencesBytes(size: Size) {
        for source in [YCbCrMatrix.bt2020, .bt601] {
            let p = ToneMapTests.planes(size, seed: UInt64(size.width * 7 + size.height))
            let conversion = ColorConversion.between(source, .bt709)!
            let a = Self.narrow(p, size: size, conversion, simd: false), b = Self.narrow(p, size: size, conversion, simd: true)
            for (pa, pb) in zip(a.view.planes, b.view.planes) {
                for row in 0..<pa.height {
                    #expect(Array(UnsafeBufferPointer(start: pa.row(row), count: pa.width))
                            == Array(UnsafeBufferPointer(start: pb.row(row), count: pb.width)), "\(source) \(size) row \(row)")
                }
            }
        }
    }

    /// Within half a code value (plus the 14-bit coefficients' share) of the exact result:
    /// rounded once. Cut to 8 bits before the re-encoding, as 8-bit pictures are, the worst
    /// sample here is a whole code value off.
    @Test(.timeLimit(.minutes(1)))
    func theResultIsRoundedOnce() {
        let size = Size(width: 256, height: 64)
        for source in [YCbCrMatrix.bt2020, .bt601] {
            // Codes inside the legal range, so clamping plays no part.
            var rng = SplitMix64(state: 11)
            let yStride = size.width, cStride = size.width / 2
            let y = (0..<(yStride * size.height)).map { _ in UInt16.random(in: 200...800, using: &rng) }
            let u = (0..<(cStride * size.height / 2)).map { _ in UInt16.random(in: 400...624, using: &rng) }
            let v = (0..<(cStride * size.height / 2)).map { _ in UInt16.random(in: 400...624, using: &rng) }
            let out = Self.narrow((y, u, v, yStride, cStride), size: size, ColorConversion.between(source, .bt709)!, simd: true)
            let m = ColorConversion.multiply(YCbCrMatrix.bt709.forward, ColorConversion.invert(source.forward))
            var worst = 0.0, worstTwice = 0.0
            for row in 0..<size.height {
                for x in 0..<size.width {
                    let c = (row / 2) * cStride + x / 2
                    let yy = (Double(y[row * yStride + x]) - 64) / 876, pb = (Double(u[c]) - 512) / 896, pr = (Double(v[c]) - 512) / 896
                    let exact = 16 + 219 * (yy + m[0][1] * pb + m[0][2] * pr)
                    worst = max(worst, abs(Double(out.view.y.row(row)[x]) - exact))
                    // The same pixel cut to 8 bits first, then re-encoded and rounded again.
                    let y8 = (Double(y[row * yStride + x]) / 4).rounded(), u8 = (Double(u[c]) / 4).rounded(), v8 = (Double(v[c]) / 4).rounded()
                    let twice = (y8 + 219.0 / 224 * (m[0][1] * (u8 - 128) + m[0][2] * (v8 - 128))).rounded()
                    worstTwice = max(worstTwice, abs(twice - exact))
                }
            }
            print(String(format: "%@ 10-bit to BT.709 8-bit: worst luma error %.3f (rounded twice: %.3f)", source.rawValue, worst, worstTwice))
            #expect(worst < 0.51, "\(source): \(worst)")
            #expect(worstTwice > 0.8, "the comparison no longer tells one rounding from two")
        }
    }
}
