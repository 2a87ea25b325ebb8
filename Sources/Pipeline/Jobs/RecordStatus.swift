/// How a recording is going, for a status line: told a few times a second while recording.
public struct RecordStatus: Sendable {
    /// Recorded so far, in seconds of file.
    public var seconds: Double
    /// Output frames per second over the last report's interval.
    public var framesPerSecond: Double
    public var repeatedFrames: Int
    public var droppedBackFrames: Int
    /// Of the last second's frames, camera buffer (or due time) to the encoder's frame.
    public var latencyP99Ms: Double
    /// The loudest sample since the last report, 0-1; nil when recording silence.
    public var audioPeak: Float?
    /// The source shown full frame.
    public var fullFrame: String
    /// Slots skipped so far while the encoder was behind.
    public var encoderSkippedFrames: Int
    /// Paused (`p`, SIGUSR2): nothing is recorded until it resumes.
    public var paused: Bool
    /// The live stream's state (connecting, live, reconnecting), when there is one.
    public var stream: String?
    /// Whether there is another picture to swap to (two cameras, both there).
    public var canSwap = true
}

/// Makes a `RecordStatus` every `interval` seconds out of the recorder's running counts.
struct StatusReporter {
    static let interval = 0.25
    private var lastAt: Double?
    private var lastFrames = 0

    /// Whether a status is due at `now` (cheap: the recording's thread asks every picture).
    func isDue(now: Double) -> Bool { lastAt.map { now - $0 >= Self.interval } ?? true }

    /// A status when one is due at `now`, else nil.
    mutating func due(now: Double, frames: Int, fps: Int, latencies: [Double], repeated: Int, dropped: Int,
                      encoderSkipped: Int, fullFrame: String, paused: Bool, stream: String?, canSwap: Bool,
                      audio: () -> Float?) -> RecordStatus? {
        guard let last = lastAt else {
            (lastAt, lastFrames) = (now, frames)
            return nil
        }
        guard now - last >= Self.interval else { return nil }
        let rate = Double(frames - lastFrames) / (now - last)
        (lastAt, lastFrames) = (now, frames)
        let p99 = Array(latencies.suffix(fps)).sorted().nearestRank(0.99) * 1000
        return RecordStatus(seconds: Double(frames) / Double(fps), framesPerSecond: rate, repeatedFrames: repeated,
                            droppedBackFrames: dropped, latencyP99Ms: p99, audioPeak: audio(), fullFrame: fullFrame,
                            encoderSkippedFrames: encoderSkipped, paused: paused, stream: stream, canSwap: canSwap)
    }
}
