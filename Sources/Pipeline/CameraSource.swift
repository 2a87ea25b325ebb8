import Compositor
import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// A V4L2 camera: negotiates the cheapest format to turn into I420 at the requested size,
/// streams with mmap buffers and publishes each frame, stamped with the buffer's monotonic
/// timestamp. ENODEV/EIO (unplugged, broken stream) end it as lost.
final class CameraSource: LiveSource, @unchecked Sendable {
    let path: String
    let size: Size
    let fps: Double
    private let log: (String) -> Void
    private var device: V4L2Device?
    private(set) var stream: StreamFormat?
    private var decoder: MJPEGDecoder?
    private var matrix = YCbCrMatrix.bt601
    private(set) var damagedFrames = 0
    private(set) var sequenceGaps = 0

    /// Cheapest to convert first; MJPEG (a decode per frame) when nothing else fits.
    static let preference: [FourCC] = [.yuyv, .nv12, .yu12, .mjpeg]

    private let only: FourCC?

    init(path: String, size: Size, fps: Double, only: FourCC? = nil, log: @escaping (String) -> Void) {
        self.only = only
        self.path = path
        self.size = size
        self.fps = fps
        self.log = log
        super.init(name: path)
    }

    override func open() throws {
        let device = try V4L2Device(path: path)
        guard try device.capabilities().canCapture else {
            throw V4L2Error(device: path, operation: "open (not a streaming capture device)", code: ENODEV)
        }
        let offered = try device.formats()
        let native = Set(offered.filter { !$0.emulated }.map(\.fourcc))
        let wanted = only.map { [$0] } ?? Self.preference
        var candidates = wanted.filter { native.contains($0.description) }
        if candidates.isEmpty { candidates = wanted.filter { f in offered.contains { $0.fourcc == f.description } } }
        guard !candidates.isEmpty else {
            throw V4L2Error(device: path, operation: "find a usable pixel format (has \(offered.map(\.fourcc)))", code: EINVAL)
        }
        let negotiation = FormatNegotiation(
            device: path, formats: candidates, requested: size,
            smallerSizes: offered.flatMap { $0.modes }.map { Size(width: $0.width, height: $0.height) })
        let f = try negotiation.run(log: log) { (choice) throws(V4L2Error) -> FormatNegotiation.Outcome<StreamFormat> in
            var f = try device.setFormat(choice.fourcc, width: choice.size.width, height: choice.size.height)
            guard f.fourcc == choice.fourcc else { return .substituted }
            f.framesPerSecond = try device.setFrameRate(fps)
            do throws(V4L2Error) { try device.startStreaming() } catch {
                // Buffers must go before S_FMT can be asked again.
                device.stopStreaming()
                return .refused(error)
            }
            return .started(f)
        }
        stream = f
        self.device = device
        if f.fourcc == .mjpeg { decoder = try MJPEGDecoder(name: path) }
        matrix = f.matrix
        setFormat(f.description)
    }

    /// The camera has streamed since it was opened (formats are checked by streaming): the
    /// buffers it filled meanwhile are old, and the frames it skipped while they waited are
    /// no drop. They go back to the driver unseen.
    private func discardQueued(_ device: V4L2Device) {
        for _ in 0..<64 {
            guard let old = try? device.dequeue(timeout: 0) else { return }
            do { try device.requeue(old) } catch { return }
        }
    }

    override func captureLoop() {
        guard let device, let stream else { return }
        var lastSequence: UInt32?
        discardQueued(device)
        while !stopping {
            let buffer: CapturedBuffer?
            do {
                buffer = try device.dequeue(timeout: 0.2)
            } catch {
                if error.isFatal || error.code == EBADF {
                    setState(.lost(error.description))
                    return
                }
                // A single bad buffer: count it and carry on.
                damagedFrames += 1
                continue
            }
            guard let buffer else { continue }
            if let last = lastSequence, buffer.sequence > last &+ 1 { sequenceGaps += Int(buffer.sequence &- last &- 1) }
            lastSequence = buffer.sequence
            let size = Size(width: stream.width, height: stream.height)
            let frame = exchange.frameToFill(size: size)
            var ok = true
            let base = buffer.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            if stream.fourcc == .yuyv {
                CameraFormats.yuyvSIMD(base, stride: stream.bytesPerLine, into: frame.buffer.view)
            } else if stream.fourcc == .nv12 {
                CameraFormats.nv12SIMD(luma: base, lumaStride: stream.bytesPerLine,
                                       chroma: base + stream.bytesPerLine * stream.height,
                                       chromaStride: stream.bytesPerLine, into: frame.buffer.view)
            } else if stream.fourcc == .yu12 {
                let cs = stream.bytesPerLine / 2, ch = (stream.height + 1) / 2
                let view = I420View(
                    y: PlaneView(base: UnsafeMutablePointer(mutating: base), width: stream.width, height: stream.height,
                                 stride: stream.bytesPerLine),
                    u: PlaneView(base: UnsafeMutablePointer(mutating: base + stream.bytesPerLine * stream.height),
                                 width: (stream.width + 1) / 2, height: ch, stride: cs),
                    v: PlaneView(base: UnsafeMutablePointer(mutating: base + stream.bytesPerLine * stream.height + cs * ch),
                                 width: (stream.width + 1) / 2, height: ch, stride: cs))
                frame.buffer.view.copy(from: view)
            } else if let decoder {
                do { matrix = try decoder.decode(buffer.bytes, into: frame.buffer).1 } catch { ok = false; damagedFrames += 1 }
            }
            let ts = buffer.timestamp
            do { try device.requeue(buffer) } catch {
                setState(.lost(error.description))
                return
            }
            if ok { published(frame, timestamp: ts, matrix: matrix) }
        }
    }
}
