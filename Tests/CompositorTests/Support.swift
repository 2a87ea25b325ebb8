import Compositor
import Testing
import Foundation
@testable import Compositor

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

/// Random full-range planes as a JPEG decoder leaves them, rows padded past their width.
struct RandomJPEGPlanes {
    let luma: [UInt8], u: [UInt8], v: [UInt8]
    let yStride: Int, chromaStride: Int, fullHeightChroma: Bool

    init(width w: Int, height h: Int, fullHeightChroma: Bool, seed: UInt64) {
        let cw = (w + 1) / 2, ch = fullHeightChroma ? h : (h + 1) / 2
        yStride = w + 24
        chromaStride = cw + 40
        self.fullHeightChroma = fullHeightChroma
        var rng = SplitMix64(state: seed)
        let (ys, cs) = (yStride, chromaStride)
        luma = (0..<(ys * h)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        u = (0..<(cs * ch)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        v = (0..<(cs * ch)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    func withSource<R>(_ body: (JPEGRange.Source) -> R) -> R {
        luma.withUnsafeBufferPointer { y in
            u.withUnsafeBufferPointer { u in
                v.withUnsafeBufferPointer { v in
                    body(JPEGRange.Source(y: y.baseAddress!, yStride: yStride, u: u.baseAddress!, v: v.baseAddress!,
                                          chromaStride: chromaStride, chromaFullHeight: fullHeightChroma))
                }
            }
        }
    }
}

/// Samples of `a` that differ from the same sample of any of `others`.
func differingSamples(_ a: I420Buffer, _ others: I420Buffer...) -> Int {
    var differing = 0
    for (i, p) in a.view.planes.enumerated() {
        for y in 0..<p.height {
            for x in 0..<p.width where others.contains(where: { $0.view.planes[i][x, y] != p[x, y] }) { differing += 1 }
        }
    }
    return differing
}

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
