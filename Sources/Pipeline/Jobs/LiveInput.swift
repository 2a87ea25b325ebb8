import Compositor
import Foundation
import MediaIO

/// A recording's input: its cameras (or files played as cameras) on the clock. The source
/// that drives the clock fills, with each new picture, the slots the timeline says are due,
/// composed with the newest picture of the other; a source that fails, ends or goes quiet
/// is dropped and the other goes on alone. Slots the encoder cannot take in time are
/// skipped, never waited for (that would stall the clock and later fill the missed slots
/// with pictures from the future).
final class LiveInput: SlotInput {
    let recorder: Recorder
    /// The sources, the encoding, the outputs and the sound, as the recorder opened them.
    let opened: Recorder.Opened
    private var startWait = StartWait()
    private var reporter = StatusReporter()
    private var startedAt = 0.0
    /// Whether an output shows pictures as they are made (the preview, the virtual camera):
    /// composed for it while paused and where the file's encoder has no room, else not at all.
    private let showsPictures: Bool
    private let keepsWholePictures: Bool
    /// The outputs that take the sources' own pictures (the ISO tracks): found once, not every slot.
    private let takers: [any LiveOutput]
    /// The pictures of the slot being composed: the driving source's and the other's newest.
    private var composing: (driver: LiveFrame, inset: LiveFrame?)?

    private var sources: SourceSet { opened.sources }
    private var plan: RecordPlan { recorder.plan }
    private var clock: any EngineClock { recorder.clock }

    init(recorder: Recorder, opened: Recorder.Opened) {
        self.recorder = recorder
        self.opened = opened
        showsPictures = opened.outputs.contains { $0.showsPictures }
        takers = opened.outputs.filter { $0.takesSourcePictures }
        keepsWholePictures = recorder.plan.outputs.contains { $0.needsWholePictures }
    }

    var waitsForTheEncoder: Bool { false }
    var canSwap: Bool { sources.other != nil }

    func begin(_ loop: RecordLoop) {
        // Composing runs above the process's other work (and the compositor's helper thread,
        // started from here at its first picture, with it); the stop's work after it does not.
        ThreadPriority.raiseCurrentThreadForPictures()
        // The microphone runs from here: the file starts with the first picture taken after
        // this instant, so sound covers it from its first frame.
        opened.audio?.start()
        startedAt = clock.now()
        sources.startAll()
    }

    func end(_ loop: RecordLoop) { ThreadPriority.returnCurrentThreadToProcessLevel() }

    func awaitNext(_ loop: RecordLoop) -> Bool {
        clock.wait(for: sources.arrived, timeout: 0.1)
        guard sources.update(at: loop.timeline.clock.seconds, event: recorder.event) else { return false }
        return loop.timeline.pause.isPaused || !durationPassedWithoutCamera(loop.timeline)
    }

    func accepted(_ events: [ControlEvent]) -> [ControlEvent] { events }
    func now(_ loop: RecordLoop) -> Double { clock.now() }

    func fillSlots(_ loop: RecordLoop) -> Bool {
        guard let (frame, isNew) = sources.driver.exchange.take(), isNew else { return true }
        return pictureCame(frame, loop)
    }

    /// A new picture of the driving source: fills the slots due, or while paused ends the
    /// pause or is only shown. False when the encoder has failed.
    private func pictureCame(_ frame: LiveFrame, _ loop: RecordLoop) -> Bool {
        if loop.timeline.pause.isPaused {
            guard let resumed = loop.timeline.resumes(withPictureAt: frame.timestamp) else {
                if showsPictures { _ = show(frame, slot: loop.timeline.clock.next, recording: false, loop) }
                reportStatus(loop)
                return true
            }
            loop.carryOut(resumed)
        }
        if loop.timeline.clock.origin == nil {
            if Recorder.isStale(frame.timestamp, startedAt: startedAt) || awaitsOtherCamera() { return true }
            loop.queue.setOrigin(frame.timestamp)
            // Cameras can take a second or more to deliver: this is when the file starts.
            recorder.log(plan.file.map { "recording to \($0)" } ?? (opened.encoding.encoders != nil
                ? "streaming it, no file written (-o none)" : "showing it, no file written (-o none)"))
        }
        let (repeats, shows) = loop.timeline.slots(forPictureAt: frame.timestamp)
        loop.repeatSlots(repeats)
        loop.counts.repeated += repeats.count + max(0, shows.count - 1)
        // A picture past the requested duration is not a drop.
        if repeats.isEmpty && shows.isEmpty && !loop.timeline.clock.isComplete { loop.counts.droppedBack += 1 }
        var recorded = false
        for slot in shows where !loop.isSkipped(slot) {
            guard show(frame, slot: slot, recording: true, loop) else { return false }
            recorded = true
        }
        // A picture the file's encoder had no room for still goes to the outputs that show
        // pictures: a viewer of the virtual camera or the preview does not see it freeze
        // because the file is behind (in the emulated VM the encoder skipped 449 of 600 slots,
        // and a reader of the virtual camera got 6 frames in 30 s).
        if !recorded, showsPictures, let slot = shows.last { _ = show(frame, slot: slot, recording: false, loop) }
        // An OUT kept so far (--overwrite) is replaced once the take holds a picture.
        if let file = opened.encoding.file, file.pending != nil { file.claimIfReady() }
        reportStatus(loop)
        return true
    }

    private func show(_ frame: LiveFrame, slot: Int, recording: Bool, _ loop: RecordLoop) -> Bool {
        let inset = sources.other?.exchange.take()?.frame
        composing = (frame, inset)
        defer { composing = nil }
        return loop.show(slot, driver: frame, other: inset, recording: recording)
    }

    private func awaitsOtherCamera() -> Bool {
        startWait.holds(otherHasPicture: sources.other.map { $0.exchange.hasFrame }, now: clock.now())
    }

    func swapLine(swapped: Bool, at: Double) -> String? {
        guard let other = sources.other else { return nil }
        return String(format: "swap at %.2f s: %@ full frame", at, swapped ? other.name : sources.driver.name)
    }

    func fullFrameName(swapped: Bool) -> String { swapped ? sources.other?.name ?? sources.driver.name : sources.driver.name }

    /// Publishes what each source's next pictures must be: no larger than the inset needs for
    /// the one in the inset. While a swap waits to show, both are full frame: the one asked
    /// for, so that its next picture can be, and the one still shown, so that its pictures
    /// stay whole until the swap shows.
    func rolesDecided(asked: Bool, showing: Bool, insetRect: Rect) {
        let mains = [asked ? sources.other : sources.driver, showing ? sources.other : sources.driver]
        for s in sources.all {
            let isMain = mains.contains { $0 === s }
            s.demand.publish(inset: isMain || sources.other == nil || keepsWholePictures ? nil : insetRect)
        }
    }

    func willCompose(slot: Int, swapped: Bool) {
        guard !takers.isEmpty, let (driver, inset) = composing else { return }
        var pictures = [(source: sources.driver, frame: driver)]
        if let inset, let other = sources.other { pictures.append((other, inset)) }
        let slotPictures = SlotPictures(slot: slot, fps: Int(plan.video.framesPerSecond), swapped: swapped, pictures: pictures)
        for output in takers { output.take(slotPictures) }
    }

    func latency(of driver: any StepPicture, now: Double) -> Double? {
        (driver as? LiveFrame).map { now - $0.latencyOrigin }
    }

    private func reportStatus(_ loop: RecordLoop) {
        guard reporter.isDue(now: clock.now()) else { return }
        let status = opened.outputs.lazy.compactMap(\.status).first
        let counts = loop.counts, timeline = loop.timeline
        if let s = reporter.due(now: clock.now(), frames: timeline.clock.next, fps: loop.fps, latencies: counts.latencies,
                                repeated: counts.repeated, dropped: counts.droppedBack,
                                encoderSkipped: counts.encoderSkipped, fullFrame: counts.fullFrame,
                                paused: timeline.pause.isPaused, stream: status, canSwap: sources.other != nil,
                                audio: { self.opened.audio?.takePeak() }) {
            recorder.observer.status(s)
        }
    }

    /// A recording with a duration whose every camera is away (unplugged, being looked for)
    /// ends when that much time has passed since its start, rather than wait for ever.
    private func durationPassedWithoutCamera(_ timeline: Timeline) -> Bool {
        guard let origin = timeline.clock.origin, let duration = plan.duration, !sources.anyInPicture,
              clock.now() > origin + duration + SourceSet.lostAfter else { return false }
        recorder.event(String(format: "the %.1f s asked for have passed with no camera: finishing the file at %.2f s",
                              duration, timeline.clock.seconds))
        return true
    }
}
