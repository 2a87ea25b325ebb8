import Compositor
import Testing

/// The styled inset: its kernels against their scalar references, and its pixels where the
/// rounded corners, the border and the shadow must (and must not) change the picture.
@Suite(.timeLimit(.minutes(10))) struct StyledInsetTests {
    @Test(arguments: [0, 1, 15, 31, 32, 33, 64, 80, 107, 160, 1920])
    func blendSIMDMatchesScalar(count: Int) {
        var rng = SplitMix64(state: UInt64(count + 1))
        let top = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
        // Masks at the extremes as well as between: 0 and 255 must give bottom and top exactly.
        let mask = (0..<count).map { i in i % 5 == 0 ? 0 : i % 5 == 1 ? 255 : UInt8.random(in: 0...255, using: &rng) }
        let under = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var a = under, b = under, c = under, d = under
        Kernels.blendScalar(top, mask: mask, count: count, into: &a)
        Kernels.blendSIMD(top, mask: mask, count: count, into: &b)
        Kernels.blendConstantScalar(77, mask: mask, count: count, into: &c)
        Kernels.blendConstantSIMD(77, mask: mask, count: count, into: &d)
        #expect(a == b)
        #expect(c == d)
        for i in 0..<count where mask[i] == 0 { #expect(a[i] == under[i] && c[i] == under[i]) }
        for i in 0..<count where mask[i] == 255 { #expect(a[i] == top[i] && c[i] == 77) }
    }

    static let styles: [InsetStyle] = [
        .rounded, InsetStyle(cornerRadius: 24, border: 3, shadow: true),
        InsetStyle(cornerRadius: 0, border: 0, shadow: true), InsetStyle(cornerRadius: 80, border: 80, shadow: false),
    ]

    /// Whole frames, every corner, odd margins, the inset split over two threads (a 4K inset
    /// source) or not: the SIMD product path against the scalar reference, to the bit.
    @Test(arguments: styles, [(Corner.topRight, 16), (.bottomLeft, 15), (.topLeft, 0), (.bottomRight, 7)])
    func styledSIMDMatchesScalar(style: InsetStyle, place: (corner: Corner, margin: Int)) throws {
        let layout = PiPLayout(corner: place.corner, margin: place.margin, style: style)
        let main = randomPicture(Size(width: 1280, height: 720), seed: 7)
        let inset = randomPicture(Size(width: 3840, height: 2160), seed: 8)
        var outputs: [I420Buffer] = []
        for (kernels, threads) in [(KernelVariant.scalar, 1), (.simd, 2)] {
            let c = try PiPCompositor(layout: layout, kernels: kernels, threads: threads)
            let out = I420Buffer(size: layout.canvas)
            for _ in 0..<2 {
                c.compose(main: SourcePicture(image: main.view, matrix: .bt601),
                          inset: SourcePicture(image: inset.view, matrix: .bt709), into: out.view)
            }
            outputs.append(out)
        }
        for (p, q) in zip(outputs[0].view.planes, outputs[1].view.planes) {
            var differing = 0
            for y in 0..<p.height { for x in 0..<p.width where p[x, y] != q[x, y] { differing += 1 } }
            #expect(differing == 0)
        }
    }

    /// Flat blue back (Y 41) under a flat red front (Y 81), composed with `style`.
    static func composeFlat(_ style: InsetStyle, plainToo: Bool = false) throws -> (styled: PlaneView, plain: PlaneView, rect: Rect, keep: [I420Buffer]) {
        let back = solid(Size(width: 1920, height: 1080), y: 41, u: 240, v: 110)
        let front = solid(Size(width: 1280, height: 720), y: 81, u: 90, v: 240)
        var frames: [I420Buffer] = []
        for s in [style, .plain] {
            let layout = PiPLayout(style: s)
            let out = I420Buffer(size: layout.canvas)
            try PiPCompositor(layout: layout).compose(main: SourcePicture(image: back.view, matrix: .bt709),
                                                      inset: SourcePicture(image: front.view, matrix: .bt709),
                                                      into: out.view)
            frames.append(out)
        }
        return (frames[0].view.y, frames[1].view.y, PiPLayout().insetRect, frames)
    }

    @Test func roundedCornersShowTheBackPictureAndBlendTheirEdge() throws {
        let (y, _, r, keep) = try Self.composeFlat(InsetStyle(cornerRadius: 24, border: 0, shadow: false))
        defer { withExtendedLifetime(keep) {} }
        // 2 px inside each corner of the inset's rectangle: outside the rounded shape.
        for (x, yy) in [(r.x + 2, r.y + 2), (r.maxX - 3, r.y + 2), (r.x + 2, r.maxY - 3), (r.maxX - 3, r.maxY - 3)] {
            #expect(y[x, yy] == 41, "corner pixel (\(x), \(yy)) is \(y[x, yy])")
        }
        #expect(y[r.x + r.width / 2, r.y + r.height / 2] == 81)
        // Along the top-left corner's diagonal: back, then at least one pixel strictly between,
        // then front.
        let diagonal = (0..<24).map { y[r.x + $0, r.y + $0] }
        #expect(diagonal.first == 41 && diagonal.last == 81)
        #expect(diagonal.contains { $0 > 41 && $0 < 81 }, "diagonal \(diagonal)")
        #expect(diagonal == diagonal.sorted(), "the edge ramps one way: \(diagonal)")
        // Straight edges stay crisp: the inset's first row and column, away from the corners.
        #expect(y[r.x + r.width / 2, r.y] == 81 && y[r.x, r.y + r.height / 2] == 81)
        #expect(y[r.x + r.width / 2, r.y - 1] == 41 && y[r.x - 1, r.y + r.height / 2] == 41)
    }

    @Test func theShadowDarkensTheBackJustOutsideTheInsetAndNowhereElse() throws {
        let (y, plain, r, keep) = try Self.composeFlat(.rounded)
        defer { withExtendedLifetime(keep) {} }
        // Just below and just left of the inset: darker than the back picture.
        #expect(y[r.x + r.width / 2, r.maxY + 1] < 41)
        #expect(y[r.x - 2, r.y + r.height / 2] < 41)
        // Below reaches further than above: the shadow falls down.
        #expect(41 - Int(y[r.x + r.width / 2, r.maxY + 2]) > 41 - Int(y[r.x + r.width / 2, r.y - 3]))
        // Everywhere else the frame is exactly the plain composition, and the inset's middle too.
        let reach = InsetStyle.rounded.affectedRect(inset: r, canvas: Size(width: 1920, height: 1080))
        var changedOutside = 0, changedInside = 0
        for yy in 0..<1080 {
            for x in 0..<1920 where y[x, yy] != plain[x, yy] {
                let inReach = x >= reach.x && x < reach.maxX && yy >= reach.y && yy < reach.maxY
                if !inReach { changedOutside += 1 }
                if x >= r.x + 12, x < r.maxX - 12, yy >= r.y + 12, yy < r.maxY - 12 { changedInside += 1 }
            }
        }
        #expect(changedOutside == 0)
        #expect(changedInside == 0)
        // Its reach stays inside the default 16 px margin on the sides it faces.
        #expect(reach.maxX <= 1920 && reach.y >= 0)
    }

    @Test func theBorderIsLightAndInsideTheInset() throws {
        let (y, _, r, keep) = try Self.composeFlat(InsetStyle(cornerRadius: 12, border: 4, shadow: false))
        defer { withExtendedLifetime(keep) {} }
        for d in 0..<4 { #expect(y[r.x + r.width / 2, r.y + d] == InsetStyle.borderLuma) }
        #expect(y[r.x + r.width / 2, r.y + 5] == 81)
        #expect(y[r.x + r.width / 2, r.y - 1] == 41)
    }

    @Test func styleProblemsAreRejected() {
        #expect(throws: PiPLayout.Problem.self) { try PiPLayout(style: InsetStyle(cornerRadius: 81)).validate() }
        #expect(throws: PiPLayout.Problem.self) { try PiPLayout(style: InsetStyle(border: -1)).validate() }
        #expect(throws: Never.self) { try PiPLayout(style: InsetStyle(cornerRadius: 80, border: 80)).validate() }
    }

    /// The in-place composition (the inset drawn into the back frame itself) must stay off
    /// where the shadow would reach into what the inset shows after a swap.
    @Test func composingInPlaceAccountsForTheShadow() {
        #expect(PiPLayout(style: .rounded).insetCornerUnseenInInset)
        // A top-left inset ending 14 px before the crop a swapped 1080p picture shows: clear
        // of it as a plain rectangle, not with the shadow's 11 px beside it.
        #expect(PiPLayout(corner: .topLeft, margin: 380).insetCornerUnseenInInset)
        #expect(!PiPLayout(corner: .topLeft, margin: 380, style: .rounded).insetCornerUnseenInInset)
    }
}
