import Benchmark
import Benchmarking

// The product's paths, as `dualcam bench` times them (PathBench): source buffers to the
// frame the encoder takes, through the code `compose` and `record` run, warm sources. What
// is counted here is allocation: no frame-sized (large) allocation per frame, ever. Small
// ones are allowed where the product makes them on purpose (the AVFrame a decoded picture
// is wrapped in to go to the encoder, an AVFrame reference to a queued camera frame).

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountLarge, .mallocCountTotal],
        warmupIterations: 10,
        scalingFactor: .one,
        maxDuration: .seconds(2),
        maxIterations: 300,
        thresholds: [.mallocCountLarge: .init(absolute: [.p99: 0])]
    )
    for c in PathBench.cases {
        Benchmark("path \(c.name)") { benchmark in
            var bench = PathBench()
            bench.sources = .warm
            let work = try bench.work(c)
            // Fill the pools (camera frames, scale plans) before counting.
            for n in 0..<8 { try work.prepare(n); try work.frame(n) }
            var n = 8
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try work.prepare(n)
                try work.frame(n)
                n += 1
            }
        }
    }
}
