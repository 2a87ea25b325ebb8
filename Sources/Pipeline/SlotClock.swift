/// The output's frame clock during a recording, driven by the back camera's pictures.
/// Slot n is due at origin + n/fps, the origin being the first picture's timestamp. A new
/// picture taken at t fills every slot due by t + half a frame; of those, a slot due more
/// than half a frame before t (the camera slowed down or missed a frame) repeats the
/// previous picture instead, the nearer one in time: showing the new one there would put
/// the picture ahead of the sound.
struct SlotClock {
    let fps: Int
    /// Slots in the whole recording when its length is fixed.
    let limit: Int?
    private(set) var origin: Double?
    /// The next slot to fill; also the number filled so far.
    private(set) var next = 0

    init(fps: Int, duration: Double?) {
        self.fps = fps
        limit = duration.map { max(1, clampedInt(($0 * Double(fps)).rounded())) }
    }

    var period: Double { 1 / Double(fps) }
    var isComplete: Bool { limit.map { next >= $0 } ?? false }
    /// Whether `slot` is the last of a recording of fixed length.
    func isLastSlot(_ slot: Int) -> Bool { limit.map { slot == $0 - 1 } ?? false }
    /// Seconds of output so far.
    var seconds: Double { Double(next) / Double(fps) }

    /// The slots the picture taken at `t` settles: first those that repeat the previous
    /// picture, then those that show this one. Both zero: the picture is not needed (the
    /// camera runs faster than the output, or the recording is complete).
    mutating func due(pictureAt t: Double) -> (repeats: Int, shows: Int) {
        let origin = self.origin ?? t
        self.origin = origin
        var repeats = 0, shows = 0
        while !isComplete && origin + Double(next) * period <= t + period / 2 {
            if next > 0 && origin + Double(next) * period < t - period / 2 { repeats += 1 } else { shows += 1 }
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
