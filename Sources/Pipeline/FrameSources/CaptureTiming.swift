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

/// Makes a camera's driver stamps believable: never after the buffer was dequeued, never
/// from another clock. A stamp ahead of its dequeue (vivid stamps the nominal end of a frame
/// it has not finished: 26 ms ahead at 30 fps) is moved back by the most any of the
/// camera's stamps has been ahead so far, which keeps the driver's even spacing (the
/// dequeue times of a loaded machine jitter) and puts every stamp at or before its buffer.
/// A stamp more than a second before or after its dequeue is from another clock or a
/// stalled driver: the dequeue time is used for it.
struct StampCorrection {
    /// A stamp this far from its dequeue is not the frame's (at 5 fps with four buffers
    /// queued a true one is under a second old).
    static let farthest = 1.0
    /// Seconds by which this camera's stamps have run ahead of their dequeue, at most.
    private(set) var lead = 0.0
    /// Buffers whose stamp was moved or replaced.
    private(set) var corrected = 0

    /// The stamp to use, and (the first time this camera needs it) why it was changed.
    mutating func correct(stamp: Double, dequeuedAt: Double) -> (stamp: Double, note: String?) {
        let ahead = stamp - dequeuedAt
        if abs(ahead) > Self.farthest {
            corrected += 1
            let note = corrected == 1 ? String(format: "its buffer timestamps lie %.1f s %@ the buffers were received: "
                                               + "frames are timed by when they arrive", abs(ahead), ahead > 0 ? "after" : "before") : nil
            return (dequeuedAt, note)
        }
        var note: String?
        if ahead > 0.0005 && ahead > lead {
            if lead == 0 {
                note = String(format: "its buffer timestamps lie %.1f ms after the buffers were received: "
                              + "they are moved back by the most they run ahead", ahead * 1000)
            }
            lead = ahead
        }
        guard lead > 0 else { return (stamp, nil) }
        corrected += 1
        return (stamp - lead, note)
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
