import Compositor

/// A recording's time and what each slot shows, as a value: the slot clock, the swap asked
/// for and the one showing, the pause, the inset's place, the stop. It takes control events
/// and pictures' times and answers with decisions (which slots a picture fills or repeats,
/// the roles, the layout) and the effects they have on the sound and the log; the engine
/// carries them out. No thread, no clock of its own: `now` is given, so tests play any
/// order of events (as FFmpeg's framesync is tested apart from the filters it drives).
package struct Timeline {
    package private(set) var clock: SlotClock
    /// The layout slots are composed in; a drag moves its inset to another corner.
    package private(set) var layout: PiPLayout
    /// Whether the swapped roles are asked for (`--swap` at the start, then each swap event).
    package private(set) var swapAsked: Bool
    private var swapPolicy = SwapPolicy()
    package private(set) var pause = Pause()
    /// When the stop came, once it has.
    package private(set) var stoppedAt: Double?

    /// What the engine does because of a decision.
    package enum Effect: Equatable {
        /// A line for the log and the summary's events.
        case said(String)
        /// The swap asked for changed; the log names the source now asked full frame.
        case swapAsked(swapped: Bool, at: Double)
        /// Sound from slot `slot` (taken at `at`) is left out until the resume.
        case soundPaused(slot: Int, at: Double)
        /// A resume was asked for at `at`: sound from then is kept.
        case resumeAsked(at: Double)
        /// The pause ended: the clock moved on by `leftOut` seconds, and the sound skips as much.
        case soundResumed(leftOut: Double)
        /// The inset is drawn in `layout` from the next slot.
        case layoutChanged(PiPLayout)
    }

    /// Where a pause stands. Pictures keep coming while paused (the preview and the virtual
    /// camera show them, the file does not); the recording goes on with the first picture
    /// taken after the resume was asked for.
    package struct Pause: Equatable {
        /// When the pause began, while paused.
        package var since: Double?
        /// When the resume was asked for, until a picture taken since comes.
        package var resumeAskedAt: Double?
        package var count = 0
        /// Time left out of the file by pauses that have ended.
        package var seconds = 0.0
        package var isPaused: Bool { since != nil }
    }

    package init(fps: Int, duration: Double?, layout: PiPLayout, swapped: Bool) {
        clock = SlotClock(fps: fps, duration: duration)
        self.layout = layout
        swapAsked = swapped
    }

    /// Whether no more slots will be filled: stopped, or the duration reached.
    package var isOver: Bool { stoppedAt != nil || clock.isComplete }

    /// Takes the events sent since the last call, `now` being the monotonic time.
    package mutating func take(_ events: [ControlEvent], now: Double) -> [Effect] {
        var effects: [Effect] = []
        for event in events where stoppedAt == nil {
            switch event {
            case .swap:
                swapAsked.toggle()
                effects.append(.swapAsked(swapped: swapAsked, at: clock.seconds))
            case .pauseOrResume:
                effects += pauseOrResume(now: now)
            case let .moveInset(corner):
                guard corner != layout.corner, layout.arrangement == .pip else { continue }
                layout.corner = corner
                effects.append(.layoutChanged(layout))
                effects.append(.said(String(format: "inset moved to %@ at %.2f s", corner.rawValue, clock.seconds)))
            case .stop:
                stoppedAt = now
            }
        }
        return effects
    }

    private mutating func pauseOrResume(now: Double) -> [Effect] {
        if !pause.isPaused {
            pause.since = now
            pause.resumeAskedAt = nil
            pause.count += 1
            // Before the first picture there is nothing to leave out: the file starts later.
            let cut: [Effect] = clock.origin.map { [.soundPaused(slot: clock.next, at: $0 + clock.seconds)] } ?? []
            return cut + [.said(String(format: "paused at %.2f s", clock.seconds))]
        }
        if pause.resumeAskedAt == nil {
            pause.resumeAskedAt = now
            return [.resumeAsked(at: now)]
        }
        // Paused again before a picture came to resume with: still the same pause.
        pause.resumeAskedAt = nil
        return []
    }

    /// While paused: whether the picture taken at `t` ends the pause (it was taken after the
    /// resume was asked for, give or take half a frame). The clock then moves on so that it
    /// fills the next slot, and the sound leaves out as much.
    package mutating func resumes(withPictureAt t: Double) -> [Effect]? {
        guard let askedAt = pause.resumeAskedAt, let since = pause.since, t >= askedAt - clock.frames.period / 2
        else { return nil }
        let started = clock.origin != nil
        let moved = clock.resume(at: t)
        // The picture that resumes may be up to half a frame older than the resume: no time
        // is then left out, never less than none.
        let left = max(0, started ? moved : t - since)
        pause.seconds += left
        pause.since = nil
        pause.resumeAskedAt = nil
        return [.soundResumed(leftOut: moved), .said(String(format: "resumed at %.2f s (%.1f s left out)", clock.seconds, left))]
    }

    /// The next slot of an input that settles its slots one at a time (compose's files).
    package mutating func takeSlot() -> Int { clock.takeNext() }

    /// The slots the picture taken at `t` settles: first those that repeat the previous
    /// picture (the camera was late), then those that show it. Both empty: the picture is
    /// not needed (the camera is faster than the output, or the recording is complete).
    package mutating func slots(forPictureAt t: Double) -> (repeats: Range<Int>, shows: Range<Int>) {
        let first = clock.next
        let (repeats, shows) = clock.due(pictureAt: t)
        return (first..<(first + repeats), (first + repeats)..<(first + repeats + shows))
    }

    /// The roles of the slot being composed, from the roles its pictures were made for
    /// (`driver`'s and `other`'s newest; nil: no other picture): `asked` (what the sources are
    /// told to make their next pictures for), `showing`, which follows `asked` once the picture
    /// that moves to the full frame was made for it (`SwapPolicy`), and `mainFits`: whether
    /// the picture full frame was made for that role. It may not be, even where the swap has
    /// no say: the other camera gone while this one was the inset, or roles changed again
    /// while a swap waited; the last frame then holds until this camera's next picture.
    package mutating func roles(driver: PictureRole, other: PictureRole?) -> (asked: Bool, showing: Bool, mainFits: Bool) {
        let showing = swapPolicy.frame(asked: swapAsked, newMain: swapAsked ? other : driver)
        let main = showing ? other ?? driver : driver
        return (swapAsked, showing, main.fitsFullFrame)
    }

    /// Time left out by pauses, up to `now` (or the stop) for one not ended.
    package func pausedSeconds(now: Double) -> Double {
        pause.seconds + (pause.since.map { (stoppedAt ?? now) - $0 } ?? 0)
    }
}
