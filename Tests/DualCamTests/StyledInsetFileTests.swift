import Foundation
import Testing

/// The styled inset in real files, decoded by ffmpeg: rounded corners show the back picture
/// (as ffmpeg scales it), the shadow darkens only the back picture just around the inset.
@Suite(.serialized, .timeLimit(.minutes(10))) struct StyledInsetFileTests {
    static let frame = 45

    /// Luma of frame 45 of the fixtures composed with `options`.
    static func composedLuma(_ options: [String]) throws -> [UInt8] {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = dir.path("styled.mov")
        let r = try dualcam(["compose", Reference.back, Reference.front, "-o", out] + options)
        try #require(r.status == 0, "compose \(options) failed: \(r.stderr)")
        return Canvas.luma(try Decode.frame(out, index: frame))
    }

    static func mean(_ luma: [UInt8], x: Int, y: Int, w: Int, h: Int) -> Double {
        var sum = 0
        for yy in y..<(y + h) { for xx in x..<(x + w) { sum += Int(luma[yy * Canvas.width + xx]) } }
        return Double(sum) / Double(w * h)
    }

    @Test func roundedCornersAndShadowAsDecodedByFFmpeg() throws {
        let plain = try Self.composedLuma(["--corner-radius", "0"])
        let rounded = try Self.composedLuma(["--corner-radius", "24", "--no-shadow"])
        let shadowed = try Self.composedLuma(["--corner-radius", "24"])
        let back = try Reference.fullLuma(Reference.back, frame: Self.frame, filter: Reference.backAsFull)
        let i = Canvas.inset
        // Each corner, 2-4 px inside the inset's rectangle: the back picture, not the front.
        for (x, y) in [(i.x + 2, i.y + 2), (i.x + i.w - 5, i.y + 2), (i.x + 2, i.y + i.h - 5), (i.x + i.w - 5, i.y + i.h - 5)] {
            let ours = Self.mean(rounded, x: x, y: y, w: 3, h: 3), reference = Self.mean(back, x: x, y: y, w: 3, h: 3)
            let front = Self.mean(plain, x: x, y: y, w: 3, h: 3)
            print("corner (\(x), \(y)): rounded \(ours), back \(reference), front \(front)")
            #expect(abs(ours - reference) <= 8, "corner (\(x), \(y)): \(ours) against the back's \(reference)")
            #expect(abs(ours - reference) < abs(ours - front), "corner (\(x), \(y)) looks like the front")
        }
        // The middle of the inset is the front picture, as in the plain rectangle.
        let middle = (x: i.x + 40, y: i.y + 60, w: 80, h: 90)
        #expect(abs(Self.mean(rounded, x: middle.x, y: middle.y, w: middle.w, h: middle.h)
                    - Self.mean(plain, x: middle.x, y: middle.y, w: middle.w, h: middle.h)) <= 1)
        // The shadow: just below the inset the back picture is darker; far away it is not.
        let below = (x: i.x + 20, y: i.y + i.h + 1, w: i.w - 40, h: 3)
        let withShadow = Self.mean(shadowed, x: below.x, y: below.y, w: below.w, h: below.h)
        let without = Self.mean(rounded, x: below.x, y: below.y, w: below.w, h: below.h)
        print("below the inset: \(withShadow) with the shadow, \(without) without")
        #expect(without - withShadow >= 0.25 * (without - 16), "shadow \(withShadow), none \(without)")
        for (x, y) in [(200, 300), (900, 500), (i.x - 40, i.y + 100), (i.x + 40, i.y + i.h + 30)] {
            #expect(abs(Self.mean(shadowed, x: x, y: y, w: 16, h: 16) - Self.mean(rounded, x: x, y: y, w: 16, h: 16)) <= 1,
                    "(\(x), \(y)) changed by the shadow")
        }
    }
}
