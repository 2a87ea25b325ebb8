import Foundation
import MediaIO

/// Audio captured on its own thread, kept on the cameras' monotonic clock: each period is
/// placed where its capture time says (see `DriftCorrector`), so sound and picture stay
/// together however far the device's clock is off. A microphone that fails, is unplugged or
/// goes quiet for `stallSeconds` is dropped: the recording goes on with silence.
// Sendable: what the capture thread shares (samples, peak, loss, counts) is under `lock`.
final class LiveAudio: @unchecked Sendable {
    static let stallSeconds = 2.0
    /// A device that has not delivered anything yet gets this long (start-up).
    static let startSeconds = 5.0

    let capture: ALSACapture
    private let lock = NSLock()
    private let captured = SampleQueue()
    private var corrector: DriftCorrector
    private var placement = SoundPlacement()
    private(set) var overruns = 0
    /// The loudest sample since the status line last asked, 0-1.
    private var peak: Float = 0
    private var lostReason: String?
    private var stopping = false
    private var thread: OwnedThread?
    /// Told once, from the capture thread, when the microphone is dropped.
    var onLost: (String) -> Void = { _ in }

    init(device: String) throws(MediaError) {
        capture = try ALSACapture(device: device)
        corrector = DriftCorrector(fillsUnreportedGaps: capture.hasCard)
    }

    /// Starts the device at once (so its sound covers everything recorded after this
    /// returns), and the thread that reads it.
    func start() {
        do { try capture.start() } catch {
            lose(error.description)
            return
        }
        thread = OwnedThread(name: "dualcam-audio") { [self] in captureLoop() }
    }

    /// Ends the capture thread, waiting for it at most `stopTimeout` (a read gives up after
    /// 0.2 s): false when it is stuck in the sound driver. Its thread keeps the device open
    /// until it returns, so nothing is closed under it.
    @discardableResult
    func stop() -> Bool {
        lock.lock(); stopping = true; lock.unlock()
        return thread?.join(timeout: Self.stopTimeout) ?? true
    }

    static let stopTimeout = 2.0

    var isLost: Bool {
        lock.lock(); defer { lock.unlock() }
        return lostReason != nil
    }

    /// Samples added or removed so far to follow the monotonic clock.
    var driftCorrection: Int {
        lock.lock(); defer { lock.unlock() }
        return corrector.corrected
    }

    /// Samples of silence put in for sound the device lost (overruns, stalls).
    var silenceInserted: Int {
        lock.lock(); defer { lock.unlock() }
        return corrector.silenced
    }

    /// The loudest sample (0-1) since the last call: the status line's level meter.
    func takePeak() -> Float {
        lock.lock(); defer { lock.unlock() }
        let p = peak
        peak = 0
        return p
    }

    /// Monotonic time up to which audio has been captured.
    var capturedUntil: Double {
        lock.lock(); defer { lock.unlock() }
        return (corrector.start ?? 0) + Double(corrector.placed) / DriftCorrector.sampleRate
    }

    private func lose(_ why: String) {
        lock.lock(); lostReason = why; lock.unlock()
        onLost(why)
    }

    private func captureLoop() {
        ThreadPriority.raiseCurrentThreadForPictures()
        let period = capture.periodFrames
        let raw = UnsafeMutablePointer<Int16>.allocate(capacity: period * 2)
        defer { raw.deallocate() }
        var left = [Float](repeating: 0, count: period), right = [Float](repeating: 0, count: period)
        // A corrected period is up to maxStep samples longer than a captured one.
        var stretchedLeft = [Float](repeating: 0, count: period + DriftCorrector.maxStep)
        var stretchedRight = [Float](repeating: 0, count: period + DriftCorrector.maxStep)
        let began = monotonicNow()
        var lastSound: Double?
        var overran = false
        while true {
            lock.lock(); let stop = stopping; lock.unlock()
            if stop { return }
            let result: ALSACapture.ReadResult
            do { result = try capture.read(into: raw) } catch {
                lose(error.description)
                return
            }
            let now = monotonicNow()
            guard case let .samples(n, time) = result else {
                if case .overrun = result {
                    overran = true
                    lock.lock(); overruns += 1; lock.unlock()
                }
                let quietFor = now - (lastSound ?? began)
                if quietFor > (lastSound == nil ? Self.startSeconds : Self.stallSeconds) {
                    lose(String(format: "no sound for %.0f s", quietFor))
                    return
                }
                continue
            }
            lastSound = now
            let stereo = capture.channels == 2
            var loudest: Float = 0
            for i in 0..<n {
                left[i] = Float(raw[stereo ? 2 * i : i]) / 32768
                right[i] = Float(raw[stereo ? 2 * i + 1 : i]) / 32768
                loudest = max(loudest, abs(left[i]), abs(right[i]))
            }
            lock.lock()
            peak = max(peak, loudest)
            let (silence, length) = corrector.place(count: n, capturedAt: time, afterLoss: overran)
            overran = false
            captured.appendSilence(silence)
            if length == n {
                captured.append(left: left, right: right, count: n)
            } else {
                precondition(length <= stretchedLeft.count, "a corrected period outgrew its buffer")
                DriftCorrector.stretch(left, count: n, into: &stretchedLeft, length: length)
                DriftCorrector.stretch(right, count: n, into: &stretchedRight, length: length)
                captured.append(left: stretchedLeft, right: stretchedRight, count: length)
            }
            lock.unlock()
        }
    }

    /// Moves up to `limit` samples, placed on the output timeline that starts at `origin`,
    /// into `queue`. Returns how many were moved. Once the microphone is lost, silence
    /// makes up the rest, so the track keeps pace with the picture.
    @discardableResult
    func drain(into queue: SampleQueue, origin: Double, limit: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard limit > 0 else { return 0 }
        if let start = corrector.start { placement.place(start: start, origin: origin) }
        var moved = placement.padSilence(into: queue, limit: limit)
        placement.dropWhatIsDue(from: captured)
        let n = min(limit - moved, captured.count)
        captured.move(n, to: queue)
        moved += n
        if lostReason != nil && captured.count == 0 && placement.dropDue == 0 {
            queue.appendSilence(limit - moved)
            moved = limit
        }
        return moved
    }
}
