import Foundation
@testable import Compositor
import Testing

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
        for (kernels, threads) in [(KernelVariant.scalar, 1), (.simd, 1), (.simd, 2)] {
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
