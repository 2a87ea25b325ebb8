/// When the two pictures exchange roles: each time in the list toggles the swap, at the
/// first output frame at or after it.
public struct SwapSchedule: Sendable, Equatable {
    public let times: [Double]

    public init(_ times: [Double]) { self.times = times.sorted() }

    /// Whether frame `index` of a `fps` timeline shows the swapped layout.
    public func isSwapped(frame index: Int, fps: Int) -> Bool {
        // Compare in whole frames so that T = n/fps swaps exactly at frame n.
        var toggles = 0
        for t in times where Double(index) >= (t * Double(fps)).rounded(.up) - 1e-9 { toggles += 1 }
        return toggles % 2 == 1
    }
}

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
