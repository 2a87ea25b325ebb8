import Foundation
@testable import Compositor
import Testing

/// Every SIMD kernel against its scalar reference, bit for bit, on random data and on the
/// sizes where lane handling goes wrong: below one vector, one off a multiple of 16, odd.
@Suite struct SIMDExactnessTests {
    static let lengths = [1, 2, 15, 16, 17, 31, 33, 160, 541, 1280, 1919, 1920]

    func randomBytes(_ n: Int, seed: UInt64) -> [UInt8] {
        var rng = SplitMix64(state: seed)
        return (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    @Test(arguments: lengths)
    func vertical(count: Int) {
        for taps in [1, 2, 3, 5, 12] {
            let stride = count + 7
            let src = randomBytes(stride * taps, seed: UInt64(count * 31 + taps))
            let q = FilterTable(count: 1, origin: 0, step: Double(taps), lower: 0, upper: taps).weights
            var a = [UInt8](repeating: 1, count: count), b = [UInt8](repeating: 2, count: count)
            var c = [UInt8](repeating: 3, count: count)
            src.withUnsafeBufferPointer { source in
                let rows = (0..<taps).map { source.baseAddress! + $0 * stride }
                q.withUnsafeBufferPointer { w in
                    Kernels.verticalScalar(src, stride: stride, taps: taps, weights: w.baseAddress!, count: count, into: &a)
                    Kernels.verticalSIMD(src, stride: stride, taps: taps, weights: w.baseAddress!, count: count, into: &b)
                    rows.withUnsafeBufferPointer {
                        Kernels.verticalRowsSIMD($0.baseAddress!, taps: taps, weights: w.baseAddress!, count: count, into: &c)
                    }
                }
            }
            #expect(a == b, "taps \(taps)")
            #expect(a == c, "rows, taps \(taps)")
        }
    }

    static let ratios: [(Int, Int)] = [(1280, 1920), (640, 1920), (541, 160), (3840, 1920), (720, 1080), (5, 160),
                                       (1920, 1920), (1920, 1919), (33, 17), (2, 1), (1, 16), (4096, 160)]

    /// The column kernel on 16 transposed rows against the row-by-row reference.
    @Test(arguments: ratios)
    func columnsMatchRows(source: Int, destination: Int) {
        let t = FilterTable(count: destination, origin: 0, step: Double(source) / Double(destination),
                            lower: 0, upper: source)
        let rows = (0..<16).map { randomBytes(source, seed: UInt64(source * 7 + destination + $0)) }
        var columns = [UInt8](repeating: 0, count: 16 * source)
        for r in 0..<16 { for x in 0..<source { columns[x * 16 + r] = rows[r][x] } }
        var simd = [UInt8](repeating: 1, count: 16 * (destination + 1)), scalar = simd
        Kernels.columnsSIMD(columns, offset: 0, table: t, into: &simd)
        Kernels.columnsScalar(columns, offset: 0, table: t, into: &scalar)
        for r in 0..<16 {
            var reference = [UInt8](repeating: 0, count: destination)
            Kernels.horizontalScalar(rows[r], offset: 0, table: t, into: &reference)
            #expect((0..<destination).allSatisfy { simd[$0 * 16 + r] == reference[$0] }, "row \(r)")
            #expect((0..<destination).allSatisfy { scalar[$0 * 16 + r] == reference[$0] }, "scalar row \(r)")
        }
    }

    @Test func halvingIsDetectedAndExact() {
        let t = FilterTable(count: 1920, origin: 0, step: 2, lower: 0, upper: 3840)
        #expect(t.isHalving)
        #expect(!FilterTable(count: 160, origin: 0, step: 3.38, lower: 0, upper: 541).isHalving)
        for n in Self.lengths {
            let row = randomBytes(2 * n, seed: UInt64(n))
            var a = [UInt8](repeating: 1, count: n), b = [UInt8](repeating: 2, count: n), c = a
            Kernels.halveScalar(row, count: n, into: &a)
            Kernels.halveSIMD(row, count: n, into: &b)
            #expect(a == b, "count \(n)")
            // And the halving shortcut is the general filter's answer.
            Kernels.horizontalScalar(row, offset: 0, table: FilterTable(count: n, origin: 0, step: 2, lower: 0, upper: 2 * n),
                                     into: &c)
            #expect(a == c, "general filter, count \(n)")
        }
    }

    @Test func transposeTile() {
        let src = randomBytes(40 * 16, seed: 5)
        var a = [UInt8](repeating: 0, count: 16 * 24), b = a
        Kernels.transposeTileScalar(src, srcStride: 40, &a, dstStride: 24)
        Kernels.transposeTileSIMD(src, srcStride: 40, &b, dstStride: 24)
        #expect(a == b)
        #expect(a[3 * 24 + 5] == src[5 * 40 + 3])
    }

    /// Whole planes: every product case plus odd and tiny sizes, shrinking and enlarging.
    static let planes: [(Int, Int, Int, Int)] = [
        (1280, 720, 160, 213), (640, 480, 160, 213), (1280, 720, 1920, 1080), (640, 480, 1920, 1080),
        (3840, 2160, 1920, 1080), (4096, 2160, 1920, 1080), (1920, 1080, 160, 213), (641, 479, 160, 213),
        (641, 479, 1920, 1080), (1, 1, 160, 213), (3, 7, 17, 33), (320, 180, 1920, 1080), (1920, 1080, 1920, 1080),
        (1279, 719, 1920, 1080), (17, 17, 1919, 1079), (360, 640, 160, 213), (360, 640, 1920, 1080), (3, 1000, 33, 1001),
    ]

    @Test(arguments: planes)
    func wholePlaneSIMDMatchesScalar(sw: Int, sh: Int, dw: Int, dh: Int) {
        let src = randomPicture(Size(width: sw, height: sh), seed: UInt64(sw * 3 + sh * 5 + dw))
        let plan = ScalePlan(sourceSize: src.size, crop: .aspectFill(source: src.size, target: Size(width: dw, height: dh)),
                             destination: Rect(x: 0, y: 0, width: dw, height: dh))
        let a = I420Buffer(size: Size(width: dw, height: dh)), b = I420Buffer(size: Size(width: dw, height: dh))
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: plan.scratchCount)
        defer { scratch.deallocate() }
        let simdScratch = ResampleScratch()
        for (i, (s, tables)) in zip(src.view.planes, [(plan.lumaX, plan.lumaY), (plan.chromaX, plan.chromaY),
                                                       (plan.chromaX, plan.chromaY)]).enumerated() {
            Resample.scalar(source: s, into: a.view.planes[i], x: tables.0, y: tables.1, scratch: scratch)
            Resample.simd(source: s, into: b.view.planes[i], x: tables.0, y: tables.1, scratch: simdScratch)
        }
        for (p, q) in zip(a.view.planes, b.view.planes) {
            var differing = 0
            for y in 0..<p.height { for x in 0..<p.width where p[x, y] != q[x, y] { differing += 1 } }
            #expect(differing == 0)
        }
    }
}

@Suite struct ColorSIMDTests {
    @Test(arguments: [Rect(x: 0, y: 0, width: 64, height: 32), Rect(x: 1, y: 1, width: 33, height: 7),
                      Rect(x: 1744, y: 851, width: 160, height: 213), Rect(x: 0, y: 0, width: 1920, height: 1080),
                      Rect(x: 17, y: 3, width: 1, height: 1), Rect(x: 5, y: 0, width: 15, height: 2)])
    func simdMatchesScalar(rect: Rect) {
        for from in [YCbCrMatrix.bt601, .bt2020] {
            let a = randomPicture(Size(width: 1920, height: 1080), seed: UInt64(rect.x * 7 + rect.width))
            let b = I420Buffer(size: a.size)
            b.view.copy(from: a.view)
            let conversion = ColorConversion(from: from, to: .bt709)!
            conversion.applyScalar(to: a.view, lumaRect: rect)
            conversion.apply(to: b.view, lumaRect: rect)
            for (p, q) in zip(a.view.planes, b.view.planes) {
                var differing = 0
                for y in 0..<p.height { for x in 0..<p.width where p[x, y] != q[x, y] { differing += 1 } }
                #expect(differing == 0, "\(from) \(rect)")
            }
        }
    }
}

@Suite struct Lanes16Tests {
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

@Suite struct ForkJoinTests {
    /// The halves run at the same time: each writes only its own counters (one array for
    /// both was a data race, which ThreadSanitizer reported).
    final class Counting: ForkJoinJob {
        let caller = pthread_self()
        var topRuns = 0, bottomRuns = 0, bottomOnTheWorker = 0
        func run(half: Int) {
            if half == 0 { topRuns += 1; return }
            bottomRuns += 1
            if pthread_equal(pthread_self(), caller) == 0 { bottomOnTheWorker += 1 }
        }
    }

    /// Each call runs both halves, the second on another thread, and returns after both.
    @Test func bothHalvesRunAndFinishBeforeTheCallReturns() {
        let fork = ForkJoin(name: "dualcam-test")
        let job = Counting()
        for i in 1...1000 {
            fork.run(job)
            // Both halves are done when `run` returns.
            if job.topRuns != i || job.bottomRuns != i { break }
        }
        #expect(job.topRuns == 1000 && job.bottomRuns == 1000)
        #expect(job.bottomOnTheWorker == 1000)
        #expect(ForkJoin.rows(0, of: 135) == 0..<67 && ForkJoin.rows(1, of: 135) == 67..<135)
    }
}

/// Whole frames: the product path (SIMD kernels, rows split over two threads) against the
/// scalar reference, for every corner, odd sizes, BT.601 sources and the swapped layout.
@Suite struct CompositorPathsTests {
    static let cases: [(Corner, Int, Int, Int, Int, YCbCrMatrix)] = [
        (.topRight, 1920, 1080, 1280, 720, .bt709), (.topLeft, 1280, 720, 1920, 1080, .bt601),
        (.bottomRight, 3840, 2160, 640, 480, .bt601), (.bottomLeft, 641, 479, 1, 1, .bt2020),
        (.topRight, 360, 640, 4096, 2160, .bt709), (.bottomLeft, 17, 1000, 1279, 719, .bt601),
    ]

    @Test(arguments: cases)
    func threadedSIMDMatchesScalarReference(corner: Corner, mw: Int, mh: Int, iw: Int, ih: Int, m: YCbCrMatrix) throws {
        let layout = PiPLayout(corner: corner, margin: corner == .bottomLeft ? 15 : 16)
        let main = randomPicture(Size(width: mw, height: mh), seed: UInt64(mw + mh))
        let inset = randomPicture(Size(width: iw, height: ih), seed: UInt64(iw * ih))
        var outputs: [I420Buffer] = []
        for (kernels, threads) in [(PiPCompositor.Kernels.scalar, 1), (.simd, 1), (.simd, 2)] {
            let c = try PiPCompositor(layout: layout, kernels: kernels, threads: threads)
            let out = I420Buffer(size: layout.canvas)
            out.view.fill(y: 1, u: 2, v: 3)
            for _ in 0..<2 {  // twice: plans and the worker are reused
                c.compose(main: SourcePicture(image: main.view, matrix: m),
                          inset: SourcePicture(image: inset.view, matrix: .bt709), into: out.view)
            }
            outputs.append(out)
        }
        for other in outputs.dropFirst() {
            for (p, q) in zip(outputs[0].view.planes, other.view.planes) {
                var differing = 0
                for y in 0..<p.height { for x in 0..<p.width where p[x, y] != q[x, y] { differing += 1 } }
                #expect(differing == 0)
            }
        }
    }
}

@Suite struct CameraFormatTests {
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
        for from in [YCbCrMatrix.bt601, .bt2020] {
            let conversion = ColorConversion(from: from, to: .bt709)!
            let size = Size(width: w, height: h)
            let reference = I420Buffer(size: size), whole = I420Buffer(size: size), halves = I420Buffer(size: size)
            CameraFormats.packed422Scalar(src, stride: stride, order: order, into: reference.view, converting: conversion)
            CameraFormats.packed422SIMD(src, stride: stride, order: order, into: whole.view, converting: conversion)
            let rows = halves.view.u.height, split = rows / 3
            CameraFormats.packed422SIMD(src, stride: stride, order: order, into: halves.view, converting: conversion,
                                        chromaRows: split..<rows)
            CameraFormats.packed422SIMD(src, stride: stride, order: order, into: halves.view, converting: conversion,
                                        chromaRows: 0..<split)
            #expect(differingSamples(reference, whole, halves) == 0, "\(from) \(w)x\(h)")
        }
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

/// Random full-range planes as a JPEG decoder leaves them, rows padded past their width.
struct RandomJPEGPlanes {
    let luma: [UInt8], u: [UInt8], v: [UInt8]
    let yStride: Int, chromaStride: Int, fullHeightChroma: Bool

    init(width w: Int, height h: Int, fullHeightChroma: Bool, seed: UInt64) {
        let cw = (w + 1) / 2, ch = fullHeightChroma ? h : (h + 1) / 2
        yStride = w + 24
        chromaStride = cw + 40
        self.fullHeightChroma = fullHeightChroma
        var rng = SplitMix64(state: seed)
        let (ys, cs) = (yStride, chromaStride)
        luma = (0..<(ys * h)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        u = (0..<(cs * ch)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        v = (0..<(cs * ch)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    func withSource<R>(_ body: (JPEGRange.Source) -> R) -> R {
        luma.withUnsafeBufferPointer { y in
            u.withUnsafeBufferPointer { u in
                v.withUnsafeBufferPointer { v in
                    body(JPEGRange.Source(y: y.baseAddress!, yStride: yStride, u: u.baseAddress!, v: v.baseAddress!,
                                          chromaStride: chromaStride, chromaFullHeight: fullHeightChroma))
                }
            }
        }
    }
}

/// Samples of `a` that differ from the same sample of any of `others`.
func differingSamples(_ a: I420Buffer, _ others: I420Buffer...) -> Int {
    var differing = 0
    for (i, p) in a.view.planes.enumerated() {
        for y in 0..<p.height {
            for x in 0..<p.width where others.contains(where: { $0.view.planes[i][x, y] != p[x, y] }) { differing += 1 }
        }
    }
    return differing
}

@Suite struct JPEGRangeTests {
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
