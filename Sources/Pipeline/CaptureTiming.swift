import MediaIO

/// When a camera frame was taken, from what its driver stamped: the middle of its exposure,
/// which is the instant the sound recorded with it belongs to.
enum CaptureTiming {
    /// `stamp` as the driver gave it (already on the monotonic clock, or the dequeue time
    /// when the driver's clock is another one). `exposure`: seconds, when the camera says
    /// (V4L2_CID_EXPOSURE_ABSOLUTE); `framePeriod`: seconds per frame.
    static func middleOfExposure(stamp: Double, timing: CapturedBuffer.Timing, exposure: Double?,
                                 framePeriod: Double) -> Double {
        if timing.startOfExposure {
            // A driver stamping the start of exposure (uvcvideo, vivid when asked) without
            // saying for how long exposes is taken as an instant.
            return stamp + (exposure ?? 0) / 2
        }
        // The end of the frame, or when it was dequeued: the exposure ended about then and
        // lasted at most a frame; without its length, half a frame before is the best guess.
        let length = exposure.map { min($0, framePeriod) } ?? framePeriod
        return stamp - length / 2
    }
}

extension CaptureTiming {
    /// A stamp this far before its buffer was dequeued is not the frame's (another clock, a
    /// driver that stalled): at 5 fps with four buffers queued a true one is under a second old.
    static let oldestBelievable = 1.0

    /// Why a driver's monotonic stamp cannot be the frame's, or nil when it can.
    static func distrust(stamp: Double, dequeuedAt: Double) -> String? {
        if stamp > dequeuedAt + 0.0005 {
            return String(format: "lie %.1f ms after the buffer was received", (stamp - dequeuedAt) * 1000)
        }
        if stamp < dequeuedAt - oldestBelievable {
            return String(format: "lie %.1f s before the buffer was received", dequeuedAt - stamp)
        }
        return nil
    }
}

/// Tells once when a camera delivers well under the asked rate for a few seconds (a webcam
/// lengthening its exposure in low light, a bus that is short of bandwidth): the first
/// window after a start or a gap is left out, as it holds the camera's start-up.
struct DeliveryRateWatch {
    static let window = 3.0
    /// Under this share of the asked rate is worth telling.
    static let tellBelow = 0.85
    let asked: Double
    private var windowStart: Double?
    private var lastFrame = 0.0
    private var frames = 0
    private var windowsEnded = 0
    private var told = false

    init(asked: Double) { self.asked = asked }

    /// Counts a picture that arrived at `time`; the rate delivered, once, when it is too low.
    mutating func delivered(at time: Double) -> Double? {
        guard !told else { return nil }
        defer { lastFrame = time }
        guard let start = windowStart, time - lastFrame < Self.window else {
            windowStart = time
            frames = 0
            windowsEnded = 0
            return nil
        }
        frames += 1
        let elapsed = time - start
        guard elapsed >= Self.window else { return nil }
        let rate = Double(frames) / elapsed
        windowStart = time
        frames = 0
        windowsEnded += 1
        guard windowsEnded > 1, rate < asked * Self.tellBelow else { return nil }
        told = true
        return rate
    }
}
