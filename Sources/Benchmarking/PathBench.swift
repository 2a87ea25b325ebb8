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
    }

    static let p1080 = Size(width: 1920, height: 1080), p720 = Size(width: 1280, height: 720)
    static let p2160 = Size(width: 3840, height: 2160)

    public static let cases: [Case] = [
        Case(name: "compose-1080p", path: .compose, back: p1080, front: p720, swapped: false),
        Case(name: "compose-1080p-swapped", path: .compose, back: p1080, front: p720, swapped: true),
        Case(name: "record-yuyv-1080p", path: .recordYUYV, back: p1080, front: p720, swapped: false),
        Case(name: "record-yuyv-1080p-swapped", path: .recordYUYV, back: p1080, front: p720, swapped: true),
        Case(name: "record-mjpeg-1080p", path: .recordMJPEG, back: p1080, front: p720, swapped: false),
        Case(name: "record-mjpeg-1080p-swapped", path: .recordMJPEG, back: p1080, front: p720, swapped: true),
        Case(name: "pip-4k", path: .compose, back: p2160, front: p720, swapped: false),
        Case(name: "pip-4k-swapped", path: .compose, back: p2160, front: p720, swapped: true),
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
        /// The least this frame's work can cost here (`floorWork`), timed frame by frame beside it.
        public var floor: LatencyBench.Stats
        public var floorLabel: String
    }

    public var frames = 600
    public var warmup = 30
    public var sources = LatencyBench.Sources.cold
    public var threads = 2
    public var layout = PiPLayout()

    public init() {}

    public func run(_ c: Case) throws -> Result {
        let floor = try floorWork(c)
        switch c.path {
        case .compose:
            let tally = Tally()
            let ours = try measure(try composeWork(c, tally: tally), tally: tally, beside: floor)
            var kernels = LatencyBench()
            kernels.frames = frames
            kernels.warmup = warmup
            kernels.sources = sources
            let reference = try kernels.measureSwscale(
                LatencyBench.Case(name: c.name, back: c.back, front: c.front, frontMatrix: .bt709, swapped: c.swapped),
                layout: layout)
            return Result(name: c.name, ours: ours.stats, reference: reference, referenceLabel: "libswscale scaling + copy",
                          otherMs: nil, composedInPlace: ours.inPlace, floor: ours.floor, floorLabel: Self.floorLabel(c))
        case .recordYUYV:
            let ours = try measureRecord(c, back: yuyvCamera(c.back, name: "back"), front: yuyvCamera(c.front, name: "front"),
                                         roleSized: true, beside: floor)
            let reference = try measureRecordYUYVSwscale(c)
            return Result(name: c.name, ours: ours.stats, reference: reference, referenceLabel: "libswscale conversion + scaling + copy",
                          otherMs: ours.otherMs, composedInPlace: ours.inPlace, floor: ours.floor, floorLabel: Self.floorLabel(c))
        case .recordMJPEG:
            let ours = try measureRecordMJPEG(c, reference: false, beside: floor)
            let reference = try measureRecordMJPEG(c, reference: true, beside: { _ in })
            return Result(name: c.name, ours: ours.stats, reference: reference.stats,
                          referenceLabel: "full-size decoding, libswscale conversion",
                          otherMs: ours.otherMs, composedInPlace: ours.inPlace, floor: ours.floor, floorLabel: Self.floorLabel(c))
        }
    }

    // MARK: floors

    static func floorLabel(_ c: Case) -> String {
        c.path == .recordMJPEG ? "libjpeg-turbo decoding the driving camera's JPEG alone"
            : "the path's reads and writes alone (vector loads, memset)"
    }

    /// The floor of case `c`: for the raw paths, its memory traffic alone (`TrafficFloor`):
    /// the crop of each picture it reads (a YUYV camera's as the camera's bytes) and what it
    /// writes (the inset alone when it composes in place, else the whole frame); for the
    /// MJPEG paths, libjpeg-turbo decoding the driving camera's JPEGs alone, at the size the
    /// path decodes them (its role's). Same sizes, same ring of sources as the case.
    public func floorWork(_ c: Case) throws -> (Int) throws -> Void {
        let canvas = layout.canvas
        if c.path == .recordMJPEG {
            var jpegs = MJPEGBench()
            jpegs.cameraSize = c.back
            let ring = BufferRing(copies: try jpegs.jpegs(seed: 1))
            let shift = c.swapped ? DecodeScale.largestShift(source: c.back, covering: layout.inset) : 0
            let decoder = try JPEGPlanarDecoder(name: "floor")
            return { n in
                guard let picture = try decoder.start(ring[n], shift: shift) else {
                    throw MediaError.undecodable(path: "floor", reason: "a JPEG libjpeg-turbo's planar path does not take")
                }
                try decoder.readAll(picture)
            }
        }
        let traffic = TrafficFloor(threads: threads)
        let mainSize = c.swapped ? c.front : c.back, insetSize = c.swapped ? c.back : c.front
        let mainCrop = LatencyBench.wholePixels(mainSize, canvas), insetCrop = LatencyBench.wholePixels(insetSize, layout.inset)
        let inPlace = c.path == .compose && !c.swapped && c.back == canvas
        func planes(_ picture: I420View, _ crop: Rect) -> [TrafficFloor.Region] {
            [TrafficFloor.Region(picture.y, crop), TrafficFloor.Region(picture.u, crop.chroma420),
             TrafficFloor.Region(picture.v, crop.chroma420)]
        }
        // A YUYV camera's crop: two bytes a pixel, the chroma within.
        func packed(_ buffer: UnsafeRawBufferPointer, _ size: Size, _ crop: Rect) -> [TrafficFloor.Region] {
            let stride = size.width * 2
            return [TrafficFloor.Region(base: UnsafeMutablePointer(mutating: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
                                            + crop.y * stride + crop.x * 2,
                                        rowBytes: crop.width * 2, rows: crop.height, stride: stride)]
        }
        let canvases = [I420Buffer(size: canvas), I420Buffer(size: canvas)]
        if c.path == .compose {
            func ring(_ size: Size) -> [I420Buffer] {
                (0..<ringCount(bytes: size.width * size.height * 3 / 2)).map { i in
                    let b = I420Buffer(size: size)
                    LatencyBench.fillGradient(b.view, seed: i)
                    return b
                }
            }
            let backs = ring(c.back), fronts = ring(c.front)
            return { n in
                let back = backs[n % backs.count].view, front = fronts[n % fronts.count].view
                let main = c.swapped ? front : back, inset = c.swapped ? back : front
                let output = inPlace ? back : canvases[n % 2].view
                traffic.run(reads: (inPlace ? [] : planes(main, mainCrop)) + planes(inset, insetCrop),
                            writes: inPlace ? planes(output, layout.insetRect) : planes(output, Rect(x: 0, y: 0, width: canvas.width, height: canvas.height)))
            }
        }
        // record-yuyv: the back camera's buffers as DMA leaves them, the front's picture as
        // its own thread has just made it.
        let bytes = c.back.width * 2 * c.back.height
        let ring = BufferRing(count: ringCount(bytes: bytes), bytes: bytes)
        let front = I420Buffer(size: c.front)
        return { n in
            let back = ring[n]
            let mainReads = c.swapped ? planes(front.view, mainCrop) : packed(back, c.back, mainCrop)
            let insetReads = c.swapped ? packed(back, c.back, insetCrop) : planes(front.view, insetCrop)
            traffic.run(reads: mainReads + insetReads,
                        writes: planes(canvases[n % 2].view, Rect(x: 0, y: 0, width: canvas.width, height: canvas.height)))
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
        /// The reference's decoder (libavcodec and libswscale, full size), in place of the maker's.
        var reference: MJPEGDecoder?
        let exchange = FrameExchange()

        /// What the capture thread does with buffer `n`: make it a picture and publish it;
        /// then the composer takes it.
        func picture(_ n: Int, inset: Rect?) throws -> LiveFrame {
            if let reference {
                let frame = exchange.frameToFill(size: Size(width: stream.width, height: stream.height))
                let matrix = try reference.decodeLikeFFmpeg(ring[n], into: frame.buffer)
                exchange.publish(frame, timestamp: 0, matrix: matrix)
                return exchange.take()!.frame
            }
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
        return Camera(ring: ring, stream: StreamFormat(fourcc: .mjpeg, width: size.width, height: size.height,
                                                       bytesPerLine: 0, imageSize: 0, framesPerSecond: 30),
                      maker: CameraFrameMaker(name: name, matrix: .bt601, output: PiPCompositor.outputMatrix),
                      reference: libswscale ? try MJPEGDecoder(name: name) : nil)
    }

    /// The back camera drives: its buffer is made a picture and composed with the front
    /// camera's newest, which its own thread made beforehand.
    private func recordWork(_ c: Case, back: Camera, front: Camera, roleSized: Bool, tally: Tally) throws -> FrameWork {
        let step = FrameStep(compositor: try PiPCompositor(layout: layout, threads: threads))
        let canvases = [try EncoderFrame(size: layout.canvas), try EncoderFrame(size: layout.canvas)]
        let backInset = roleSized && c.swapped ? layout.insetRect : nil
        let frontInset = roleSized && !c.swapped ? layout.insetRect : nil
        var other: LiveFrame?
        return FrameWork(prepare: { n in other = try front.picture(n, inset: frontInset) }) { n in
            let driver = try back.picture(n, inset: backInset)
            if step.frame(back: driver, front: other, swapped: c.swapped, canvas: { canvases[n % 2] }).inPlace {
                tally.inPlace += 1
            }
        }
    }

    typealias Measured = (stats: LatencyBench.Stats, otherMs: Double, inPlace: Int, floor: LatencyBench.Stats)

    /// Times `work.frame` per frame. `work.prepare` (the front camera's part) is timed
    /// apart: it is not this frame's latency. In-place frames are counted after the warm-up.
    /// The floor (nothing, unless given) is timed in the same loop, frame by frame beside the path (on
    /// alternate sides of it): a shared machine's slow spells then fall on both, where a
    /// floor timed after the path was often measured in another spell (ratios from 2.2x to
    /// 4.5x for the same build, minutes apart).
    private func measure(_ work: FrameWork, tally: Tally, beside floor: (Int) throws -> Void = { _ in }) throws -> Measured {
        var times = [UInt64](repeating: 0, count: frames), otherNs = [UInt64](repeating: 0, count: frames)
        var floorNs = [UInt64](repeating: 0, count: frames)
        var inPlaceBefore = 0
        func timeFloor(_ i: Int) throws {
            let t0 = DispatchTime.now().uptimeNanoseconds
            try floor(i + warmup)
            let t1 = DispatchTime.now().uptimeNanoseconds
            if i >= 0 { floorNs[i] = t1 - t0 }
        }
        for i in -warmup..<frames {
            if i == 0 { inPlaceBefore = tally.inPlace }
            if i & 1 == 0 { try timeFloor(i) }
            let t0 = DispatchTime.now().uptimeNanoseconds
            try work.prepare(i + warmup)
            let t1 = DispatchTime.now().uptimeNanoseconds
            try work.frame(i + warmup)
            let t2 = DispatchTime.now().uptimeNanoseconds
            if i >= 0 { times[i] = t2 - t1; otherNs[i] = t1 - t0 }
            if i & 1 != 0 { try timeFloor(i) }
        }
        return (LatencyBench.Stats(times), Double(otherNs.sorted()[frames / 2]) / 1e6, tally.inPlace - inPlaceBefore,
                LatencyBench.Stats(floorNs))
    }

    private func measureRecord(_ c: Case, back: Camera, front: Camera, roleSized: Bool,
                               beside floor: (Int) throws -> Void) throws -> Measured {
        let tally = Tally()
        return try measure(try recordWork(c, back: back, front: front, roleSized: roleSized, tally: tally), tally: tally,
                           beside: floor)
    }

    private func measureRecordMJPEG(_ c: Case, reference: Bool, beside floor: (Int) throws -> Void) throws -> Measured {
        try measureRecord(c, back: mjpegCamera(c.back, name: "back", seed: 1, libswscale: reference),
                          front: mjpegCamera(c.front, name: "front", seed: 2, libswscale: reference), roleSized: !reference,
                          beside: floor)
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
