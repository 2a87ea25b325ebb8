/// Keeps audio from a device whose clock is not the cameras' on the cameras' clock
/// (CLOCK_MONOTONIC). Each captured period comes with the monotonic time of its first
/// sample; the corrector compares the samples placed so far with what that time says should
/// have been placed and smooths the difference over about a second (the timestamps jitter by
/// a few ms). A proportional-integral loop turns it into a correction: the integral learns
/// the device's drift rate, so a steady drift leaves no steady error (within ~2 ms of the
/// clock, simulated from 0 to 6000 ppm). Fractions of a sample are carried over; each period
/// is stretched or shrunk by up to three samples (linear interpolation: inaudible on speech),
/// which follows a clock up to ~6000 ppm off, sixty times a poor USB microphone's error. A
/// shortfall beyond the trend is filled with silence once it is known to be samples lost:
/// at once after an overrun, otherwise when it has lasted `gapConfirmPeriods` periods. A
/// single stamp far off the trend is a late stamp, not lost sound (seen in the emulated VM:
/// one stamp 17 ms late became 793 samples of silence, then took the loop seconds to undo),
/// and moves the smoothed error by at most `gapSamples` times the smoothing.
///
/// A sound server's stream (`fillsUnreportedGaps` false) gets silence only for an overrun it
/// reports. Its stamps step forward when the server's graph runs late (PipeWire without
/// real-time priority, on a busy machine: steps of 16-20 ms) while no sample of the stream
/// is lost; silence put there was a click in continuous sound, twice in three seconds of a
/// tone. The loop takes such a step up slowly instead.
struct DriftCorrector {
    static let sampleRate = 48_000.0
    /// Samples of correction per period for each sample of smoothed error, and the integral's
    /// share (tuned in simulation for ±6000 ppm with ±4 ms of timestamp jitter).
    static let gain = 0.01
    static let integralGain = 0.00002
    /// The most samples one period is stretched or shrunk by.
    static let maxStep = 3
    /// Weight of each new period in the smoothed error: a time constant of about 100 periods.
    static let smoothing = 0.01
    /// A shortfall beyond this (10 ms) is a gap in the capture, filled with silence at once.
    static let gapSamples = 480
    /// Periods in a row that must fall short before silence fills the shortfall.
    static let gapConfirmPeriods = 3
    /// A gap longer than this (the machine slept, the clock stepped) is not filled: the
    /// placement starts afresh after it.
    static let longestGap = 60.0

    /// Whether a shortfall the device did not report is taken for lost sound (see above).
    let fillsUnreportedGaps: Bool

    init(fillsUnreportedGaps: Bool = true) { self.fillsUnreportedGaps = fillsUnreportedGaps }

    private(set) var start: Double?
    /// Samples placed so far: captured, stretched or shrunk, plus silence for gaps.
    private(set) var placed = 0
    private var smoothedError: Double?
    /// The integral term: the learnt drift, in samples per period.
    private var integral = 0.0
    /// Correction decided but not yet applied (less than a sample).
    private var fractional = 0.0
    /// Samples added (positive) or removed (negative) by corrections, in all.
    private(set) var corrected = 0
    /// Samples of silence put in for sound lost, in all.
    private(set) var silenced = 0
    /// Periods in a row found short, and the least shortfall beyond the trend among them.
    private var shortPeriods = 0
    private var leastShortfall = Double.infinity

    /// What to do with a period of `count` samples whose first was captured at `t`:
    /// `silence` samples of silence go first (a gap), then the period resampled to `length`.
    /// `afterLoss`: the device has just reported lost samples (an overrun).
    mutating func place(count: Int, capturedAt t: Double, afterLoss: Bool = false) -> (silence: Int, length: Int) {
        var start = self.start ?? t
        if (t - start) * Self.sampleRate - Double(placed) > Self.longestGap * Self.sampleRate {
            start = t - Double(placed) / Self.sampleRate
            smoothedError = nil
            fractional = 0
            shortPeriods = 0
        }
        self.start = start
        let expected = (t - start) * Self.sampleRate
        let silence = gapToFill(shortfall: expected - Double(placed), afterLoss: afterLoss)
        placed += silence
        silenced += silence
        let error = Double(placed) - expected
        let smoothed = smoothedError.map { $0 + Self.smoothing * max(-Double(Self.gapSamples), min(Double(Self.gapSamples), error - $0)) } ?? error
        smoothedError = smoothed
        var length = count
        if count > Self.maxStep {
            fractional -= Self.gain * smoothed + integral
            let rounded = fractional.rounded()
            let step = max(-Self.maxStep, min(Self.maxStep, clampedInt(rounded)))
            // Learning stops while the correction is at its limit (no wind-up).
            if abs(rounded) <= Double(Self.maxStep) { integral += Self.integralGain * smoothed }
            fractional -= Double(step)
            length += step
        }
        corrected += length - count
        placed += length
        return (silence, length)
    }

    /// Silence owed for a shortfall of `shortfall` samples behind the clock: the part beyond
    /// what the slow drift accounts for, once it is known to be sound lost.
    private mutating func gapToFill(shortfall: Double, afterLoss: Bool) -> Int {
        let trend = min(smoothedError ?? 0, 0)
        guard shortfall + trend > Double(Self.gapSamples) else {
            shortPeriods = 0
            leastShortfall = .infinity
            return 0
        }
        shortPeriods += 1
        leastShortfall = min(leastShortfall, shortfall + trend)
        guard afterLoss || (fillsUnreportedGaps && shortPeriods >= Self.gapConfirmPeriods) else { return 0 }
        // The least of the periods seen: a late stamp among them cannot inflate the gap.
        let fill = afterLoss ? shortfall + trend : leastShortfall
        shortPeriods = 0
        leastShortfall = .infinity
        return clampedInt(fill.rounded())
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
