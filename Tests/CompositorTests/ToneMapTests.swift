import Foundation
@testable import Compositor
import Testing

/// HDR to SDR (`ToneMap`): the SIMD kernel against its scalar reference to the bit, and the
/// reference's computed curves against the transfer functions in double precision. The
/// comparison with FFmpeg's own tone mapping is in DualCamTests (HDRTests).
@Suite(.timeLimit(.minutes(10))) struct ToneMapTests {
    /// Random 10-bit planes (the whole 0...1023, so out-of-range codes are covered too).
    static func planes(_ size: Size, seed: UInt64) -> (y: [UInt16], u: [UInt16], v: [UInt16], yStride: Int, cStride: Int) {
        var rng = SplitMix64(state: seed)
        let yStride = size.width + 3, cStride = (size.width + 1) / 2 + 5, cRows = (size.height + 1) / 2
        func plane(_ n: Int) -> [UInt16] { (0..<n).map { _ in UInt16.random(in: 0...1023, using: &rng) } }
        return (plane(yStride * size.height), plane(cStride * cRows), plane(cStride * cRows), yStride, cStride)
    }

    @Test(.timeLimit(.minutes(1)), arguments: [Size(width: 2, height: 2), Size(width: 17, height: 5), Size(width: 33, height: 18),
                                               Size(width: 64, height: 32), Size(width: 1921, height: 7)])
    func simdGivesTheReferencesBytes(size: Size) {
        for transfer in [ToneMap.Transfer.pq, .hlg] {
            let p = Self.planes(size, seed: UInt64(size.width * 131 + size.height))
            let map = ToneMap(transfer: transfer)
            let a = I420Buffer(size: size), b = I420Buffer(size: size)
            a.view.fill(y: 1, u: 2, v: 3)
            b.view.fill(y: 4, u: 5, v: 6)
            p.y.withUnsafeBufferPointer { y in
                p.u.withUnsafeBufferPointer { u in
                    p.v.withUnsafeBufferPointer { v in
                        let s = ToneMap.Source(y: y.baseAddress!, yStride: p.yStride, u: u.baseAddress!, v: v.baseAddress!,
                                               chromaStride: p.cStride)
                        map.convertScalar(s, into: a.view)
                        map.convertSIMD(s, into: b.view)
                    }
                }
            }
            for (pa, pb) in zip(a.view.planes, b.view.planes) {
                for row in 0..<pa.height {
                    let ra = Array(UnsafeBufferPointer(start: pa.row(row), count: pa.width))
                    let rb = Array(UnsafeBufferPointer(start: pb.row(row), count: pb.width))
                    #expect(ra == rb, "\(transfer) \(size) row \(row)")
                }
            }
        }
    }

    /// One pixel in double precision with the exact functions: what `FastPow` stands in for.
    static func exactLuma(_ map: ToneMap, y: Double, cb: Double, cr: Double) -> Double {
        let yy = (y - 64) / 876, pb = (cb - 512) / 896, pr = (cr - 512) / 896
        let r1 = yy + 1.4746 * pr, b1 = yy + 1.8814 * pb, g1 = (yy - 0.2627 * r1 - 0.0593 * b1) / 0.6780
        func lin(_ e: Double) -> Double {
            let c = min(max(e, 0), 1)
            return map.transfer == .pq ? ToneMap.pqEOTF(c) * 100 : ToneMap.hlgInverseOETF(c)
        }
        var (r, g, b) = (lin(r1), lin(g1), lin(b1))
        if map.transfer == .hlg {
            let k = 10 * pow(0.2627 * r + 0.6780 * g + 0.0593 * b, 0.2)
            (r, g, b) = (r * k, g * k, b * k)
        }
        let m = [[1.660491, -0.587641, -0.072850], [-0.124550, 1.132900, -0.008349], [-0.018151, -0.100579, 1.118730]]
        let c = m.map { $0[0] * r + $0[1] * g + $0[2] * b }
        let sig = max(c.max()!, 1e-6)
        func hable(_ x: Double) -> Double { (x * (x * 0.15 + 0.05) + 0.004) / (x * (x * 0.15 + 0.5) + 0.06) - 0.02 / 0.3 }
        let scale = hable(sig) / hable(10) / sig
        let s = c.map { pow(max($0 * scale, 0), 1 / 2.4) }
        return 0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2]
    }

    @Test(.timeLimit(.minutes(1)))
    func theComputedCurvesAreWithinAQuarterOfACodeValueOfTheExactOnes() {
        var rng = SplitMix64(state: 2026)
        for transfer in [ToneMap.Transfer.pq, .hlg] {
            let map = ToneMap(transfer: transfer)
            var worst = 0.0
            for _ in 0..<20_000 {
                let y = Float(UInt16.random(in: 64...940, using: &rng))
                let cb = Float(UInt16.random(in: 64...960, using: &rng)), cr = Float(UInt16.random(in: 64...960, using: &rng))
                let ours = map.pixel(y, cb, cr).0
                let exact = Self.exactLuma(map, y: Double(y), cb: Double(cb), cr: Double(cr))
                worst = max(worst, abs(Double(ours) - exact) * 219)
            }
            print(String(format: "%@: within %.4f of a code value of the exact luma", transfer.rawValue, worst))
            #expect(worst < 0.25, "\(transfer): \(worst) code values")
        }
    }

    /// The fast 2^x and log2 against libm in double precision, and their SIMD twins against
    /// them to the bit, over the ranges the curves use.
    @Test(.timeLimit(.minutes(1)))
    func fastPowersAreWithinAFewMillionthsAndTheirTwinsAgree() {
        var rng = SplitMix64(state: 7)
        var worstExp = 0.0, worstLog = 0.0, mismatches = 0
        for _ in 0..<50_000 {
            let x = Float.random(in: -126...20, using: &rng)
            let e = FastPow.exp2(x)
            worstExp = max(worstExp, abs(Double(e) / Foundation.exp2(Double(x)) - 1))
            let a = Float.random(in: 1e-12...4000, using: &rng) * Float.random(in: 0...1, using: &rng) + 1e-30
            let l = FastPow.log2(a)
            worstLog = max(worstLog, abs(Double(l) - Foundation.log2(Double(a))))
            let v = SIMD8<Float>(x, x * 0.5, x + 1, -x * 0.1, x - 3, x * 0.01, -x, 0), w = SIMD8<Float>(a, a * 3, a + 0.5, 1 / a, 2 * a, a * a, 1, 0)
            let ev = FastPow.exp2(v), lv = FastPow.log2(w)
            for lane in 0..<8 {
                if ev[lane].bitPattern != FastPow.exp2(v[lane]).bitPattern { mismatches += 1 }
                if lv[lane].bitPattern != FastPow.log2(w[lane]).bitPattern { mismatches += 1 }
            }
        }
        print(String(format: "exp2: relative error at most %.2e; log2: absolute error at most %.2e", worstExp, worstLog))
        #expect(worstExp < 3e-7)
        // log2's results reach 100, whose float neighbours are 8e-6 apart: its error is absolute.
        #expect(worstLog < 1e-6)
        #expect(mismatches == 0)
        // Below the floor: the floor's value, never a wrapped exponent.
        #expect(FastPow.exp2(-1000) == FastPow.exp2(-126) && FastPow.exp2(-126) > 0)
        #expect(FastPow.log2(0) == FastPow.log2(1e-30))
    }

    @Test(.timeLimit(.minutes(1)))
    func onlyPQAndHLGAreToneMapped() {
        #expect(ToneMap.transfer(ffmpegTRC: 16) == .pq)
        #expect(ToneMap.transfer(ffmpegTRC: 18) == .hlg)
        // BT.709, unspecified, sRGB, BT.2020 10-bit SDR: left as they are.
        for sdr: Int32 in [1, 2, 13, 14, 15] { #expect(ToneMap.transfer(ffmpegTRC: sdr) == nil) }
    }
}
