import Compositor
import Foundation
import MediaIO

/// The engine's one loop, for `record` and `compose` alike: until the timeline is over
/// (stopped, the duration reached, the inputs ended), it waits for its input, carries out
/// what the timeline decides (sound cuts, swaps, drags) and fills the slots the input
/// settles, each composed on this thread and handed to the encode stage on its own. What
/// differs between the commands is the input (`SlotInput`): a recording's cameras (the
/// newest picture, on the clock; slots skipped when the encoder is too far behind) or
/// compose's files (every slot, as fast as the encoder takes them).
final class RecordLoop {
    let input: any SlotInput
    let queue: EncodeQueue
    let outputs: [any LiveOutput]
    let clock: any EngineClock
    /// The inputs settle slots and resume pauses on it.
    var timeline: Timeline
    private(set) var placement: InsetPlacement
    private var controls: ControlReader
    private var backlog = EncoderBacklog()
    /// When the pictures were swapped, in seconds of the file.
    private(set) var swapTimes: [Double] = []
    let fps: Int
    private let maxEncoderLag: Double
    /// Every frame is kept (the take's sink falls back on an intermediate): slots are
    /// skipped only for memory, never for the encoder's speed.
    private let keepsEveryFrame: Bool
    /// Says a line for the log and the summary.
    let event: (String) -> Void
    var counts = Counts()

    /// What the loop counted, for the summary.
    struct Counts {
        var latencies: [Double] = []
        var repeated = 0, droppedBack = 0, encoderSkipped = 0, composedInPlace = 0
        /// The source shown full frame, by name (the status line's).
        var fullFrame = ""
    }

    struct Settings {
        var fps: Int
        var duration: Double?
        var swapped: Bool
        var maxEncoderLag: Double
        var keepsEveryFrame: Bool
        var controls: ControlInbox
        var clock: any EngineClock
    }

    init(_ settings: Settings, input: any SlotInput, queue: EncodeQueue, outputs: [any LiveOutput], placement: InsetPlacement,
         event: @escaping (String) -> Void) {
        self.input = input
        self.queue = queue
        self.outputs = outputs
        self.placement = placement
        self.event = event
        fps = settings.fps
        clock = settings.clock
        maxEncoderLag = settings.maxEncoderLag
        keepsEveryFrame = settings.keepsEveryFrame
        timeline = Timeline(fps: fps, duration: settings.duration, layout: placement.layout, swapped: settings.swapped)
        controls = ControlReader(settings.controls)
        counts.latencies.reserveCapacity(timeline.clock.limit.map { min($0, 1 << 20) } ?? 18000)
    }

    func run() {
        input.begin(self)
        defer { input.end(self) }
        while !timeline.isOver {
            guard queue.error == nil, input.awaitNext(self) else { return }
            carryOut(timeline.take(input.accepted(controls.drain()), now: input.now(self)))
            guard !timeline.isOver else { return }
            if !input.fillSlots(self) { return }
        }
    }

    /// What the timeline decided, done.
    func carryOut(_ effects: [Timeline.Effect]) {
        for effect in effects {
            switch effect {
            case let .said(line): event(line)
            case let .swapAsked(swapped, at):
                guard input.canSwap else { continue }
                swapTimes.append(at)
                if let line = input.swapLine(swapped: swapped, at: at) { event(line) }
            case let .soundPaused(slot, at): queue.pauseSound(atSlot: slot, at: at)
            case let .resumeAsked(at): queue.resumeSoundAsked(at: at)
            case let .soundResumed(leftOut): queue.resumeSound(after: leftOut)
            case let .layoutChanged(layout): placement.use(layout)
            }
        }
    }

    /// The timeline takes `events` now (an input's own: compose's --swap-at times).
    func ask(_ events: [ControlEvent]) {
        carryOut(timeline.take(events, now: input.now(self)))
    }

    /// Slots `slots` show the previous picture again (the input was late).
    func repeatSlots(_ slots: Range<Int>) {
        for slot in slots where !isSkipped(slot) { queue.submitRepeat(index: slot) }
    }

    /// Whether slot `slot` is skipped because the encoder is that far behind: not queued at
    /// all (the previous picture holds longer in the file; the sound goes on). The last slot
    /// of a recording of fixed length never is: the file ends on what was last seen. An
    /// input that waits for the encoder (files) never skips.
    func isSkipped(_ slot: Int) -> Bool {
        guard slot > 0, !timeline.clock.isLastSlot(slot), !input.waitsForTheEncoder else { return false }
        if keepsEveryFrame { return skippedWhileKeeping(slot) }
        backlog.note(secondsPerFrame: queue.recentSecondsPerFrame, fps: Double(fps))
        if backlog.isSlower {
            // What was queued before its speed was known (its first frames) can take it many
            // times its length.
            let dropped = queue.trim(toSeconds: EncoderBacklog.drainLimitSeconds)
            if dropped > 0 { noteSkipping(at: slot); counts.encoderSkipped += dropped }
        }
        let lag = queue.lag(at: slot)
        guard backlog.isFull(slots: lag.slots, seconds: lag.seconds, fps: Double(fps), maxLag: maxEncoderLag)
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
        guard Double(queue.lag(at: slot).slots) >= maxEncoderLag * Double(fps) else { return false }
        noteSkipping(at: slot)
        counts.encoderSkipped += 1
        return true
    }

    /// The one line that says frames are being skipped, the first time.
    private func noteSkipping(at slot: Int) {
        guard counts.encoderSkipped == 0 else { return }
        event(String(format: "at %.2f s the encoder is behind (slower than real time): skipping frames "
                     + "until it catches up; the picture holds longer, the sound is untouched", Double(slot) / Double(fps)))
    }

    /// Composes `driver`'s picture with `other`'s into slot `slot`, in the roles the timeline
    /// gives it. False when the encoder has failed. Not `recording` (paused): composed for
    /// the outputs that show pictures alone.
    func show(_ slot: Int, driver: any StepPicture, other: (any StepPicture)?, recording: Bool) -> Bool {
        let canvas: EncoderFrame
        switch queue.acquire(waiting: input.waitsForTheEncoder) {
        case .failed: return false
        case let .canvas(c): canvas = c
        case .encoderBehind:
            // Every pool frame is queued or being encoded: skipped like a slot over the backlog.
            if recording { counts.encoderSkipped += 1 }
            return true
        }
        let roles = timeline.roles(driver: driver.madeFor, other: other?.madeFor)
        let swapped = roles.showing
        counts.fullFrame = input.fullFrameName(swapped: roles.asked)
        input.rolesDecided(asked: roles.asked, showing: swapped, insetRect: placement.layout.insetRect)
        // A picture made for the inset is not shown full frame: the last frame holds instead,
        // until this camera's next picture, made for its new role.
        if !roles.mainFits && slot > 0 {
            queue.giveBack(canvas)
            if recording {
                queue.submitRepeat(index: slot)
                counts.repeated += 1
            }
            return true
        }
        // Before the inset may be drawn into the main picture (composition in place).
        if recording { input.willCompose(slot: slot, swapped: swapped && other != nil) }
        let (picture, inPlace) = placement.step.frame(back: driver, front: other, swapped: swapped, canvas: { canvas })
        guard recording else {
            for output in outputs { output.offer(picture.view, recording: false) }
            queue.giveBack(canvas)
            return true
        }
        if let latency = input.latency(of: driver, now: clock.now()) { counts.latencies.append(latency) }
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
}

/// Where the slots' pictures come from, and how they are paced: a recording's cameras
/// (`LiveInput`) or compose's files (`FileInput`). A new kind of source goes behind one of
/// these, or a new one; the loop and everything after it stay as they are.
protocol SlotInput: AnyObject {
    /// Files wait for the encoder (every slot kept, as fast as it takes them); cameras do
    /// not (a slot it cannot take in time is skipped, never waited for).
    var waitsForTheEncoder: Bool { get }
    /// Whether a swap has another picture to show.
    var canSwap: Bool { get }
    func begin(_ loop: RecordLoop)
    func end(_ loop: RecordLoop)
    /// Waits for what comes next; false when the inputs are over and the loop ends.
    func awaitNext(_ loop: RecordLoop) -> Bool
    /// The events of the inbox this input's timeline takes.
    func accepted(_ events: [ControlEvent]) -> [ControlEvent]
    /// The time the timeline reads now.
    func now(_ loop: RecordLoop) -> Double
    /// Fills the slots settled since the last call; false when the loop ends.
    func fillSlots(_ loop: RecordLoop) -> Bool
    func swapLine(swapped: Bool, at: Double) -> String?
    func fullFrameName(swapped: Bool) -> String
    /// Tells the sources what their next pictures must be for the roles decided.
    func rolesDecided(asked: Bool, showing: Bool, insetRect: Rect)
    /// The slot's pictures, before the inset may be drawn into the main one.
    func willCompose(slot: Int, swapped: Bool)
    /// Seconds from `driver`'s capture to now, where that is known.
    func latency(of driver: any StepPicture, now: Double) -> Double?
}
