import Foundation
@testable import Compositor
import Testing

/// Every SIMD kernel against its scalar reference, bit for bit, on random data and on the
/// sizes where lane handling goes wrong: below one vector, one off a multiple of 16, odd.
@Suite(.timeLimit(.minutes(10))) struct SIMDExactnessTests {
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
                                       (1920, 1920), (1920, 1919), (33, 17), (2, 1), (1, 16), (4096, 160), (16, 17),
                                       (17, 1919), (360, 1080), (1279, 1920)]

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

    /// The shuffling kernel (enlarging, row by row) against the row reference, on every ratio
    /// that has the table and at origins that put the last loads against the row's end.
    @Test(.timeLimit(.minutes(1)), arguments: ratios)
    func shuffledRowsMatchTheReference(source: Int, destination: Int) {
        for origin in [0, 0.37, 0.5] {
            let step = Double(source) / Double(destination)
            let t = FilterTable(count: destination, origin: origin * step, step: step, lower: 0, upper: source)
            // Enlarging a row of at least one vector always has the table; shrinking never does.
            #expect((t.shuffled != nil) == (step < 1 && source >= 16 && destination >= 16), "\(source) -> \(destination)")
            guard let shuffled = t.shuffled else { continue }
            #expect(shuffled.readEnd <= source)
            let row = randomBytes(source, seed: UInt64(source * 5 + destination))
            var reference = [UInt8](repeating: 1, count: destination), simd = [UInt8](repeating: 2, count: destination)
            Kernels.horizontalScalar(row, offset: 0, table: t, into: &reference)
            Kernels.horizontalShuffledSIMD(row, table: shuffled, taps: t.taps, into: &simd)
            #expect(reference == simd, "\(source) -> \(destination) from \(origin)")
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

    /// 2:1 both ways in one pass: against its scalar twin and against the two passes it
    /// replaces (the general vertical pass at weights 128/128, then halving across).
    @Test(.timeLimit(.minutes(1))) func halvingBothWaysIsTheTwoPasses() {
        for n in Self.lengths {
            let top = randomBytes(2 * n, seed: UInt64(3 * n)), bottom = randomBytes(2 * n, seed: UInt64(3 * n + 1))
            var scalar = [UInt8](repeating: 1, count: n), simd = [UInt8](repeating: 2, count: n)
            var band = [UInt8](repeating: 0, count: 2 * n), twoPasses = [UInt8](repeating: 3, count: n)
            Kernels.halveRowsScalar(top, bottom, count: n, into: &scalar)
            Kernels.halveRowsSIMD(top, bottom, count: n, into: &simd)
            #expect(scalar == simd, "count \(n)")
            let rows = top + bottom
            Kernels.verticalScalar(rows, stride: 2 * n, taps: 2, weights: [128, 128], count: 2 * n, into: &band)
            Kernels.halveScalar(band, count: n, into: &twoPasses)
            #expect(scalar == twoPasses, "two passes, count \(n)")
        }
    }

    /// Two rows weighted to 256 go through the rounded-difference kernel (`Kernels.lerp`):
    /// every split of the weights, either row the heavier, the whole and nothing included,
    /// against the general weighted sum.
    @Test(.timeLimit(.minutes(1))) func twoRowsWeightedTo256AreTheWeightedSum() {
        for n in Self.lengths {
            let first = randomBytes(n, seed: UInt64(7 * n)), second = randomBytes(n, seed: UInt64(7 * n + 3))
            for w1 in [0, 1, 43, 127, 128, 129, 213, 255, 256] {
                let weights: [Int16] = [Int16(256 - w1), Int16(w1)]
                var reference = [UInt8](repeating: 1, count: n), simd = [UInt8](repeating: 2, count: n)
                Kernels.verticalScalar(first + second, stride: n, taps: 2, weights: weights, count: n, into: &reference)
                first.withUnsafeBufferPointer { a in
                    second.withUnsafeBufferPointer { b in
                        let rows = [a.baseAddress!, b.baseAddress!]
                        Kernels.verticalRowsSIMD(rows, taps: 2, weights: weights, count: n, into: &simd)
                    }
                }
                #expect(reference == simd, "count \(n), weights \(weights)")
            }
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
