import Compositor
import Foundation
import MediaIO

public struct RecordOptions: Sendable {
    /// `-o none`: no file, the pictures only shown (the virtual camera, the preview).
    public static let noFile = "none"

    /// A V4L2 device path or a video file; nil picks the first capture device.
    public var back: String?
    /// As `back`; nil picks the next capture device, if there is one.
    public var front: String?
    public var output: String
    public var duration: Double?
    /// How many seconds of slots the encoder may fall behind before slots are skipped (a
    /// test knob: the emulated VM's shared folder stalls writes for a second now and then).
    public var maxEncoderLag = 1.0
    /// The size asked of the cameras: the output's by default, so the main picture is not
    /// scaled up. `captureGiven`: the user asked for it, and it is kept even when slow.
    public var capture = Size(width: 1920, height: 1080)
    public var captureGiven = false
    public var framesPerSecond = 30.0
    public var swap = false
    public var audio = AudioInput.systemDefault
    /// Use only this pixel format (e.g. MJPEG on a bus too slow for two uncompressed streams).
    public var pixelFormat: FourCC?
    public var layout = PiPLayout()
    public var video = VideoEncoderSettings()
    public var overwrite = false
    public var metadata = MovWriter.Metadata()
    /// Where the recording is also sent live (`--stream srt://...`), if anywhere.
    public var stream: String?
    /// Each camera's own picture kept beside the take too (`--iso`).
    public var iso = false
    /// Camera controls to set when each camera opens (`--control back:brightness=200`).
    public var backControls: [ControlSetting] = []
    public var frontControls: [ControlSetting] = []
    /// Controls saved per camera, applied when it opens; nil applies none.
    public var controlStore: ControlStore? = ControlStore.standard()
    public init(output: String) { self.output = output }
    /// Whether a file is written (not `-o none`).
    public var writesFile: Bool { output != Self.noFile }
}

/// Where the sound comes from.
public enum AudioInput: Sendable, Equatable {
    /// A silent track.
    case none
    /// The system's default capture device: ALSA's `default`, which on a PipeWire or
    /// PulseAudio desktop is the sound server (shared with every other program); when that
    /// cannot be opened, the first capture device there is; a silent track when there is none.
    case systemDefault
    /// This ALSA device (`hw:1`, `plughw:CARD=C920`, `pipewire`), or fail.
    case device(String)
    /// The sound track of the file given as --back (`back`) or --front, played with its
    /// picture: in sync as in the file.
    case fileSound(back: Bool)

    /// Opened before the cameras (a wrong device name is then the one line there is).
    var opensBeforeCameras: Bool {
        if case .device = self { return true }
        return self == .none
    }
}

public struct RecordSummary: Sendable, Codable {
    public var output: String
    public var frames: Int
    public var seconds: Double
    public var singleCamera: Bool
    public var sources: [String]
    public var latencyP50Ms: Double
    public var latencyP99Ms: Double
    public var latencyMaxMs: Double
    /// Output frames that repeat the previous back picture (the camera was slower than 30 fps).
    public var repeatedFrames: Int
    /// Back pictures captured but not shown (the camera was faster than 30 fps, or the encoder behind).
    public var droppedBackFrames: Int
    /// Frames the cameras' drivers report lost (gaps in buffer sequence numbers) or damaged.
    public var cameraDroppedFrames: Int
    /// Of those, frames skipped as damaged: flagged by the driver, cut short, or JPEGs that
    /// would not decode (an MJPEG file's too). None is shown.
    public var cameraDamagedFrames: Int
    /// Times a camera that had gone (unplugged) was found and reopened.
    public var cameraReopened: Int
    /// Camera buffers whose driver stamp lay after they were received (or long before):
    /// timed by when they arrived instead, so latency is never negative.
    public var cameraUntrustedStamps: Int
    /// Output frames whose main picture took the inset where it was captured, with no copy.
    public var composedInPlace: Int
    /// Slots skipped because the encoder was behind (slower than real time, see `skipped`):
    /// the picture before holds longer, the sound is untouched, time and sync are kept.
    public var encoderSkippedFrames: Int
    /// Samples the live audio gained (positive) or lost (negative) to follow the cameras'
    /// clock: a microphone whose clock runs 0.1 % fast loses 48 per second.
    public var audioDriftCorrection: Int
    /// Samples of silence put in where the microphone lost sound (overruns, stalls).
    public var audioSilenceInserted: Int
    public var events: [String]
    /// The virtual camera written beside the file, if one was.
    public var virtualCamera: VirtualCameraSummary?
    /// The live stream sent beside the file, if one was.
    public var stream: LiveStreamSummary?
    /// The cameras' own files written beside it (`--iso`), and the file with the swaps.
    public var isoFiles: [String]?
    /// Times the recording was paused, and the time those pauses left out of the file.
    public var pauses: Int
    public var pausedSeconds: Double
}

public struct VirtualCameraSummary: Codable, Sendable {
    public var device: String
    /// Frames written to it, and frames it skipped (no room, or a newer frame came first).
    public var framesWritten: Int
    public var framesSkipped: Int
    /// Why it stopped being written to, if it did (the recording went on).
    public var failure: String?
}

public enum RecordError: Error, CustomStringConvertible {
    case noCamera(String)
    case media(MediaError)
    /// The recording stopped before its first frame: there is no file.
    case nothingRecorded(String)
    /// The recording was cut short by a failure; what was recorded is kept at `path`.
    case cutShort(path: String, seconds: Double, reason: String)
    /// Recorded in full, but the regular file could not be written: the fragmented one is kept.
    case notFinalized(path: String, seconds: Double, reason: String)

    public var description: String {
        switch self {
        case let .noCamera(why): return why
        case let .media(e): return e.description
        case let .nothingRecorded(why): return "\(why): nothing recorded, no file written"
        case let .cutShort(path, seconds, reason):
            return String(format: "%@; recording stopped at %.1f s, ", reason, seconds) + Self.keptFragmented(path)
        case let .notFinalized(path, seconds, reason):
            return String(format: "recorded %.1f s but could not finish the file (%@); ", seconds, reason)
                + Self.keptFragmented(path)
        }
    }

    static func keptFragmented(_ path: String) -> String {
        "it is kept at \(path) as a fragmented file that plays as it is (`dualcam finish \(path)` makes it a regular one)"
    }
}

/// Records picture-in-picture from two live sources. The back source drives the clock (see
/// `SlotClock`), with the newest front frame in the inset; a source that fails, ends or
/// sends nothing for a second is dropped and the other goes on alone (`SourceSet`). The file
/// is crash-safe while recording and regular once stopped (`RecordingFile`).
public final class Recorder {
    public let options: RecordOptions
    public var log: (String) -> Void = { _ in }
    public var shouldStop: () -> Bool = { false }
    /// How many swap requests (SIGUSR1, `s`) have come in so far.
    public var swapRequests: () -> Int = { 0 }
    /// How many pause and resume requests (SIGUSR2, `p`) have come in so far: odd is paused.
    public var pauseRequests: () -> Int = { 0 }
    /// The corner the inset was last moved to (a drag in the preview), if it was.
    public var cornerRequest: () -> Corner? = { nil }
    /// Called once the recording has stopped and the file is being finished.
    public var willFinalize: () -> Void = {}
    /// Told how the recording is going, a few times a second (`RecordStatus`).
    public var status: (RecordStatus) -> Void = { _ in }
    /// Shown every composed picture (the preview window).
    public var preview: PictureObserver?
    /// Given every composed picture too, as it is made (not as the encoder takes it).
    public var virtualCamera: VirtualCamera?
    /// Sent the file's encoded packets as they are made (`options.stream`).
    private var stream: LiveStream?
    /// Each camera's own picture, slot by slot (`options.iso`).
    private var iso: IsoRecording?
    /// Called once the sources and the file are open, just before recording starts.
    public var willStart: () -> Void = {}

    /// Free space under this many seconds of recording is worth a warning at the start.
    static let warnBelowSeconds = 600.0

    private var events: [String] = []
    /// The live stream's thread says things too.
    private let eventsLock = NSLock()
    private func event(_ s: String) {
        eventsLock.withLock { events.append(s) }
        log(s)
    }

    public init(options: RecordOptions) { self.options = options }

    func makeSource(_ spec: String, controls: [ControlSetting]) -> any FrameSource {
        var st = stat()
        // A named pipe is a stream another program writes (ffmpeg, a network receiver): a file.
        if stat(spec, &st) == 0 && [S_IFREG, S_IFIFO].contains(st.st_mode & S_IFMT) { return FileSource(path: spec, log: log) }
        let request = FormatNegotiation.Request(size: options.capture, framesPerSecond: options.framesPerSecond,
                                                sizeGiven: options.captureGiven)
        return CameraSource(path: spec, request: request, only: options.pixelFormat, controls: controls,
                            store: options.controlStore, log: log)
    }

    /// What the loop that fills the slots counted.
    struct Counts {
        var latencies: [Double] = []
        var repeated = 0, droppedBack = 0, encoderSkipped = 0, composedInPlace = 0
        var swapsSeen = 0
        var swap = SwapPolicy()
        var backlog = EncoderBacklog()
        var fullFrame = ""
        var reporter = StatusReporter()
        var pause = PauseState()
        /// Where the inset is, and the frame step that draws it there.
        var placement: InsetPlacement
    }

    /// Where a pause stands. Pictures keep coming while paused (shown in the preview and the
    /// virtual camera, not recorded); the recording goes on with the first picture taken
    /// after the resume was asked for.
    struct PauseState {
        /// Monotonic time the pause was noticed, while paused.
        var since: Double?
        /// Monotonic time the resume was asked for, until a picture taken since comes.
        var resumeAskedAt: Double?
        var pauses = 0
        /// Time left out of the file by pauses that have ended.
        var seconds = 0.0
        var isPaused: Bool { since != nil }
    }

    public func run() throws(RecordError) -> RecordSummary {
        events = []
        // Before any device is opened: OUT taken (or being written by another dualcam) is the
        // one line there is, and from here on no other dualcam takes it.
        var claim: OutputClaim?
        if options.writesFile {
            do { claim = try OutputClaim(path: options.output, overwrite: options.overwrite) } catch { throw .media(error) }
        }
        if options.iso {
            do throws(MediaError) { try IsoRecording.check(output: options.output, overwrite: options.overwrite) } catch {
                throw .media(error)
            }
        }
        // The sound of a file source: there before any camera opens.
        if case let .fileSound(back) = options.audio, let spec = back ? options.back : options.front {
            do throws(MediaError) {
                guard try AudioReader.hasSound(spec) else { throw .noSound(path: spec, asked: back ? "back" : "front") }
            } catch { throw .media(error) }
        }
        // A device the user named first: a wrong --audio fails before anything else happens.
        // The default one after the cameras, so that no camera is the one line there is.
        let named = options.audio.opensBeforeCameras ? try openAudio(sources: []) : nil
        let opened = try openSources()
        let sources = SourceSet(opened)
        iso = options.iso ? IsoRecording(options: options, sources: opened, log: event) : nil
        let liveAudio = options.audio.opensBeforeCameras ? named : try openAudio(sources: opened)
        let compositor: PiPCompositor
        do { compositor = try PiPCompositor(layout: options.layout, threads: 2) } catch {
            throw .media(.encoderFailed(name: "compositor", reason: error.description))
        }
        var file: RecordingFile?
        // With no file but a stream, the recording is encoded for the stream alone.
        var streamOnly: StreamOnlySink?
        if options.writesFile {
            do { file = try RecordingFile(options: options, claim: claim) } catch { throw .media(error) }
            warnIfShortOfSpace()
        } else if options.stream != nil {
            var settings = options.video
            settings.inOrder = true
            do { streamOnly = try StreamOnlySink(settings: settings) } catch { throw .media(error) }
        }
        if let url = options.stream, let encoders = file?.encoders ?? streamOnly?.encoders {
            do {
                let parameters = try StreamParameters(encoders: encoders)
                let live = try LiveStream(url: url, parameters: parameters, log: event)
                encoders.packetTap = { packet, isVideo in
                    if let kept = StreamPacket(referencing: packet, isVideo: isVideo, parameters: parameters) { live.offer(kept) }
                }
                live.start()
                stream = live
            } catch {
                file?.remove()
                throw .media(error)
            }
        }
        defer { stream?.stop() }
        let fps = Int(options.video.framesPerSecond)
        let queue: EncodeQueue
        // Frames enough for the lag allowed: running out of them skips slots too. With
        // nothing to encode (no file, no stream) a few frames go round.
        let encoded: (any Sink)? = file ?? streamOnly
        let sink: any Sink = encoded ?? DiscardingSink()
        let depth = encoded == nil ? 4 : max(32, Int(options.maxEncoderLag * Double(fps)) + 2)
        do {
            queue = try EncodeQueue(sink: sink, canvas: options.layout.canvas, depth: depth, fps: fps)
        } catch {
            file?.remove()
            throw .media(error)
        }
        queue.liveAudio = liveAudio
        if let liveAudio {
            let kind = liveAudio.kind
            liveAudio.onLost = { [weak self] why in self?.log("\(kind) lost (\(why)): recording goes on with silence") }
        }

        willStart()
        var clock = SlotClock(fps: fps, duration: options.duration)
        var counts = Counts(placement: InsetPlacement(compositor: compositor, threads: 2))
        counts.latencies.reserveCapacity(clock.limit.map { min($0, 1 << 20) } ?? 18000)
        // The microphone runs from here: the file starts with the first picture taken after
        // this instant, so sound covers it from its first frame.
        liveAudio?.start()
        let startedAt = monotonicNow()
        sources.startAll()
        fillSlots(&clock, &counts, sources: sources, queue: queue, startedAt: startedAt,
                  audio: liveAudio, file: file)
        for name in sources.stopAll() {
            event(String(format: "%@: its capture thread did not stop within %.0f s (stuck in a read that does not return); the file is "
                         + "finished without it", name, SourceFeed.stopTimeout))
        }
        stopAudio(liveAudio, end: clock.origin.map { $0 + clock.seconds })
        var isoFiles: [String]?
        if let iso {
            if clock.next == 0 { iso.remove() } else { isoFiles = iso.finish(lastSlot: clock.next - 1) }
        }
        if let file { try close(file, queue: queue, clock: clock) } else { try close(queue, sink: sink, clock: clock) }
        // The file is whole: what the stream still holds goes out (within its time limits).
        stream?.stop()
        if queue.lastSlotRefilled { counts.encoderSkipped -= 1 }
        var result = summary(clock: clock, counts: counts, sources: sources.all, audio: liveAudio)
        result.isoFiles = isoFiles.map { $0 + [IsoRecording.sidecar(for: options.output)] }
        return result
    }

    private func openAudio(sources: [any FrameSource]) throws(RecordError) -> (any SoundSource)? {
        let live: LiveAudio
        switch options.audio {
        case .none: return nil
        case let .fileSound(back):
            let spec = back ? options.back : options.front
            guard let file = sources.lazy.compactMap({ $0 as? FileSource }).first(where: { $0.path == spec }) else {
                throw .media(.cannotOpen(path: spec ?? (back ? "--back" : "--front"),
                                         reason: "--audio \(back ? "back" : "front") records the sound of a file given as "
                                         + "--\(back ? "back" : "front"), and it did not open"))
            }
            let sound: FileSound
            do { sound = try FileSound(source: file) } catch { throw .media(error) }
            log("sound: \(sound.kind), in sync with its picture")
            return sound
        case let .device(device):
            do { live = try LiveAudio(device: device) } catch { throw .media(error) }
        case .systemDefault:
            guard let found = openDefaultAudio() else { return nil }
            live = found
        }
        let f = live.capture.deviceFormat
        log("\(live.capture.device): \(f)" + (live.capture.converts ? ", converted to 48 kHz \(live.capture.channels == 1 ? "mono" : "stereo")" : "")
            + (live.capture.hasCard ? "" : " (no sound card behind it: a sound server)"))
        return live
    }

    /// ALSA's `default`, else the first capture device that opens; nil (having said so in
    /// one line) when there is none: the recording goes on with a silent track.
    private func openDefaultAudio() -> LiveAudio? {
        let why: String
        do { return try LiveAudio(device: "default") } catch {
            if case let .cannotOpen(_, reason) = error { why = reason } else { why = error.description }
        }
        var tried: [String] = []
        for d in ALSADevices.list() where !d.busy {
            if let live = try? LiveAudio(device: d.device) {
                event("microphone: ALSA's default device cannot be opened (\(why)): recording \(d.device) (\(d.card))")
                return live
            }
            tried.append(d.device)
        }
        let others = tried.isEmpty ? "no other capture device" : "nor can \(tried.joined(separator: ", "))"
        event("no microphone: ALSA's default device cannot be opened (\(why)) and \(others): "
              + "recording a silent track (--audio DEVICE picks one; `dualcam devices` lists them; --audio none is silent without this line)")
        return nil
    }

    /// The sources asked for, or the first capture devices; those that cannot be opened are
    /// reported and left out.
    private func openSources() throws(RecordError) -> [any FrameSource] {
        var specs: [String] = []
        if options.back == nil || options.front == nil {
            let found = V4L2Device.list().map(\.path).filter { $0 != options.back && $0 != options.front }
            // The back camera first: the first found when none is named.
            specs = [options.back ?? found.first, options.front ?? found.dropFirst(options.back == nil ? 1 : 0).first]
                .compactMap { $0 }
        } else {
            specs = [options.back!, options.front!]
        }
        var sources: [any FrameSource] = []
        for (role, spec) in specs.enumerated() {
            let s = makeSource(spec, controls: role == 0 && (options.back != nil || spec != options.front)
                               ? options.backControls : options.frontControls)
            do {
                try s.open()
                sources.append(s)
            } catch {
                // One named and wrong fails the recording: single-camera mode is for a second
                // camera that is not there, not for a name that is mistyped or taken.
                if spec == options.back || spec == options.front {
                    throw .noCamera("--\(spec == options.back ? "back" : "front") \(spec): \(error)")
                }
                event("cannot use \(spec): \(error)")
            }
        }
        guard !sources.isEmpty else {
            throw .noCamera(specs.isEmpty ? Self.noCameraFound(lockedOut: V4L2Device.nodesWithoutPermission())
                            : "no usable camera: " + events.joined(separator: "; "))
        }
        if sources.count == 1 { event("single-camera mode: recording \(sources[0].name) alone") }
        for s in sources {
            let note = (s as? CameraSource)?.choiceNote
            if let note, note.isWarning {
                log("\(s.name): \(s.format)")
                event(note.text)
            } else {
                log("\(s.name): \(s.format)" + (note.map { " (\($0.text))" } ?? ""))
            }
        }
        return sources
    }

    /// Why no camera was found, and what to do about it.
    static func noCameraFound(lockedOut: [String]) -> String {
        if lockedOut.isEmpty {
            return "no camera found (no V4L2 capture device): plug one in, or give --back FILE to record a file as a camera"
        }
        return "no camera found: \(lockedOut.joined(separator: ", ")) cannot be opened by this user: is the user in the "
            + "'video' group? (`sudo usermod -aG video $USER`, then log in again)"
    }

    /// A picture taken before the recording started: cameras stream from the moment they
    /// are opened (formats are checked by streaming), and their first buffers can be a
    /// second old (seen with vivid in a loaded VM). Only the last few seconds count as
    /// stale, so a camera whose stamps come from another clock is never shut out.
    static func isStale(_ timestamp: Double, startedAt: Double) -> Bool {
        timestamp < startedAt && timestamp > startedAt - 5
    }

    private func warnIfShortOfSpace() {
        let bytesPerSecond = Self.expectedBytesPerSecond(options.video)
        guard let free = RecordingFile.freeBytes(near: options.output),
              Double(free) < bytesPerSecond * Self.warnBelowSeconds else { return }
        event(String(format: "warning: %.0f MB free for %@: about %.0f minutes at the expected %.1f MB/s "
                     + "(finishing the file needs as much again)",
                     Double(free) / 1e6, options.output, Double(free) / bytesPerSecond / 60, bytesPerSecond / 1e6))
    }

    /// What the file takes per second: the --bitrate asked for, or a generous estimate of
    /// what the encoder writes at a crf (0.13 bits per pixel, as busy camera footage at crf
    /// 28 takes); plus the AAC track.
    static func expectedBytesPerSecond(_ v: VideoEncoderSettings) -> Double {
        let video = v.bitrate.map(Double.init) ?? Double(v.size.width * v.size.height) * Double(v.framesPerSecond) * 0.13
        return video / 8 + Double(v.audioBitrate) / 8
    }

    /// The recording itself: each new back picture fills the slots due by then, until the
    /// duration is reached, a stop is asked for, the encoder fails or no source is left.
    private func fillSlots(_ clock: inout SlotClock, _ counts: inout Counts, sources: SourceSet,
                           queue: EncodeQueue, startedAt: Double, audio: (any SoundSource)?,
                           file: RecordingFile?) {
        while !shouldStop() && !clock.isComplete {
            _ = sources.arrived.wait(timeout: .now() + 0.1)
            let at = clock.seconds
            if queue.error != nil || !sources.update(at: at, event: event) { return }
            if !counts.pause.isPaused && durationPassedWithoutCamera(clock, sources) { return }
            notePauseRequests(&clock, &counts, queue: queue)
            guard let (frame, isNew) = sources.driver.exchange.take(), isNew else { continue }
            if counts.pause.isPaused {
                if !resumes(&clock, &counts, with: frame, queue: queue) {
                    // The viewers stay live while the file waits; with none, nothing is composed.
                    if preview != nil || virtualCamera != nil {
                        _ = compose(frame, slot: clock.next, counts: &counts, sources: sources, queue: queue, recording: false)
                    }
                    reportStatus(clock, &counts, audio: audio)
                    continue
                }
            }
            if clock.origin == nil {
                if Self.isStale(frame.timestamp, startedAt: startedAt) { continue }
                queue.setOrigin(frame.timestamp)
                // Cameras can take a second or more to deliver: this is when the file starts.
                log(file != nil ? "recording to \(options.output)"
                    : stream != nil ? "streaming it, no file written (-o none)" : "showing it, no file written (-o none)")
            }
            let first = clock.next
            let (repeats, shows) = clock.due(pictureAt: frame.timestamp)
            for slot in first..<(first + repeats) where !skipped(slot, of: clock, queue: queue, counts: &counts) {
                queue.submitRepeat(index: slot)
            }
            counts.repeated += repeats + max(0, shows - 1)
            // A picture past the requested duration is not a drop.
            if repeats + shows == 0 && !clock.isComplete { counts.droppedBack += 1 }
            for slot in (first + repeats)..<(first + repeats + shows) where !skipped(slot, of: clock, queue: queue, counts: &counts) {
                guard compose(frame, slot: slot, counts: &counts, sources: sources, queue: queue,
                              recording: true) else { return }
            }
            // An OUT kept so far (--overwrite) is replaced once the take holds a picture.
            if let file, file.pending != nil { file.claimIfReady() }
            reportStatus(clock, &counts, audio: audio)
        }
    }

    /// Pauses or asks to resume when the requests say so (resuming waits for a picture).
    private func notePauseRequests(_ clock: inout SlotClock, _ counts: inout Counts, queue: EncodeQueue) {
        let asked = pauseRequests() % 2 == 1
        let now = monotonicNow()
        if asked && !counts.pause.isPaused {
            counts.pause.since = now
            counts.pause.resumeAskedAt = nil
            counts.pause.pauses += 1
            // Before the first picture there is nothing to leave out: the file starts later.
            if let origin = clock.origin { queue.pauseSound(atSlot: clock.next, at: origin + clock.seconds) }
            event(String(format: "paused at %.2f s", clock.seconds))
        } else if !asked && counts.pause.isPaused && counts.pause.resumeAskedAt == nil {
            counts.pause.resumeAskedAt = now
            queue.resumeSoundAsked(at: now)
        } else if asked && counts.pause.resumeAskedAt != nil {
            // Paused again before a picture came to resume with: still the same pause.
            counts.pause.resumeAskedAt = nil
        }
    }

    /// Whether `frame` ends the pause: it was taken after the resume was asked for. The clock
    /// then moves on so that it fills the next slot, and the sound leaves out as much.
    private func resumes(_ clock: inout SlotClock, _ counts: inout Counts, with frame: LiveFrame, queue: EncodeQueue) -> Bool {
        guard let askedAt = counts.pause.resumeAskedAt, let since = counts.pause.since,
              frame.timestamp >= askedAt - clock.frames.period / 2 else { return false }
        let left = clock.resume(at: frame.timestamp)
        queue.resumeSound(after: left)
        counts.pause.seconds += clock.origin == nil ? frame.timestamp - since : left
        counts.pause.since = nil
        counts.pause.resumeAskedAt = nil
        event(String(format: "resumed at %.2f s (%.1f s left out)", clock.seconds,
                     clock.origin == nil ? frame.timestamp - since : left))
        return true
    }

    /// Whether slot `slot` is skipped because the encoder is that far behind: not queued at
    /// all (the previous picture holds longer in the file; the sound goes on). The last slot
    /// of a recording of fixed length never is: the file ends on what was last seen.
    private func skipped(_ slot: Int, of clock: SlotClock, queue: EncodeQueue, counts: inout Counts) -> Bool {
        guard slot > 0, !clock.isLastSlot(slot) else { return false }
        let fps = Double(options.video.framesPerSecond)
        counts.backlog.note(secondsPerFrame: queue.recentSecondsPerFrame, fps: fps)
        if counts.backlog.isSlower {
            // What was queued before its speed was known (its first frames) can take it many
            // times its length.
            let dropped = queue.trim(toSeconds: EncoderBacklog.drainLimitSeconds)
            if dropped > 0 { noteSkipping(at: slot, counts: &counts); counts.encoderSkipped += dropped }
        }
        let lag = queue.lag(at: slot)
        guard counts.backlog.isFull(slots: lag.slots, seconds: lag.seconds, fps: fps, maxLag: options.maxEncoderLag)
        else { return false }
        noteSkipping(at: slot, counts: &counts)
        counts.encoderSkipped += 1
        return true
    }

    /// The one line that says frames are being skipped, the first time.
    private func noteSkipping(at slot: Int, counts: inout Counts) {
        guard counts.encoderSkipped == 0 else { return }
        event(String(format: "at %.2f s the encoder is behind (slower than real time): skipping frames "
                     + "until it catches up; the picture holds longer, the sound is untouched",
                     Double(slot) / Double(options.video.framesPerSecond)))
    }

    private func reportStatus(_ clock: SlotClock, _ counts: inout Counts, audio: (any SoundSource)?) {
        if let s = counts.reporter.due(now: monotonicNow(), frames: clock.next, fps: clock.fps, latencies: counts.latencies,
                                       repeated: counts.repeated, dropped: counts.droppedBack,
                                       encoderSkipped: counts.encoderSkipped, fullFrame: counts.fullFrame,
                                       paused: counts.pause.isPaused, stream: stream?.currentState.rawValue,
                                       audio: { audio?.takePeak() }) {
            status(s)
        }
    }

    /// A recording with a duration whose every camera is away (unplugged, being looked for)
    /// ends when that much time has passed since its start, rather than wait for ever.
    private func durationPassedWithoutCamera(_ clock: SlotClock, _ sources: SourceSet) -> Bool {
        guard let origin = clock.origin, let duration = options.duration, !sources.anyInPicture,
              monotonicNow() > origin + duration + SourceSet.lostAfter else { return false }
        event(String(format: "the %.1f s asked for have passed with no camera: finishing the file at %.2f s",
                     duration, clock.seconds))
        return true
    }

    /// Composes `frame` with the newest inset picture into slot `slot`. False when the
    /// encoder has failed.
    /// Not `recording` (paused): composed for the preview and the virtual camera alone.
    private func compose(_ frame: LiveFrame, slot: Int, counts: inout Counts, sources: SourceSet,
                         queue: EncodeQueue, recording: Bool) -> Bool {
        let fps = Double(options.video.framesPerSecond)
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
        if let asked = cornerRequest(), counts.placement.move(to: asked) {
            event(String(format: "inset moved to %@ at %.2f s", asked.rawValue, Double(slot) / fps))
        }
        let requests = swapRequests()
        let swapAsked = (requests + (options.swap ? 1 : 0)) % 2 == 1
        if requests != counts.swapsSeen, let other {
            counts.swapsSeen = requests
            let main = swapAsked ? other.name : sources.driver.name
            event(String(format: "swap at %.2f s: %@ full frame", Double(slot) / fps, main))
        }
        counts.fullFrame = swapAsked ? other?.name ?? sources.driver.name : sources.driver.name
        let newMain = swapAsked ? inset : frame
        let swapped = counts.swap.frame(asked: swapAsked, newMainReduction: newMain?.reduction,
                                        newMainIsInsetOnly: newMain?.isInsetOnly ?? false)
        assignRoles(sources, asked: swapAsked, showing: swapped, insetRect: counts.placement.layout.insetRect)
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
        if recording, let iso {
            iso.noteRoles(swapped: swapped && inset != nil, slot: slot, fps: Int(fps))
            iso.write(frame, of: sources.driver, slot: slot)
            if let inset, let other { iso.write(inset, of: other, slot: slot) }
        }
        let (picture, inPlace) = counts.placement.step.frame(back: frame, front: inset, swapped: swapped, canvas: { canvas })
        guard recording else {
            preview?.offer(picture.view)
            virtualCamera?.offer(picture.view)
            queue.giveBack(canvas)
            return true
        }
        counts.latencies.append(monotonicNow() - frame.latencyOrigin)
        if inPlace {
            counts.composedInPlace += 1
            queue.submit(index: slot, inPlace: picture, insteadOf: canvas)
        } else {
            queue.submit(index: slot, canvas: canvas)
        }
        // After the encoder has it (it only reads the picture, and only this thread takes
        // pictures from the pool to write): the preview's copy is outside the latency.
        preview?.offer(picture.view)
        virtualCamera?.offer(picture.view)
        return true
    }

    /// Tells each source its role, so one in the inset makes its pictures no larger than the
    /// inset needs. Its next frame follows. While a swap waits to show, both are full frame:
    /// the one asked for, so that its next picture can be, and the one still shown, so that
    /// its pictures stay whole until the swap shows.
    private func assignRoles(_ sources: SourceSet, asked: Bool, showing: Bool, insetRect: Rect) {
        let mains = [asked ? sources.other : sources.driver, showing ? sources.other : sources.driver]
        for case let s as any SizedByRole in sources.all {
            let isMain = mains.contains { $0 === s }
            // The cameras' own files want whole pictures, whatever the role.
            s.setRole(inset: isMain || sources.other == nil || iso != nil ? nil : insetRect)
        }
    }

    /// Lets the audio catch up with the last frame (it arrives in 10 ms periods), then stops it.
    private func stopAudio(_ live: (any SoundSource)?, end: Double?) {
        guard let live else { return }
        if let end {
            let deadline = monotonicNow() + 0.5
            while live.capturedUntil < end && !live.isLost && monotonicNow() < deadline { usleep(5_000) }
        }
        if !live.stop() {
            event(String(format: "audio: the capture thread did not stop within %.0f s (stuck in the sound driver); the "
                         + "file is finished without it", LiveAudio.stopTimeout))
        }
        if live.overruns > 0 { event("audio: \(live.overruns) overrun(s), gaps filled with silence") }
    }

    /// With no file (`-o none`): what is queued is let go, or encoded for the stream and the
    /// encoders' last frames handed to it.
    private func close(_ queue: EncodeQueue, sink: any Sink, clock: SlotClock) throws(RecordError) {
        willFinalize()
        do {
            try queue.finish(lastSlot: clock.next > 0 ? clock.next - 1 : nil)
            try sink.finishWriting()
        } catch { throw .media(error) }
        if queue.encodedFrames == 0 {
            throw .nothingRecorded(clock.origin == nil ? "no picture came from \(options.back ?? "the back camera")"
                                   : "stopped before the first frame")
        }
    }

    /// Encodes what is queued and leaves OUT in the best state there is: regular after a
    /// clean stop; fragmented (playable) when something failed; absent when empty.
    private func close(_ file: RecordingFile, queue: EncodeQueue, clock: SlotClock) throws(RecordError) {
        willFinalize()
        let failure: MediaError?
        do { try queue.finish(lastSlot: clock.next > 0 ? clock.next - 1 : nil); failure = nil } catch { failure = error }
        let seconds = Double(queue.encodedFrames) / Double(clock.fps)
        if queue.encodedFrames == 0 {
            file.remove()
            if let failure { throw .media(failure) }
            throw .nothingRecorded(clock.origin == nil ? "no picture came from \(options.back ?? "the back camera")"
                                   : "stopped before the first frame")
        }
        if let failure {
            // A stuck encoder thread may still be inside the muxer: the file is left to it,
            // as it stands on disk (every complete fragment plays).
            let kept = queue.isStuck ? file.path : file.keepAsItIs()
            throw .cutShort(path: kept, seconds: seconds, reason: failure.description)
        }
        do throws(MediaError) { try file.finishWriting() } catch {
            throw .notFinalized(path: file.keepAsItIs(), seconds: seconds, reason: error.description)
        }
        guard file.isAtItsName else {
            let kept = file.rescueIfLost().map { "kept, a fragmented file, at \($0) (dualcam finish makes it regular)" }
                ?? "left as they are, a fragmented file, wherever it was moved"
            throw .media(.cannotWrite(path: file.path, reason: String(format: "it was moved or replaced while recording; "
                + "the %.1f s recorded were %@", seconds, kept)))
        }
        do throws(MediaError) { _ = try file.finalize() } catch {
            throw .notFinalized(path: file.keepAsItIs(), seconds: seconds, reason: error.description)
        }
    }

    private func summary(clock: SlotClock, counts: Counts, sources: [any FrameSource], audio: (any SoundSource)?) -> RecordSummary {
        let sorted = counts.latencies.sorted()
        func pct(_ q: Double) -> Double { sorted.nearestRank(q) * 1000 }
        let cameras = sources.compactMap { $0 as? CameraSource }.map(\.counts)
        let cameraDamaged = cameras.reduce(0) { $0 + $1.damaged }
            + sources.compactMap { ($0 as? FileSource)?.damagedJPEGs }.reduce(0, +)
        let cameraDrops = cameras.reduce(0) { $0 + $1.sequenceGaps } + cameraDamaged
        return RecordSummary(output: options.output, frames: clock.next, seconds: clock.seconds,
                             singleCamera: sources.count == 1, sources: sources.map { "\($0.name): \($0.format)" },
                             latencyP50Ms: pct(0.5), latencyP99Ms: pct(0.99), latencyMaxMs: sorted.last.map { $0 * 1000 } ?? 0,
                             repeatedFrames: counts.repeated, droppedBackFrames: counts.droppedBack,
                             cameraDroppedFrames: cameraDrops, cameraDamagedFrames: cameraDamaged,
                             cameraReopened: cameras.reduce(0) { $0 + $1.reopened },
                             cameraUntrustedStamps: cameras.reduce(0) { $0 + $1.untrustedStamps },
                             composedInPlace: counts.composedInPlace,
                             encoderSkippedFrames: counts.encoderSkipped,
                             audioDriftCorrection: audio?.driftCorrection ?? 0,
                             audioSilenceInserted: audio?.silenceInserted ?? 0, events: eventsLock.withLock { events },
                             virtualCamera: virtualCamera.map {
                                 VirtualCameraSummary(device: $0.path, framesWritten: $0.written, framesSkipped: $0.skipped,
                                                      failure: $0.failure)
                             },
                             stream: stream?.summary, isoFiles: nil,
                             pauses: counts.pause.pauses,
                             pausedSeconds: counts.pause.seconds + (counts.pause.since.map { monotonicNow() - $0 } ?? 0))
    }
}
