import Foundation
@testable import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct ColorSIMDTests {
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
