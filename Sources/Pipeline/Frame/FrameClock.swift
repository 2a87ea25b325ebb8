/// The output's one clock, for `compose` and `record` alike: output frame `n` is at
/// n/fps, and shows the newest source picture whose time is at or before it.
public struct FrameClock: Sendable {
    public let fps: Int
    public init(fps: Int) { self.fps = fps }

    public var period: Double { 1 / Double(fps) }
    public func time(ofFrame n: Int) -> Double { Double(n) / Double(fps) }

    /// Is a picture stamped `time` due by output frame `n`? Half a microsecond of slack
    /// absorbs time-base rounding (1/60 s in a 1/90000 base, say).
    public func isDue(_ time: Double, byFrame n: Int) -> Bool { time <= self.time(ofFrame: n) + 5e-7 }

    /// How many output frames a stream ending at `end` seconds fills.
    public func frameCount(forDuration end: Double) -> Int { max(1, clampedInt((end * Double(fps)).rounded())) }
}

/// The same clock during a recording, anchored to the back camera's pictures: frame
/// ("slot") n is due at origin + n/fps, the origin being the first picture's timestamp. A
/// new picture taken at t fills every slot due by t + half a frame; of those, a slot due
/// more than half a frame before t (the camera slowed down or missed a frame) repeats the
/// previous picture instead, the nearer one in time: showing the new one there would put
/// the picture ahead of the sound.
package struct SlotClock {
    package let frames: FrameClock
    /// Slots in the whole recording when its length is fixed.
    package let limit: Int?
    package private(set) var origin: Double?
    /// The origin before any pause moved it: when the first slot was due.
    package private(set) var firstOrigin: Double?
    /// The next slot to fill; also the number filled so far.
    package private(set) var next = 0

    package init(fps: Int, duration: Double?) {
        frames = FrameClock(fps: fps)
        limit = duration.map(frames.frameCount(forDuration:))
    }

    package var fps: Int { frames.fps }
    package var isComplete: Bool { limit.map { next >= $0 } ?? false }
    /// Whether `slot` is the last of a recording of fixed length.
    package func isLastSlot(_ slot: Int) -> Bool { limit.map { slot == $0 - 1 } ?? false }
    /// Seconds of output so far.
    package var seconds: Double { frames.time(ofFrame: next) }

    /// Picks the recording up again after a pause with the picture taken at `t`: the next
    /// slot is due at `t`, so the file goes straight on from the last slot before the pause
    /// (no frozen picture for the time paused). Returns how far the origin moved: the time
    /// left out, which the sound skips too.
    package mutating func resume(at t: Double) -> Double {
        guard let origin else { return 0 }
        let moved = t - frames.time(ofFrame: next) - origin
        self.origin = origin + moved
        return moved
    }

    /// The next slot of an input that settles its slots one at a time on its own time
    /// (compose's files, whose time starts at 0).
    package mutating func takeNext() -> Int {
        if origin == nil { (origin, firstOrigin) = (0, 0) }
        next += 1
        return next - 1
    }

    /// The slots the picture taken at `t` settles: first those that repeat the previous
    /// picture, then those that show this one. Both zero: the picture is not needed (the
    /// camera runs faster than the output, or the recording is complete).
    package mutating func due(pictureAt t: Double) -> (repeats: Int, shows: Int) {
        let origin = self.origin ?? t
        self.origin = origin
        if firstOrigin == nil { firstOrigin = origin }
        let half = frames.period / 2
        var repeats = 0, shows = 0
        while !isComplete && origin + frames.time(ofFrame: next) <= t + half {
            if next > 0 && origin + frames.time(ofFrame: next) < t - half { repeats += 1 } else { shows += 1 }
            next += 1
        }
        return (repeats, shows)
    }
}

/// `Int(d)` traps on NaN, infinities and values beyond Int's range; user input and file
/// timestamps can be any of those. This saturates instead (NaN gives 0).
func clampedInt(_ d: Double) -> Int {
    if d.isNaN { return 0 }
    if d >= 9.2e18 { return Int.max }
    if d <= -9.2e18 { return Int.min }
    return Int(d)
}
