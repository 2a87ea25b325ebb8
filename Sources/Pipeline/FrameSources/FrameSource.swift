import Compositor
import Foundation
import MediaIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public enum SourceState: Equatable, Sendable {
    case starting
    case running
    /// Gone, and being looked for (a camera unplugged): running again at its next frame.
    case away(String)
    /// Gone for good (a file that ended, a device that cannot come back).
    case lost(String)
}

/// Where a recording's pictures come from: a camera, or a file played as one. Each runs
/// its capture loop on its own thread and publishes through its feed; the recorder sees
/// only this.
protocol FrameSource: AnyObject, Sendable {
    /// What every source shares: its newest picture, its state, its thread.
    var feed: SourceFeed { get }
    /// Opens the source; errors here mean it cannot be used at all.
    func open() throws
    /// The capture loop, run on the source's own thread until `stopping` or loss.
    func captureLoop()
}

extension FrameSource {
    var name: String { feed.name }
    var exchange: FrameExchange { feed.exchange }
    var demand: PictureDemand { feed.demand }
    var state: SourceState { feed.state }
    var format: String { feed.format }
    var lastArrival: Double { feed.lastArrival }
    var stopping: Bool { feed.stopping }
    func requestStop() { feed.requestStop() }
    func setOnFrame(_ f: (() -> Void)?) { feed.setOnFrame(f) }
    func setState(_ s: SourceState) { feed.setState(s) }
    func setFormat(_ f: String) { feed.setFormat(f) }
    func published(_ frame: LiveFrame, timestamp: Double, matrix: YCbCrMatrix, shift: Int = 0, latencyOrigin: Double? = nil) {
        feed.published(frame, timestamp: timestamp, matrix: matrix, shift: shift, latencyOrigin: latencyOrigin)
    }
    func start() { feed.start { [self] in captureLoop() } }
    /// Stops the capture thread and waits for it, at most `timeout` seconds: false when it
    /// is stuck (in a driver call that does not return). Its thread keeps the source and its
    /// device alive, so nothing is closed under it; the recording is finished without it.
    @discardableResult
    func stop(timeout: Double = SourceFeed.stopTimeout) -> Bool { feed.stop(timeout: timeout) }
}

/// What the recording needs of a source's pictures, published by the recording's loop and
/// read by the source before it makes each picture: where the inset is while the source is
/// in it, nil while its pictures are shown full frame (or kept whole). A camera or an MJPEG
/// file then makes them no larger than that (JPEGs decoded at the inset's size, uncompressed
/// frames converted only where the inset reads them); other sources need not look.
final class PictureDemand: Sendable {
    private let insetRect = Locked<Rect?>(nil)
    func publish(inset: Rect?) { insetRect.withLock { $0 = inset } }
    var inset: Rect? { insetRect.withLock { $0 } }
}

/// The state a source shares with the recorder: written by its capture thread, read by the
/// composer.
// Sendable: state and arrival under `stateLock`, `stopping` atomic; `format` is set before the thread starts or by it, read after.
final class SourceFeed: @unchecked Sendable {
    let name: String
    let exchange = FrameExchange()
    /// What the recording needs of the pictures (their role's size).
    let demand = PictureDemand()
    private let stateLock = NSLock()
    private var _state = SourceState.starting
    private var _lastArrival = 0.0
    /// Called on every published frame (the composer waits on the driver's). The composer
    /// swaps it while the capture thread runs (failover), so it lives under `stateLock`.
    private var _onFrame: (() -> Void)?
    /// Set by the composer, read by the capture thread between frames.
    private let _stopping = Atomic<Bool>(false)
    private(set) var format = ""

    var stopping: Bool { _stopping.load(ordering: .acquiring) }
    /// Asks the capture thread to end after its current frame, without waiting for it.
    func requestStop() { _stopping.store(true, ordering: .releasing) }
    func setOnFrame(_ f: (() -> Void)?) {
        stateLock.lock(); _onFrame = f; stateLock.unlock()
    }

    /// What arrivals are timed on: the recording's clock.
    private let clock: any EngineClock

    init(name: String, clock: any EngineClock = MonotonicClock.shared) {
        self.name = name
        self.clock = clock
    }

    var state: SourceState {
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

    func published(_ frame: LiveFrame, timestamp: Double, matrix: YCbCrMatrix, shift: Int, latencyOrigin: Double?) {
        exchange.publish(frame, timestamp: timestamp, matrix: matrix, shift: shift, latencyOrigin: latencyOrigin)
        stateLock.lock()
        _lastArrival = clock.now()
        switch _state {
        case .starting, .away: _state = .running
        case .running, .lost: break
        }
        let onFrame = _onFrame
        stateLock.unlock()
        onFrame?()
    }

    private var thread: OwnedThread?

    func start(_ captureLoop: @escaping @Sendable () -> Void) {
        thread = OwnedThread(name: "dualcam-capture") {
            // The converter's helper threads, started from here, keep the level too.
            ThreadPriority.raiseCurrentThreadForPictures()
            captureLoop()
        }
    }

    func stop(timeout: Double) -> Bool {
        requestStop()
        return thread?.join(timeout: timeout) ?? true
    }

    /// Longer than any single wait of a capture loop (a device read times out at 1 s).
    static let stopTimeout = 3.0
}
