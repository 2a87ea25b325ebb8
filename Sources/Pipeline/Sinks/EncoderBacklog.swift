/// How much may wait for an encoder that is behind real time before new slots are skipped
/// rather than queued: a second of slots (`maxLag`, counted from the oldest one waiting), or a
/// second of the encoder's own time at its recent speed per frame; once it is clearly slower
/// than real time, half a second of its own time (`drainLimitSeconds`). Beyond that, every
/// slot queued only grows what a kill loses, what a stop waits for and the memory held.
/// No platform code: the recorder feeds it the queue's figures.
struct EncoderBacklog {
    /// What may wait for an encoder slower than real time, in its own time. x265 at 5 fps
    /// beside two busy processes took 4.7 s for the 23 slots queued before a count of slots
    /// said it was behind. Not less: an encoder that keeps up falls half a second behind
    /// now and then on these machines (a 60 fps source's decoding beside it, a debug build),
    /// and catches up.
    static let drainLimitSeconds = 0.5
    /// Slower than real time by this much (a frame taking it three slots) before the half
    /// second applies: an encoder near real time (the emulated VM's, ~30 ms a frame at
    /// 30 fps) catches up by itself, and skipping there left 10 frames of 180.
    static let slowerFactor = 3.0
    /// ...and counted slower until a frame takes it no more than two slots. Without the gap,
    /// an encoder at 8-10 fps (0.09-0.12 s a frame beside two busy processes) crossed the
    /// line every few frames; each time it did, the queue could grow to a second of slots,
    /// 3 s of its time, and a stop took 3.5 s instead of 1.2.
    static let caughtUpFactor = 2.0

    /// Whether the encoder counts as slower than real time (see `slowerFactor`).
    private(set) var isSlower = false

    /// Takes the encoder's recent time per frame (0 while unknown).
    mutating func note(secondsPerFrame: Double, fps: Double) {
        isSlower = secondsPerFrame > (isSlower ? Self.caughtUpFactor : Self.slowerFactor) / fps
    }

    /// Whether what waits (`slots` since the oldest waiting, `seconds` of the encoder's time)
    /// is as much as may wait: the next slot is skipped.
    func isFull(slots: Int, seconds: Double, fps: Double, maxLag: Double) -> Bool {
        Double(slots) >= maxLag * fps || seconds >= maxLag || (isSlower && seconds >= Self.drainLimitSeconds)
    }
}

/// The encoder's time per frame (picture and sound), as `EncoderBacklog` takes it: the
/// second shortest of the last nine, what it can do. Stalls only lengthen a frame's time (a
/// write the disk held up, the start): taken for its speed (a median, in the emulated VM),
/// they made a fast encoder pass for a slow one, and then so few frames were sent that the
/// figure never recovered (170 of 180 slots skipped).
struct RecentFrameTimes {
    private var times: [Double] = []
    /// 0 until a frame has been timed.
    private(set) var secondsPerFrame = 0.0

    init() { times.reserveCapacity(Self.kept) }

    static let kept = 9

    mutating func add(_ seconds: Double) {
        if times.count == Self.kept { times.removeFirst() }
        times.append(seconds)
        secondsPerFrame = times.sorted()[min(1, times.count - 1)]
    }
}
