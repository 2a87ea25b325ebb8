import Benchmark
import Compositor

// Each kernel timed as its SIMD path and its scalar reference (libyuv's habit), and each
// layout timed whole. Sources are warm here (package-benchmark repeats one input); `dualcam
// bench` measures cold sources. Every benchmark checks zero mallocs per composited frame.

func picture(_ w: Int, _ h: Int, seed: Int = 1) -> I420Buffer {
    let b = I420Buffer(size: Size(width: w, height: h))
    for p in b.view.planes {
        for y in 0..<p.height { for x in 0..<p.width { p[x, y] = UInt8(truncatingIfNeeded: x &* 7 &+ y &* 3 &+ seed) } }
    }
    return b
}

let benchmarks: @Sendable () -> Void = {
    // Any allocation inside the measured loop fails the run.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        warmupIterations: 20,
        scalingFactor: .one,
        maxDuration: .seconds(1),
        maxIterations: 2000,
        thresholds: [.mallocCountTotal: .init(absolute: [.p99: 0])]
    )

    struct Layout { let name: String; let main: Size; let inset: Size; let insetMatrix: YCbCrMatrix; let inPlace: Bool }
    let layouts = [
        Layout(name: "pip-720p", main: Size(width: 1920, height: 1080), inset: Size(width: 1280, height: 720), insetMatrix: .bt709, inPlace: true),
        Layout(name: "pip-480p", main: Size(width: 1920, height: 1080), inset: Size(width: 640, height: 480), insetMatrix: .bt601, inPlace: true),
        Layout(name: "swapped-720p", main: Size(width: 1280, height: 720), inset: Size(width: 1920, height: 1080), insetMatrix: .bt709, inPlace: false),
        Layout(name: "pip-4k", main: Size(width: 3840, height: 2160), inset: Size(width: 1280, height: 720), insetMatrix: .bt709, inPlace: false),
    ]
    for layout in layouts {
        for (kernels, threads) in [(KernelVariant.simd, 1), (.simd, 2), (.scalar, 1)] {
            Benchmark("layout \(layout.name) \(kernels.rawValue) \(threads)t") { benchmark in
                let c = try PiPCompositor(layout: PiPLayout(), kernels: kernels, threads: threads)
                let main = picture(layout.main.width, layout.main.height), inset = picture(layout.inset.width, layout.inset.height)
                let output = layout.inPlace ? main : I420Buffer(size: PiPLayout.defaultCanvas)
                let m = SourcePicture(image: main.view, matrix: .bt709), i = SourcePicture(image: inset.view, matrix: layout.insetMatrix)
                c.compose(main: m, inset: i, into: output.view)  // builds the plans
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations { c.compose(main: m, inset: i, into: output.view) }
            }
        }
    }

    // Kernels, SIMD and scalar, on one 1080p-wide row set.
    let rows = picture(3840, 16)
    let weights: [Int16] = [43, 85, 85, 43]
    let out = UnsafeMutablePointer<UInt8>.allocate(capacity: 1 << 16)
    let columns = UnsafeMutablePointer<UInt8>.allocate(capacity: 16 * 4096)
    let y = rows.view.y
    Benchmark("kernel vertical 4 taps x1920 simd") { b in
        for _ in b.scaledIterations {
            weights.withUnsafeBufferPointer { Kernels.verticalSIMD(y.base, stride: y.stride, taps: 4, weights: $0.baseAddress!, count: 1920, into: out) }
        }
    }
    Benchmark("kernel vertical 4 taps x1920 scalar") { b in
        for _ in b.scaledIterations {
            weights.withUnsafeBufferPointer { Kernels.verticalScalar(y.base, stride: y.stride, taps: 4, weights: $0.baseAddress!, count: 1920, into: out) }
        }
    }
    let up = FilterTable(count: 1920, origin: 0, step: 1280.0 / 1920, lower: 0, upper: 1280)
    let down = FilterTable(count: 160, origin: 0, step: 541.0 / 160, lower: 0, upper: 541)
    for (name, table) in [("1280->1920", up), ("541->160", down)] {
        Benchmark("kernel columns \(name) x16 rows simd") { b in
            for _ in b.scaledIterations { Kernels.columnsSIMD(columns, offset: 0, table: table, into: out) }
        }
        Benchmark("kernel columns \(name) x16 rows scalar") { b in
            for _ in b.scaledIterations { Kernels.columnsScalar(columns, offset: 0, table: table, into: out) }
        }
        Benchmark("kernel horizontal \(name) x16 rows (row by row) scalar") { b in
            for _ in b.scaledIterations { for r in 0..<16 { Kernels.horizontalScalar(y.row(r), offset: 0, table: table, into: out + r * 2048) } }
        }
    }
    Benchmark("kernel transpose 16x1920 simd") { b in
        for _ in b.scaledIterations { for t in 0..<120 { Kernels.transposeTileSIMD(y.base + 16 * t, srcStride: y.stride, columns + 256 * t, dstStride: 16) } }
    }
    Benchmark("kernel transpose 16x1920 scalar") { b in
        for _ in b.scaledIterations { for t in 0..<120 { Kernels.transposeTileScalar(y.base + 16 * t, srcStride: y.stride, columns + 256 * t, dstStride: 16) } }
    }
    Benchmark("kernel halve 3840->1920 simd") { b in
        for _ in b.scaledIterations { Kernels.halveSIMD(y.base, count: 1920, into: out) }
    }
    Benchmark("kernel halve 3840->1920 scalar") { b in
        for _ in b.scaledIterations { Kernels.halveScalar(y.base, count: 1920, into: out) }
    }
    let frame = picture(1920, 1080)
    let conversion = ColorConversion(from: .bt601, to: .bt709)!
    Benchmark("kernel bt601->bt709 1080p simd") { b in
        for _ in b.scaledIterations { conversion.apply(to: frame.view, lumaRect: Rect(x: 0, y: 0, width: 1920, height: 1080)) }
    }
    Benchmark("kernel bt601->bt709 1080p scalar") { b in
        for _ in b.scaledIterations { conversion.applyScalar(to: frame.view, lumaRect: Rect(x: 0, y: 0, width: 1920, height: 1080)) }
    }
}
