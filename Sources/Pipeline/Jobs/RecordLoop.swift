import Compositor
import Foundation
import MediaIO

/// The recording itself, on the thread that started it: each new picture of the source
/// that drives the clock fills the slots the `Timeline` says are due, composed with the
/// newest picture of the other, until the timeline is over (stopped, or the duration
/// reached), the encoder fails or no source is left. The timeline decides; this carries
/// it out: sound cuts, roles told to the sources, frames to the encoder, pictures to the
/// outputs, the status line.
final class RecordLoop {
    let recorder: Recorder
    /// The sources, the encoding, the outputs and the sound, as the recorder opened them.
    let opened: Recorder.Opened
    private(set) var timeline: Timeline
    private var placement: InsetPlacement
    private var controls: ControlReader
    private var backlog = EncoderBacklog()
    private var reporter = StatusReporter()
    private var startedAt = 0.0
    private var startWait = StartWait()
    /// When the pictures were swapped, in seconds of the file.
    private(set) var swapTimes: [Double] = []
    private let fps: Int
    /// Whether anything shows pictures while paused (else nothing is composed then).
    private let showsWhilePaused: Bool
    private let keepsWholePictures: Bool
    /// The outputs that take the sources' own pictures (the ISO tracks), and those with a
    /// word for the status line: found once, not every slot.
    private let takers: [any LiveOutput]
    private(set) var counts = Counts()

    /// What the loop counted, for the summary.
    struct Counts {
        var latencies: [Double] = []
        var repeated = 0, droppedBack = 0, encoderSkipped = 0, composedInPlace = 0
        /// The source shown full frame, by name (the status line's).
        var fullFrame = ""
    }

    var queue: EncodeQueue { opened.encoding.queue }
    var plan: RecordPlan { recorder.plan }
    private var sources: SourceSet { opened.sources }
    private var clock: any EngineClock { recorder.clock }
    private var outputs: [any LiveOutput] { opened.outputs }

    init(recorder: Recorder, opened: Recorder.Opened, placement: InsetPlacement) {
        self.recorder = recorder
        self.opened = opened
        self.placement = placement
        fps = Int(recorder.plan.video.framesPerSecond)
        timeline = Timeline(fps: fps, duration: recorder.plan.duration, layout: placement.layout, swapped: recorder.plan.swap)
        controls = ControlReader(recorder.controls)
        showsWhilePaused = opened.outputs.contains { $0.showsPictures }
        takers = opened.outputs.filter { $0.takesSourcePictures }
        keepsWholePictures = recorder.plan.outputs.contains { $0.needsWholePictures }
        counts.latencies.reserveCapacity(timeline.clock.limit.map { min($0, 1 << 20) } ?? 18000)
    }

    func run() {
        // Composing runs above the process's other work (and the compositor's helper thread,
        // started from here at its first picture, with it); the stop's work after it does not.
        ThreadPriority.raiseCurrentThreadForPictures()
        defer { ThreadPriority.returnCurrentThreadToProcessLevel() }
        // The microphone runs from here: the file starts with the first picture taken after
        // this instant, so sound covers it from its first frame.
        opened.audio?.start()
        startedAt = clock.now()
        sources.startAll()
        while !timeline.isOver {
            clock.wait(for: sources.arrived, timeout: 0.1)
            if queue.error != nil || !sources.update(at: timeline.clock.seconds, event: recorder.event) { return }
            if !timeline.pause.isPaused && durationPassedWithoutCamera() { return }
            carryOut(timeline.take(controls.drain(), now: clock.now()))
            guard !timeline.isOver, let (frame, isNew) = sources.driver.exchange.take(), isNew else { continue }
            if !pictureCame(frame) { return }
        }
    }

    /// A new picture of the driving source: fills the slots due, or while paused ends the
    /// pause or is only shown. False when the encoder has failed.
    private func pictureCame(_ frame: LiveFrame) -> Bool {
        if timeline.pause.isPaused {
            guard let resumed = timeline.resumes(withPictureAt: frame.timestamp) else {
                if showsWhilePaused { _ = compose(frame, slot: timeline.clock.next, recording: false) }
                reportStatus()
                return true
            }
            carryOut(resumed)
        }
        if timeline.clock.origin == nil {
            if Recorder.isStale(frame.timestamp, startedAt: startedAt) || awaitsOtherCamera() { return true }
            queue.setOrigin(frame.timestamp)
            // Cameras can take a second or more to deliver: this is when the file starts.
            recorder.log(plan.file.map { "recording to \($0)" } ?? (opened.encoding.encoders != nil
                ? "streaming it, no file written (-o none)" : "showing it, no file written (-o none)"))
        }
        let (repeats, shows) = timeline.slots(forPictureAt: frame.timestamp)
        for slot in repeats where !skipped(slot) { queue.submitRepeat(index: slot) }
        counts.repeated += repeats.count + max(0, shows.count - 1)
        // A picture past the requested duration is not a drop.
        if repeats.isEmpty && shows.isEmpty && !timeline.clock.isComplete { counts.droppedBack += 1 }
        for slot in shows where !skipped(slot) {
            guard compose(frame, slot: slot, recording: true) else { return false }
        }
        // An OUT kept so far (--overwrite) is replaced once the take holds a picture.
        if let file = opened.encoding.file, file.pending != nil { file.claimIfReady() }
        reportStatus()
        return true
    }

    private func awaitsOtherCamera() -> Bool {
        startWait.holds(otherHasPicture: sources.other.map { $0.exchange.hasFrame }, now: clock.now())
    }

    /// What the timeline decided, done.
    private func carryOut(_ effects: [Timeline.Effect]) {
        for effect in effects {
            switch effect {
            case let .said(line): recorder.event(line)
            case let .swapAsked(swapped, at):
                guard let other = sources.other else { continue }
                swapTimes.append(at)
                recorder.event(String(format: "swap at %.2f s: %@ full frame", at, swapped ? other.name : sources.driver.name))
            case let .soundPaused(slot, at): queue.pauseSound(atSlot: slot, at: at)
            case let .resumeAsked(at): queue.resumeSoundAsked(at: at)
            case let .soundResumed(leftOut): queue.resumeSound(after: leftOut)
            case let .layoutChanged(layout): placement.use(layout)
            }
        }
    }

    /// Whether slot `slot` is skipped because the encoder is that far behind: not queued at
    /// all (the previous picture holds longer in the file; the sound goes on). The last slot
    /// of a recording of fixed length never is: the file ends on what was last seen.
    private func skipped(_ slot: Int) -> Bool {
        guard slot > 0, !timeline.clock.isLastSlot(slot) else { return false }
        if opened.encoding.keeping != nil { return skippedWhileKeeping(slot) }
        backlog.note(secondsPerFrame: queue.recentSecondsPerFrame, fps: Double(fps))
        if backlog.isSlower {
            // What was queued before its speed was known (its first frames) can take it many
            // times its length.
            let dropped = queue.trim(toSeconds: EncoderBacklog.drainLimitSeconds)
            if dropped > 0 { noteSkipping(at: slot); counts.encoderSkipped += dropped }
        }
        let lag = queue.lag(at: slot)
        guard backlog.isFull(slots: lag.slots, seconds: lag.seconds, fps: Double(fps), maxLag: plan.maxEncoderLag)
        else { return false }
        noteSkipping(at: slot)
        counts.encoderSkipped += 1
        return true
    }

    /// With every frame kept (`--encode auto`, `after`) the sink takes each frame at once (into
    /// the worker's queue, or the intermediate at full priority): what waits here is the
    /// moment of the switch or this thread's turn on a loaded machine, not a slow encoder, and
    /// the encoder's speed is no reason to skip. Trimmed by it, a take beside three busy loops
    /// lost 20 frames at 0.77 s (frozen from 0.07 s) before the switch had even been made. Only
    /// memory bounds it: a slot is skipped once `maxEncoderLag` of slots wait.
    private func skippedWhileKeeping(_ slot: Int) -> Bool {
        guard Double(queue.lag(at: slot).slots) >= plan.maxEncoderLag * Double(fps) else { return false }
        noteSkipping(at: slot)
        counts.encoderSkipped += 1
        return true
    }

    /// The one line that says frames are being skipped, the first time.
    private func noteSkipping(at slot: Int) {
        guard counts.encoderSkipped == 0 else { return }
        recorder.event(String(format: "at %.2f s the encoder is behind (slower than real time): skipping frames "
                              + "until it catches up; the picture holds longer, the sound is untouched",
                              Double(slot) / Double(fps)))
    }

    private func reportStatus() {
        guard reporter.isDue(now: clock.now()) else { return }
        let status = outputs.lazy.compactMap(\.status).first
        if let s = reporter.due(now: clock.now(), frames: timeline.clock.next, fps: fps, latencies: counts.latencies,
                                repeated: counts.repeated, dropped: counts.droppedBack,
                                encoderSkipped: counts.encoderSkipped, fullFrame: counts.fullFrame,
                                paused: timeline.pause.isPaused, stream: status, canSwap: sources.other != nil, audio: { self.opened.audio?.takePeak() }) {
            recorder.observer.status(s)
        }
    }

    /// A recording with a duration whose every camera is away (unplugged, being looked for)
    /// ends when that much time has passed since its start, rather than wait for ever.
    private func durationPassedWithoutCamera() -> Bool {
        guard let origin = timeline.clock.origin, let duration = plan.duration, !sources.anyInPicture,
              clock.now() > origin + duration + SourceSet.lostAfter else { return false }
        recorder.event(String(format: "the %.1f s asked for have passed with no camera: finishing the file at %.2f s",
                              duration, timeline.clock.seconds))
        return true
    }

    /// Composes `frame` with the newest picture of the other source into slot `slot`. False
    /// when the encoder has failed. Not `recording` (paused): composed for the outputs that
    /// show pictures alone.
    private func compose(_ frame: LiveFrame, slot: Int, recording: Bool) -> Bool {
        let canvas: EncoderFrame
        switch queue.acquire() {
        case .failed: return false
        case let .canvas(c): canvas = c
        case .encoderBehind:
            // Every pool frame is queued or being encoded: skipped like a slot over the backlog.
            if recording { counts.encoderSkipped += 1 }
            return true
        }
        let other = sources.other
        let inset = other?.exchange.take()?.frame
        let asked = timeline.swapAsked
        counts.fullFrame = asked ? other?.name ?? sources.driver.name : sources.driver.name
        let newMain = asked ? inset : frame
        let swapped = timeline.roles(newMainReduction: newMain?.reduction, newMainIsInsetOnly: newMain?.isInsetOnly ?? false).showing
        assignRoles(asked: asked, showing: swapped)
        // A picture made for the inset alone is not shown full frame, even where the swap
        // policy has no say: the other camera gone while this one was the inset, or roles
        // changed again while a swap was waiting. The last frame holds instead, until this
        // camera's next picture, made for its new role.
        if FrameStep.roles(back: frame, front: inset, swapped: swapped).main.isInsetOnly && slot > 0 {
            queue.giveBack(canvas)
            if recording {
                queue.submitRepeat(index: slot)
                counts.repeated += 1
            }
            return true
        }
        // Before the inset may be drawn into the main picture (composition in place).
        if recording && !takers.isEmpty {
            var pictures = [(source: sources.driver, frame: frame)]
            if let inset, let other { pictures.append((other, inset)) }
            let slotPictures = SlotPictures(slot: slot, fps: fps, swapped: swapped && inset != nil, pictures: pictures)
            for output in takers { output.take(slotPictures) }
        }
        let (picture, inPlace) = placement.step.frame(back: frame, front: inset, swapped: swapped, canvas: { canvas })
        guard recording else {
            for output in outputs { output.offer(picture.view, recording: false) }
            queue.giveBack(canvas)
            return true
        }
        counts.latencies.append(clock.now() - frame.latencyOrigin)
        if inPlace {
            counts.composedInPlace += 1
            queue.submit(index: slot, inPlace: picture, insteadOf: canvas)
        } else {
            queue.submit(index: slot, canvas: canvas)
        }
        // After the encoder has it (it only reads the picture, and only this thread takes
        // pictures from the pool to write): the outputs' copies are outside the latency.
        for output in outputs { output.offer(picture.view, recording: true) }
        return true
    }

    /// Publishes what each source's next pictures must be: no larger than the inset needs for
    /// the one in the inset. While a swap waits to show, both are full frame: the one asked
    /// for, so that its next picture can be, and the one still shown, so that its pictures
    /// stay whole until the swap shows.
    private func assignRoles(asked: Bool, showing: Bool) {
        let mains = [asked ? sources.other : sources.driver, showing ? sources.other : sources.driver]
        let insetRect = placement.layout.insetRect
        for s in sources.all {
            let isMain = mains.contains { $0 === s }
            s.demand.publish(inset: isMain || sources.other == nil || keepsWholePictures ? nil : insetRect)
        }
    }
}
