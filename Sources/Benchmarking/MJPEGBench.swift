import CFFmpeg
import Compositor
import Foundation
import MediaIO
import Pipeline

/// The MJPEG camera path, timed without cameras: a 1080p back and a 1080p front camera's
/// JPEGs decoded (each as its capture thread does) and composed into the canvas, with the
/// front decoded at full size and at the size its inset role needs (`DecodeScale`).
public struct MJPEGBench {
    public var frames = 300
    public var warmup = 10
    public var cameraSize = Size(width: 1920, height: 1080)
    public var quality = 4
    public var layout = PiPLayout()
    public init() {}

    public struct Run: Sendable, Codable {
        public var frontShift: Int
        public var libswscale = false
        public var backDecodeMs: Double
        public var frontDecodeMs: Double
        public var composeMs: Double
        /// Decode and compose, one after the other: the CPU each output frame costs.
        public var cpuPerFrameMs: Double { backDecodeMs + frontDecodeMs + composeMs }
    }

    public struct Result: Sendable, Codable {
        /// Both at full size, converted to I420 by libswscale: what an ffmpeg pipeline does.
        public var reference: Run
        public var fullSize: Run
        public var roleSized: Run
        public var jpegBytes: Int
        /// How much less decoding CPU the role-sized front camera takes, 0-1.
        public var decodeSaving: Double {
            1 - (roleSized.backDecodeMs + roleSized.frontDecodeMs) / (fullSize.backDecodeMs + fullSize.frontDecodeMs)
        }
    }

    public func run() throws -> Result {
        let backs = try jpegs(seed: 1), fronts = try jpegs(seed: 2)
        let shift = DecodeScale.largestShift(source: cameraSize, covering: layout.inset)
        // Alternated, so both see the same machine.
        var reference: [Run] = [], full: [Run] = [], role: [Run] = []
        for _ in 0..<2 {
            reference.append(try measure(backs, fronts, frontShift: 0, libswscale: true))
            full.append(try measure(backs, fronts, frontShift: 0))
            role.append(try measure(backs, fronts, frontShift: shift))
        }
        func best(_ runs: [Run]) -> Run { runs.min { $0.cpuPerFrameMs < $1.cpuPerFrameMs }! }
        return Result(reference: best(reference), fullSize: best(full), roleSized: best(role),
                      jpegBytes: backs.map(\.count).reduce(0, +) / backs.count)
    }

    /// Eight distinct camera-like pictures as JPEGs: gradients under a little sensor-like
    /// noise, which at quality 4 makes 1080p JPEGs of the size webcams send (100-300 kB).
    func jpegs(seed: UInt64) throws -> [[UInt8]] {
        let encoder = try CameraJPEGEncoder(size: cameraSize, quality: quality)
        return try (0..<8).map { (n: Int) throws -> [UInt8] in
            var state = seed &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(n)
            return try encoder.encode { plane, base, width, height, stride in
                for y in 0..<height {
                    let row = base + y * stride
                    for x in 0..<width {
                        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                        let grain = Int(state >> 62) - 2
                        let level = plane == 0 ? (x * 3 + y * 2 + n * 40) / 12 : 128 + ((x + y * (plane == 1 ? 1 : -1)) / 24) % 40
                        row[x] = UInt8(clamping: (level % 256) + grain)
                    }
                }
            }
        }
    }

    private func measure(_ backs: [[UInt8]], _ fronts: [[UInt8]], frontShift: Int, libswscale: Bool = false) throws -> Run {
        let backDecoder = try MJPEGDecoder(name: "back", shift: 0)
        let frontDecoder = try MJPEGDecoder(name: "front", shift: frontShift)
        let back = I420Buffer(size: cameraSize), front = I420Buffer(size: DecodeScale.reduced(cameraSize, shift: frontShift))
        let compositor = try PiPCompositor(layout: layout, threads: 1)
        let canvas = I420Buffer(size: layout.canvas)
        var backMs: [Double] = [], frontMs: [Double] = [], composeMs: [Double] = []
        for i in -warmup..<frames {
            let n = (i + warmup) % backs.count
            let t0 = threadCPUSeconds()
            let backMatrix = try backs[n].withUnsafeBytes {
                try libswscale ? backDecoder.decodeLikeFFmpeg($0, into: back) : backDecoder.decode($0, into: back)
            }
            let t1 = threadCPUSeconds()
            let frontMatrix = try fronts[n].withUnsafeBytes {
                try libswscale ? frontDecoder.decodeLikeFFmpeg($0, into: front) : frontDecoder.decode($0, into: front)
            }
            let t2 = threadCPUSeconds()
            compositor.compose(main: SourcePicture(image: back.view, matrix: backMatrix),
                               inset: SourcePicture(image: front.view, matrix: frontMatrix), into: canvas.view)
            let t3 = threadCPUSeconds()
            guard i >= 0 else { continue }
            backMs.append((t1 - t0) * 1000)
            frontMs.append((t2 - t1) * 1000)
            composeMs.append((t3 - t2) * 1000)
        }
        func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
        return Run(frontShift: frontShift, libswscale: libswscale, backDecodeMs: median(backMs), frontDecodeMs: median(frontMs),
                   composeMs: median(composeMs))
    }
}

extension MJPEGDecoder {
    /// The reference: an ffmpeg pipeline's way with the same JPEG, libavcodec decoding it and
    /// libswscale converting it to limited-range I420 (the product's own conversion is not
    /// tried first, as `decode` tries it).
    func decodeLikeFFmpeg(_ jpeg: UnsafeRawBufferPointer, into buffer: I420Buffer) throws(MediaError) -> YCbCrMatrix {
        try withLibavcodecFrame(jpeg) { frame throws(MediaError) in try normalised(frame, into: buffer) }
    }
}
