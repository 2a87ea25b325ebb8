import Compositor
import Foundation
import MediaIO
import Pipeline
import Preview

/// A recording as the terminal and the desktop see it: the controls (signals, keys, the
/// preview window) wired to the engine's inbox, the lines and status it says, the summary,
/// the review of the take.
struct RecordSession {
    let plan: RecordPlan
    let reporting: ReportingOptions
    let preview: PreviewOptions
    let review: Bool
    let checksSpeed: Bool

    func run() throws {
        // A recording frees and reallocates large buffers all the time (the muxer builds each
        // fragment in one, ~0.5 MB). glibc's default raises its mmap threshold after the
        // first such free, and then serves them from the heap, where they fragment: a
        // 10-minute recording grew from 261 to 333 MB in steps. A fixed threshold keeps
        // them mmapped and handed back on free.
        _ = glibcMallopt(glibcMmapThreshold, 256 * 1024)
        Interruption.install()
        Interruption.installSwapAndPauseSignals()
        let keys = KeyboardControl()
        keys.start(sources: [plan.back, plan.front].compactMap { $0 })
        defer { keys.restore() }
        // Until the sources are open a stop signal ends the process at once: the speed check
        // may take seconds, a source's open may never return (a named pipe no one writes),
        // and nothing has a name on disk yet.
        Interruption.exitAtOnceUntilStarted(true)
        defer { Interruption.exitAtOnceUntilStarted(false) }
        var plan = self.plan
        let onlyDestination = plan.file == nil && plan.outputs.isEmpty
        let window = preview.open(layout: plan.layout, title: plan.file.map { "dualcam - recording \($0)" } ?? "dualcam - live, no file",
                                  job: onlyDestination ? nil : "recording")
        defer { window?.close() }
        if let window {
            Self.connect(window, layout: plan.layout)
            plan.outputs.append(.preview(window))
        } else if onlyDestination {
            throw Failure("with -o none and no preview window there is nowhere to show the pictures: nothing recorded")
        }
        let choice = plan.fit(to: .current(), mayMeasure: checksSpeed, cache: EncoderSpeed.defaultCache)
        if reporting.verbose && !reporting.quiet { for line in Self.planLines(plan, choice: choice) { say(line) } }
        let observer = RecordReporter(quiet: reporting.quiet, showsStatus: reporting.showsLiveLine, window: window,
                                      speed: choice.map { (plan.video, $0.fps) },
                                      encode: plan.file == nil ? .live : plan.encode,
                                      finishing: plan.file.map { "finishing \($0), please wait (killed now, nothing is lost: dualcam finish \($0) completes it)" }
                                          ?? "stopping, please wait",
                                      file: plan.file, keyHints: keys.singleKeys)
        do {
            let summary = try Recorder(plan: plan, controls: Interruption.controls, observer: observer).run()
            // The take is whole: a stop from here on is no longer left to finish.
            Interruption.exitAtOnceUntilStarted(false)
            keys.restore()
            TerminalLine.shared.clear()
            try report(summary, plan: plan, choice: choice)
            if review { try Record.review(summary.output, layout: plan.layout, quiet: reporting.quiet) }
        } catch {
            keys.restore()
            // Stopped by a signal before anything was recorded: its code, as a stop a moment
            // earlier gets (60-90 ms after the start it was 1, at 50 ms 130).
            if case .nothingRecorded? = error as? RecordError, Interruption.requested, Interruption.exitCode > 128 {
                throw Failure(String(describing: error), code: Interruption.exitCode)
            }
            throw Failure(String(describing: error))
        }
    }

    /// What `--verbose` and `--dry-run` say of the plan: the stages' threads and the live
    /// encoder's configuration, with what each candidate measured.
    static func planLines(_ plan: RecordPlan, choice: LiveEncoderChoice?) -> [String] {
        var lines = plan.stagePlan.lines(encoder: plan.video.encoder, intermediate: plan.file != nil && plan.encode != .live)
        if let choice {
            let trials = choice.trials.map { trial in
                trial.threading.text(for: plan.video.encoder) + (trial.cutShort == true ? " at most " : " ")
                    + String(format: trial.fps < 10 ? "%.1f fps" : "%.0f fps", trial.fps)
            }
            lines.append("live encoder, " + (choice.measured ? "measured now" : "as measured before on this machine") + ": "
                         + trials.joined(separator: "; ") + "; kept: " + choice.threading.text(for: plan.video.encoder)
                         + (choice.busy ? " (other programs kept the CPUs busy meanwhile: measured again in ten minutes)" : "")
                         + (choice.notRememberedIn.map { " (\($0) could not be written: every start measures again)" } ?? "")
                         + (choice.keptForBusyMachine ? " (other programs keep the CPUs busy now: the one without the wavefront holds up beside them)" : "")
                         + (choice.trials.contains { $0.cutShort == true }
                            ? String(format: " (a measurement over after %.0f s was cut short: at most what it made by then)",
                                     EncoderSpeed.patience * EncoderSpeed.measuringSeconds) : ""))
        } else {
            lines.append("live encoder: not measured (the plan's first choice)")
        }
        lines.append("priorities: " + ThreadPriority.summary)
        return lines
    }

    /// The window's clicks, keys and drags: control events, as keys and signals are.
    static func connect(_ window: PreviewWindow, layout: PiPLayout) {
        window.onSwap = { Interruption.controls.send(.swap) }
        window.onQuitKey = { Interruption.request() }
        window.onPauseKey = { Interruption.controls.send(.pauseOrResume) }
        // Side by side there is no corner to move the inset to.
        if layout.arrangement == .pip { window.onCornerChange = { Interruption.controls.send(.moveInset($0)) } }
        window.onClose = { Interruption.request() }  // closing the window stops and finishes
    }

    /// The summary: JSON, or a line or two (none when quiet).
    private func report(_ s: RecordSummary, plan: RecordPlan, choice: LiveEncoderChoice?) throws {
        if reporting.json {
            print(try JSONOutput.line(schema: "dualcam.record/1", s, OutputFacts(plan.video),
                                      PlanFacts(plan.stagePlan, encoder: plan.video.encoder, live: choice)))
            return
        }
        guard !reporting.quiet else { return }
        if plan.file == nil {
            printLine(String(format: "showed %d frames (%.2f s)%@, no file written; latency p50 %.2f ms, p99 %.2f ms",
                         s.frames, s.seconds, s.virtualCamera.map { " on \($0.device)" } ?? "", s.latencyP50Ms, s.latencyP99Ms))
        } else {
            printLine(String(format: "recorded %@: %d frame%@ (%.2f s)%@; latency p50 %.2f ms, p99 %.2f ms, max %.2f ms; "
                         + "%d repeated, %d back frames dropped, %d lost by the cameras%@%@",
                         s.output, s.frames, s.frames == 1 ? "" : "s", s.seconds, s.singleCamera ? ", single-camera mode" : "",
                         s.latencyP50Ms, s.latencyP99Ms, s.latencyMaxMs, s.repeatedFrames, s.droppedBackFrames,
                         s.cameraDroppedFrames,
                         s.encoderSkippedFrames > 0 ? ", \(s.encoderSkippedFrames) skipped while the encoder was behind" : "",
                         s.pauses > 0 ? String(format: "; paused %d time%@, %.1f s left out", s.pauses, s.pauses == 1 ? "" : "s",
                                               s.pausedSeconds) : ""))
            if let files = s.isoFiles { printLine("each camera's own: " + (files.isEmpty ? "none kept" : files.joined(separator: ", "))) }
            if reporting.verbose, let first = s.firstFrameSeconds { printLine(String(format: "first frame %.2f s after the command", first)) }
            if s.framesEncodedAfterStop > 0 || s.framesEncodedDuringTake > 0 {
                // The counts add up to the file's frames: the live encoder may have taken the
                // frame at which the take went to the intermediate too (it said "from frame 239
                // on" beside 327 + 33 frames of 600).
                let live = max(0, s.frames - s.encoderSkippedFrames - s.framesEncodedDuringTake - s.framesEncodedAfterStop)
                let from = s.intermediateFromFrame.map {
                    (live == 0 ? "no frame" : "\(live) frame\(live == 1 ? "" : "s")") + " encoded live, the rest went to the intermediate "
                        + "from frame \($0): "
                } ?? ""
                let during = s.framesEncodedDuringTake > 0 ? "\(s.framesEncodedDuringTake) encoded during the take, " : ""
                printLine(String(format: "%@%@%d after the stop; the file was finished %.1f s after it", from, during,
                                 s.framesEncodedAfterStop, s.finishingSeconds))
            }
        }
        if let stream = s.stream {
            let dropped = stream.packetsDropped > 0 ? ", \(stream.packetsDropped) packets not sent (while unconnected)" : ""
            if stream.connections == 0 {
                printLine("stream \(stream.url): never connected (\(stream.lastFailure ?? "no answer")): nothing was sent")
            } else {
                printLine(String(format: "stream %@: %@ at the end; %d connection%@, %d lost, %.1f MB sent%@",
                             stream.url, stream.state, stream.connections, stream.connections == 1 ? "" : "s", stream.outages,
                             Double(stream.bytesSent) / 1e6, dropped))
            }
        }
    }
}

/// What the recording says, where the user sees it: lines above the status line (none when
/// quiet), the status line on a terminal, the encoder's speed warning at the start; at the
/// end the window closes and a second stop signal is answered with what is happening.
final class RecordReporter: RecordObserver {
    let quiet: Bool
    let showsStatus: Bool
    let window: PreviewWindow?
    /// The live encoding and the speed it measured on this machine, when it was.
    let speed: (settings: VideoEncoderSettings, fps: Double)?
    let encode: EncodeMode
    let finishing: String
    /// The take's file (nil with none).
    let file: String?
    /// Whether the status line names the keys (they act: a terminal in front).
    let keyHints: Bool

    init(quiet: Bool, showsStatus: Bool, window: PreviewWindow?, speed: (settings: VideoEncoderSettings, fps: Double)?, encode: EncodeMode,
         finishing: String, file: String?, keyHints: Bool) {
        self.file = file
        self.keyHints = keyHints
        self.quiet = quiet
        self.showsStatus = showsStatus
        self.window = window
        self.speed = speed
        self.encode = encode
        self.finishing = finishing
    }

    func said(_ line: String) { if !quiet { say(line) } }
    func status(_ status: RecordStatus) {
        if showsStatus { TerminalLine.shared.update(fitting: { StatusLine.text(status, columns: $0, keys: self.keyHints) }) }
    }
    func sourcesOpened() { Interruption.exitAtOnceUntilStarted(false) }
    func willStart() {
        if !quiet, let speed, let warning = Self.speedWarning(speed.settings, fps: speed.fps, encode: encode) { say(warning) }
    }
    /// Whether the encoding after the stop was announced (off a terminal, once).
    private let announcedAfterStop = Locked(false)
    private let leavesTheRestToFinish = Locked(false)
    func encodingAfterStop(done: Int, total: Int, seconds: Double) {
        // The take is fragmented at its name, the rest whole in its intermediate: a stop now
        // ends the process at once, and finish does the rest later (a stop signal here was
        // answered "please wait" for as long as the encoding took, 22-29 s on two busy cores,
        // hours for a long take: a service manager's SIGKILL came first).
        if leavesTheRestToFinish.withLock({ was in defer { was = true }; return !was }), let file {
            Interruption.exitAtOnce(saying: "stopped before the end of the take was encoded: nothing is lost, dualcam finish "
                                    + "\(TerminalLine.printable(file)) completes it")
        }
        guard showsStatus else {
            if !quiet, announcedAfterStop.withLock({ was in defer { was = true }; return !was }) {
                // "Up to": the count is of slots, and slots skipped while even the intermediate was
                // behind hold no picture ("179 frames" where 146 were encoded).
                say("stopped: encoding " + (total > 0 ? "up to \(total) frames" : "the frames") + " the encoder had not reached in the "
                    + "intermediate; the file is finished after them")
            }
            return
        }
        let fps = seconds > 0 ? Double(done) / seconds : 0
        var text = "encoding after the stop: \(done)" + (total > 0 ? "/\(total)" : "") + String(format: " frames, %.1f fps", fps)
        if total > done, fps > 0 { text += String(format: ", about %.0f s left", Double(total - done) / fps) }
        TerminalLine.shared.update(text)
    }
    func willFinish() {
        window?.close()
        Interruption.enterFinishing(message: finishing)
    }

    /// A line when the encoder, as chosen, measured (or was measured before) too slow on this
    /// machine for real time: what will happen with this `--encode`, and what would make it
    /// faster (only what there is: a smaller size, H.264, a faster preset); nil when it keeps up.
    static func speedWarning(_ settings: VideoEncoderSettings, fps: Double, encode: EncodeMode) -> String? {
        let rate = Double(settings.framesPerSecond)
        guard encode != .after else { return nil }
        // Capture, decoding and composing share the CPU with it while recording.
        guard fps < 1.2 * rate else { return nil }
        // Never "0 fps": a slow figure keeps its tenth.
        let figure = fps < 10 ? String(format: "%.1f", fps) : "\(Int(fps))"
        let what = "\(settings.encoder) \(settings.preset) at \(settings.size) encodes \(figure) fps on this machine"
        let faster = fasterSettings(settings, fps: fps)
        let advice = faster.isEmpty ? "" : " (faster: " + faster.joined(separator: ", ") + ")"
        let below = fps < rate ? "under the \(Int(rate)) fps asked" : "little above the \(Int(rate)) fps asked"
        if encode == .live {
            return fps < rate ? "warning: \(what), \(below): frames will be skipped\(advice)"
                : "warning: \(what), \(below): with the cameras' work beside it, it may fall behind and skip frames\(advice)"
        }
        let perMinute = String(format: "up to %.0f s per minute recorded", 60 * rate / max(fps, 0.1))
        return "note: \(what), \(below): when it falls behind, every frame still goes to the intermediate, which it works "
            + "through during the take; what it has not reached is encoded after the stop (\(perMinute))\(advice)"
    }

    /// What would encode faster than `settings`: each only where there is such a choice.
    /// The smaller size named is the largest common one the measured `fps` should carry live
    /// with a quarter to spare (speed taken as inverse to pixels, which flatters the smaller
    /// size a little), else 1280x720: a 4K take's note named 1280x720 where 1920x1080 keeps
    /// up, as doctor said.
    static func fasterSettings(_ settings: VideoEncoderSettings, fps: Double) -> [String] {
        var faster: [String] = []
        let pixels = settings.size.width * settings.size.height
        if pixels > 1280 * 720 {
            let needed = 1.2 * Double(settings.framesPerSecond) * 1.25
            let smaller = [Size(width: 2560, height: 1440), Size(width: 1920, height: 1080)].first { size in
                size.width * size.height < pixels && fps * Double(pixels) / Double(size.width * size.height) >= needed
            } ?? Size(width: 1280, height: 720)
            faster.append("a smaller --size such as \(smaller)")
        }
        if settings.codec == .hevc { faster.append("--codec h264") }
        let presets = VideoEncoderSettings.presets
        if let i = presets.firstIndex(of: settings.preset), i > 0 { faster.append("--preset \(presets[i - 1])") }
        return faster
    }

    /// Ten cells from -60 dBFS to 0, then the peak in dB: "[######----] -18 dB".
    static func levelMeter(_ peak: Float) -> String {
        let db = peak > 0 ? 20 * log10(Double(peak)) : -.infinity
        let cells = db.isFinite ? min(10, max(0, Int(((db + 60) / 6).rounded()))) : 0
        let label = db.isFinite && db > -99 ? String(format: "%.0f dB", db) : "silent"
        return "[" + String(repeating: "#", count: cells) + String(repeating: "-", count: 10 - cells) + "] " + label
    }
}
