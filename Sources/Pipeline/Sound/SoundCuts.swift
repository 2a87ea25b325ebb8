/// Where the output's sound leaves out what was heard during pauses. The sound sources run
/// on through a pause (a microphone cannot be paused without losing sync); at the output
/// sample where the pause began, the sound heard while paused is discarded, exactly as much
/// as the picture's clock moved on (`SlotClock.resume`), so both pick up together.
struct SoundCuts {
    struct Cut {
        /// The output sample it is at: the first slot after the pause times samples per slot.
        let atSample: Int
        /// Monotonic time the pause began (the sound from here on is left out).
        let pausedAt: Double
        /// Samples to leave out: nil while the pause lasts.
        var length: Int?
        /// When the resume was asked for: the pause ends at the next picture, taken no
        /// earlier, so nothing after this is discarded before its length is known.
        var resumeAskedAt: Double?
        /// Samples left out so far.
        var discarded = 0
    }

    /// While a pause lasts, sound older than this is surely before its end and is discarded
    /// as it comes (else a long pause would pile up 384 kB a second).
    static let openMargin = 0.5

    private(set) var cuts: [Cut] = []

    var isEmpty: Bool { cuts.isEmpty }
    /// Whether a pause is still going on (its length not known yet).
    var isOpen: Bool { cuts.last.map { $0.length == nil } ?? false }

    mutating func pause(atSample sample: Int, at time: Double) {
        guard !isOpen else { return }
        cuts.append(Cut(atSample: sample, pausedAt: time))
    }

    /// A resume was asked for at monotonic `time`; the pause ends with the next picture.
    mutating func resumeAsked(at time: Double) {
        guard isOpen else { return }
        cuts[cuts.count - 1].resumeAskedAt = time
    }

    /// The pause ends: `seconds` of sound (the picture's clock moved that far) are left out.
    mutating func resume(after seconds: Double) {
        guard isOpen else { return }
        cuts[cuts.count - 1].length = max(0, clampedInt((seconds * DriftCorrector.sampleRate).rounded()))
    }

    /// How many samples may be drained at output position `position` before a cut is reached:
    /// nil when there is no cut ahead.
    func room(at position: Int) -> Int? {
        cuts.first.map { max(0, $0.atSample - position) }
    }

    /// Samples to discard now at output position `position`, the sound having been heard up
    /// to monotonic time `heardUntil`. While the pause lasts, only what is `openMargin` old.
    func dueForDiscard(at position: Int, heardUntil: Double) -> Int {
        guard let cut = cuts.first, cut.atSample == position else { return 0 }
        if let length = cut.length { return length - cut.discarded }
        let surelyPaused = min(heardUntil, cut.resumeAskedAt ?? heardUntil) - Self.openMargin
        let old = clampedInt(((surelyPaused - cut.pausedAt) * DriftCorrector.sampleRate).rounded(.down))
        return max(0, old - cut.discarded)
    }

    /// `n` samples were discarded for the first cut; a cut whose length is reached is done.
    mutating func discarded(_ n: Int) {
        guard !cuts.isEmpty else { return }
        cuts[0].discarded += n
        if let length = cuts[0].length, cuts[0].discarded >= length { cuts.removeFirst() }
    }
}
