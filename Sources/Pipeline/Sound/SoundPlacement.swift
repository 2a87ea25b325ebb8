import MediaIO

/// Where a sound's first sample lands on the output's timeline, once both starts are known:
/// silence still due before it (the sound started after the file), or samples of it still
/// to drop (it started before). Shared by the microphone and a file's sound track.
struct SoundPlacement {
    private(set) var isPlaced = false
    /// Output samples of silence still due before the sound's first sample.
    private(set) var silenceDue = 0
    /// The sound's samples still to drop: they come before the file's first frame.
    private(set) var dropDue = 0

    /// Places the sound whose first sample is at monotonic `start` on the timeline that
    /// starts at `origin`; only the first call counts.
    mutating func place(start: Double, origin: Double) {
        guard !isPlaced else { return }
        isPlaced = true
        let offset = clampedInt(((start - origin) * DriftCorrector.sampleRate).rounded())
        (silenceDue, dropDue) = (max(offset, 0), max(-offset, 0))
    }

    /// Appends the silence still due to `queue`, at most `limit`; returns how much.
    mutating func padSilence(into queue: SampleQueue, limit: Int) -> Int {
        let n = min(silenceDue, limit)
        queue.appendSilence(n)
        silenceDue -= n
        return n
    }

    /// Drops from the front of `samples` what is still due to be dropped, as far as it holds.
    mutating func dropWhatIsDue(from samples: SampleQueue) {
        let n = min(dropDue, samples.count)
        samples.drop(n)
        dropDue -= n
    }
}
