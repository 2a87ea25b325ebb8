import Compositor
import Testing

/// A solid-colour I420 picture.
func solid(_ size: Size, y: UInt8, u: UInt8, v: UInt8) -> I420Buffer {
    let b = I420Buffer(size: size)
    b.view.fill(y: y, u: u, v: v)
    return b
}

/// Composes a flat main picture (Y 50, U 60, V 70) and a flat inset (200, 210, 220) with the
/// default layout in `corner`; returns the frame and the inset rect.
func composeFlat(corner: Corner, main: Size, inset: Size) throws -> (I420Buffer, Rect) {
    let layout = PiPLayout(corner: corner)
    let compositor = try PiPCompositor(layout: layout)
    let out = I420Buffer(size: layout.canvas)
    let m = solid(main, y: 50, u: 60, v: 70)
    let i = solid(inset, y: 200, u: 210, v: 220)
    compositor.compose(main: SourcePicture(image: m.view, matrix: .bt709),
                       inset: SourcePicture(image: i.view, matrix: .bt709), into: out.view)
    return (out, layout.insetRect)
}

@Suite struct LayoutTests {
    // The product's layout: 1920x1080, inset 160x213, 16 px from the edges.
    static let expected: [(Corner, Rect)] = [
        (.topRight, Rect(x: 1744, y: 16, width: 160, height: 213)),
        (.topLeft, Rect(x: 16, y: 16, width: 160, height: 213)),
        (.bottomRight, Rect(x: 1744, y: 851, width: 160, height: 213)),
        (.bottomLeft, Rect(x: 16, y: 851, width: 160, height: 213)),
    ]

    @Test(arguments: expected.map(\.0))
    func insetRectForEveryCorner(corner: Corner) {
        let rect = PiPLayout(corner: corner).insetRect
        #expect(rect == Self.expected.first { $0.0 == corner }!.1)
    }

    @Test(arguments: Corner.allCases)
    func insetLumaLandsExactlyInItsRect(corner: Corner) throws {
        let (out, r) = try composeFlat(corner: corner, main: Size(width: 1280, height: 720),
                                       inset: Size(width: 640, height: 480))
        var wrong = 0
        for y in 0..<1080 {
            for x in 0..<1920 {
                let inside = x >= r.x && x < r.maxX && y >= r.y && y < r.maxY
                if out.view.y[x, y] != (inside ? 200 : 50) { wrong += 1 }
            }
        }
        #expect(wrong == 0)
    }

    /// 4:2:0 chroma sample (cx, cy) covers luma 2cx..2cx+1, 2cy..2cy+1. An inset at odd luma
    /// coordinates (y = 851 at the bottom, height 213 everywhere) shares its edge chroma rows
    /// with the main picture; the inset's colour must win exactly those, and no others.
    @Test(arguments: Corner.allCases)
    func insetChromaCoversEverySampleItsLumaUses(corner: Corner) throws {
        let (out, r) = try composeFlat(corner: corner, main: Size(width: 1920, height: 1080),
                                       inset: Size(width: 160, height: 213))
        var wrong = 0
        for cy in 0..<540 {
            for cx in 0..<960 {
                let usedByInset = (2 * cx + 1 >= r.x && 2 * cx < r.maxX) && (2 * cy + 1 >= r.y && 2 * cy < r.maxY)
                if out.view.u[cx, cy] != (usedByInset ? 210 : 60) { wrong += 1 }
                if out.view.v[cx, cy] != (usedByInset ? 220 : 70) { wrong += 1 }
            }
        }
        #expect(wrong == 0)
        // 213 rows on either parity share exactly one chroma row with the main picture.
        #expect(r.chroma420.height == 107)
    }

    @Test func layoutThatDoesNotFitIsRejected() {
        #expect(throws: PiPLayout.Problem.self) { try PiPLayout(inset: Size(width: 1910, height: 100)).validate() }
        #expect(throws: PiPLayout.Problem.self) { try PiPLayout(margin: -1).validate() }
        #expect(throws: Never.self) { try PiPLayout(inset: Size(width: 1904, height: 1064)).validate() }
    }

    @Test func sizeParsing() {
        #expect(Size(parsing: "160x213") == Size(width: 160, height: 213))
        #expect(Size(parsing: "160X213") == Size(width: 160, height: 213))
        #expect(Size(parsing: "160") == nil)
        #expect(Size(parsing: "0x10") == nil)
        #expect(Size(parsing: "axb") == nil)
    }
}

@Suite struct CropTests {
    static let sizes: [(Int, Int)] = [(641, 479), (1, 1), (4096, 2160), (1920, 1080), (1280, 720), (640, 480),
                                      (360, 640), (2, 1), (1, 1000), (3840, 2160), (160, 213), (7, 3)]
    static let targets: [(Int, Int)] = [(1920, 1080), (160, 213), (1, 1), (100, 3)]

    @Test(arguments: sizes)
    func aspectFillIsCentredInsideAndHasTheTargetAspect(w: Int, h: Int) {
        for (tw, th) in Self.targets {
            let c = CropRect.aspectFill(source: Size(width: w, height: h), target: Size(width: tw, height: th))
            #expect(c.x >= 0 && c.y >= 0)
            #expect(c.x + c.width <= Double(w) + 1e-9 && c.y + c.height <= Double(h) + 1e-9)
            // Centred: equal margins on both sides.
            #expect(abs(c.x * 2 + c.width - Double(w)) < 1e-9 && abs(c.y * 2 + c.height - Double(h)) < 1e-9)
            // Target aspect, and one side uses the whole source (as large as possible).
            #expect(abs(c.width * Double(th) - c.height * Double(tw)) < 1e-6 * Double(max(w, h) * max(tw, th)))
            #expect(c.width == Double(w) || c.height == Double(h))
        }
    }

    @Test func knownCrops() {
        // 4:3 into the 160x213 inset: full height, width 480*160/213.
        let c = CropRect.aspectFill(source: Size(width: 640, height: 480), target: Size(width: 160, height: 213))
        #expect(c.height == 480 && abs(c.width - 360.5633802816901) < 1e-9)
        // 4K DCI into 1080p: full height, 3840 wide, 128 cut from each side.
        let d = CropRect.aspectFill(source: Size(width: 4096, height: 2160), target: Size(width: 1920, height: 1080))
        #expect(d == CropRect(x: 128, y: 0, width: 3840, height: 2160))
    }
}
