import Compositor
import Foundation
import Testing

/// Every scale ratio the options allow, from an 8192-pixel source (the largest camera or file
/// picture taken) down to a destination of one pixel (below the smallest inset, whose 4:2:0
/// chroma is half of it): each filter row's weights sum to 256, none is negative (both
/// kernels are non-negative), every tap reads inside the source, and the SIMD resampler
/// equals the scalar one.
@Suite(.timeLimit(.minutes(10))) struct FilterRatioPropertyTests {
    /// Under a sanitizer (Scripts/sanitizers.sh) every seventh size of each list: the whole
    /// sample held both cores for two minutes there and starved unrelated tests past their
    /// time limits. The plain test run takes every size.
    static let stride = ProcessInfo.processInfo.environment["DUALCAM_SANITIZED"] == "1" ? 7 : 1

    /// Every size up to 64, then every few pixels (a step that grows with the size, odd and
    /// even both) up to 8192, and 8192 itself.
    static var sourceSizes: [Int] {
        var sizes = Array(1...64)
        var n = 64
        while n < 8192 {
            n += max(1, n / 23) | 1
            sizes.append(min(n, 8192))
        }
        return sizes.enumerated().filter { $0.offset % stride == 0 || $0.element == 8192 }.map(\.element)
    }

    static func destinationSizes(upTo limit: Int) -> [Int] {
        let sizes = Array(1...min(limit, 48)) + [53, 80, 107, 160, 213, 427, 541, 960, 1080, 1920].filter { $0 <= limit }
        return sizes.enumerated().filter { $0.offset % stride == 0 || $0.element == 1 }.map(\.element)
    }

    static func check(_ t: FilterTable, source: Int, context: String) -> Bool {
        for i in 0..<t.count {
            let w = t.weights[i * t.taps..<(i + 1) * t.taps]
            guard w.reduce(0, { $0 + Int($1) }) == 256, w.allSatisfy({ $0 >= 0 }),
                  t.starts[i] >= 0, Int(t.starts[i]) + t.taps <= source else {
                Issue.record("\(context): row \(i) weights \(Array(w)) start \(t.starts[i]) taps \(t.taps)")
                return false
            }
        }
        return true
    }

    @Test func everyRowSumsTo256WithNoNegativeTap() {
        var rng = SplitMix64(state: 2026)
        var tables = 0
        for source in Self.sourceSizes {
            for destination in Self.destinationSizes(upTo: 2 * 1920) {
                // Aspect-fill crops start anywhere in the source; three origins per pair.
                for _ in 0..<3 {
                    let width = Double.random(in: max(0.5, Double(source) * 0.25)...Double(source), using: &rng)
                    let origin = Double.random(in: 0...(Double(source) - width), using: &rng)
                    let t = FilterTable(count: destination, origin: origin, step: width / Double(destination),
                                        lower: 0, upper: source)
                    tables += 1
                    guard Self.check(t, source: source, context: "\(source) -> \(destination) from \(origin)") else { return }
                }
                // The whole source, both kernels.
                for kernel in [FilterTable.Kernel.area, .bilinear] {
                    let t = FilterTable(count: destination, origin: 0, step: Double(source) / Double(destination),
                                        lower: 0, upper: source, kernel: kernel)
                    tables += 1
                    guard Self.check(t, source: source, context: "\(source) -> \(destination) \(kernel)") else { return }
                }
            }
        }
        #expect(tables == Self.sourceSizes.count * Self.destinationSizes(upTo: 2 * 1920).count * 5)
    }

    /// The 1/256 rounding itself, on weights built to round up all at once: the case that
    /// drove one tap to -5 for a 1080-pixel row into a 32-pixel inset.
    @Test func roundingUpEverywhereTakesNoTapBelowZero() {
        let t = FilterTable(count: 32, origin: 0, step: 1080.0 / 32, lower: 0, upper: 1080)
        #expect(Self.check(t, source: 1080, context: "1080 -> 32"))
        let wide = FilterTable(count: 2, origin: 0, step: 4096, lower: 0, upper: 8192)
        #expect(Self.check(wide, source: 8192, context: "8192 -> 2"))
    }

    /// SIMD against scalar on the strongest reductions and a sample between, both planes'
    /// shapes: a row of the source down to the smallest destinations.
    @Test(arguments: [(8192, 64, 1, 1), (8192, 64, 2, 2), (8192, 16, 16, 16), (8191, 33, 32, 32), (1920, 1080, 32, 32),
                      (1920, 1080, 16, 16), (4000, 16, 8, 3), (16, 3000, 2, 7), (2160, 3840, 17, 9), (1080, 1920, 160, 213),
                      (7, 5, 160, 213), (2, 2, 1, 1)])
    func simdEqualsScalarAtExtremeRatios(sw: Int, sh: Int, dw: Int, dh: Int) {
        let src = randomPicture(Size(width: sw, height: sh), seed: UInt64(sw * 31 + sh))
        let tx = FilterTable(count: dw, origin: 0, step: Double(sw) / Double(dw), lower: 0, upper: sw)
        let ty = FilterTable(count: dh, origin: 0, step: Double(sh) / Double(dh), lower: 0, upper: sh)
        #expect(Self.check(tx, source: sw, context: "x") && Self.check(ty, source: sh, context: "y"))
        let a = I420Buffer(size: Size(width: dw, height: dh)), b = I420Buffer(size: Size(width: dw, height: dh))
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: Resample.scalarScratchCount(x: tx, y: ty))
        defer { scratch.deallocate() }
        Resample.scalar(source: src.view.y, into: a.view.y, x: tx, y: ty, scratch: scratch)
        Resample.simd(source: src.view.y, into: b.view.y, x: tx, y: ty, scratch: ResampleScratch())
        var differing = 0
        for y in 0..<dh { for x in 0..<dw where a.view.y[x, y] != b.view.y[x, y] { differing += 1 } }
        #expect(differing == 0, "\(sw)x\(sh) -> \(dw)x\(dh)")
    }

    /// The crash of the issue, end to end in the compositor: a 1080p front in a 32x32 inset.
    @Test func aFullHDPictureComposesIntoATinyInset() throws {
        let layout = PiPLayout(canvas: Size(width: 640, height: 360), inset: Size(width: 32, height: 32), margin: 8)
        let compositor = try PiPCompositor(layout: layout)
        let out = I420Buffer(size: layout.canvas)
        let front = solid(Size(width: 1920, height: 1080), y: 200, u: 90, v: 160)
        let back = solid(layout.canvas, y: 50, u: 128, v: 128)
        compositor.compose(main: SourcePicture(image: back.view, matrix: .bt709),
                           inset: SourcePicture(image: front.view, matrix: .bt709), into: out.view)
        let r = layout.insetRect
        #expect(out.view.y[r.x + 16, r.y + 16] == 200)
    }
}
