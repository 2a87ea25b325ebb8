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
/// ends). Audio follows the picture sample for sample, so both tracks end together.
public final class ComposeJob {
    public let options: ComposeOptions
    /// Polled between frames; true abandons the job (and its temporary file).
    public var isCancelled: () -> Bool = { false }
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
        let depth = StagePlan.composeQueueDepth(cpus: plan.cpus.wholeCPUs)
        let sink = EncodingStage(sink: file, canvas: o.video.size, depth: depth)
        defer { sink.stop() }
        let context = OutputContext(settings: settings, sources: [], encoders: nil, event: { _ in }, log: { _ in })
        let outputs = try o.outputs.map { request throws(MediaError) in try request.open(context) }
        var written: Int?
        defer { for output in outputs { _ = output.finish(lastSlot: written.map { $0 - 1 }) } }
        let clock = FrameClock(fps: Int(o.video.framesPerSecond))
        let pictures = try FilePictures(back: back, front: front, clock: clock, depth: depth)
        defer { pictures.stop() }
        let audio = SoundFollower(source: sound, samplesPerFrame: Int(OutputAudio.sampleRate) / clock.fps)
        onStart()
        let (frames, composedInPlace) = try composeFrames(pictures, step: FrameStep(compositor: compositor), into: sink,
                                                          audio: audio, outputs: outputs,
                                                          expected: back.declaredDuration.map(clock.frameCount))
        try audio.end(at: frames, into: sink)
        try sink.finishWriting()
        written = frames
        return ComposeSummary(frames: frames, duration: clock.time(ofFrame: frames), audioSamples: sink.soundSamplesWritten,
                              audioSource: soundName, seconds: Date().timeIntervalSince(started),
                              composedInPlace: composedInPlace, plan: plan,
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

    /// Every output frame: the pictures that meet there (`FilePictures`), the roles the
    /// timeline gives it (the --swap-at schedule is its swap events), composed and written
    /// with the sound that goes with it, and offered to the outputs. Returns the frames
    /// written and how many took the inset in place.
    private func composeFrames(_ pictures: FilePictures, step: FrameStep, into sink: EncodingStage, audio: SoundFollower,
                               outputs: [any LiveOutput], expected: Int?) throws(MediaError) -> (Int, Int) {
        var timeline = Timeline(fps: pictures.clock.fps, duration: nil, layout: options.layout, swapped: false)
        var n = 0, composedInPlace = 0
        while true {
            if isCancelled() { throw .interrupted }
            let more: Bool
            // A stop interrupts the inputs' reads: what they then fail with is the stop.
            do { more = try pictures.advance(toFrame: n) } catch { throw isCancelled() ? .interrupted : error }
            guard more else { break }
            if options.swaps.isSwapped(frame: n, fps: pictures.clock.fps) != timeline.swapAsked {
                _ = timeline.take([.swap], now: pictures.clock.time(ofFrame: n))
            }
            let newMain = timeline.swapAsked ? pictures.front : pictures.back
            let swapped = timeline.roles(newMainReduction: newMain.reduction, newMainIsInsetOnly: newMain.isInsetOnly).showing
            let (frame, inPlace) = try step.frame(back: pictures.back, front: pictures.front, swapped: swapped,
                                                  canvas: { () throws(MediaError) in try sink.canvas() })
            if inPlace { composedInPlace += 1 }
            for output in outputs { output.offer(frame.view, recording: true) }
            try sink.write(frame: frame, index: Int64(n))
            try audio.follow(frame: n, into: sink)
            n += 1
            progress(n, pictures.total ?? expected)
        }
        return (n, composedInPlace)
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

/// The composition's sound, sample for sample with the picture: after each frame, as much
/// as the frames so far last; at the end, exactly that much (silence where the source has
/// none).
struct SoundFollower {
    let source: AudioReader?
    let samplesPerFrame: Int
    private let queue = SampleQueue()

    init(source: AudioReader?, samplesPerFrame: Int) {
        self.source = source
        self.samplesPerFrame = samplesPerFrame
    }

    /// Writes the sound up to the end of frame `n`.
    func follow(frame n: Int, into sink: any Sink) throws(MediaError) {
        try pull(until: (n + 1) * samplesPerFrame - Int(sink.soundSamplesWritten))
        try sink.write(sound: queue, final: false)
    }

    /// Writes the rest: the sound ends exactly where the picture does, after `frames` frames.
    func end(at frames: Int, into sink: any Sink) throws(MediaError) {
        let missing = frames * samplesPerFrame - Int(sink.soundSamplesWritten)
        try pull(until: missing)
        queue.drop(queue.count - missing)
        try sink.write(sound: queue, final: true)
    }

    /// Makes the queue hold `count` samples: decoded sound while there is some, silence after.
    private func pull(until count: Int) throws(MediaError) {
        guard count > queue.count else { return }
        try source?.fill(queue, upTo: count)
        if queue.count < count { queue.appendSilence(count - queue.count) }
    }
}
