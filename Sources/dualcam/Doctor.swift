import ArgumentParser
import Foundation
import MediaIO
import Pipeline

struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say what this machine can do: CPUs and threads per stage, encoder speeds, cameras, microphone, disk.",
        discussion: """
            The CPUs this process may use (its affinity mask and any cgroup CPU quota) and how \
            record and compose spread their work over them; each encoder's speed at 720p, 1080p \
            and 4K (HEVC and H.264, in the fastest configuration measured here), the hardware \
            encoders found and why each is or is not used; the cameras and their modes, the \
            microphone record takes, the free space and write speed where takes are written; and \
            what to change where something will not keep up. An encoder not measured before on \
            this machine is measured now (a second or so each) and remembered: record's start \
            uses the same figures.

            EXAMPLES:
              Before a first recording:
                dualcam doctor
              The figures for a script, the disk timed where takes go:
                dualcam doctor --json --folder /media/usb
            """)

    @Option(help: ArgumentHelp("The folder whose disk is timed (default: the current one).", valueName: "FOLDER"),
            completion: .directory)
    var folder: String = "."
    @Flag(help: "Print one line of JSON on stdout, for scripts.") var json = false

    /// `--json` (Docs/json/doctor.schema.json): the survey, its plans as record's and compose's `plan`.
    struct Report: Encodable {
        var processor: String
        var cpusOnline: Int, cpusAllowed: [Int], cpuQuota: Double?, threads: Int
        var recordPlan: PlanFacts.Plan, composePlan: PlanFacts.Plan
        var encoders: [MachineSurvey.EncoderFigure]
        var hardwareEncoders: [MachineSurvey.HardwareEncoder]
        var disk: MachineSurvey.Disk
        var advice: [String]
        var cameras: [Camera]
        var microphone: String?
        var microphoneError: String?
        /// The survey itself, for the lines (not in the JSON: its parts are above).
        let machine: MachineSurvey

        enum CodingKeys: String, CodingKey {
            case processor, cpusOnline, cpusAllowed, cpuQuota, threads, recordPlan, composePlan, encoders, hardwareEncoders, disk,
                 advice, cameras, microphone, microphoneError
        }

        struct Camera: Encodable {
            var path: String, card: String, modes: [String]
        }
    }

    func validate() throws {
        var st = stat()
        guard stat(folder, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw ValidationError("--folder must be an existing folder; got \(folder)")
        }
    }

    func run() throws {
        FFmpegLog.setVerbose(false)
        if !json { printLine("measuring what is not known yet (a second or so each)...") }
        let survey = MachineSurvey.now(folder: folder, cache: EncoderSpeed.defaultCache)
        let cameras = V4L2Device.list().map { d in
            Report.Camera(path: d.path, card: d.card, modes: d.formats.map { f in
                let best = f.modes.max { $0.width * $0.height < $1.width * $1.height }
                return f.fourcc + (best.map { m in " up to \(m.width)x\(m.height)" + (m.framesPerSecond.max().map { String(format: " @ %g fps", $0) } ?? "") } ?? "")
            })
        }
        let (microphone, microphoneError) = ALSADevices.defaultDevice()
        let report = Report(processor: survey.processor, cpusOnline: survey.cpus.online, cpusAllowed: survey.cpus.allowed,
                            cpuQuota: survey.cpus.quota, threads: survey.threads,
                            recordPlan: PlanFacts(survey.recordPlan, encoder: "libx265").plan,
                            composePlan: PlanFacts(survey.composePlan, encoder: "libx265", recording: false).plan,
                            encoders: survey.encoders, hardwareEncoders: survey.hardwareEncoders, disk: survey.disk,
                            advice: survey.advice, cameras: cameras, microphone: microphone.map { "\($0.name) (\($0.device))" },
                            microphoneError: microphoneError, machine: survey)
        if json {
            print(try JSONOutput.line(schema: "dualcam.doctor/1", report))
            return
        }
        for line in Self.lines(report) { printLine(line) }
    }

    static func lines(_ r: Report) -> [String] {
        let m = r.machine
        var lines = ["CPUs: \(m.cpus.description), \(m.processor); work is planned for \(m.threads) thread\(m.threads == 1 ? "" : "s") at once"]
        let record = m.recordPlan, compose = m.composePlan
        lines.append("priorities: " + ThreadPriority.summary)
        lines.append("record 1080p30 HEVC: compositor \(record.compositorThreads) thread\(record.compositorThreads == 1 ? "" : "s"); "
                     + "live libx265 \(record.encoder); intermediate libx264 \(record.intermediateThreads) thread"
                     + "\(record.intermediateThreads == 1 ? "" : "s"); after the stop libx265 \(record.afterStop)")
        lines.append("compose 1080p of 1080p + 720p: decoders " + compose.decoderThreads.map(String.init).joined(separator: " + ")
                     + " threads; compositor \(compose.compositorThreads); libx265 \(compose.encoder)")
        lines.append("encoders here (ultrafast, frames in order, the fastest configuration):")
        for codec in ["hevc", "h264"] {
            let figures = m.encoders.filter { $0.codec == codec }.map { f in
                // A tenth under 100 fps: "30 fps (not live)" was 29.7, and live needs 36 (the headroom).
                "\(f.width)x\(f.height) " + (f.fps.map { String(format: $0 < 100 ? "%.1f fps" : "%.0f fps", $0) } ?? "does not open")
                    + (f.keepsUp ? "" : String(format: " (not live: %.0f needed)", MachineSurvey.liveFPS))
                    + (f.busy ? " (measured while other programs were busy)" : "")
            }
            lines.append("  \(codec == "hevc" ? "HEVC  libx265" : "H.264 libx264"): " + figures.joined(separator: ", "))
        }
        lines.append("hardware encoders: " + m.hardwareEncoders.map { "\($0.name) \($0.usable ? "used" : "not used"): \($0.why)" }
            .joined(separator: "; "))
        if r.cameras.isEmpty {
            lines.append("cameras: none (dualcam devices lists V4L2 capture devices; files can be recorded as cameras)")
        } else {
            for c in r.cameras { lines.append("camera \(c.path): \(c.card): " + c.modes.joined(separator: ", ")) }
        }
        lines.append("microphone: " + (r.microphone.map { "\($0), what record takes with no --audio" }
                                        ?? "none: ALSA's default capture device cannot be opened (\(r.microphoneError ?? "none there")) and "
                                        + "record writes a silent track; dualcam devices lists the microphones there are"))
        let d = m.disk
        let free = d.freeBytes.map { Recorder.amount(bytes: Double($0)) + " free" } ?? "free space unknown"
        let speed = d.writeMBPerSecond.map { String(format: "writes %.0f MB/s", $0) } ?? (d.writeError ?? "not timed")
        lines.append(String(format: "disk at %@: %@, %@; a 1080p30 HEVC take writes about %.0f MB a minute, the intermediate up to %.0f",
                            d.folder, free, speed, d.takeMBPerMinute, d.intermediateMBPerMinute))
        lines += m.advice.map { "advice: " + $0 }
        return lines
    }
}
