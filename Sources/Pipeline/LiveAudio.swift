import Foundation
import MediaIO

/// Audio captured on its own thread, kept on the monotonic clock: each sample's place in the
/// output is (capture time - time zero) * 48 kHz. An overrun's gap is filled with silence,
/// so later samples keep their place.
final class LiveAudio: @unchecked Sendable {
    let capture: ALSACapture
    private let lock = NSLock()
    private let captured = SampleQueue()
    /// Monotonic time of the first sample in `captured`'s history, and samples since then.
    private var streamStart: Double?
    private var appended = 0
    private var placed = false
    private var toDrop = 0
    private(set) var overruns = 0
    private var failure: MediaError?
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    init(device: String) throws(MediaError) { capture = try ALSACapture(device: device) }

    func start() {
        let t = Thread { [self] in
            captureLoop()
            finished.signal()
        }
        t.name = "dualcam-audio"
        t.start()
    }

    func stop() {
        lock.lock(); stopping = true; lock.unlock()
        finished.wait()
    }

    /// Monotonic time up to which audio has been captured.
    var capturedUntil: Double {
        lock.lock(); defer { lock.unlock() }
        return (streamStart ?? 0) + Double(appended) / 48_000
    }

    private func captureLoop() {
        let period = capture.periodFrames
        let raw = UnsafeMutablePointer<Int16>.allocate(capacity: period * 2)
        defer { raw.deallocate() }
        var left = [Float](repeating: 0, count: period), right = [Float](repeating: 0, count: period)
        while true {
            lock.lock(); let stop = stopping; lock.unlock()
            if stop { return }
            let result: (frames: Int, time: Double)?
            do { result = try capture.read(into: raw) } catch {
                lock.lock(); failure = error; lock.unlock()
                return
            }
            guard let (n, time) = result else {
                lock.lock(); overruns += 1; lock.unlock()
                continue
            }
            let stereo = capture.channels == 2
            for i in 0..<n {
                left[i] = Float(raw[stereo ? 2 * i : i]) / 32768
                right[i] = Float(raw[stereo ? 2 * i + 1 : i]) / 32768
            }
            lock.lock()
            if streamStart == nil { streamStart = time }
            // Samples lost to an overrun (or a stalled device): silence keeps the clock.
            let expected = Int(((time - streamStart!) * 48_000).rounded())
            if expected - appended > 480 {
                captured.appendSilence(expected - appended)
                appended = expected
            }
            captured.append(left: left, right: right, count: n)
            appended += n
            lock.unlock()
        }
    }

    /// Moves up to `limit` samples, placed on the output timeline that starts at `origin`,
    /// into `queue`. Returns how many were moved.
    @discardableResult
    func drain(into queue: SampleQueue, origin: Double, limit: Int) throws(MediaError) -> Int {
        lock.lock()
        defer { lock.unlock() }
        if let failure { throw failure }
        guard let start = streamStart, limit > 0 else { return 0 }
        var moved = 0
        if !placed {
            placed = true
            let offset = Int(((start - origin) * 48_000).rounded())
            if offset > 0 {
                let pad = min(offset, limit)
                queue.appendSilence(pad)
                moved += pad
                if offset > pad { toDrop = -(offset - pad) }  // still to pad, later
            } else {
                toDrop = -offset
            }
        }
        if toDrop < 0 {
            let pad = min(-toDrop, limit - moved)
            queue.appendSilence(pad)
            moved += pad
            toDrop += pad
        }
        if toDrop > 0 {
            let d = min(toDrop, captured.count)
            captured.drop(d)
            toDrop -= d
        }
        let n = min(limit - moved, captured.count)
        captured.move(n, to: queue)
        return moved + n
    }
}
