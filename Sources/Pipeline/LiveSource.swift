import Compositor
import Foundation
import MediaIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A captured picture, owned by its source's pool. Its pixels are an encoder frame's: when
/// it is the main picture at the output size, the inset is drawn into it and it is encoded
/// as it is, without a copy.
public final class LiveFrame: @unchecked Sendable {
    let storage: EncoderFrame
    public let buffer: I420Buffer
    public fileprivate(set) var timestamp = 0.0
    /// Where its latency is counted from (monotonic seconds): a camera's buffer timestamp,
    /// so conversion or JPEG decoding is inside the figure; for a file, the time it was due
    /// less the time its decoding took (done ahead, as a camera exposes ahead of its buffer).
    public fileprivate(set) var latencyOrigin = 0.0
    public fileprivate(set) var matrix = YCbCrMatrix.bt601
    /// Decoded at 1/2^shift of the camera's size (a JPEG for the inset); 0 at full size.
    public fileprivate(set) var shift = 0
    init(size: Size) {
        storage = EncoderFrame.camera(size: size)
        buffer = I420Buffer(wrapping: storage.view, owner: storage)
    }
    public var picture: SourcePicture { SourcePicture(image: buffer.view, matrix: matrix) }
    /// Its pixels were re-encoded where they lie (by the composer, which holds it).
    func retag(_ m: YCbCrMatrix) { matrix = m }
}

/// The newest frame of a live source, handed from its capture thread to the composer.
/// Three frames circulate: the one published, the one the composer holds, and the one being
/// filled, so the capture thread never waits and never writes what is being read. Frames
/// composed in place wait to be encoded on top of these: while the encoder holds one, a new
/// one takes its turn (at most as many as the encoder's queue is deep).
final class FrameExchange: @unchecked Sendable {
    private let lock = NSLock()
    private var frames: [LiveFrame] = []
    private var published: Int?
    private var held: Int?
    private var fresh = false

    /// A frame the capture thread may fill (sized `size`; reallocated if the size changed).
    func frameToFill(size: Size) -> LiveFrame {
        lock.lock()
        defer { lock.unlock() }
        if frames.isEmpty { frames = (0..<3).map { _ in LiveFrame(size: size) } }
        guard let i = frames.indices.first(where: { $0 != published && $0 != held && frames[$0].storage.isExclusive })
        else {
            frames.append(LiveFrame(size: size))
            return frames[frames.count - 1]
        }
        if frames[i].buffer.size != size { frames[i] = LiveFrame(size: size) }
        return frames[i]
    }

    func publish(_ frame: LiveFrame, timestamp: Double, matrix: YCbCrMatrix, shift: Int = 0, latencyOrigin: Double? = nil) {
        frame.timestamp = timestamp
        frame.latencyOrigin = latencyOrigin ?? timestamp
        frame.matrix = matrix
        frame.shift = shift
        lock.lock()
        published = frames.firstIndex { $0 === frame }
        fresh = true
        lock.unlock()
    }

    /// Frames allocated so far (they are kept and reused).
    var frameCount: Int { lock.withLock { frames.count } }

    /// The newest frame, held until the next `take` (nil before the first).
    func take() -> (frame: LiveFrame, isNew: Bool)? {
        lock.lock()
        defer { lock.unlock() }
        guard let p = published else { return nil }
        held = p
        let isNew = fresh
        fresh = false
        return (frames[p], isNew)
    }
}

public enum SourceState: Equatable, Sendable {
    case starting
    case running
    /// Gone, and being looked for (a camera unplugged): running again at its next frame.
    case away(String)
    /// Gone for good (a file that ended, a device that cannot come back).
    case lost(String)
}

/// A camera or a file played as one: frames arrive on their own thread.
public class LiveSource: @unchecked Sendable {
    public let name: String
    let exchange = FrameExchange()
    private let stateLock = NSLock()
    private var _state = SourceState.starting
    private var _lastArrival = 0.0
    /// Called on every published frame (the composer waits on the driver's). The composer
    /// swaps it while the capture thread runs (failover), so it lives under `stateLock`.
    private var _onFrame: (() -> Void)?
    /// Set by the composer, read by the capture thread between frames.
    private let _stopping = Atomic<Bool>(false)
    public private(set) var format = ""

    var stopping: Bool { _stopping.load(ordering: .acquiring) }
    /// Asks the capture thread to end after its current frame, without waiting for it.
    func requestStop() { _stopping.store(true, ordering: .releasing) }
    func setOnFrame(_ f: (() -> Void)?) {
        stateLock.lock(); _onFrame = f; stateLock.unlock()
    }

    init(name: String) { self.name = name }

    public var state: SourceState {
        stateLock.lock(); defer { stateLock.unlock() }
        return _state
    }
    var lastArrival: Double {
        stateLock.lock(); defer { stateLock.unlock() }
        return _lastArrival
    }
    func setState(_ s: SourceState) {
        stateLock.lock()
        if case .lost = _state {} else { _state = s }
        stateLock.unlock()
    }
    func setFormat(_ f: String) { format = f }

    func published(_ frame: LiveFrame, timestamp: Double, matrix: YCbCrMatrix, shift: Int = 0, latencyOrigin: Double? = nil) {
        exchange.publish(frame, timestamp: timestamp, matrix: matrix, shift: shift, latencyOrigin: latencyOrigin)
        stateLock.lock()
        _lastArrival = monotonicNow()
        switch _state {
        case .starting, .away: _state = .running
        case .running, .lost: break
        }
        let onFrame = _onFrame
        stateLock.unlock()
        onFrame?()
    }

    /// Opens the source; errors here mean it cannot be used at all.
    func open() throws {}
    /// The capture loop, run on the source's own thread until `stopping` or loss.
    func captureLoop() {}

    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    func start() {
        started = true
        let t = Thread { [self] in
            captureLoop()
            finished.signal()
        }
        t.name = "dualcam-capture"
        t.start()
    }

    /// Stops the capture thread and waits for it, at most `timeout` seconds: false when it
    /// is stuck (in a driver call that does not return). Its thread keeps the source and its
    /// device alive, so nothing is closed under it; the recording is finished without it.
    @discardableResult
    func stop(timeout: Double = LiveSource.stopTimeout) -> Bool {
        requestStop()
        guard started else { return true }
        guard finished.wait(timeout: .now() + timeout) == .success else { return false }
        started = false
        return true
    }

    /// Longer than any single wait of a capture loop (a device read times out at 1 s).
    static let stopTimeout = 3.0
}

/// A video file played at its real-time pace, as if it were a camera: each picture is
/// published when its time comes, stamped with the monotonic clock; the end of the file is
/// treated as an unplugged camera.
final class FileSource: LiveSource, @unchecked Sendable {
    let path: String
    private var reader: VideoReader?
    private let paceLock = NSLock()
    private var _paceStart: Double?

    init(path: String) {
        self.path = path
        super.init(name: path)
    }

    /// The monotonic time of the file's time zero: its pictures are published at this plus
    /// their time. nil until the first picture.
    var paceStart: Double? { paceLock.withLock { _paceStart } }

    /// A reader of the file's sound on its pictures' timeline (after `open`); nil when the
    /// file has no sound track.
    func soundReader() throws(MediaError) -> AudioReader? {
        guard let reader else { return nil }
        return try AudioReader(path: path, timeline: reader.timeline)
    }

    override func open() throws {
        reader = try VideoReader(path: path)
        setFormat("file \(reader!.codecName) \(reader!.displaySize)")
    }

    override func captureLoop() {
        guard let reader else { return }
        // The pace starts with the first picture, not before it: opening the decoder takes
        // tens of ms, and a late first frame would shift the clock the recorder takes from it.
        var start: Double?
        do {
            while !stopping, case let decodeStart = monotonicNow(), let picture = try reader.next() {
                let decoding = monotonicNow() - decodeStart
                if start == nil {
                    start = monotonicNow() - picture.time
                    paceLock.withLock { _paceStart = start }
                }
                // In short naps, so that a stop request is seen within 50 ms whatever the gap.
                let due = start! + picture.time
                while !stopping, case let wait = due - monotonicNow(), wait > 0 {
                    usleep(UInt32(min(wait, 0.05) * 1e6))
                }
                if stopping { break }
                // Stamped with the time the picture is due, as a camera stamps its buffer at
                // capture, not with when this thread woke up: a wake-up 17 ms late (the
                // encoder busy on every core) would otherwise move the picture into the
                // next slot, once in ~6000 frames. The wait and the copy below stand for
                // the camera's DMA and count as latency.
                let captured = due
                let frame = exchange.frameToFill(size: picture.picture.image.size)
                frame.buffer.view.copy(from: picture.picture.image)
                published(frame, timestamp: captured, matrix: picture.picture.matrix, latencyOrigin: captured - decoding)
            }
            if !stopping { setState(.lost("the file ended")) }
        } catch {
            setState(.lost(error.description))
        }
    }
}
