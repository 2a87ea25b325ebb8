/// Keeps audio from a device whose clock is not the cameras' on the cameras' clock
/// (CLOCK_MONOTONIC). Each captured period comes with the monotonic time of its first
/// sample; the corrector compares the samples placed so far with what that time says should
/// have been placed, smooths the difference over about a second (the timestamps jitter by a
/// few ms), and when it exceeds 2 ms stretches or shrinks the next period by one sample
/// (linear interpolation: inaudible). One sample per 10 ms period corrects up to ~2000 ppm,
/// twenty times a poor USB microphone's error. A real gap (an overrun) is filled with silence.
struct DriftCorrector {
    static let sampleRate = 48_000.0
    /// Corrections start beyond this many samples of smoothed error (2 ms).
    static let deadband = 96.0
    /// Weight of each new period in the smoothed error: a time constant of about 100 periods.
    static let smoothing = 0.01
    /// A shortfall beyond this (10 ms) is a gap in the capture, filled with silence at once.
    static let gapSamples = 480
    /// A gap longer than this (the machine slept, the clock stepped) is not filled: the
    /// placement starts afresh after it.
    static let longestGap = 60.0

    private(set) var start: Double?
    /// Samples placed so far: captured, stretched or shrunk, plus silence for gaps.
    private(set) var placed = 0
    private var smoothedError: Double?
    /// Samples added (positive) or removed (negative) by corrections, in all.
    private(set) var corrected = 0

    /// What to do with a period of `count` samples whose first was captured at `t`:
    /// `silence` samples of silence go first (a gap), then the period resampled to `length`.
    mutating func place(count: Int, capturedAt t: Double) -> (silence: Int, length: Int) {
        var start = self.start ?? t
        if (t - start) * Self.sampleRate - Double(placed) > Self.longestGap * Self.sampleRate {
            start = t - Double(placed) / Self.sampleRate
            smoothedError = nil
        }
        self.start = start
        let expected = (t - start) * Self.sampleRate
        var silence = 0
        if expected - Double(placed) > Double(Self.gapSamples) {
            silence = clampedInt((expected - Double(placed)).rounded())
            placed += silence
        }
        let error = Double(placed) - expected
        let smoothed = smoothedError.map { $0 + Self.smoothing * (error - $0) } ?? error
        smoothedError = silence > 0 ? 0 : smoothed
        var length = count
        if count > 1 && smoothed > Self.deadband { length -= 1 }
        if count > 1 && smoothed < -Self.deadband { length += 1 }
        corrected += length - count
        placed += length
        return (silence, length)
    }

    /// `source[0..<count]` resampled by linear interpolation into `destination[0..<length]`,
    /// first and last samples kept.
    static func stretch(_ source: UnsafePointer<Float>, count: Int,
                        into destination: UnsafeMutablePointer<Float>, length: Int) {
        guard count > 1, length > 1 else {
            for i in 0..<length { destination[i] = count > 0 ? source[0] : 0 }
            return
        }
        let step = Double(count - 1) / Double(length - 1)
        for i in 0..<length {
            let x = Double(i) * step
            let j = min(Int(x), count - 2)
            let f = Float(x - Double(j))
            destination[i] = source[j] + (source[j + 1] - source[j]) * f
        }
    }
}
