import Foundation
@testable import Compositor
import Testing

@Suite(.timeLimit(.minutes(2))) struct CameraFormatTests {
    @Test(arguments: [CameraFormats.Packed422.yuyv, .uyvy],
          [(640, 360), (1280, 720), (32, 2), (34, 3), (16, 1), (1920, 1080), (48, 17)])
    func packed422SIMDMatchesScalar(order: CameraFormats.Packed422, size: (w: Int, h: Int)) {
        let (w, h) = size
        let stride = 2 * w + 8
        var rng = SplitMix64(state: UInt64(w * h))
        let src = (0..<(stride * h)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let a = I420Buffer(size: Size(width: w, height: h)), b = I420Buffer(size: Size(width: w, height: h))
        if order == .yuyv {
            CameraFormats.yuyvScalar(src, stride: stride, into: a.view)
            CameraFormats.yuyvSIMD(src, stride: stride, into: b.view)
        } else {
            CameraFormats.uyvyScalar(src, stride: stride, into: a.view)
            CameraFormats.uyvySIMD(src, stride: stride, into: b.view)
        }
        for (p, q) in zip(a.view.planes, b.view.planes) {
            #expect((0..<p.height).allSatisfy { y in (0..<p.width).allSatisfy { p[$0, y] == q[$0, y] } })
        }
        // Spot-check the layout: Y0 U0 Y1 V0, or U0 Y0 V0 Y1.
        let (luma1, u0, v0) = order == .yuyv ? (2, 1, 3) : (3, 0, 2)
        let below = h > 1 ? stride : 0
        #expect(a.view.y[1, 0] == src[luma1])
        #expect(a.view.u[0, 0] == UInt8((Int(src[u0]) + Int(src[below + u0]) + 1) >> 1))
        #expect(a.view.v[0, 0] == UInt8((Int(src[v0]) + Int(src[below + v0]) + 1) >> 1))
    }

    /// Unpacking and re-encoding in one pass, whole and in the two halves two threads
    /// convert, against unpacking and then converting one pixel at a time. The widths
    /// include ones no multiple of 32 (a scalar tail) and ones the fused path refuses.
    @Test(arguments: [CameraFormats.Packed422.yuyv, .uyvy],
          [(1920, 1080), (1280, 720), (640, 481), (32, 2), (34, 3), (96, 1), (30, 7), (1922, 5)])
    func packed422ConvertingMatchesTheTwoPasses(order: CameraFormats.Packed422, size: (w: Int, h: Int)) {
        let (w, h) = size
        let stride = 2 * w + 24
        var rng = SplitMix64(state: UInt64(w * 3 + h))
        let src = (0..<(stride * h)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        // Every pair of matrices on the small sizes (1922x5 alone is 19 000 random pixels);
        // the large ones, slow under the sanitizers' builds, with the webcam's own pair.
        let pairs = YCbCrMatrix.allCases.flatMap { from in YCbCrMatrix.allCases.filter { $0 != from }.map { (from, $0) } }
        for (from, to) in w * h > 1922 * 5 ? [(YCbCrMatrix.bt601, YCbCrMatrix.bt709)] : pairs {
            let conversion = ColorConversion(from: from, to: to)!
            let size = Size(width: w, height: h)
            let reference = I420Buffer(size: size), whole = I420Buffer(size: size), halves = I420Buffer(size: size)
            CameraFormats.packed422Scalar(src, stride: stride, order: order, into: reference.view, converting: conversion)
            CameraFormats.packed422SIMD(src, stride: stride, order: order, into: whole.view, converting: conversion)
            let rows = halves.view.u.height, split = rows / 3
            CameraFormats.packed422SIMD(src, stride: stride, order: order, into: halves.view, converting: conversion,
                                        chromaRows: split..<rows)
            CameraFormats.packed422SIMD(src, stride: stride, order: order, into: halves.view, converting: conversion,
                                        chromaRows: 0..<split)
            #expect(differingSamples(reference, whole, halves) == 0, "\(from) to \(to) \(w)x\(h)")
        }
    }

    /// The one-pass conversion takes pmaddwd's coefficients: a conversion without them would
    /// fall back to two passes, correct but at the old cost, unnoticed.
    @Test func everyConversionUnpacksAndReencodesInOnePass() {
        for from in YCbCrMatrix.allCases {
            for to in YCbCrMatrix.allCases where to != from {
                #expect(ColorConversion(from: from, to: to)!.pairLanes != nil, "\(from) to \(to)")
            }
        }
    }

    /// The inset camera's reduced conversion, whole and in the two parts two threads
    /// convert, against the reference; with and without re-encoding. The sizes include ones
    /// whose rows end inside a block (the last block overlaps) and ones too narrow for a
    /// block (the reference runs).
    @Test(arguments: [CameraFormats.Packed422.yuyv, .uyvy], [1, 2])
    func packed422ReducedSIMDMatchesScalar(order: CameraFormats.Packed422, shift: Int) {
        for (w, h) in [(1920, 1080), (1280, 720), (640, 480), (1928, 1088), (128, 8), (64, 16), (32, 8)]
        where CameraFormats.packed422Reduces(Size(width: w, height: h), shift: shift) {
            let stride = 2 * w + 40
            var rng = SplitMix64(state: UInt64(w * 7 + h + shift))
            let src = (0..<(stride * h)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let size = Size(width: w >> shift, height: h >> shift)
            for conversion in [nil, ColorConversion(from: .bt601, to: .bt709)] {
                let reference = I420Buffer(size: size), whole = I420Buffer(size: size), parts = I420Buffer(size: size)
                CameraFormats.packed422ReducedScalar(src, stride: stride, order: order, shift: shift, into: reference.view,
                                                     converting: conversion)
                CameraFormats.packed422ReducedSIMD(src, stride: stride, order: order, shift: shift, into: whole.view,
                                                   converting: conversion)
                let rows = parts.view.u.height, split = rows / 3
                CameraFormats.packed422ReducedSIMD(src, stride: stride, order: order, shift: shift, into: parts.view,
                                                   converting: conversion, chromaRows: split..<rows)
                CameraFormats.packed422ReducedSIMD(src, stride: stride, order: order, shift: shift, into: parts.view,
                                                   converting: conversion, chromaRows: 0..<split)
                #expect(differingSamples(reference, whole, parts) == 0, "\(w)x\(h) 1/\(1 << shift) \(conversion == nil ? "" : "re-encoded")")
            }
            // The reference itself, on the first block: the rounded means, counted by hand.
            let reference = I420Buffer(size: size)
            CameraFormats.packed422ReducedScalar(src, stride: stride, order: order, shift: shift, into: reference.view,
                                                 converting: nil)
            let n = 1 << shift, (lo, co) = order == .yuyv ? (0, 1) : (1, 0)
            let luma = (0..<n).flatMap { r in (0..<n).map { x in Int(src[r * stride + 2 * x + lo]) } }
            let u = (0..<2 * n).flatMap { r in (0..<n).map { p in Int(src[r * stride + 4 * p + co]) } }
            let v = (0..<2 * n).flatMap { r in (0..<n).map { p in Int(src[r * stride + 4 * p + co + 2]) } }
            func mean(_ s: [Int]) -> UInt8 { UInt8((s.reduce(0, +) + s.count / 2) / s.count) }
            #expect(reference.view.y[0, 0] == mean(luma) && reference.view.u[0, 0] == mean(u) && reference.view.v[0, 0] == mean(v))
        }
    }

    /// A camera in the inset converts only the columns the inset reads: those, widened to
    /// whole chroma blocks, are the reference's, and every other sample is left as it was.
    @Test(arguments: [CameraFormats.Packed422.yuyv, .uyvy], [1, 2])
    func packed422ReducedColumnsAreTheWholeOnesAndNoOthers(order: CameraFormats.Packed422, shift: Int) {
        let (w, h) = (640, 360), stride = 2 * w + 40
        var rng = SplitMix64(state: UInt64(shift * 31))
        let src = (0..<(stride * h)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let size = Size(width: w >> shift, height: h >> shift)
        let conversion = ColorConversion(from: .bt601, to: .bt709)
        let reference = I420Buffer(size: size)
        CameraFormats.packed422ReducedScalar(src, stride: stride, order: order, shift: shift, into: reference.view,
                                             converting: conversion)
        // A middle range, one at the left edge, one at the right, and one narrower than a block.
        for columns in [size.width / 3..<size.width / 2 + 7, 0..<45, size.width - 61..<size.width, 61..<64] {
            let part = I420Buffer(size: size)
            part.view.fill(y: 7, u: 7, v: 7)
            CameraFormats.packed422ReducedSIMD(src, stride: stride, order: order, shift: shift, into: part.view,
                                               converting: conversion, chromaRows: 0..<size.height / 4, columns: columns)
            CameraFormats.packed422ReducedSIMD(src, stride: stride, order: order, shift: shift, into: part.view,
                                               converting: conversion, chromaRows: size.height / 4..<size.height / 2,
                                               columns: columns)
            let chroma = CameraFormats.blockColumns(columns, chromaWidth: size.width / 2)
            #expect(chroma.count >= 16 && chroma.lowerBound <= columns.lowerBound / 2
                    && chroma.upperBound >= (columns.upperBound + 1) / 2, "\(columns)")
            var wrong = 0
            for (plane, (p, r)) in zip([1, 2, 2], zip(part.view.planes, reference.view.planes)) {
                let inside = plane == 1 ? 2 * chroma.lowerBound..<2 * chroma.upperBound : chroma
                for y in 0..<p.height {
                    for x in 0..<p.width where p[x, y] != (inside.contains(x) ? r[x, y] : 7) { wrong += 1 }
                }
            }
            #expect(wrong == 0, "1/\(1 << shift) columns \(columns)")
        }
    }

    /// Which frames reduce: whole blocks only.
    @Test func packed422ReducesWholeBlocksOnly() {
        #expect(CameraFormats.packed422Reduces(Size(width: 1920, height: 1080), shift: 2))
        #expect(CameraFormats.packed422Reduces(Size(width: 1280, height: 720), shift: 1))
        #expect(!CameraFormats.packed422Reduces(Size(width: 1280, height: 722), shift: 2))
        #expect(!CameraFormats.packed422Reduces(Size(width: 1922, height: 1080), shift: 1))
        #expect(!CameraFormats.packed422Reduces(Size(width: 1920, height: 1080), shift: 3))
    }

    @Test(arguments: [(640, 360), (1280, 720), (32, 2), (34, 3), (1920, 1080)])
    func nv12SIMDMatchesScalar(w: Int, h: Int) {
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        var rng = SplitMix64(state: UInt64(w + h))
        let luma = (0..<(w * h)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let chroma = (0..<(2 * cw * ch)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let a = I420Buffer(size: Size(width: w, height: h)), b = I420Buffer(size: Size(width: w, height: h))
        CameraFormats.nv12Scalar(luma: luma, lumaStride: w, chroma: chroma, chromaStride: 2 * cw, into: a.view)
        CameraFormats.nv12SIMD(luma: luma, lumaStride: w, chroma: chroma, chromaStride: 2 * cw, into: b.view)
        for (p, q) in zip(a.view.planes, b.view.planes) {
            #expect((0..<p.height).allSatisfy { y in (0..<p.width).allSatisfy { p[$0, y] == q[$0, y] } })
        }
        #expect(a.view.v[0, 0] == chroma[1])
    }
}
