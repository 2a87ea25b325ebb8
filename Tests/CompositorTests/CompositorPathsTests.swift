import Foundation
@testable import Compositor
import Testing

/// Whole frames: the product path (SIMD kernels, rows split over two to four threads) against the
/// scalar reference, for every corner, odd sizes, BT.601 sources and the swapped layout.
@Suite(.timeLimit(.minutes(10))) struct CompositorPathsTests {
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
        for (kernels, threads) in [(KernelVariant.scalar, 1), (.simd, 1), (.simd, 2), (.simd, 3), (.simd, 4)] {
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

    /// Side by side: each picture aspect-filled into its half, SIMD on two threads equal to
    /// the scalar reference; on canvases whose half is odd (the left half is then the even
    /// one) and with one picture alone, which fills the canvas. Every sample is written.
    @Test(.timeLimit(.minutes(2)), arguments: [(Size(width: 640, height: 360), 1280, 720, 480, 640, YCbCrMatrix.bt601),
                                               (Size(width: 642, height: 362), 1920, 1080, 17, 1000, .bt709),
                                               (Size(width: 1282, height: 720), 641, 479, 3840, 2160, .bt2020)])
    func sideBySideSIMDMatchesScalarReference(canvas: Size, mw: Int, mh: Int, iw: Int, ih: Int, m: YCbCrMatrix) throws {
        var layout = PiPLayout(canvas: canvas)
        layout.arrangement = .sideBySide
        #expect(layout.mainRect.width % 2 == 0 && layout.mainRect.maxX == layout.insetRect.x && layout.insetRect.maxX == canvas.width)
        let main = randomPicture(Size(width: mw, height: mh), seed: UInt64(mw + mh))
        let inset = randomPicture(Size(width: iw, height: ih), seed: UInt64(iw * ih))
        for alone in [false, true] {
            var outputs: [I420Buffer] = []
            for (kernels, threads) in [(KernelVariant.scalar, 1), (.simd, 2), (.simd, 3)] {
                let c = try PiPCompositor(layout: layout, kernels: kernels, threads: threads)
                let out = I420Buffer(size: canvas)
                out.view.fill(y: 1, u: 2, v: 3)
                c.compose(main: SourcePicture(image: main.view, matrix: m),
                          inset: alone ? nil : SourcePicture(image: inset.view, matrix: .bt709), into: out.view)
                outputs.append(out)
            }
            for (p, q) in zip(outputs[0].view.planes, outputs[1].view.planes) {
                var differing = 0, unwritten = 0
                for y in 0..<p.height {
                    for x in 0..<p.width {
                        if p[x, y] != q[x, y] { differing += 1 }
                        if q[x, y] == 1 || q[x, y] == 2 || q[x, y] == 3 { unwritten += 1 }
                    }
                }
                #expect(differing == 0, "alone: \(alone)")
                // Random pictures hit 1-3 now and then: far fewer than a half left unwritten.
                #expect(unwritten < p.width * p.height / 50, "alone: \(alone), \(unwritten) samples look unwritten")
            }
        }
    }

    /// A camera in the inset converts only `ScalePlan.lumaColumnsRead` of its picture: with
    /// every other column garbage, the composed frame is the same, for each corner (chroma
    /// starts half a sample early at odd x), both styles, and the pictures a
    /// 1080p or 720p camera makes for the inset. The columns are under 60 % of the width (42 % for
    /// 16:9).
    @Test(.timeLimit(.minutes(2)), arguments: [Size(width: 480, height: 270), Size(width: 640, height: 360),
                                               Size(width: 960, height: 540), Size(width: 320, height: 240)])
    func anInsetPictureNeedsOnlyTheColumnsItsPlanReads(source: Size) throws {
        // A small canvas: the inset is what is tested, and a 1080p main picture made the test
        // too slow for the sanitizers' builds.
        let canvas = Size(width: 640, height: 360)
        let main = randomPicture(canvas, seed: 5)
        let whole = randomPicture(source, seed: UInt64(source.width))
        for corner in Corner.allCases {
            for style in [InsetStyle.plain, .rounded] {
                let layout = PiPLayout(canvas: canvas, corner: corner, margin: corner == .bottomLeft ? 15 : 16, style: style)
                let columns = ScalePlan.lumaColumnsRead(source: source, aspectFilling: layout.insetRect)
                #expect(columns.count * 5 < source.width * 3, "\(source) \(columns)")
                let part = randomPicture(source, seed: 99)
                let chroma = columns.lowerBound / 2..<(columns.upperBound + 1) / 2
                for (plane, (p, w)) in zip([1, 2, 2], zip(part.view.planes, whole.view.planes)) {
                    for y in 0..<p.height {
                        for x in (plane == 1 ? columns : chroma) { p[x, y] = w[x, y] }
                    }
                }
                // The SIMD kernels, which the product runs (the scalar ones give the same
                // bytes: threadedSIMDMatchesScalarReference); both made the test too slow for
                // the sanitizers' builds.
                let c = try PiPCompositor(layout: layout, kernels: .simd, threads: 2)
                let a = I420Buffer(size: layout.canvas), b = I420Buffer(size: layout.canvas)
                c.compose(main: SourcePicture(image: main.view, matrix: .bt709),
                          inset: SourcePicture(image: whole.view, matrix: .bt709), into: a.view)
                c.compose(main: SourcePicture(image: main.view, matrix: .bt709),
                          inset: SourcePicture(image: part.view, matrix: .bt709), into: b.view)
                #expect(differingSamples(a, b) == 0, "\(source) \(corner) \(style.isPlain ? "plain" : "rounded")")
            }
        }
    }
}
