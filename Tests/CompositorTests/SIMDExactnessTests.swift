import Compositor
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
    func verticalSum(count: Int) {
        for taps in [1, 2, 3, 5, 12] {
            let stride = count + 7
            let src = randomBytes(stride * taps, seed: UInt64(count * 31 + taps))
            let q = FilterTable(count: 1, origin: 0, step: Double(taps), lower: 0, upper: taps).weights
            var a = [UInt16](repeating: 1, count: count), b = [UInt16](repeating: 2, count: count)
            q.withUnsafeBufferPointer { w in
                Kernels.verticalSumScalar(src, stride: stride, taps: taps, weights: w.baseAddress!, count: count, into: &a)
                Kernels.verticalSumSIMD(src, stride: stride, taps: taps, weights: w.baseAddress!, count: count, into: &b)
            }
            #expect(a == b, "taps \(taps)")
        }
    }

    static let ratios: [(Int, Int)] = [(1280, 1920), (640, 1920), (541, 160), (3840, 1920), (720, 1080), (5, 160),
                                       (1920, 1920), (1920, 1919), (33, 17), (2, 1), (1, 16), (4096, 160)]

    @Test(arguments: ratios)
    func horizontalPasses(source: Int, destination: Int) {
        let t = FilterTable(count: destination, origin: 0, step: Double(source) / Double(destination),
                            lower: 0, upper: source)
        let row = randomBytes(source, seed: UInt64(source * 7 + destination))
        var a = [UInt16](repeating: 1, count: destination), b = [UInt16](repeating: 2, count: destination)
        Kernels.horizontalSumScalar(row, table: t, into: &a)
        Kernels.horizontalSumSIMD(row, table: t, into: &b)
        #expect(a == b)
        // The rounding pass reads UInt16 sums; feed it the largest values it can meet.
        let mid = (0..<source).map { _ in UInt16.random(in: 0...65280) }
        var c = [UInt8](repeating: 1, count: destination), d = [UInt8](repeating: 2, count: destination)
        Kernels.horizontalRoundScalar(mid, offset: 0, table: t, into: &c)
        Kernels.horizontalRoundSIMD(mid, offset: 0, table: t, into: &d)
        #expect(c == d, "halving: \(t.isHalving)")
    }

    @Test func halvingIsDetectedAndExact() {
        let t = FilterTable(count: 1920, origin: 0, step: 2, lower: 0, upper: 3840)
        #expect(t.isHalving)
        #expect(!FilterTable(count: 160, origin: 0, step: 3.38, lower: 0, upper: 541).isHalving)
        for n in Self.lengths {
            let mid = (0..<(2 * n)).map { _ in UInt16.random(in: 0...65280) }
            var a = [UInt8](repeating: 1, count: n), b = [UInt8](repeating: 2, count: n)
            Kernels.halveRoundScalar(mid, count: n, into: &a)
            Kernels.halveRoundSIMD(mid, count: n, into: &b)
            #expect(a == b, "count \(n)")
        }
    }

    @Test(arguments: lengths)
    func verticalRound(count: Int) {
        for taps in [1, 2, 3, 4, 11] {
            let rows = (0..<taps).map { _ in (0..<count).map { _ in UInt16.random(in: 0...65280) } }
            let q = FilterTable(count: 1, origin: 0, step: Double(taps), lower: 0, upper: taps).weights
            var a = [UInt8](repeating: 1, count: count), b = [UInt8](repeating: 2, count: count)
            let pointers = rows.map { r -> UnsafeMutablePointer<UInt16> in
                let p = UnsafeMutablePointer<UInt16>.allocate(capacity: count)
                p.initialize(from: r, count: count)
                return p
            }
            defer { pointers.forEach { $0.deallocate() } }
            let list = pointers.map { UnsafePointer($0) }
            list.withUnsafeBufferPointer { l in
                q.withUnsafeBufferPointer { w in
                    Kernels.verticalRoundScalar(l.baseAddress!, taps: taps, weights: w.baseAddress!, count: count, into: &a)
                    Kernels.verticalRoundSIMD(l.baseAddress!, taps: taps, weights: w.baseAddress!, count: count, into: &b)
                }
            }
            #expect(a == b, "taps \(taps)")
        }
    }

    /// Whole planes: every product case plus odd and tiny sizes, shrinking and enlarging.
    static let planes: [(Int, Int, Int, Int)] = [
        (1280, 720, 160, 213), (640, 480, 160, 213), (1280, 720, 1920, 1080), (640, 480, 1920, 1080),
        (3840, 2160, 1920, 1080), (4096, 2160, 1920, 1080), (1920, 1080, 160, 213), (641, 479, 160, 213),
        (641, 479, 1920, 1080), (1, 1, 160, 213), (3, 7, 17, 33), (320, 180, 1920, 1080), (1920, 1080, 1920, 1080),
    ]

    @Test(arguments: planes)
    func wholePlaneSIMDMatchesScalar(sw: Int, sh: Int, dw: Int, dh: Int) {
        let src = randomPicture(Size(width: sw, height: sh), seed: UInt64(sw * 3 + sh * 5 + dw))
        let plan = ScalePlan(sourceSize: src.size, crop: .aspectFill(source: src.size, target: Size(width: dw, height: dh)),
                             destination: Rect(x: 0, y: 0, width: dw, height: dh))
        let a = I420Buffer(size: Size(width: dw, height: dh)), b = I420Buffer(size: Size(width: dw, height: dh))
        let scratch = UnsafeMutablePointer<UInt16>.allocate(capacity: plan.scratchCount)
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
