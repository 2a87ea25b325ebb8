import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct LayoutTests {
    // The product's layout: 1920x1080, inset 160x213, 16 px from the edges.
    static let expected: [(Corner, Rect)] = [
        (.topRight, Rect(x: 1744, y: 16, width: 160, height: 213)),
        (.topLeft, Rect(x: 16, y: 16, width: 160, height: 213)),
        (.bottomRight, Rect(x: 1744, y: 851, width: 160, height: 213)),
        (.bottomLeft, Rect(x: 16, y: 851, width: 160, height: 213)),
    ]

    /// A dragged inset settles in the corner of the quarter its centre was dropped in; each
    /// corner's own inset centre gives that corner back.
    @Test func aDroppedInsetSettlesInTheNearestCorner() {
        let layout = PiPLayout()
        #expect(layout.corner(nearest: 100, 900) == .bottomLeft)
        #expect(layout.corner(nearest: 959, 539) == .topLeft)
        #expect(layout.corner(nearest: 960, 540) == .bottomRight)
        #expect(layout.corner(nearest: 1500, 100) == .topRight)
        for (corner, rect) in Self.expected {
            #expect(layout.corner(nearest: Double(rect.x + rect.width / 2), Double(rect.y + rect.height / 2)) == corner)
        }
    }

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
