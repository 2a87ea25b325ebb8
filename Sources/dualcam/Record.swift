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
            is recorded alone; a camera lost while recording leaves the other full frame. A take \
            that was killed is completed by dualcam finish.

            EXAMPLES:
              Two webcams, the first full frame, until q or Ctrl-C:
                dualcam record --back /dev/video0 --front /dev/video2 -o take.mov
              Ten seconds, 720p, a USB camera's microphone (dualcam devices lists them):
                dualcam record --duration 10 --size 1280x720 \\
                  --audio plughw:CARD=C920 -o take.mov
              Two files played as cameras, with the sound of the first:
                dualcam record --back talk.mp4 --front face.mp4 --audio back \\
                  --duration 5 -o take.mov
              Complete a take that was killed or lost power:
                dualcam finish take.mov
            """)

    @OptionGroup(title: "Cameras") var cameras: RecordCameraOptions
    @OptionGroup(title: "Sound") var sound: RecordSoundOption
    @OptionGroup(title: "Recording") var take: RecordTakeOptions
    @OptionGroup(title: "Output") var format: OutputFormatOptions
    @OptionGroup(title: "Output") var metadata: MetadataOptions
    @OptionGroup(title: "Encoding") var encoder: EncoderOptions
    @OptionGroup(title: "Layout") var layout: LayoutOptions
    @OptionGroup(title: "Also send to") var also: RecordAlsoOptions
    @OptionGroup(title: "Messages") var reporting: ReportingOptions
    @OptionGroup(title: "Also send to") var previewOptions: PreviewOptions
    @Flag(help: ArgumentHelp("Print the plan (sources, format, threads per stage, the live encoder's settings as measured "
                             + "here, disk per minute) and record nothing.")) var dryRun = false
    // Test knobs, hidden: the vivid VM emulates about 20x slower than real hardware, where
    // no 1080p encoder keeps real time; its A/V sync scenario records a small canvas with a
    // cheap encoder so that timing, not throughput, is what it measures.
    @Option(help: .hidden) var canvas: String?
    @Option(help: .hidden) var videoEncoder: String?
    // The emulated VM encodes far below real time by design: its scenarios skip the check.
    @Flag(help: .hidden) var skipSpeedCheck = false
    @Option(parsing: .unconditional, help: .hidden) var maxEncoderLag: Double = 1

    var output: String? { take.output }
    var back: String? { cameras.back }
    var front: String? { cameras.front }
    var duration: Double? { take.duration }
    var capture: String? { cameras.capture }
    var fps: Double? { cameras.fps }
    var audio: String? { sound.audio }
    var controls: [String] { cameras.controls }
    var swap: Bool { take.swap }
    var virtualCamera: String? { also.virtualCamera }
    var stream: String? { also.stream }
    var pixelFormat: String? { cameras.pixelFormat }
    var review: Bool { take.review }
    var iso: Bool { take.iso }
    var overwrite: Bool { take.overwrite }
    var encode: EncodeMode { take.encode }

    static let longestDuration = 366.0 * 86_400

    /// What `--encode` means with this command line: a stream, or no file, is encoded live.
    var encodeMode: EncodeMode { output == "none" || stream != nil ? .live : encode }
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
            guard size.width >= 64 && size.height >= 64,
                  size.width <= Self.largestCapture.width && size.height <= Self.largestCapture.height else {
                throw ValidationError("--capture must be from 64x64 to \(Self.largestCapture); got \(capture)")
            }
        }
        if let duration, !(duration > 0 && duration <= Self.longestDuration) {
            throw ValidationError("--duration must be more than 0 and at most \(Int(Self.longestDuration)) seconds (a year)")
        }
        if let fps, !(fps > 0 && fps <= 240) { throw ValidationError("--fps must be more than 0 and at most 240; got \(fps)") }
        if let pixelFormat, CameraPixelFormat.named(pixelFormat) == nil {
            throw ValidationError("--pixel-format must be \(RecordCameraOptions.pixelFormatNames)")
        }
        if let output, output != "none" { try OutputName.validate(output) }
        _ = try outputLayout()
        _ = try Self.controlsByRole(controls)
        guard maxEncoderLag.isFinite, (0.1...60).contains(maxEncoderLag) else {
            throw ValidationError("--max-encoder-lag must be 0.1-60 seconds; got \(maxEncoderLag)")
        }
        if let audio, audio.isEmpty { throw ValidationError("--audio needs an ALSA device (hw:1, default) or none") }
        if let audio, !["none", "back", "front"].contains(audio), !ALSADevices.isCaptureName(audio) {
            throw ValidationError("--audio must name a capture device: default, pipewire, hw:1, hw:1,0, plughw:CARD=C920,DEV=0, "
                                  + "sysdefault:CARD=C920 or dsnoop:... (`dualcam devices` lists them), none or back/front; "
                                  + "got \(audio)")
        }
        _ = try also.streamURL()
        if encode == .after && (output == "none" || stream != nil) {
            throw ValidationError("--encode after needs a file and no --stream: a stream and -o none are encoded as they go")
        }
        // A --back or --front that is not there is said to be missing when the plan checks
        // the sources (exit 1), not called "not a video file" here.
        if let audio, audio == "back" || audio == "front", (audio == "back" ? back : front).map({ access($0, F_OK) == 0 }) ?? true {
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
        FFmpegLog.setVerbose(reporting.verbose)
        if dryRun {
            try printPlan(try plan())
            return
        }
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
