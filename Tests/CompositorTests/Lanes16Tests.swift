import Foundation
@testable import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct Lanes16Tests {
    /// The 16-bit decomposition against the 32-bit formula it replaces, for every (u, v).
    @Test(arguments: [(YCbCrMatrix.bt601, YCbCrMatrix.bt709), (.bt2020, .bt709), (.bt709, .bt601), (.bt601, .bt2020)])
    func sixteenBitLanesGiveTheThirtyTwoBitResult(from: YCbCrMatrix, to: YCbCrMatrix) throws {
        let c = try #require(ColorConversion(from: from, to: to))
        let lanes = try #require(c.lanes16)
        var mismatches = 0
        for u in -128...127 {
            let us = SIMD8<Int16>(repeating: Int16(u))
            for vBase in stride(from: -128, to: 128, by: 8) {
                let vs = SIMD8<Int16>((0..<8).map { Int16(vBase + $0) })
                let luma = lanes.luma(us, vs)
                let cb = lanes.cb(us, vs, us, vs), cr = lanes.cr(us, vs, us, vs)
                for i in 0..<8 {
                    let v = Int32(vBase + i), u32 = Int32(u)
                    let dy = (c.lumaFromCb * u32 + c.lumaFromCr * v + 8192) >> 14
                    let b = min(max(128 + ((c.cbFromCb * u32 + c.cbFromCr * v + 8192) >> 14), 0), 255)
                    let r = min(max(128 + ((c.crFromCb * u32 + c.crFromCr * v + 8192) >> 14), 0), 255)
                    if Int32(luma[i]) != dy || Int32(cb[i]) != b || Int32(cr[i]) != r || cb[i + 8] != cb[i] { mismatches += 1 }
                }
            }
        }
        #expect(mismatches == 0)
    }
}
