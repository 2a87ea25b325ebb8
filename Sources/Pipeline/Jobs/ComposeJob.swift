import Compositor
import Foundation
import MediaIO

public enum AudioChoice: String, Sendable, CaseIterable {
    case back, front, none
}

public struct ComposeOptions: Sendable {
    public var back: String
    public var front: String
    public var output: String
    public var swaps = SwapSchedule([])
    /// How a warning names a swap time that never shows: the option it came from.
    public var swapsNamed = "--swap-at"
    public var audio = AudioChoice.back
    /// Whether `audio` was asked for by name: a file without sound is then refused, as
    /// `record --audio back|front` refuses it, instead of a silent track.
    public var audioRequired = false
    /// The sound of this file instead (`relayout`: the take's, whose frames BACK, a camera's
    /// own file, follows one for one from the same start).
    public var soundOf: String?
    public var layout = PiPLayout()
    public var video = VideoEncoderSettings()
    public var overwrite = false
    public var metadata = MovWriter.Metadata()
    /// The CPUs the work is spread over; nil: those this process may use now (`StagePlan.compose`).
    public var cpus: CPUAllowance?
    /// Where the pictures also go as they are composed (the preview window).
    package var outputs: [OutputRequest] = []

    public init(back: String, front: String, output: String) {
        self.back = back
        self.front = front
        self.output = output
    }
}

public struct ComposeSummary: Sendable {
    public var frames: Int
    public var duration: Double
    public var audioSamples: Int64
    public var audioSource: String
    public var seconds: Double
    /// Frames whose main picture took the inset where the decoder left it, with no copy.
    public var composedInPlace: Int
    /// How the work was spread over the CPUs.
    public var plan: StagePlan
    /// What a user should know although the file was written, one line each.
    public var warnings: [String]
}

/// Composes two video files into one picture-in-picture movie.
///
/// BACK sets the clock: the output has as many 30 fps frames as BACK lasts, each showing the
/// newest BACK and FRONT pictures due at its time (FRONT holds its last picture once it
/// ends). Audio follows the picture sample for sample, so both tracks end together. It
/// opens what can fail on bad input, then runs the engine's loop (`RecordLoop`) over the two
/// files (`FileInput`) into the encode stage and the file.
public final class ComposeJob {
    public let options: ComposeOptions
    /// Where a stop comes from (a signal, a key): it abandons the job and its temporary file.
    public var controls = ControlInbox()
    /// Told after each frame: frames written, and how many BACK's declared duration makes
    /// (nil when its container does not say).
    public var progress: (_ frames: Int, _ expected: Int?) -> Void = { _, _ in }
    /// Told once everything that can fail on bad input has opened, before the first frame.
    public var onStart: () -> Void = {}
    /// Told how the work is spread over the CPUs, once the inputs' sizes are known.
    public var onPlan: (StagePlan) -> Void = { _ in }

    public init(options: ComposeOptions) {
        self.options = options
    }

    public func run() throws(MediaError) -> ComposeSummary {
        let started = Date()
        let o = options
        // Open everything that can fail on bad input before creating any file.
        let cpus = o.cpus ?? .current()
        let decoderThreads = StagePlan.decoderThreads(cpus: cpus.wholeCPUs)
        let back = try VideoReader(path: o.back, decoderThreads: decoderThreads)
        let front = try VideoReader(path: o.front, decoderThreads: decoderThreads)
        let plan = StagePlan.compose(cpus: cpus, output: o.video.size, inputs: [back.displaySize, front.displaySize])
        var video = o.video
        video.threading = plan.encoder
        onPlan(plan)
        let compositor: PiPCompositor
        do { compositor = try PiPCompositor(layout: o.layout, threads: plan.compositorThreads) } catch {
            throw .cannotCompose(reason: error.description)
        }
        let (sound, soundName) = try openSound(back: back, front: front)
        let settings = OutputSettings(take: o.output, overwrite: o.overwrite, canvas: o.layout.canvas, video: o.video,
                                      metadata: o.metadata, inputs: [o.back, o.front] + (o.soundOf.map { [$0] } ?? []))
        for request in o.outputs { try request.check(settings, { _ in }) }
        let file = try FaststartFile(path: o.output, overwrite: o.overwrite, video: video, metadata: o.metadata)
        let fps = Int(o.video.framesPerSecond)
        // As many frames wait for the encoder as the plan says, and one more is composed into.
        let queue = try EncodeQueue(sink: file, canvas: o.video.size, depth: StagePlan.composeQueueDepth(cpus: plan.cpus.wholeCPUs) + 1,
                                    fps: fps, threadName: "dualcam-encode")
        let track = sound.map(TrackSound.init)
        queue.liveAudio = track
        let context = OutputContext(settings: settings, sources: [], encoders: nil, event: { _ in }, log: { _ in })
        let outputs = try o.outputs.map { request throws(MediaError) in try request.open(context) }
        var written: Int?
        defer { for output in outputs { _ = output.finish(lastSlot: written.map { $0 - 1 }) } }
        let clock = FrameClock(fps: fps)
        let pictures: FilePictures
        do { pictures = try FilePictures(back: back, front: front, clock: clock, depth: StagePlan.composeQueueDepth(cpus: plan.cpus.wholeCPUs)) } catch {
            queue.abandon()
            throw error
        }
        defer { pictures.stop() }
        let input = FileInput(pictures: pictures, swaps: o.swaps, controls: controls, expected: back.declaredDuration.map(clock.frameCount),
                              soundFailure: { track?.failure }, progress: progress)
        onStart()
        let loop = RecordLoop(.init(fps: fps, duration: nil, swapped: false, maxEncoderLag: 1, keepsEveryFrame: false,
                                    controls: controls, clock: MonotonicClock.shared),
                              input: input, queue: queue, outputs: outputs,
                              placement: InsetPlacement(compositor: compositor, threads: plan.compositorThreads)) { _ in }
        loop.run()
        let frames = loop.timeline.clock.next
        if let failure = input.failure ?? (loop.timeline.stoppedAt != nil ? .interrupted : nil) {
            queue.abandon()
            throw failure
        }
        try queue.finish(lastSlot: frames - 1, patience: nil)
        if let failure = track?.failure { throw failure }
        try file.finishWriting()
        written = frames
        return ComposeSummary(frames: frames, duration: clock.time(ofFrame: frames), audioSamples: file.soundSamplesWritten,
                              audioSource: soundName, seconds: Date().timeIntervalSince(started),
                              composedInPlace: loop.counts.composedInPlace, plan: plan,
                              warnings: [back, front].filter { $0.damagedPackets > 0 }.map {
                                  "\($0.path): \($0.damagedPackets) damaged video packet(s) skipped"
                              } + [back, front].filter(\.leftPartsOutside).map {
                                  "\($0.path): what it names outside its folder was left out (not read): the output lacks it"
                              } + Self.swapsNeverShown(o.swaps, named: o.swapsNamed, frames: frames, fps: clock.fps, back: o.back)
                                + Self.lengthsDiffer(frontEnd: pictures.frontEnd ?? front.declaredDuration, frames: frames,
                                                     fps: clock.fps, back: o.back, front: o.front))
    }

    /// The sound asked for (BACK's, FRONT's, the take's for `relayout`, or none), and its name.
    private func openSound(back: VideoReader, front: VideoReader) throws(MediaError) -> (AudioReader?, String) {
        let o = options
        if let take = o.soundOf {
            // BACK's timeline: a camera's own file starts with the take, frame for frame, and
            // its timeline is learnt as it is decoded (the take's own picture is never read).
            return (try AudioReader(path: take, timeline: back.timeline), "the take's")
        }
        let source: AudioReader?
        switch o.audio {
        case .back: source = try AudioReader(path: o.back, timeline: back.timeline)
        case .front: source = try AudioReader(path: o.front, timeline: front.timeline)
        case .none: source = nil
        }
        if source == nil && o.audioRequired && o.audio != .none {
            throw .noSound(path: o.audio == .back ? o.back : o.front, asked: o.audio.rawValue)
        }
        return (source, source == nil ? "silence" : o.audio.rawValue)
    }

    /// Swap times at or past the output's last frame: they never show, which a user who typed
    /// one should hear of.
    static func swapsNeverShown(_ swaps: SwapSchedule, named: String = "--swap-at", frames: Int, fps: Int, back: String) -> [String] {
        let end = Double(frames) / Double(fps)
        return swaps.times.filter { ($0 * Double(fps)).rounded(.up) >= Double(frames) }.map {
            String(format: "%@ %g is at or past the end of %@ (%.2f s): it never shows", named, $0, back, end)
        }
    }
}

extension ComposeJob {
    /// FRONT and BACK of lengths over half a second apart. FRONT shorter: its last picture
    /// holds to the end (as ffmpeg's overlay does), which looks like a frozen camera to
    /// whoever did not know; longer: the output ends with BACK, and FRONT's end is left out.
    static func lengthsDiffer(frontEnd: Double?, frames: Int, fps: Int, back: String, front: String) -> [String] {
        let end = Double(frames) / Double(fps)
        guard let frontEnd, abs(end - frontEnd) > 0.5 else { return [] }
        if frontEnd < end {
            return [String(format: "%@ ends at %.2f s, %.2f s before the output: its last picture holds from there",
                           front, frontEnd, end - frontEnd)]
        }
        return [String(format: "%@ lasts %.2f s, the output %.2f s: it ends with %@ (BACK sets the length), "
                       + "the rest of %@ is left out", front, frontEnd, end, back, front)]
    }
}

/// Which pictures of two decoded files meet at each output frame (as FFmpeg's framesync
/// decides for its filters): the newest of each due by the frame's time. BACK sets the
/// length: once it ends, the output ends with BACK's last picture's duration; FRONT holds
/// its last picture.
final class FilePictures {
    let clock: FrameClock
    private let backPictures: DecodeAhead, frontPictures: DecodeAhead
    private(set) var back: VideoPicture, front: VideoPicture
    private var backNext: VideoPicture?, frontNext: VideoPicture?
    /// Frames in the output, once BACK's end is known.
    private(set) var total: Int?
    /// Where FRONT's last picture ends, once the output has reached it.
    var frontEnd: Double? { frontNext == nil ? front.time + front.duration : nil }

    /// `depth`: how many pictures of each are decoded ahead.
    init(back: VideoReader, front: VideoReader, clock: FrameClock, depth: Int) throws(MediaError) {
        self.clock = clock
        backPictures = DecodeAhead(back, depth: depth)
        frontPictures = DecodeAhead(front, depth: depth)
        do {
            // next() throws when a stream has no frame at all
            self.back = try backPictures.next()!
            backNext = try backPictures.next()
            self.front = try frontPictures.next()!
            frontNext = try frontPictures.next()
        } catch {
            backPictures.stop()
            frontPictures.stop()
            throw error
        }
    }

    func stop() {
        backPictures.stop()
        frontPictures.stop()
    }

    /// Makes `back` and `front` the pictures output frame `n` shows; false when the output
    /// has ended before `n`.
    func advance(toFrame n: Int) throws(MediaError) -> Bool {
        while let b = backNext, clock.isDue(b.time, byFrame: n) {
            back = b
            backNext = try backPictures.next()
        }
        if backNext == nil && total == nil { total = clock.frameCount(forDuration: back.time + back.duration) }
        if let total, n >= total { return false }
        while let f = frontNext, clock.isDue(f.time, byFrame: n) {
            front = f
            frontNext = try frontPictures.next()
        }
        return true
    }
}
