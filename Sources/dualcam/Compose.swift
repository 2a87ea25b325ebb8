import ArgumentParser
import Compositor
import Foundation
import MediaIO
import Pipeline

struct Compose: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compose two video files into a picture-in-picture .mov (HEVC or H.264).",
        discussion: """
            BACK fills the frame (1920x1080 unless --size), FRONT is the inset; both are \
            centre-cropped to fit, never stretched. The output lasts as long as BACK, at 30 fps \
            unless --rate, with AAC 48 kHz stereo. On a terminal a progress line shows how far it is.
            """)

    @Argument(help: "The full-frame video.") var back: String
    @Argument(help: "The inset video.") var front: String
    @OptionGroup var encoding: EncodingOptions
    @OptionGroup var layout: LayoutOptions
    @OptionGroup var reporting: ReportingOptions
    @OptionGroup var previewOptions: PreviewOptions

    @OptionGroup var swapTimes: SwapTimes

    @Option(help: ArgumentHelp("Audio from back, front, or none (a silent track); a file named here must have sound "
                               + "(default: BACK's, a silent track when it has none).", valueName: "back|front|none"))
    var audio: AudioChoiceArgument?

    func validate() throws {
        _ = try layout.layout(canvas: encoding.format.canvas)
    }

    func run() throws {
        FFmpegLog.setVerbose(encoding.verbose)
        var options = ComposeOptions(back: back, front: front, output: encoding.output)
        options.swaps = SwapSchedule(swapTimes.swapAt)
        options.audio = audio.map { AudioChoice(rawValue: $0.rawValue)! } ?? .back
        options.audioRequired = audio != nil
        try Self.execute(options, describing: "\(back) + \(front)", encoding: encoding, layout: layout, reporting: reporting,
                         previewOptions: previewOptions)
    }

    /// Runs a composition (`compose`, `relayout`) with the layout and output asked for:
    /// progress, preview, summary, one line on failure.
    static func execute(_ inputs: ComposeOptions, describing what: String, encoding: EncodingOptions, layout: LayoutOptions,
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
        options.video = encoding.videoSettings(reporting: reporting)
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
        job.isCancelled = { Interruption.requested }
        // On stdout with the summary: stderr is for what went wrong, one line.
        let line = !reporting.quiet && !reporting.json ? "composing \(what) into \(encoding.output)\n" : nil
        Interruption.exitAtOnceUntilStarted(true)
        job.onStart = {
            Interruption.exitAtOnceUntilStarted(false)
            if let line { FileHandle.standardOutput.write(Data(line.utf8)) }
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
            print(Self.json(s, output: encoding.output))
        } else if !reporting.quiet {
            print(String(format: "wrote %@: %d frames, %.2f s, %@, audio: %@; took %.1f s (%.0f fps, %d composed in place)",
                         encoding.output, s.frames, s.duration, encoding.format.description, s.audioSource, s.seconds,
                         Double(s.frames) / max(s.seconds, 1e-9), s.composedInPlace))
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

    static func json(_ s: ComposeSummary, output: String) -> String {
        struct Report: Encodable {
            var output: String, frames: Int, seconds: Double, audioSource: String, tookSeconds: Double
            var framesPerSecond: Double, composedInPlace: Int, warnings: [String]
        }
        let report = Report(output: output, frames: s.frames, seconds: s.duration, audioSource: s.audioSource,
                            tookSeconds: s.seconds, framesPerSecond: Double(s.frames) / max(s.seconds, 1e-9),
                            composedInPlace: s.composedInPlace, warnings: s.warnings)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(report)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
