import Compositor
import Testing

struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func randomPicture(_ size: Size, seed: UInt64) -> I420Buffer {
    var rng = SplitMix64(state: seed)
    let b = I420Buffer(size: size)
    for p in b.view.planes {
        for y in 0..<p.height { for x in 0..<p.width { p[x, y] = UInt8.random(in: 0...255, using: &rng) } }
    }
    return b
}

@Suite struct FilterTableTests {
    @Test(arguments: [(1, 160), (1280, 160), (641, 160), (720, 1920), (4096, 1920), (1, 1), (3, 1000),
                      (213, 213), (479, 213), (2160, 1080), (7, 5)])
    func weightsSumToOneAndTapsStayInside(src: Int, dst: Int) {
        let crop = CropRect.aspectFill(source: Size(width: src, height: src), target: Size(width: dst, height: dst))
        let t = FilterTable(count: dst, origin: crop.x, step: crop.width / Double(dst), lower: 0, upper: src)
        for i in 0..<dst {
            let w = t.weights[i * t.taps..<(i + 1) * t.taps]
            #expect(w.reduce(0) { $0 + Int($1) } == 256)
            #expect(w.allSatisfy { $0 >= 0 })
            #expect(t.starts[i] >= 0 && Int(t.starts[i]) + t.taps <= src)
        }
    }

    @Test func areaDownscaleByTwoAveragesPairs() {
        let t = FilterTable(count: 4, origin: 0, step: 2, lower: 0, upper: 8)
        #expect(t.taps == 2)
        #expect(t.starts == [0, 2, 4, 6])
        #expect(t.weights == [128, 128, 128, 128, 128, 128, 128, 128])
    }
}

@Suite struct ResampleTests {
    @Test(arguments: [(640, 480, 160, 213), (641, 479, 160, 213), (1, 1, 160, 213), (1280, 720, 1920, 1080),
                      (4096, 2160, 1920, 1080), (3, 7, 5, 2)])
    func flatStaysFlat(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        let layout = PiPLayout(canvas: Size(width: max(dw, 64), height: max(dh, 64)),
                               inset: Size(width: dw, height: dh), margin: 0)
        let compositor = try PiPCompositor(layout: layout)
        let out = I420Buffer(size: layout.canvas)
        out.view.fill(y: 0, u: 0, v: 0)
        let src = solid(Size(width: sw, height: sh), y: 123, u: 45, v: 210)
        compositor.place(SourcePicture(image: src.view, matrix: .bt709), in: layout.insetRect, of: out.view)
        let r = layout.insetRect, c = r.chroma420
        for y in r.y..<r.maxY { for x in r.x..<r.maxX { #expect(out.view.y[x, y] == 123) } }
        for y in c.y..<c.maxY { for x in c.x..<c.maxX { #expect(out.view.u[x, y] == 45 && out.view.v[x, y] == 210) } }
    }

    @Test func twoByTwoAreaAverageIsExact() {
        let src = randomPicture(Size(width: 64, height: 32), seed: 7)
        let dst = I420Buffer(size: Size(width: 32, height: 16))
        let tx = FilterTable(count: 32, origin: 0, step: 2, lower: 0, upper: 64)
        let ty = FilterTable(count: 16, origin: 0, step: 2, lower: 0, upper: 32)
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        defer { scratch.deallocate() }
        Resample.scalar(source: src.view.y, into: dst.view.y, x: tx, y: ty, scratch: scratch)
        for y in 0..<16 {
            for x in 0..<32 {
                // Rounded mean of each column pair, then of the two means (8-bit between passes).
                let s = src.view.y
                let left = (Int(s[2 * x, 2 * y]) + Int(s[2 * x, 2 * y + 1]) + 1) >> 1
                let right = (Int(s[2 * x + 1, 2 * y]) + Int(s[2 * x + 1, 2 * y + 1]) + 1) >> 1
                #expect(Int(dst.view.y[x, y]) == (left + right + 1) >> 1)
            }
        }
    }

    @Test func sameSizeSourceIsCopiedUnchanged() throws {
        let layout = PiPLayout()
        let compositor = try PiPCompositor(layout: layout)
        let src = randomPicture(layout.canvas, seed: 3)
        let out = I420Buffer(size: layout.canvas)
        compositor.compose(main: SourcePicture(image: src.view, matrix: .bt709), inset: nil, into: out.view)
        for (a, b) in zip(src.view.planes, out.view.planes) {
            for y in 0..<a.height { for x in 0..<a.width where a[x, y] != b[x, y] { Issue.record("differs at \(x),\(y)"); return } }
        }
    }
}

@Suite struct ColorTests {
    /// R'G'B' (0...1) encoded to limited-range Y'CbCr with a matrix, as an encoder would.
    func encode(_ rgb: (Double, Double, Double), _ kr: Double, _ kb: Double) -> (UInt8, UInt8, UInt8) {
        let kg = 1 - kr - kb
        let y = kr * rgb.0 + kg * rgb.1 + kb * rgb.2
        let pb = (rgb.2 - y) / (2 * (1 - kb)), pr = (rgb.0 - y) / (2 * (1 - kr))
        return (UInt8((16 + 219 * y).rounded()), UInt8((128 + 224 * pb).rounded()), UInt8((128 + 224 * pr).rounded()))
    }

    @Test(arguments: [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 1.0, 0.0), (0.2, 0.5, 0.8),
                      (0.5, 0.5, 0.5)])
    func bt601BecomesTheSameColourInBt709(r: Double, g: Double, b: Double) {
        let c601 = encode((r, g, b), 0.299, 0.114)
        let c709 = encode((r, g, b), 0.2126, 0.0722)
        let img = solid(Size(width: 4, height: 4), y: c601.0, u: c601.1, v: c601.2)
        ColorConversion(from: .bt601, to: .bt709)!.apply(to: img.view, lumaRect: Rect(x: 0, y: 0, width: 4, height: 4))
        #expect(abs(Int(img.view.y[1, 1]) - Int(c709.0)) <= 1)
        #expect(abs(Int(img.view.u[1, 1]) - Int(c709.1)) <= 1)
        #expect(abs(Int(img.view.v[1, 1]) - Int(c709.2)) <= 1)
    }

    @Test func sameMatrixNeedsNoConversion() {
        #expect(ColorConversion(from: .bt709, to: .bt709) == nil)
    }
}

@Suite struct RotationTests {
    @Test func displayMatrixAnglesSnapToQuarterTurns() {
        #expect(QuarterTurn(displayMatrixDegrees: -90) == .clockwise90)
        #expect(QuarterTurn(displayMatrixDegrees: 90) == .clockwise270)
        #expect(QuarterTurn(displayMatrixDegrees: 180) == .half)
        #expect(QuarterTurn(displayMatrixDegrees: -180) == .half)
        #expect(QuarterTurn(displayMatrixDegrees: 0) == QuarterTurn.none)
        #expect(QuarterTurn(displayMatrixDegrees: -89.9) == .clockwise90)
    }

    @Test(arguments: QuarterTurn.allCases)
    func quarterTurnsMovePixelsWhereExpected(turn: QuarterTurn) {
        let src = randomPicture(Size(width: 6, height: 4), seed: 11)
        let dst = I420Buffer(size: turn.rotated(src.size))
        turn.apply(src.view, into: dst.view)
        let s = src.view.y, d = dst.view.y
        for y in 0..<4 {
            for x in 0..<6 {
                let (dx, dy): (Int, Int)
                switch turn {
                case .none: (dx, dy) = (x, y)
                case .clockwise90: (dx, dy) = (3 - y, x)
                case .half: (dx, dy) = (5 - x, 3 - y)
                case .clockwise270: (dx, dy) = (y, 5 - x)
                }
                #expect(d[dx, dy] == s[x, y])
            }
        }
    }
}
