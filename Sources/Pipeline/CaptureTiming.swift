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
