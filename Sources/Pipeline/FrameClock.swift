/// Constant-frame-rate resampling of a variable-rate stream: output frame `n` at time
/// n/fps shows the newest source picture whose time is at or before it.
public struct FrameClock: Sendable {
    public let fps: Int
    public init(fps: Int) { self.fps = fps }

    public func time(ofFrame n: Int) -> Double { Double(n) / Double(fps) }

    /// Is a picture stamped `time` due by output frame `n`? Half a microsecond of slack
    /// absorbs time-base rounding (1/60 s in a 1/90000 base, say).
    public func isDue(_ time: Double, byFrame n: Int) -> Bool { time <= self.time(ofFrame: n) + 5e-7 }

    /// How many output frames a stream ending at `end` seconds fills.
    public func frameCount(forDuration end: Double) -> Int { max(1, clampedInt((end * Double(fps)).rounded())) }
}
