import Foundation
@testable import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct JPEGRangeTests {
    /// Rescaling the range and re-encoding in one pass, whole and in two parts, against the
    /// two passes one pixel at a time.
    @Test(arguments: [true, false], [(1920, 1080), (640, 481), (64, 2), (66, 3), (96, 17), (10, 5)])
    func convertingMatchesTheTwoPasses(fullHeightChroma: Bool, size: (w: Int, h: Int)) {
        let planes = RandomJPEGPlanes(width: size.w, height: size.h, fullHeightChroma: fullHeightChroma,
                                      seed: UInt64(size.w * 17 + size.h))
        let conversion = ColorConversion(from: .bt601, to: .bt709)!
        let picture = Size(width: size.w, height: size.h)
        let reference = I420Buffer(size: picture), whole = I420Buffer(size: picture), parts = I420Buffer(size: picture)
        let rows = parts.view.u.height, split = (rows + 1) / 2
        planes.withSource { source in
            JPEGRange.convertScalar(source, into: reference.view, converting: conversion)
            JPEGRange.convertSIMD(source, into: whole.view, converting: conversion)
            JPEGRange.convertSIMD(source, into: parts.view, converting: conversion, chromaRows: split..<rows)
            JPEGRange.convertSIMD(source, into: parts.view, converting: conversion, chromaRows: 0..<split)
        }
        #expect(differingSamples(reference, whole, parts) == 0, "\(picture)")
    }

    @Test(arguments: [true, false], [(1920, 1080), (640, 360), (64, 2), (66, 3), (96, 17), (240, 135), (10, 5)])
    func simdMatchesScalar(fullHeightChroma: Bool, size: (w: Int, h: Int)) {
        let (w, h) = size
        let planes = RandomJPEGPlanes(width: w, height: h, fullHeightChroma: fullHeightChroma, seed: UInt64(w * 31 + h))
        let a = I420Buffer(size: Size(width: w, height: h)), b = I420Buffer(size: Size(width: w, height: h))
        planes.withSource { source in
            JPEGRange.convertScalar(source, into: a.view)
            JPEGRange.convertSIMD(source, into: b.view)
        }
        #expect(differingSamples(a, b) == 0)
        // The reference itself: the exact rounded scaling of the (paired) samples.
        #expect(Int(a.view.y[0, 0]) == Int((Double(planes.luma[0]) * 219 / 255).rounded()) + 16)
        let u = planes.u
        let c0 = fullHeightChroma && h > 1 ? (Int(u[0]) + Int(u[planes.chromaStride]) + 1) / 2 : Int(u[0])
        #expect(Int(a.view.u[0, 0]) == Int((Double(c0) * 224 / 255).rounded()) + 16)
    }

    @Test func theRangeEndsMapToTheLimitedRangeEnds() {
        #expect(JPEGRange.limited(0, scale: 219) == 16 && JPEGRange.limited(255, scale: 219) == 235)
        #expect(JPEGRange.limited(0, scale: 224) == 16 && JPEGRange.limited(255, scale: 224) == 240)
        #expect(JPEGRange.limited(128, scale: 224) == 128)
    }
}
