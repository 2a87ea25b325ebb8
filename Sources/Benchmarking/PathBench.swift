import Compositor
import Foundation
import MediaIO
import Pipeline

/// Latency of the paths the product runs, from the source buffers to the frame the encoder
/// receives, through the product's own code, each beside the way an ffmpeg pipeline does
/// the same work (libswscale) in the same run:
/// - `compose-*`: decoded I420 pictures, as a decoder hands them over, through `FrameStep`
///   into the frame the encoder takes: the back picture's own when it can be composed in
///   place, the encoder's otherwise.
/// - `record-*`: the back camera's buffer through `CameraFrameMaker` (YUYV conversion, or
///   JPEG decoding at the size its role needs) and the live composition into a pool frame.
///   The front camera's buffer is made into a picture for every frame too, as its own
///   capture thread does, outside the timed span; its cost is reported as `other_ms`.
/// Cameras say BT.601 (a UVC webcam's sRGB default), so their pictures are re-encoded to
/// BT.709 on the way; decoded files are BT.709.
public struct PathBench {
    public enum Path: String, Sendable { case compose, recordYUYV, recordMJPEG }

    public struct Case: Sendable {
        public var name: String
        public var path: Path
        public var back: Size
        public var front: Size
        public var swapped: Bool
        /// The p99 this product aims for on a 2-core machine, cold sources, in ms.
        public var targetMs: Double
    }

    static let p1080 = Size(width: 1920, height: 1080), p720 = Size(width: 1280, height: 720)
    static let p2160 = Size(width: 3840, height: 2160)

    public static let cases: [Case] = [
        Case(name: "compose-1080p", path: .compose, back: p1080, front: p720, swapped: false, targetMs: 0.3),
        Case(name: "compose-1080p-swapped", path: .compose, back: p1080, front: p720, swapped: true, targetMs: 1.2),
        Case(name: "record-yuyv-1080p", path: .recordYUYV, back: p1080, front: p720, swapped: false, targetMs: 0.6),
        Case(name: "record-yuyv-1080p-swapped", path: .recordYUYV, back: p1080, front: p720, swapped: true, targetMs: 1.2),
        Case(name: "record-mjpeg-1080p", path: .recordMJPEG, back: p1080, front: p720, swapped: false, targetMs: 8),
        Case(name: "record-mjpeg-1080p-swapped", path: .recordMJPEG, back: p1080, front: p720, swapped: true, targetMs: 8),
        Case(name: "pip-4k", path: .compose, back: p2160, front: p720, swapped: false, targetMs: 2.5),
        Case(name: "pip-4k-swapped", path: .compose, back: p2160, front: p720, swapped: true, targetMs: 2.5),
    ]

    public struct Result: Sendable {
        public var name: String
        public var ours: LatencyBench.Stats
        public var reference: LatencyBench.Stats
        /// What the reference does in our place.
        public var referenceLabel: String
        /// The other camera's per-frame cost on its own thread (p50, ms), for record paths.
        public var otherMs: Double?
        /// Frames of the run composed in place (no copy of the main picture).
        public var composedInPlace: Int
        public var targetMs: Double
    }

    public var frames = 600
    public var warmup = 30
    public var sources = LatencyBench.Sources.cold
    public var threads = 2
    public var layout = PiPLayout()

    public init() {}

    public func run(_ c: Case) throws -> Result {
        switch c.path {
        case .compose:
            let tally = Tally()
            let ours = try measure(try composeWork(c, tally: tally), tally: tally)
            var kernels = LatencyBench()
            kernels.frames = frames
            kernels.warmup = warmup
            kernels.sources = sources
            let reference = try kernels.measureSwscale(
                LatencyBench.Case(name: c.name, back: c.back, front: c.front, frontMatrix: .bt709, swapped: c.swapped),
                layout: layout)
            return Result(name: c.name, ours: ours.stats, reference: reference, referenceLabel: "libswscale scaling + copy",
                          otherMs: nil, composedInPlace: ours.inPlace, targetMs: c.targetMs)
        case .recordYUYV:
            let ours = try measureRecordYUYV(c), reference = try measureRecordYUYVSwscale(c)
            return Result(name: c.name, ours: ours.stats, reference: reference, referenceLabel: "libswscale conversion + scaling + copy",
                          otherMs: ours.otherMs, composedInPlace: ours.inPlace, targetMs: c.targetMs)
        case .recordMJPEG:
            let ours = try measureRecordMJPEG(c, reference: false), reference = try measureRecordMJPEG(c, reference: true)
            return Result(name: c.name, ours: ours.stats, reference: reference.stats,
                          referenceLabel: "full-size decoding, libswscale conversion",
                          otherMs: ours.otherMs, composedInPlace: ours.inPlace, targetMs: c.targetMs)
        }
    }

    /// How many distinct sources of `bytes` each make the ring: cold, enough to pass 64 MB
    /// (more than the last-level cache) between two uses of one; warm, two.
    private func ringCount(bytes: Int) -> Int {
        sources == .cold ? max(2, (64 << 20) / bytes + 1) : 2
    }

    // MARK: compose

    private func decodedPictures(_ size: Size) throws -> [VideoPicture] {
        try (0..<ringCount(bytes: size.width * size.height * 3 / 2)).map { i in
            let frame = try EncoderFrame(size: size)
            LatencyBench.fillGradient(frame.view, seed: i)
            return VideoPicture(decoded: frame.frame, matrix: .bt709)
        }
    }

    /// One case's per-frame work, exactly as the product does it: `prepare` is what another
    /// thread does first (the front camera's picture), `frame` the timed path to the
    /// encoder's frame. For benchmarks that count allocations or time it their own way.
    public struct FrameWork {
        public let prepare: (Int) throws -> Void
        public let frame: (Int) throws -> Void
    }

    /// Counts, across a run, what the work did.
    final class Tally { var inPlace = 0 }

    public func work(_ c: Case) throws -> FrameWork {
        switch c.path {
        case .compose: return try composeWork(c, tally: Tally())
        case .recordYUYV:
            return try recordWork(c, back: yuyvCamera(c.back, name: "back"), front: yuyvCamera(c.front, name: "front"),
                                  roleSized: true, tally: Tally())
        case .recordMJPEG:
            return try recordWork(c, back: mjpegCamera(c.back, name: "back", seed: 1, libswscale: false),
                                  front: mjpegCamera(c.front, name: "front", seed: 2, libswscale: false),
                                  roleSized: true, tally: Tally())
        }
    }

    private func composeWork(_ c: Case, tally: Tally) throws -> FrameWork {
        let step = FrameStep(compositor: try PiPCompositor(layout: layout, threads: threads))
        let backs = try decodedPictures(c.back), fronts = try decodedPictures(c.front)
        let canvases = [try EncoderFrame(size: layout.canvas), try EncoderFrame(size: layout.canvas)]
        return FrameWork(prepare: { _ in }) { n in
            let canvas = canvases[n % 2]
            let (_, composedInPlace) = step.frame(back: backs[n % backs.count], front: fronts[n % fronts.count],
                                                      swapped: c.swapped, canvas: { canvas })
            if composedInPlace { tally.inPlace += 1 }
        }
    }

    // MARK: record

    /// Camera buffers as DMA leaves them: a ring of distinct ones.
    private final class BufferRing {
        let buffers: [UnsafeMutableRawBufferPointer]
        init(count: Int, bytes: Int) {
            buffers = (0..<count).map { i in
                let b = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes, alignment: 64)
                for k in 0..<bytes { b[k] = UInt8(truncatingIfNeeded: k &* 7 &+ i &* 13) }
                return b
            }
        }
        init(copies: [[UInt8]]) {
            buffers = copies.map { bytes in
                let b = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 64)
                bytes.withUnsafeBytes { b.copyMemory(from: $0) }
                return b
            }
        }
        subscript(n: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(buffers[n % buffers.count]) }
        deinit { for b in buffers { b.deallocate() } }
    }

    /// A camera: its buffers, its format and the capture thread's machinery.
    private struct Camera {
        let ring: BufferRing
        let stream: StreamFormat
        let maker: CameraFrameMaker
        let exchange = FrameExchange()

        /// What the capture thread does with buffer `n`: make it a picture and publish it;
        /// then the composer takes it.
        func picture(_ n: Int, inset: Size?) throws -> LiveFrame {
            guard let (frame, shift) = maker.make(ring[n], isDamaged: false, stream: stream, inset: inset, exchange: exchange)
            else { throw MediaError.undecodable(path: maker.name, reason: "benchmark buffer refused") }
            exchange.publish(frame, timestamp: 0, matrix: maker.matrix, shift: shift)
            return exchange.take()!.frame
        }
    }

    private func yuyvCamera(_ size: Size, name: String) -> Camera {
        let bytes = size.width * 2 * size.height
        return Camera(ring: BufferRing(count: ringCount(bytes: bytes), bytes: bytes),
                      stream: StreamFormat(fourcc: .yuyv, width: size.width, height: size.height, bytesPerLine: size.width * 2,
                                           imageSize: bytes, framesPerSecond: 30, matrix: .bt601),
                      maker: CameraFrameMaker(name: name, matrix: .bt601, output: PiPCompositor.outputMatrix))
    }

    private func mjpegCamera(_ size: Size, name: String, seed: UInt64, libswscale: Bool) throws -> Camera {
        var jpegs = MJPEGBench()
        jpegs.cameraSize = size
        let ring = BufferRing(copies: try jpegs.jpegs(seed: seed))
        let maker = CameraFrameMaker(name: name, matrix: .bt601, output: PiPCompositor.outputMatrix)
        maker.convertsWithLibswscale = libswscale
        return Camera(ring: ring, stream: StreamFormat(fourcc: .mjpeg, width: size.width, height: size.height,
                                                       bytesPerLine: 0, imageSize: 0, framesPerSecond: 30),
                      maker: maker)
    }

    /// The back camera drives: its buffer is made a picture and composed with the front
    /// camera's newest, which its own thread made beforehand.
    private func recordWork(_ c: Case, back: Camera, front: Camera, roleSized: Bool, tally: Tally) throws -> FrameWork {
        let step = FrameStep(compositor: try PiPCompositor(layout: layout, threads: threads))
        let canvases = [try EncoderFrame(size: layout.canvas), try EncoderFrame(size: layout.canvas)]
        let backInset = roleSized && c.swapped ? layout.inset : nil
        let frontInset = roleSized && !c.swapped ? layout.inset : nil
        var other: LiveFrame?
        return FrameWork(prepare: { n in other = try front.picture(n, inset: frontInset) }) { n in
            let driver = try back.picture(n, inset: backInset)
            if step.frame(back: driver, front: other, swapped: c.swapped, canvas: { canvases[n % 2] }).inPlace {
                tally.inPlace += 1
            }
        }
    }

    typealias Measured = (stats: LatencyBench.Stats, otherMs: Double, inPlace: Int)

    /// Times `work.frame` per frame. `work.prepare` (the front camera's part) is timed
    /// apart: it is not this frame's latency. In-place frames are counted after the warm-up.
    private func measure(_ work: FrameWork, tally: Tally) throws -> Measured {
        var times = [UInt64](repeating: 0, count: frames), otherNs = [UInt64](repeating: 0, count: frames)
        var inPlaceBefore = 0
        for i in -warmup..<frames {
            if i == 0 { inPlaceBefore = tally.inPlace }
            let t0 = DispatchTime.now().uptimeNanoseconds
            try work.prepare(i + warmup)
            let t1 = DispatchTime.now().uptimeNanoseconds
            try work.frame(i + warmup)
            let t2 = DispatchTime.now().uptimeNanoseconds
            if i >= 0 { times[i] = t2 - t1; otherNs[i] = t1 - t0 }
        }
        return (LatencyBench.Stats(times), Double(otherNs.sorted()[frames / 2]) / 1e6, tally.inPlace - inPlaceBefore)
    }

    private func measureRecord(_ c: Case, back: Camera, front: Camera, roleSized: Bool) throws -> Measured {
        let tally = Tally()
        return try measure(try recordWork(c, back: back, front: front, roleSized: roleSized, tally: tally), tally: tally)
    }

    private func measureRecordYUYV(_ c: Case) throws -> Measured {
        try measureRecord(c, back: yuyvCamera(c.back, name: "back"), front: yuyvCamera(c.front, name: "front"), roleSized: true)
    }

    private func measureRecordMJPEG(_ c: Case, reference: Bool) throws -> Measured {
        try measureRecord(c, back: mjpegCamera(c.back, name: "back", seed: 1, libswscale: reference),
                          front: mjpegCamera(c.front, name: "front", seed: 2, libswscale: reference), roleSized: !reference)
    }

    /// An ffmpeg pipeline's way with the same buffers: libswscale converts (and scales) the
    /// back camera's YUYV straight into its place, scales the front's I420 (converted on its
    /// own thread, untimed) into its place, and the inset is copied in.
    private func measureRecordYUYVSwscale(_ c: Case) throws -> LatencyBench.Stats {
        let backs = yuyvCamera(c.back, name: "back"), fronts = yuyvCamera(c.front, name: "front")
        let full = Rect(x: 0, y: 0, width: c.front.width, height: c.front.height)
        guard let frontToI420 = SwscaleScaler(crop: full, destination: c.front, filter: .bilinear, source: .yuyv),
              let backScaler = SwscaleScaler(crop: LatencyBench.wholePixels(c.back, c.swapped ? layout.inset : layout.canvas),
                                             destination: c.swapped ? layout.inset : layout.canvas,
                                             filter: c.swapped ? .area : .bilinear, convertBT601: true, source: .yuyv),
              let frontScaler = SwscaleScaler(crop: LatencyBench.wholePixels(c.front, c.swapped ? layout.canvas : layout.inset),
                                              destination: c.swapped ? layout.canvas : layout.inset,
                                              filter: c.swapped ? .bilinear : .area, convertBT601: true)
        else { throw MediaError.encoderFailed(name: "swscale", reason: "cannot convert YUYV") }
        let frontI420 = I420Buffer(size: c.front), inset = I420Buffer(size: layout.inset)
        let canvases = [I420Buffer(size: layout.canvas), I420Buffer(size: layout.canvas)]
        let rect = layout.insetRect, chroma = rect.chroma420
        return try measure(FrameWork(prepare: { n in
            frontToI420.scale(yuyv: fronts.ring[n].baseAddress!, stride: c.front.width * 2, into: frontI420.view)
        }) { n in
            let canvas = canvases[n % 2].view
            let back = backs.ring[n].baseAddress!
            if c.swapped {
                frontScaler.scale(frontI420.view, into: canvas)
                backScaler.scale(yuyv: back, stride: c.back.width * 2, into: inset.view)
            } else {
                backScaler.scale(yuyv: back, stride: c.back.width * 2, into: canvas)
                frontScaler.scale(frontI420.view, into: inset.view)
            }
            canvas.y.region(rect).copy(from: inset.view.y)
            canvas.u.region(Rect(x: chroma.x, y: chroma.y, width: inset.view.u.width, height: inset.view.u.height)).copy(from: inset.view.u)
            canvas.v.region(Rect(x: chroma.x, y: chroma.y, width: inset.view.v.width, height: inset.view.v.height)).copy(from: inset.view.v)
        }, tally: Tally()).stats
    }
}
