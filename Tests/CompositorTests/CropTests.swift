import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct CropTests {
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
