import ArgumentParser
import Compositor
import Foundation
import MediaIO
import Pipeline

struct Compose: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compose two video files into one picture-in-picture file (HEVC or H.264 .mov or .mp4).",
        discussion: """
            BACK fills the frame (1920x1080 unless --size) and FRONT is the inset, top right; both \
            are centre-cropped to fit, never stretched. The file lasts as long as BACK, at 30 fps \
            unless --rate, with BACK's sound as AAC 48 kHz stereo (a silent track when it has none). \
            --swap-at exchanges the two pictures from that time on. On a terminal a progress line \
            shows how far it is; Ctrl-C stops and removes the unfinished file.

            EXAMPLES:
              Put face.mp4 in the corner of talk.mp4:
                dualcam compose talk.mp4 face.mp4 -o pip.mov
              Swap the pictures at 1:00 and back at 1:30, inset bottom left:
                dualcam compose talk.mp4 face.mp4 -o pip.mov --swap-at 60 \\
                  --swap-at 90 --corner bottom-left
              Side by side, 720p H.264 MP4 for the web, the sound from face.mp4:
                dualcam compose talk.mp4 face.mp4 -o web.mp4 --layout side-by-side \\
                  --size 1280x720 --codec h264 --audio front
            """)

    @Argument(help: "The video that fills the frame.", completion: .file()) var back: String
    @Argument(help: "The video shown in the inset.", completion: .file()) var front: String
    @OptionGroup(title: "Output") var encoding: EncodingOptions
    @OptionGroup(title: "Encoding") var encoder: EncoderOptions
    @OptionGroup(title: "Layout") var layout: LayoutOptions
    @OptionGroup(title: "Layout") var swapTimes: SwapTimes

    @OptionGroup(title: "Sound") var sound: FileSoundOption
    @OptionGroup(title: "Messages") var reporting: ReportingOptions
    @OptionGroup(title: "Preview") var previewOptions: PreviewOptions
    var audio: AudioChoiceArgument? { sound.audio }

    func validate() throws {
        _ = try layout.layout(canvas: encoding.format.canvas)
    }

    func run() throws {
        // A batch's row (BatchRunner): stopped as by Ctrl-C when the batch ends, even by SIGKILL.
        if let parent = ProcessInfo.processInfo.environment[BatchRunner.parentVariable].flatMap(Int32.init), !stopWithParent(parent) {
            kill(getpid(), SIGINT)
        }
        FFmpegLog.setVerbose(reporting.verbose)
        var options = ComposeOptions(back: back, front: front, output: encoding.output)
        options.swaps = SwapSchedule(swapTimes.swapAt)
        options.audio = audio.map { AudioChoice(rawValue: $0.rawValue)! } ?? .back
        options.audioRequired = audio != nil
        try Self.execute(options, describing: "\(back) + \(front)", encoding: encoding, encoder: encoder, layout: layout, reporting: reporting,
                         previewOptions: previewOptions)
    }

    /// Runs a composition (`compose`, `relayout`) with the layout and output asked for:
    /// progress, preview, summary, one line on failure.
    static func execute(_ inputs: ComposeOptions, describing what: String, encoding: EncodingOptions, encoder: EncoderOptions,
                        layout: LayoutOptions,
                        reporting: ReportingOptions, previewOptions: PreviewOptions) throws {
        let files = [inputs.back, inputs.front] + (inputs.soundOf.map { [$0] } ?? [])
        try OutputPath.check(encoding.output, overwrite: encoding.overwrite, inputs: files)
        for file in files {
            var st = stat()
            // A pipe or device gives its bytes once, and each input is read twice (its picture,
            // its sound): a named pipe no one writes would also hold the open for ever.
            if stat(file, &st) == 0, ![S_IFREG, S_IFDIR].contains(st.st_mode & S_IFMT) {
                throw Failure("\(file) is not a regular file: compose reads each input twice (picture and sound), which a "
                              + "pipe or a device cannot give")
            }
        }
        var options = inputs
        options.layout = try layout.layout(canvas: encoding.format.canvas)
        options.video = encoding.videoSettings(encoder, reporting: reporting)
        options.overwrite = encoding.overwrite
        options.metadata = encoding.metadata
        // The swaps of a composition are its --swap-at times; the window only shows it. q
        // abandons the job as Ctrl-C does; closing the window closes only the window.
        let window = previewOptions.open(layout: options.layout, title: "dualcam - composing \(encoding.output)",
                                         job: "composing")
        window?.onQuitKey = { Interruption.request() }
        if let window { options.outputs.append(.preview(window)) }
        defer { window?.close() }
        let job = ComposeJob(options: options)
        Interruption.install()
        Interruption.interruptInputsOnStop()
        job.controls = Interruption.controls
        if reporting.verbose && !reporting.quiet {
            let encoder = options.video.encoder
            job.onPlan = { plan in for line in plan.lines(encoder: encoder) { say(line) } }
        }
        // On stdout with the summary: stderr is for what went wrong, one line.
        let line = !reporting.quiet && !reporting.json ? "composing \(what) into \(encoding.output)" : nil
        Interruption.exitAtOnceUntilStarted(true)
        job.onStart = {
            Interruption.exitAtOnceUntilStarted(false)
            if let line { writeAll(Array((TerminalLine.printable(line) + "\n").utf8), to: 1) }
        }
        let started = ProcessInfo.processInfo.systemUptime
        if reporting.showsLiveLine {
            job.progress = { frames, expected in
                TerminalLine.shared.update(Self.progressText(frames: frames, expected: expected,
                                                             elapsed: ProcessInfo.processInfo.systemUptime - started))
            }
        }
        let s = try job.run()
        window?.close()
        TerminalLine.shared.clear()
        for w in s.warnings { reporting.note("warning: \(w)") }
        if reporting.json {
            let swaps = inputs.swaps.times.filter { ($0 * Double(encoding.format.rate)).rounded(.up) < Double(s.frames) }
            print(try Self.json(s, output: encoding.output, settings: options.video, swaps: swaps))
        } else if !reporting.quiet {
            printLine(String(format: "wrote %@: %d frame%@, %.2f s, %@, audio: %@; took %.1f s (%.0f fps)",
                         encoding.output, s.frames, s.frames == 1 ? "" : "s", s.duration, encoding.format.description(encoder), s.audioSource, s.seconds,
                         Double(s.frames) / max(s.seconds, 1e-9)))
        }
    }

    /// "composing  42 %  1260/3000 frames  37.5 fps  ETA 0:46"; without a known length,
    /// frames and fps only.
    static func progressText(frames: Int, expected: Int?, elapsed: Double) -> String {
        let fps = Double(frames) / max(elapsed, 1e-9)
        guard let expected, expected > 0 else { return String(format: "composing  %d frames  %.1f fps", frames, fps) }
        let shown = max(expected, frames)
        return String(format: "composing %3d %%  %d/%d frames  %.1f fps  ETA %@",
                      frames * 100 / shown, frames, shown, fps, clockText(Double(shown - frames) / max(fps, 1e-9)))
    }

    /// compose's and relayout's `--json` (Docs/json/compose.schema.json).
    static func json(_ s: ComposeSummary, output: String, settings: VideoEncoderSettings, swaps: [Double]) throws -> String {
        struct Report: Encodable {
            var output: String, frames: Int, seconds: Double, audioSource: String, tookSeconds: Double
            var processingFps: Double, composedInPlace: Int, warnings: [String]
            var swaps: [Double]
        }
        let report = Report(output: output, frames: s.frames, seconds: s.duration, audioSource: s.audioSource,
                            tookSeconds: s.seconds, processingFps: Double(s.frames) / max(s.seconds, 1e-9),
                            composedInPlace: s.composedInPlace, warnings: s.warnings, swaps: swaps)
        return try JSONOutput.line(schema: "dualcam.compose/1", report, OutputFacts(settings),
                                   PlanFacts(s.plan, encoder: settings.encoder, recording: false))
    }
}

/// `--json`'s `plan`: how the work was spread over the CPUs, and for a recording the live
/// encoder's configurations as measured.
struct PlanFacts: Encodable {
    struct Plan: Encodable {
        var cpusOnline: Int, cpusAllowed: [Int], cpuQuota: Double?, threads: Int
        var decoderThreads: [Int], compositorThreads: Int
        var encoder: String, encoderThreads: Int, encoderFrameThreads: Int, encoderWavefront: Bool
        var intermediateThreads: Int?
        var liveEncoderMeasured: Bool?
        var liveEncoderFps: Double?
        var liveEncoderTrials: [Trial]?
    }
    struct Trial: Encodable {
        var threads: Int, frameThreads: Int, wavefront: Bool, fps: Double
    }
    var plan: Plan

    init(_ stages: StagePlan, encoder: String, live: LiveEncoderChoice? = nil, recording: Bool = true) {
        plan = Plan(cpusOnline: stages.cpus.online, cpusAllowed: stages.cpus.allowed, cpuQuota: stages.cpus.quota,
                    threads: stages.cpus.wholeCPUs, decoderThreads: stages.decoderThreads,
                    compositorThreads: stages.compositorThreads, encoder: encoder, encoderThreads: stages.encoder.threads,
                    encoderFrameThreads: stages.encoder.frameThreads, encoderWavefront: stages.encoder.wavefront,
                    intermediateThreads: recording ? stages.intermediateThreads : nil, liveEncoderMeasured: live?.measured,
                    liveEncoderFps: live.map { ($0.fps * 10).rounded() / 10 }, liveEncoderTrials: live?.trials.map {
                        Trial(threads: $0.threading.threads, frameThreads: $0.threading.frameThreads,
                              wavefront: $0.threading.wavefront, fps: ($0.fps * 10).rounded() / 10)
                    })
    }
}

/// What a script needs to know about the file besides its name: codec, picture, rate.
struct OutputFacts: Encodable {
    var codec: String, encoder: String, width: Int, height: Int, rate: Int
    init(_ settings: VideoEncoderSettings) {
        codec = settings.codec.rawValue
        encoder = settings.encoder
        width = settings.size.width
        height = settings.size.height
        rate = Int(settings.framesPerSecond)
    }
}
