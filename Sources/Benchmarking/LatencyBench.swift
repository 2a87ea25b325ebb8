import Compositor
import Foundation
import MediaIO
import Pipeline

/// The compositor's kernels alone, per layout, with libswscale doing the same scaling plus
/// the copy in the same run: `inset-only-*` draw the inset into a 1080p frame in place (no
/// product path is that alone: see `PathBench`), `kernels-*` compose a whole frame. `--verify`
/// checks the SIMD kernels against the scalar reference on these.
public struct LatencyBench {
    public struct Case: Sendable {
        public var name: String
        public var back: Size
        public var front: Size
        public var frontMatrix: YCbCrMatrix
        public var swapped: Bool
        init(name: String, back: Size, front: Size, frontMatrix: YCbCrMatrix, swapped: Bool) {
            self.name = name
            self.back = back
            self.front = front
            self.frontMatrix = frontMatrix
            self.swapped = swapped
        }
    }

    public static let cases: [Case] = [
        Case(name: "inset-only-720p", back: Size(width: 1920, height: 1080), front: Size(width: 1280, height: 720),
             frontMatrix: .bt709, swapped: false),
        // 640x480 webcams send BT.601: the inset is colour-converted too.
        Case(name: "inset-only-480p", back: Size(width: 1920, height: 1080), front: Size(width: 640, height: 480),
             frontMatrix: .bt601, swapped: false),
        Case(name: "kernels-swapped-720p", back: Size(width: 1920, height: 1080), front: Size(width: 1280, height: 720),
             frontMatrix: .bt709, swapped: true),
        Case(name: "kernels-4k", back: Size(width: 3840, height: 2160), front: Size(width: 1280, height: 720),
             frontMatrix: .bt709, swapped: false),
    ]

    public struct Stats: Sendable, Codable {
        public var p50: Double
        public var p99: Double
        public var max: Double
        public var frames: Int

        init(_ nanoseconds: [UInt64]) {
            let ms = nanoseconds.map { Double($0) / 1e6 }.sorted()
            p50 = ms.nearestRank(0.5)
            p99 = ms.nearestRank(0.99)
            max = ms.last!
            frames = ms.count
        }
    }

    public struct Result: Sendable {
        public var name: String
        public var ours: Stats
        public var swscale: Stats
        public var scalar: Stats?
    }

    public var frames = 600
    public var warmup = 30
    public var withScalar = false
    /// Threads the compositor may use for one frame (1 or 2).
    public var threads = 2
    /// Cold: distinct source frames are cycled through until 64 MB (twice the L3 cache) have
    /// passed, so every frame comes from memory as a camera's DMA buffer does. Warm: two
    /// frames alternate and stay in cache, like a frame a decoder has just written.
    public enum Sources: String, Sendable, CaseIterable { case cold, warm }
    public var sources = Sources.cold
    /// The canvas, inset and its style every case composes.
    public var layout = PiPLayout()
    var ringBytes: Int { sources == .cold ? 64 << 20 : 0 }

    public init() {}

    public func run(_ c: Case) throws -> Result {
        let ours = try measure(c, kernels: .simd, frames: frames)
        let scalar = withScalar ? try measure(c, kernels: .scalar, frames: max(10, frames / 20)) : nil
        return Result(name: c.name, ours: ours, swscale: try measureSwscale(c, layout: layout), scalar: scalar)
    }

    /// Composes one frame of case `c` with the SIMD kernels and with the scalar reference,
    /// as `run` composes them (in place when it does), and counts the output bytes that
    /// differ: they must agree to the bit on every build, whatever instruction set it uses.
    public func mismatchedBytes(_ c: Case) throws -> Int {
        let back = Self.noise(c.back, seed: 1), front = Self.noise(c.front, seed: 2)
        let inPlace = !c.swapped && c.back == layout.canvas
        let outputs = try withExtendedLifetime((back, front)) { try KernelVariant.allCases.map { kernels in
            let compositor = try PiPCompositor(layout: layout, kernels: kernels, threads: threads)
            let main = I420Buffer(size: c.back)
            main.view.copy(from: back.view)
            let output = inPlace ? main : I420Buffer(size: layout.canvas)
            let backPicture = SourcePicture(image: main.view, matrix: .bt709)
            let frontPicture = SourcePicture(image: front.view, matrix: c.frontMatrix)
            compositor.compose(main: c.swapped ? frontPicture : backPicture,
                               inset: c.swapped ? backPicture : frontPicture, into: output.view)
            return output
        } }
        // The views are raw pointers: the buffers must outlive the comparison.
        return withExtendedLifetime(outputs) {
            var differing = 0
            for (a, b) in zip(outputs[0].view.planes, outputs[1].view.planes) {
                for y in 0..<a.height {
                    let ra = a.row(y), rb = b.row(y)
                    for x in 0..<a.width where ra[x] != rb[x] { differing += 1 }
                }
            }
            return differing
        }
    }

    /// A frame of pseudo-random bytes: every rounding path of the filters gets exercised.
    private static func noise(_ size: Size, seed: UInt64) -> I420Buffer {
        let b = I420Buffer(size: size)
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        for p in b.view.planes {
            for y in 0..<p.height {
                let row = p.row(y)
                for x in 0..<p.width {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    row[x] = UInt8(truncatingIfNeeded: state >> 56)
                }
            }
        }
        return b
    }

    /// A ring of distinct frames of `size`, filled with a gradient (the kernels' speed does
    /// not depend on content).
    private func ring(_ size: Size) -> [I420Buffer] {
        let bytes = size.width * size.height * 3 / 2
        let count = max(2, ringBytes / bytes + 1)
        return (0..<count).map { i in
            let b = I420Buffer(size: size)
            Self.fillGradient(b.view, seed: i)
            return b
        }
    }

    /// The aspect-fill crop in whole pixels, as libswscale takes it (ours is sub-pixel).
    static func wholePixels(_ s: Size, _ t: Size) -> Rect {
        let r = CropRect.aspectFill(source: s, target: t)
        return Rect(x: Int(r.x.rounded()), y: Int(r.y.rounded()), width: Int(r.width.rounded()), height: Int(r.height.rounded()))
    }

    static func fillGradient(_ image: I420View, seed: Int) {
        for p in image.planes {
            for y in 0..<p.height {
                let row = p.row(y)
                for x in 0..<p.width { row[x] = UInt8(truncatingIfNeeded: x &+ 3 &* y &+ 17 &* seed) }
            }
        }
    }

    /// Frame `n` of case `c`, composed as `run` times it: for timing and for counting
    /// instructions (`InstructionCount`).
    public func work(_ c: Case, kernels: KernelVariant = .simd) throws -> (Int) -> Void {
        let compositor = try PiPCompositor(layout: layout, kernels: kernels, threads: threads)
        let backs = ring(c.back), fronts = ring(c.front)
        // Composing in place: the 1080p back frame is the output, only the inset is written.
        let inPlace = !c.swapped && c.back == layout.canvas
        let outputs = inPlace ? [] : (0..<2).map { _ in I420Buffer(size: layout.canvas) }
        return { n in
            let back = backs[n % backs.count].view, front = fronts[n % fronts.count].view
            let output = inPlace ? back : outputs[n % 2].view
            let backPicture = SourcePicture(image: back, matrix: .bt709)
            let frontPicture = SourcePicture(image: front, matrix: c.frontMatrix)
            compositor.compose(main: c.swapped ? frontPicture : backPicture,
                               inset: c.swapped ? backPicture : frontPicture, into: output)
        }
    }

    private func measure(_ c: Case, kernels: KernelVariant, frames: Int) throws -> Stats {
        let frame = try work(c, kernels: kernels)
        var times = [UInt64](repeating: 0, count: frames)
        for i in -warmup..<frames {
            let start = DispatchTime.now().uptimeNanoseconds
            frame(i + warmup)
            let end = DispatchTime.now().uptimeNanoseconds
            if i >= 0 { times[i] = end - start }
        }
        return Stats(times)
    }

    func measureSwscale(_ c: Case, layout: PiPLayout) throws -> Stats {
        let main = c.swapped ? c.front : c.back, inset = c.swapped ? c.back : c.front
        let mainMatrix = c.swapped ? c.frontMatrix : .bt709, insetMatrix = c.swapped ? .bt709 : c.frontMatrix
        let inPlace = !c.swapped && c.back == layout.canvas
        let mainScaler = inPlace ? nil : SwscaleScaler(
            crop: Self.wholePixels(main, layout.canvas), destination: layout.canvas,
            filter: main.width > layout.canvas.width ? .area : .bilinear, convertBT601: mainMatrix == .bt601)
        guard let insetScaler = SwscaleScaler(crop: Self.wholePixels(inset, layout.inset), destination: layout.inset,
                                              filter: .area, convertBT601: insetMatrix == .bt601)
        else { throw MediaError.encoderFailed(name: "swscale", reason: "cannot scale \(inset)") }
        let mains = ring(main), insets = ring(inset)
        let outputs = inPlace ? [] : (0..<2).map { _ in I420Buffer(size: layout.canvas) }
        let scaled = I420Buffer(size: layout.inset)
        let rect = layout.insetRect, chroma = rect.chroma420
        var times = [UInt64](repeating: 0, count: frames)
        for i in -warmup..<frames {
            let n = i + warmup
            let m = mains[n % mains.count].view, s = insets[n % insets.count].view
            let output = inPlace ? m : outputs[n % 2].view
            let start = DispatchTime.now().uptimeNanoseconds
            mainScaler?.scale(m, into: output)
            insetScaler.scale(s, into: scaled.view)
            output.y.region(rect).copy(from: scaled.view.y)
            output.u.region(Rect(x: chroma.x, y: chroma.y, width: scaled.view.u.width, height: scaled.view.u.height))
                .copy(from: scaled.view.u)
            output.v.region(Rect(x: chroma.x, y: chroma.y, width: scaled.view.v.width, height: scaled.view.v.height))
                .copy(from: scaled.view.v)
            let end = DispatchTime.now().uptimeNanoseconds
            if i >= 0 { times[i] = end - start }
        }
        return Stats(times)
    }
}
