import Compositor
import Foundation
import MediaIO

/// What the one who started a recording hears of it: lines for the log (from any thread),
/// a status a few times a second, and its start and its end.
package protocol RecordObserver: AnyObject, Sendable {
    func said(_ line: String)
    func status(_ status: RecordStatus)
    /// The sources and the sound are open; the take's file is made next. Until then nothing
    /// has a name on disk, and an open may block for ever (a named pipe no one writes).
    func sourcesOpened()
    /// The sources, the file and the outputs are open; the recording starts.
    func willStart()
    /// The recording has stopped; the file is being finished.
    func willFinish()
    /// After the stop, the intermediate's pictures being encoded: `done` of `total` (0 when
    /// not known), `seconds` since that began.
    func encodingAfterStop(done: Int, total: Int, seconds: Double)
}

/// Records picture-in-picture from two live sources, as a `RecordPlan` says. It opens, in
/// this order, the take's file (claimed before anything else), the sound, the sources, the
/// encoding and the outputs; `RecordLoop` then fills the slots from its `LiveInput` (the back source drives the
/// clock; a source that fails, ends or goes quiet is dropped and the other goes on alone),
/// and `finish` leaves the file regular after a clean stop, fragmented and playable after a
/// failure, and each output finished its own way.
package final class Recorder: Sendable {
    package let plan: RecordPlan
    package let controls: ControlInbox
    let observer: any RecordObserver
    /// The time the recording runs on (a virtual one in tests).
    let clock: any EngineClock
    /// The lines that go in the summary too (the stream's thread says things as well).
    private let events = Locked<[String]>([])

    /// Free space under this many seconds of recording is worth a warning at the start.
    static let warnBelowSeconds = 600.0

    package init(plan: RecordPlan, controls: ControlInbox, observer: any RecordObserver,
                 clock: any EngineClock = MonotonicClock.shared) {
        self.plan = plan
        self.controls = controls
        self.observer = observer
        self.clock = clock
    }

    /// A line for the log and the summary.
    func event(_ s: String) {
        events.withLock { $0.append(s) }
        observer.said(s)
    }

    /// A line for the log alone.
    func log(_ s: String) { observer.said(s) }

    var eventsSoFar: [String] { events.withLock { $0 } }

    /// What a recording runs with, once opened.
    struct Opened {
        var sources: SourceSet
        var encoding: Encoding
        var outputs: [any LiveOutput]
        var audio: (any SoundSource)?
    }

    /// The take's encoding: into the file, or (no file) for an output that sends it, or for
    /// nothing; and the queue the composing thread hands frames to.
    struct Encoding {
        var file: RecordingFile?
        var sink: any Sink
        /// The file's sink when every frame is kept (`--encode auto` or `after`).
        var keeping: KeepingSink?
        var encoders: OutputEncoders?
        var queue: EncodeQueue
    }

    package func run() throws(RecordError) -> RecordSummary {
        events.withLock { $0 = [] }
        // Before any device is opened: OUT taken (or being written by another dualcam) is the
        // one line there is, and from here on no other dualcam takes it.
        var claim: OutputClaim?
        if let file = plan.file {
            do { claim = try OutputClaim(path: file, overwrite: plan.overwrite) } catch { throw .media(error) }
            // An earlier take's end, not yet encoded: recording over it would lose it.
            let rest = Intermediate.path(for: file)
            if OutputPath.entry(rest) != nil { throw .media(IntermediateFile.leftOver(rest, take: file)) }
        }
        do throws(MediaError) {
            for request in plan.outputs { try request.check(plan.outputSettings, { [self] in log($0) }) }
            try checkFileSound()
        } catch { throw .media(error) }
        // A device the user named first: a wrong --audio fails before anything else happens.
        // The default one after the cameras, so that no camera is the one line there is.
        let named = plan.audio.opensBeforeCameras ? try openAudio(sources: []) : nil
        let opened = try openSources()
        let audio = plan.audio.opensBeforeCameras ? named : try openAudio(sources: opened)
        observer.sourcesOpened()
        let compositor: PiPCompositor
        do { compositor = try PiPCompositor(layout: plan.layout, threads: plan.stagePlan.compositorThreads) } catch {
            throw .media(.cannotCompose(reason: error.description))
        }
        let encoding = try openEncoding(claim: claim)
        let outputs = try openOutputs(sources: opened, encoding: encoding)
        if let file = plan.file { warnIfShortOfSpace(file, besides: outputs) }
        encoding.queue.liveAudio = audio
        if let audio {
            let kind = audio.kind
            audio.onLost = { [weak self] why in self?.log("\(kind) lost (\(why)): recording goes on with silence") }
        }
        observer.willStart()
        return try record(Opened(sources: SourceSet(opened, clock: clock), encoding: encoding, outputs: outputs, audio: audio),
                          placement: InsetPlacement(compositor: compositor, threads: plan.stagePlan.compositorThreads))
    }

    /// The recording itself, from what is open to the summary: the loop, then the stop's
    /// work. A test hands it fake sources and sinks on a virtual clock.
    func record(_ opened: Opened, placement: InsetPlacement) throws(RecordError) -> RecordSummary {
        let settings = RecordLoop.Settings(fps: Int(plan.video.framesPerSecond), duration: plan.duration, swapped: plan.swap,
                                           maxEncoderLag: plan.maxEncoderLag, keepsEveryFrame: opened.encoding.keeping != nil,
                                           controls: controls, clock: clock)
        let input = LiveInput(recorder: self, opened: opened)
        let loop = RecordLoop(settings, input: input, queue: opened.encoding.queue, outputs: opened.outputs, placement: placement) {
            [self] in event($0)
        }
        loop.run()
        return try finish(loop, opened)
    }

    /// Each output asked for, opened; when one cannot be, those opened are finished and the
    /// take's file removed: nothing has been recorded.
    private func openOutputs(sources: [any FrameSource], encoding: Encoding) throws(RecordError) -> [any LiveOutput] {
        let context = OutputContext(settings: plan.outputSettings, sources: sources, encoders: encoding.encoders,
                                    event: { [self] in event($0) }, log: { [self] in log($0) })
        var outputs: [any LiveOutput] = []
        for request in plan.outputs {
            do { outputs.append(try request.open(context)) } catch {
                for opened in outputs { _ = opened.finish(lastSlot: nil) }
                encoding.file?.remove()
                throw .media(error)
            }
        }
        return outputs
    }

    /// The sound of a file source is there before any camera opens.
    private func checkFileSound() throws(MediaError) {
        if case let .fileSound(back) = plan.audio, let spec = back ? plan.back : plan.front {
            guard try AudioReader.hasSound(spec) else { throw .noSound(path: spec, asked: back ? "back" : "front") }
        }
    }

    /// The file, or with none an encoding for an output that sends it (the stream), or
    /// nothing encoded; the queue in front of it, frames enough for the lag allowed (running
    /// out of them skips slots too).
    private func openEncoding(claim: OutputClaim?) throws(RecordError) -> Encoding {
        var file: RecordingFile?
        var encoders: OutputEncoders?
        var keeping: KeepingSink?
        var sink: any Sink
        do throws(MediaError) {
            if let path = plan.file {
                // The take names itself while it is recorded: its intermediate carries the same
                // name, and is never joined to another file.
                let takeID = plan.takeID, named = plan.namedMetadata
                let live = encodeMode(near: path) == .live
                let opened = try RecordingFile(path: path, overwrite: plan.overwrite, video: plan.video,
                                               metadata: named, claim: claim, live: live)
                (file, encoders, sink) = (opened, opened.encoders, opened)
                if !live {
                    do {
                        keeping = try KeepingSink(file: opened, mode: plan.encode, metadata: plan.metadata, takeID: takeID,
                                                  intermediateThreads: plan.stagePlan.intermediateThreads,
                                                  catchUpDecoderThreads: StagePlan.decoderThreads(cpus: plan.stagePlan.cpus.wholeCPUs)) { [self] in
                            noteIntermediate(decidedAt: $0, from: $1)
                        }
                    } catch {
                        opened.remove()
                        throw error
                    }
                    sink = keeping!
                }
                if let why = plan.liveBecause { event(why) }
            } else if plan.outputs.contains(where: \.needsEncoding) {
                var settings = plan.video
                settings.inOrder = true
                let streamOnly = try StreamOnlySink(settings: settings)
                (encoders, sink) = (streamOnly.encoders, streamOnly)
            } else {
                sink = DiscardingSink()
            }
        } catch { throw .media(error) }
        let fps = Int(plan.video.framesPerSecond)
        let depth = encoders == nil ? 4 : max(32, Int(plan.maxEncoderLag * Double(fps)) + 2)
        do {
            // Encoding the take itself (live), its thread yields to the picture's; feeding the
            // intermediate, it must not.
            let queue = try EncodeQueue(sink: sink, canvas: plan.layout.canvas, depth: depth, fps: fps,
                                        lowered: file != nil && keeping == nil, clock: clock)
            return Encoding(file: file, sink: sink, keeping: keeping, encoders: encoders, queue: queue)
        } catch {
            file?.remove()
            throw .media(error)
        }
    }

    /// `--encode` as it can be carried out here: `auto` records live where the disk has room
    /// for little of the intermediate (it takes several times what the take's own encoding
    /// does), and says so; `after` was asked for, and is kept.
    private func encodeMode(near path: String) -> EncodeMode {
        guard plan.encode == .auto, let free = RecordingFile.freeBytes(near: path),
              Double(free) < Self.intermediateBytesPerSecond(plan.video) * Self.intermediateRoomSeconds else { return plan.encode }
        event(String(format: "only %.0f MB free: encoding live, with no intermediate to fall back on (frames are skipped if the "
                     + "encoder cannot keep up)", Double(free) / 1e6))
        return .live
    }

    /// What the intermediate takes, generously (1080p30 camera pictures at crf 17 took 3-6 MB/s),
    /// and how much of it there must be room for before `auto` counts on it.
    package static let intermediateBytesPerSecond1080p30 = 8e6

    /// The same for `video`'s size and rate, by its pixels per second, never under the 1080p30
    /// figure (a 4K take's plan said the 1080p figure).
    package static func intermediateBytesPerSecond(_ video: VideoEncoderSettings) -> Double {
        let pixelsPerSecond = Double(video.size.width * video.size.height) * Double(video.framesPerSecond)
        return intermediateBytesPerSecond1080p30 * max(1, pixelsPerSecond / (1920 * 1080 * 30))
    }
    static let intermediateRoomSeconds = 120.0

    /// The line that says the take goes on in the intermediate: when the encoder was found
    /// behind, and the first picture the intermediate holds (those it had not finished).
    private func noteIntermediate(decidedAt slot: Int, from first: Int) {
        guard let file = plan.file else { return }
        // Named as the take is (a folder given, a folder shown), as every other line names it.
        let name = Intermediate.path(for: file)
        if plan.encode == .after {
            event("every frame goes to \(name) (H.264), encoded to \(plan.video.encoderDisplayName) after the stop (--encode after)")
        } else {
            let fps = Double(plan.video.framesPerSecond)
            // The frames it had not taken when it was found behind go there too: "at 0.67 s ...
            // from 0.00 s" read as a contradiction to a new user.
            let waiting = first < slot ? ", the frames it had not taken yet included" : ""
            event(String(format: "at %.2f s the %@ encoder fell behind real time: the take goes on in %@ from %.2f s%@ (H.264, "
                         + "every frame kept); the encoder works through it as fast as it can, and what it has not reached when "
                         + "the take stops is encoded after the stop", Double(slot) / fps, plan.video.encoderDisplayName, name,
                         Double(first) / fps, waiting))
        }
    }

    /// 600 kB, 12 MB, 3.4 GB: a free-space figure as people read one.
    package static func amount(bytes: Double) -> String {
        if bytes < 1e6 { return String(format: "%.0f kB", bytes / 1e3) }
        if bytes < 1e9 { return String(format: "%.0f MB", bytes / 1e6) }
        return String(format: "%.1f GB", bytes / 1e9)
    }

    /// Counts every file the take writes: its own (or its intermediate), and those beside it
    /// (--iso's cameras' files: a 21 MB disk was said to hold "about 3 minutes" of a take
    /// whose camera files filled it in 6 s).
    private func warnIfShortOfSpace(_ path: String, besides outputs: [any LiveOutput]) {
        let own = plan.encode == .after ? Self.intermediateBytesPerSecond(plan.video) : Self.expectedBytesPerSecond(plan.video)
        let beside = outputs.reduce(0) { $0 + $1.diskBytesPerSecond }
        let bytesPerSecond = own + beside
        guard let free = RecordingFile.freeBytes(near: path),
              Double(free) < bytesPerSecond * Self.warnBelowSeconds else { return }
        let minutes = Double(free) / bytesPerSecond / 60
        event(String(format: "warning: %@ free for %@%@: %@ at the expected %.1f MB/s (finishing the file needs as much again)",
                     Self.amount(bytes: Double(free)), path, beside > 0 ? " and the files beside it" : "",
                     minutes < 1 ? String(format: "under a minute (%.0f s)", minutes * 60) : String(format: "about %.0f minutes", minutes),
                     bytesPerSecond / 1e6))
    }

    /// What the file takes per second: the --bitrate asked for, or a generous estimate of
    /// what the encoder writes at a crf (0.13 bits per pixel, as busy camera footage at crf
    /// 28 takes); plus the AAC track.
    package static func expectedBytesPerSecond(_ v: VideoEncoderSettings) -> Double {
        let video = v.bitrate.map(Double.init) ?? Double(v.size.width * v.size.height) * Double(v.framesPerSecond) * 0.13
        return video / 8 + Double(v.audioBitrate) / 8
    }

    /// A picture taken before the recording started: cameras stream from the moment they
    /// are opened (formats are checked by streaming), and their first buffers can be a
    /// second old (seen with vivid in a loaded VM). Only the last few seconds count as
    /// stale, so a camera whose stamps come from another clock is never shut out.
    static func isStale(_ timestamp: Double, startedAt: Double) -> Bool {
        timestamp < startedAt && timestamp > startedAt - 5
    }
}
