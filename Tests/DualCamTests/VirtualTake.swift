import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// A clock that moves only when the recording waits for its next picture, as swift-nio's
/// `EmbeddedEventLoop`: it runs the next thing scheduled (a camera's picture, a key, a camera
/// unplugged) at its exact instant, and lets the encoder finish frames at the instants their
/// cost says. Before it moves it waits, in real time, for the encode stage to do all it can
/// at this instant, so what the loop sees of the encoder is the same on every machine.
final class VirtualClock: EngineClock, @unchecked Sendable {
    private let lock = NSLock()
    private var time: Double
    private var scheduled: [(at: Double, order: Int, action: () -> Void)] = []
    private var order = 0
    /// Waits until the encode stage is idle or busy until a virtual instant (set by the take).
    var settle: () -> Void = {}
    /// The encoder's current frame: when it ends, and what lets it go on.
    var encoderBusyUntil: () -> Double? = { nil }
    var encoderFinishes: () -> Void = {}

    init(start: Double = 1000) { time = start }

    func now() -> Double { lock.withLock { time } }

    /// `action` runs on the recording's thread when the clock reaches `at` (in the order given
    /// among those of one instant).
    func at(_ at: Double, _ action: @escaping () -> Void) {
        lock.withLock {
            order += 1
            scheduled.append((at, order, action))
        }
    }

    func wait(for signal: DispatchSemaphore, timeout: Double) -> Bool {
        if signal.wait(timeout: .now()) == .success { return true }
        let deadline = now() + timeout
        while true {
            settle()
            let next = lock.withLock { scheduled.min { ($0.at, $0.order) < ($1.at, $1.order) }?.at }
            let encoderDue = encoderBusyUntil()
            let target = min(next ?? .infinity, encoderDue ?? .infinity, deadline)
            lock.withLock { time = max(time, target) }
            if let encoderDue, encoderDue <= target {
                encoderFinishes()
                continue
            }
            guard let next, next <= target else { return false }
            for action in lock.withLock({ () -> [() -> Void] in
                let due = scheduled.filter { $0.at <= next }.sorted { ($0.at, $0.order) < ($1.at, $1.order) }
                scheduled.removeAll { $0.at <= next }
                return due.map(\.action)
            }) { action() }
            return signal.wait(timeout: .now()) == .success
        }
    }
}

/// A camera whose every picture is one flat colour that names it: back pictures have luma
/// 20, 22, ... and front ones 130, 132, ..., counting its pictures (50 of each, then again),
/// so the output's pixels say which picture each slot shows.
final class ScriptedCamera: FrameSource, @unchecked Sendable {
    let feed: SourceFeed
    let size: Size
    private let firstLuma: Int
    private(set) var shown = 0
    /// Pictures made while this camera is the inset are made for it alone (an uncompressed
    /// camera converting only the columns the inset reads) or reduced (an MJPEG camera
    /// decoding at half size).
    enum InsetPictures { case whole, insetOnly, halved }
    var insetPictures = InsetPictures.whole

    init(name: String, size: Size, back: Bool, clock: any EngineClock) {
        feed = SourceFeed(name: name, clock: clock)
        self.size = size
        firstLuma = back ? 20 : 130
    }
    func open() {}
    func captureLoop() {}

    static func luma(back: Bool, picture: Int) -> UInt8 { UInt8((back ? 20 : 130) + 2 * (picture % 50)) }

    /// Publishes its next picture, stamped `timestamp` (the arrival's instant by default).
    func deliver(stampedAt timestamp: Double) {
        let inInset = demand.inset != nil
        let halved = inInset && insetPictures == .halved
        let frame = exchange.frameToFill(size: halved ? Size(width: size.width / 2, height: size.height / 2) : size)
        frame.buffer.view.fill(y: UInt8(firstLuma + 2 * (shown % 50)), u: 128, v: 128)
        // The demand it read, as a camera stamps it; one that makes whole pictures whatever
        // the role need not read it.
        frame.madeFor = insetPictures == .whole ? .any : inInset ? .inset : .fullFrame
        shown += 1
        published(frame, timestamp: timestamp, matrix: .bt709, shift: halved ? 1 : 0)
    }
}

/// A sink that keeps, for each slot written, which pictures it shows (the luma of the main
/// picture and of the inset's centre), and takes `secondsPerFrame` of virtual time for each.
final class SlotSink: Sink, @unchecked Sendable {
    struct Slot: Equatable, CustomStringConvertible {
        var index: Int
        var main: UInt8
        /// The inset's picture and the corner it is in; nil without one.
        var inset: UInt8?
        var corner: Corner?
        var description: String { "\(index):\(main)" + (inset.map { "/\($0)" } ?? "") }
    }
    private let condition = NSCondition()
    private var slots: [Slot] = []
    private var busyUntil: Double?
    /// The frame waiting for the clock, and the last one the clock let go.
    private var waitingFrame: Int?
    private var releasedFrame = -1
    private var freeRunning = false
    private(set) var soundSamplesWritten: Int64 = 0
    private let clock: VirtualClock
    private let layout: PiPLayout
    /// Virtual seconds each frame takes the encoder (0: none).
    var secondsPerFrame: [Double]
    private var framesTaken = 0

    init(clock: VirtualClock, layout: PiPLayout, secondsPerFrame: [Double]) {
        self.clock = clock
        self.layout = layout
        self.secondsPerFrame = secondsPerFrame
    }

    var written: [Slot] { condition.withLock { slots } }
    var isBusy: Bool { condition.withLock { busyUntil != nil } }
    var until: Double? { condition.withLock { busyUntil } }

    func write(frame: EncoderFrame, index: Int64) throws(MediaError) {
        let y = frame.view.y
        func luma(_ x: Int, _ row: Int) -> UInt8 { y.row(row)[x] }
        let w = layout.canvas.width, h = layout.canvas.height
        var slot: Slot
        if layout.arrangement == .sideBySide {
            let right = luma(w * 3 / 4, h / 2)
            slot = Slot(index: Int(index), main: luma(w / 4, h / 2), inset: right, corner: nil)
        } else {
            slot = Slot(index: Int(index), main: luma(w / 2, h / 2))
            for corner in [Corner.topRight, .topLeft, .bottomLeft, .bottomRight] {
                var placed = layout
                placed.corner = corner
                let r = placed.insetRect, l = luma(r.x + r.width / 2, r.y + r.height / 2)
                if l != slot.main { (slot.inset, slot.corner) = (l, corner) }
            }
        }
        condition.lock()
        slots.append(slot)
        let cost = secondsPerFrame.isEmpty ? 0 : secondsPerFrame[min(framesTaken, secondsPerFrame.count - 1)]
        framesTaken += 1
        if cost > 0 && !freeRunning {
            let number = framesTaken
            busyUntil = clock.now() + cost
            waitingFrame = number
            while releasedFrame < number && !freeRunning { condition.wait() }
            busyUntil = nil
            waitingFrame = nil
            condition.broadcast()
        }
        condition.unlock()
    }

    /// The clock reached the end of the frame being encoded: lets it go, and returns once
    /// the encoder has it (a release it had not yet seen would let its next frame through).
    func finishFrame() {
        condition.withLock {
            guard let number = waitingFrame else { return }
            releasedFrame = number
            condition.broadcast()
            while waitingFrame == number { condition.wait() }
        }
    }

    /// The recording is over: what is left is encoded without waiting for the clock.
    func runFreely() {
        condition.withLock {
            freeRunning = true
            condition.broadcast()
        }
    }

    private var soundWritten: [Float] = []
    /// The left channel of the sound written.
    var sound: [Float] { condition.withLock { soundWritten } }

    func write(sound queue: SampleQueue, final: Bool) throws(MediaError) {
        let left = queue.takePlanar(queue.count).left
        condition.withLock {
            soundSamplesWritten += Int64(left.count)
            soundWritten += left
        }
    }
    func finishWriting() throws(MediaError) {}
}

/// A microphone on the virtual clock whose every sample names the instant it was heard:
/// sample k after its start is (k + 1) / 2^24, so the sound written says where each piece of
/// it came from. Heard continuously from `start()`; once the recording is over, it has heard
/// whatever is asked for (as a real one has, a period later).
final class VirtualMicrophone: SoundSource, @unchecked Sendable {
    let kind = "microphone"
    private let clock: VirtualClock
    private let lock = NSLock()
    private var startedAt: Double?
    private var heardAll = false
    private var generated = 0
    private var placement = SoundPlacement()
    private let pending = SampleQueue()
    var onLost: (String) -> Void = { _ in }

    init(clock: VirtualClock) { self.clock = clock }

    static let scale: Float = 16_777_216
    /// The sample heard `k` samples after the microphone started.
    static func sample(heardAt k: Int) -> Float { Float(k + 1) / scale }
    static func heardAt(_ sample: Float) -> Int? { sample == 0 ? nil : Int((sample * scale).rounded()) - 1 }

    func start() { lock.withLock { startedAt = clock.now() } }
    func stop() -> Bool { true }
    func hearAll() { lock.withLock { heardAll = true } }
    var isLost: Bool { false }
    /// A second ahead of the clock: the stop's wait for the last period of sound, which is
    /// in real time, then never holds a test up.
    var capturedUntil: Double { clock.now() + 1 }
    func takePeak() -> Float { 0 }
    var overruns: Int { 0 }
    var driftCorrection: Int { 0 }
    var silenceInserted: Int { 0 }

    func drain(into queue: SampleQueue, origin: Double, limit: Int) -> Int {
        lock.lock(); defer { lock.unlock() }
        guard let startedAt, limit > 0 else { return 0 }
        placement.place(start: startedAt, origin: origin)
        var moved = placement.padSilence(into: queue, limit: limit)
        let heard = heardAll ? generated + placement.dropDue + limit : Int(((clock.now() - startedAt) * 48_000).rounded(.down))
        if heard > generated {
            let samples = (generated..<heard).map(Self.sample(heardAt:))
            samples.withUnsafeBufferPointer { pending.append(left: $0.baseAddress!, right: $0.baseAddress!, count: samples.count) }
            generated = heard
        }
        placement.dropWhatIsDue(from: pending)
        let n = min(limit - moved, pending.count)
        pending.move(n, to: queue)
        moved += n
        return moved
    }
}

/// What the recording said and reported.
final class HeardLines: RecordObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var _lines: [String] = []
    private var _statuses: [RecordStatus] = []
    var onFinish: () -> Void = {}
    var lines: [String] { lock.withLock { _lines } }
    var statuses: [RecordStatus] { lock.withLock { _statuses } }
    func said(_ line: String) { lock.withLock { _lines.append(line) } }
    func status(_ status: RecordStatus) { lock.withLock { _statuses.append(status) } }
    func sourcesOpened() {}
    func willStart() {}
    func willFinish() { onFinish() }
    func encodingAfterStop(done: Int, total: Int, seconds: Double) {}
}

/// A recording from scripted cameras on a virtual clock: the test schedules pictures,
/// keys and camera states at exact instants (seconds from the start), runs it, and reads
/// the slots written, the summary and the lines.
final class VirtualTake {
    static let canvas = Size(width: 128, height: 72)
    let clock = VirtualClock()
    let layout: PiPLayout
    let back: ScriptedCamera
    let front: ScriptedCamera?
    let inbox = ControlInbox()
    let heard = HeardLines()
    var plan: RecordPlan
    let sink: SlotSink
    let start: Double
    /// The sound heard, when the test asks for it (else a silent track).
    var microphone: VirtualMicrophone?
    /// Outputs beside the take (they see what the loop offers them).
    var outputs: [any LiveOutput] = []
    /// Every frame kept (a take's file with an intermediate to fall back on): slots are
    /// skipped only for memory.
    var keepsEveryFrame = false

    init(twoCameras: Bool = true, cameraSize: Size = VirtualTake.canvas, arrangement: Arrangement = .pip,
         encoderSecondsPerFrame: [Double] = []) {
        // An inset small enough that the main picture's crop for it lies apart from where it is
        // drawn, as at 1080p: pictures the canvas's size are composed in place.
        var layout = PiPLayout(canvas: Self.canvas, inset: Size(width: 20, height: 25), margin: 4)
        layout.arrangement = arrangement
        self.layout = layout
        start = clock.now()
        back = ScriptedCamera(name: "back", size: cameraSize, back: true, clock: clock)
        front = twoCameras ? ScriptedCamera(name: "front", size: cameraSize, back: false, clock: clock) : nil
        plan = RecordPlan(file: nil)
        plan.layout = layout
        plan.audio = .none
        plan.video.size = Self.canvas
        sink = SlotSink(clock: clock, layout: layout, secondsPerFrame: encoderSecondsPerFrame)
    }

    /// Seconds from the start, on the virtual clock.
    func t(_ seconds: Double) -> Double { start + seconds }

    /// `camera` delivers a picture every `period` seconds from `from` to before `to`, stamped
    /// `stampOffset` before it arrives; `skipping` leaves those pictures out (by number).
    func delivers(_ camera: ScriptedCamera, from: Double, to: Double, every period: Double = 1.0 / 30,
                  stampOffset: Double = 0, skipping: Set<Int> = []) {
        var n = 0
        while from + Double(n) * period < to - 1e-9 {
            let at = t(from + Double(n) * period)
            if !skipping.contains(n) { clock.at(at) { camera.deliver(stampedAt: at - stampOffset) } }
            n += 1
        }
    }

    func press(_ event: ControlEvent, at seconds: Double) { clock.at(t(seconds)) { [inbox] in inbox.send(event) } }
    func set(_ camera: ScriptedCamera, _ state: SourceState, at seconds: Double) {
        clock.at(t(seconds)) { camera.go(state) }
    }

    /// Runs the recording to its end; the summary, or the error it ended with.
    func run() throws(RecordError) -> RecordSummary {
        let recorder = Recorder(plan: plan, controls: inbox, observer: heard, clock: clock)
        let cameras: [any FrameSource] = [back] + (front.map { [$0] } ?? [])
        let queue: EncodeQueue
        let compositor: PiPCompositor
        do {
            // As deep as a take's file has it: a second of slots.
            queue = try EncodeQueue(sink: sink, canvas: layout.canvas, depth: max(32, Int(plan.maxEncoderLag * 30) + 2), fps: 30,
                                    clock: clock)
            compositor = try PiPCompositor(layout: layout, threads: 1)
        } catch { throw .media(.cannotCompose(reason: "\(error)")) }
        let sink = self.sink
        clock.settle = {
            let deadline = Date().addingTimeInterval(10)
            while !(queue.isIdle || sink.isBusy) && Date() < deadline { usleep(100) }
        }
        clock.encoderBusyUntil = { sink.until }
        clock.encoderFinishes = { sink.finishFrame() }
        heard.onFinish = { [microphone] in
            sink.runFreely()
            microphone?.hearAll()
        }
        queue.liveAudio = microphone
        let opened = Recorder.Opened(sources: SourceSet(cameras, clock: clock),
                                     encoding: .init(file: nil, sink: sink, keeping: nil, encoders: nil, queue: queue),
                                     outputs: outputs, audio: microphone)
        guard keepsEveryFrame else { return try recorder.record(opened, placement: InsetPlacement(compositor: compositor, threads: 1)) }
        // As `Recorder.record` makes it for a take whose sink keeps every frame.
        let settings = RecordLoop.Settings(fps: 30, duration: plan.duration, swapped: plan.swap, maxEncoderLag: plan.maxEncoderLag,
                                           keepsEveryFrame: true, controls: inbox, clock: clock)
        let loop = RecordLoop(settings, input: LiveInput(recorder: recorder, opened: opened), queue: queue, outputs: outputs,
                              placement: InsetPlacement(compositor: compositor, threads: 1)) { recorder.event($0) }
        loop.run()
        return try recorder.finish(loop, opened)
    }

    /// Which picture each slot's main shows: "b0" for the back camera's first, "f3" for the
    /// front's fourth (counted modulo 50).
    var mains: [String] { sink.written.map { Self.name($0.main) } }
    var insets: [String?] { sink.written.map { $0.inset.map(Self.name) } }
    var indices: [Int] { sink.written.map(\.index) }

    static func name(_ luma: UInt8) -> String {
        let l = Int(luma)
        if (20..<120).contains(l) && l % 2 == 0 { return "b\((l - 20) / 2)" }
        if (130..<230).contains(l) && l % 2 == 0 { return "f\((l - 130) / 2)" }
        return "?\(l)"
    }
}

/// An output that keeps what the loop offers it: each composed picture's main grey and
/// whether it was recorded, and the cameras' own pictures of each recorded slot.
final class WatchingOutput: LiveOutput {
    private(set) var offered: [(main: String, recording: Bool)] = []
    private(set) var taken: [(slot: Int, swapped: Bool, pictures: [String])] = []
    let takesSourcePictures: Bool
    var showsPictures: Bool { true }

    init(takesSourcePictures: Bool = false) { self.takesSourcePictures = takesSourcePictures }

    func offer(_ picture: I420View, recording: Bool) {
        let y = picture.y
        offered.append((VirtualTake.name(y.row(y.height / 2)[y.width / 2]), recording))
    }

    func take(_ slot: SlotPictures) {
        let names = slot.pictures.map { VirtualTake.name($0.frame.buffer.view.y.row(0)[0]) }
        taken.append((slot.slot, slot.swapped, names))
    }

    func finish(lastSlot: Int?) -> OutputReport { .nothing }
}

extension ScriptedCamera {
    func go(_ state: SourceState) { setState(state) }
}
