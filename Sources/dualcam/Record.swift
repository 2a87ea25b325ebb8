import ArgumentParser
import Compositor
import Foundation
import MediaIO
import Pipeline
import Preview

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record picture-in-picture from two cameras (or files played as cameras).",
        discussion: """
            With no --back/--front, the first two V4L2 capture devices are used (back = first). \
            A file given as --back or --front plays at its real pace, as a camera would (an MJPEG \
            file's JPEGs go through the camera path, as a webcam's do). \
            While recording: s (then Enter when stdin is not a terminal) or SIGUSR1 swaps the \
            pictures; p or SIGUSR2 pauses and resumes (the file goes straight on, the sound in sync); \
            q, Ctrl-C or SIGTERM stops and finishes the file. With --preview, a window \
            shows the recording (live while paused): clicking the inset or s swaps, dragging it moves it to the \
            nearest corner (in the file too), p pauses, q or closing the window stops. With one camera, it \
            is recorded alone; a camera lost while recording leaves the other full frame.
            """)

    @Option(name: .shortAndLong, help: ArgumentHelp("The .mov or .mp4 file to write (default: dualcam-DATE-TIME.mov); none writes "
                                                      + "no file, with --virtual-camera, --preview or --stream.",
                                                      valueName: "OUT.mov|none"))
    var output: String?
    @Option(help: ArgumentHelp("The main camera: /dev/videoN or a video file.", valueName: "DEV|FILE")) var back: String?
    @Option(help: ArgumentHelp("The inset camera: /dev/videoN or a video file.", valueName: "DEV|FILE")) var front: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Stop after this many seconds.", valueName: "SECONDS"))
    var duration: Double?
    @Option(parsing: .unconditional, help: ArgumentHelp("Capture size asked of the cameras, kept even when they are slow at it (default: the output's "
                               + "--size, or the largest size at which a camera reaches --fps).", valueName: "WxH"))
    var capture: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Frame rate asked of the cameras (default: the output's --rate); formats and sizes that "
                               + "reach it are chosen first.", valueName: "FPS"))
    var fps: Double?
    @Option(help: ArgumentHelp("Audio: an ALSA capture device (hw:1, plughw:CARD=C920, pipewire), none for a silent "
                               + "track, or back/front for the sound of a file given as --back/--front, in sync with "
                               + "its picture (default: the system's default device, the sound server on a PipeWire or "
                               + "PulseAudio desktop).", valueName: "ALSA_DEVICE|none|back|front"))
    var audio: String?
    @Option(name: .customLong("control"), help: ArgumentHelp(
        "Camera controls to set when a camera opens, over those saved with dualcam controls (repeatable): "
            + "back:brightness=150,auto_exposure=1 (dualcam devices lists them).", valueName: "back|front:NAME=VALUE,..."))
    var controls: [String] = []
    @Flag(help: "Start with the pictures swapped.") var swap = false
    @Option(help: ArgumentHelp("Also show the composed picture as a camera other programs read (a video call): a v4l2loopback device (sudo modprobe v4l2loopback exclusive_caps=1 card_label=DualCam video_nr=10).", valueName: "DEV"))
    var virtualCamera: String?
    @Option(help: ArgumentHelp("Also send the recording live (the same encoding): srt://HOST:PORT (MPEG-TS), rtmp://HOST/APP/KEY "
                               + "(FLV, with --codec h264), udp:// or tcp://. A dropped network or a server that goes away "
                               + "never stops the recording: the stream reconnects with backoff.", valueName: "URL"))
    var stream: String?
    @Option(help: ArgumentHelp("Use only this camera pixel format: \(Self.pixelFormatNames).", valueName: "FOURCC"))
    var pixelFormat: String?
    @Flag(help: "Once stopped, play the take in a window: k keeps it, d then y discards it.") var review = false
    @Flag(help: ArgumentHelp("Also keep each camera's own picture beside the take (OUT.back.mov, OUT.front.mov, H.264), "
                             + "and the swaps (OUT.dualcam.json), for dualcam relayout.")) var iso = false
    @Flag(help: "Replace OUT if it exists.") var overwrite = false
    @Option(help: ArgumentHelp("When the file's pictures are encoded: auto (as recorded while the encoder keeps up; from the moment it "
                               + "cannot, every frame goes to OUT.intermediate.mov, H.264, and the rest is encoded after the stop), "
                               + "live (as recorded; frames are skipped when the encoder cannot keep up), after (every frame to the "
                               + "intermediate, all encoded after the stop). The intermediate takes about 4 MB a second of disk "
                               + "while it is written. With --stream or -o none, the encoding is live.", valueName: "auto|live|after"))
    var encode: EncodeMode = .auto
    @OptionGroup var format: OutputFormatOptions
    @OptionGroup var layout: LayoutOptions
    @OptionGroup var metadata: MetadataOptions
    @OptionGroup var reporting: ReportingOptions
    @OptionGroup var previewOptions: PreviewOptions
    // Test knobs, hidden: the vivid VM emulates about 20x slower than real hardware, where
    // no 1080p encoder keeps real time; its A/V sync scenario records a small canvas with a
    // cheap encoder so that timing, not throughput, is what it measures.
    @Option(help: .hidden) var canvas: String?
    @Option(help: .hidden) var videoEncoder: String?
    // The emulated VM encodes far below real time by design: its scenarios skip the check.
    @Flag(help: .hidden) var skipSpeedCheck = false
    @Option(parsing: .unconditional, help: .hidden) var maxEncoderLag: Double = 1

    static let longestDuration = 366.0 * 86_400

    /// What `--encode` means with this command line: a stream, or no file, is encoded live.
    var encodeMode: EncodeMode { output == "none" || stream != nil ? .live : encode }
    /// YUYV, UYVY, NV12, YU12 or MJPG: the table's names, in its order.
    static var pixelFormatNames: String {
        let names = CameraPixelFormat.names
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
    static let largestCapture = Size(width: 8192, height: 8192)

    /// The layout on --size, or on the hidden test canvas with the 1080p layout as it is.
    func outputLayout() throws -> PiPLayout {
        guard let canvas else { return try layout.layout(canvas: format.canvas) }
        guard let size = Size(parsing: canvas) else { throw ValidationError("--canvas must be WIDTHxHEIGHT") }
        return try layout.layout(canvas: size, scaleDefaults: false)
    }

    func validate() throws {
        if let capture {
            guard let size = Size(parsing: capture) else { throw ValidationError("--capture must be WIDTHxHEIGHT, e.g. 1280x720") }
            guard size.width <= Self.largestCapture.width && size.height <= Self.largestCapture.height else {
                throw ValidationError("--capture must be at most \(Self.largestCapture); got \(capture)")
            }
        }
        if let duration, !(duration > 0 && duration <= Self.longestDuration) {
            throw ValidationError("--duration must be more than 0 and at most \(Int(Self.longestDuration)) seconds (a year)")
        }
        if let fps, !(fps > 0 && fps <= 240) { throw ValidationError("--fps must be more than 0 and at most 240; got \(fps)") }
        if let pixelFormat, CameraPixelFormat.named(pixelFormat) == nil {
            throw ValidationError("--pixel-format must be \(Self.pixelFormatNames)")
        }
        _ = try outputLayout()
        _ = try Self.controlsByRole(controls)
        guard maxEncoderLag.isFinite, (0.1...60).contains(maxEncoderLag) else {
            throw ValidationError("--max-encoder-lag must be 0.1-60 seconds; got \(maxEncoderLag)")
        }
        if let audio, audio.isEmpty { throw ValidationError("--audio needs an ALSA device (hw:1, default) or none") }
        if encode == .after && (output == "none" || stream != nil) {
            throw ValidationError("--encode after needs a file and no --stream: a stream and -o none are encoded as they go")
        }
        if let audio, audio == "back" || audio == "front" {
            let spec = audio == "back" ? back : front
            var st = stat()
            guard let spec, stat(spec, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
                throw ValidationError("--audio \(audio) records the sound of a video file given as --\(audio)"
                                      + (spec.map { ": \($0) is not one" } ?? "") + " (a camera's microphone is an ALSA "
                                      + "device: dualcam devices lists them)")
            }
        }
    }

    func run() throws {
        FFmpegLog.setVerbose(false)
        let session = RecordSession(plan: try plan(), reporting: reporting, preview: previewOptions, review: review,
                                    checksSpeed: !skipSpeedCheck)
        try session.run()
    }

    /// Plays the finished take in a window until it is kept or discarded. With no display the
    /// take is kept, and one line says so.
    static func review(_ path: String, layout: PiPLayout, quiet: Bool) throws {
        let window: PreviewWindow
        do { window = try PreviewWindow(layout: layout, title: "dualcam - review \((path as NSString).lastPathComponent)") } catch {
            say("\(error): \(path) is kept without a review")
            return
        }
        defer { window.close() }
        switch TakeReview(path: path, window: window, say: { say($0) }).run() {
        case .keep:
            if !quiet { say("kept \(path)") }
        case .discard:
            if unlink(path) == 0 {
                if !quiet { say("discarded \(path)") }
            } else {
                throw Failure("cannot discard \(path) (\(Errno(errno))): it is kept")
            }
        }
    }
}
