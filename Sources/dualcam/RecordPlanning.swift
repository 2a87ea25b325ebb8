import ArgumentParser
import Compositor
import Foundation
import MediaIO
import Pipeline

/// What `record` is asked, as a `RecordPlan`: the arguments' values in the engine's types,
/// and the checks that need the world (the files and devices named) rather than the
/// arguments alone, which `validate()` made. These fail in one line, exit 1, before any
/// device or window is opened.
extension Record {
    func plan() throws -> RecordPlan {
        let file = try takeFile()
        var plan = RecordPlan(file: file)
        if let file {
            try Self.checkCompanionNames(file)
            try OutputPath.check(file, overwrite: overwrite, inputs: [back, front].compactMap { $0 })
        }
        for (role, spec) in [("back", back), ("front", front)] {
            if let spec { try Self.checkSource(spec, role: role) }
        }
        try noteCameraOptionsForFiles()
        plan.back = back
        plan.front = front
        plan.duration = duration
        plan.maxEncoderLag = maxEncoderLag
        // The output's size, not the hidden test canvas: the main picture is then not scaled up.
        plan.capture = capture.flatMap { Size(parsing: $0) } ?? format.canvas
        plan.captureGiven = capture != nil
        plan.framesPerSecond = fps ?? Double(format.rate)
        plan.swap = swap
        plan.audio = audioInput
        plan.pixelFormat = pixelFormat.flatMap { CameraPixelFormat.named($0)?.fourcc }
        (plan.backControls, plan.frontControls) = try Self.controlsByRole(controls)
        plan.layout = try outputLayout()
        plan.video = format.videoSettings(encoder, hiddenEncoder: videoEncoder, reporting: reporting)
        plan.video.size = plan.layout.canvas
        plan.overwrite = overwrite
        plan.encode = encodeMode
        if encode == .auto && stream != nil && output != "none" {
            plan.liveBecause = "with --stream the file is encoded live, as the stream is: if the encoder cannot keep up, frames "
                + "are skipped in both (without --stream every frame would be kept)"
        }
        plan.metadata = format.metadata(metadata)
        if let virtualCamera { plan.outputs.append(.virtualCamera(path: virtualCamera)) }
        if let url = try also.streamURL() { plan.outputs.append(.stream(url: url)) }
        if iso { plan.outputs.append(.iso) }
        if let file, overwrite, !iso, !reporting.quiet { noteCompanionsOfTheReplacedTake(file) }
        return plan
    }

    /// A take replaced without --iso leaves the one before's camera files and sidecar as they
    /// are: said, with what becomes of them (each carries the old take's identity).
    private func noteCompanionsOfTheReplacedTake(_ file: String) {
        guard OutputPath.entry(file) != nil else { return }
        let companions = [IsoFiles.path(for: file, role: "back"), IsoFiles.path(for: file, role: "front"), IsoFiles.sidecar(for: file)]
            .filter { OutputPath.entry($0) != nil }.map { ($0 as NSString).lastPathComponent }
        guard !companions.isEmpty else { return }
        say("note: \(companions.joined(separator: ", ")) beside \(file) belong to the take it replaces: left as they are "
            + "(relayout does not lay them out with the new take; record --iso would replace them)")
    }

    /// -o: the take's file (dualcam-DATE-TIME.mov by default), or nil for none, which needs
    /// somewhere else for the pictures to go.
    private func takeFile() throws -> String? {
        guard output == "none" else {
            let stamp = DateFormatter()
            stamp.dateFormat = "yyyyMMdd-HHmmss"
            return output ?? TakeNames.free(stem: "dualcam-\(stamp.string(from: Date()))")
        }
        if iso { throw Failure("--iso keeps each camera's picture beside the take: with -o none there is no take") }
        if review { throw Failure("--review plays the take back once it is recorded: with -o none there is no take") }
        if virtualCamera == nil && !previewOptions.preview && stream == nil {
            throw Failure("-o none writes no file: it needs --virtual-camera DEV, --preview or --stream URL to send the pictures "
                          + "somewhere (a file named none: -o none.mov)")
        }
        return nil
    }

    /// A take's files beside it take its name and add to it (TAKE.intermediate.mov the most):
    /// each must be a legal name too, or the take could not go on in its intermediate when the
    /// encoder falls behind. Said before anything is recorded.
    static func checkCompanionNames(_ file: String) throws {
        let name = (file as NSString).lastPathComponent
        let longest = (Intermediate.path(for: name) as NSString).lastPathComponent
        let limit = Int(NAME_MAX) - (longest.utf8.count - name.utf8.count)
        guard name.utf8.count > limit else { return }
        throw Failure("\(file): the name is \(name.utf8.count) bytes, and a take's needs room for what is written beside it "
                      + "(\((longest as NSString).lastPathComponent.suffix(17))): at most \(limit) bytes")
    }

    /// Options that only a camera takes, given for video files played as cameras: said, not
    /// dropped in silence (a user checking --capture on files saw nothing happen).
    private func noteCameraOptionsForFiles() throws {
        func isFile(_ spec: String?) -> Bool {
            var st = stat()
            return spec.map { stat($0, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG } ?? false
        }
        let (backControls, frontControls) = try Self.controlsByRole(controls)
        var unused: [String] = []
        if isFile(back) && (front == nil || isFile(front)) {
            unused += [("--capture", capture != nil), ("--fps", fps != nil), ("--pixel-format", pixelFormat != nil)]
                .filter(\.1).map(\.0)
        }
        if isFile(back) && !backControls.isEmpty { unused.append("--control back:") }
        if isFile(front) && !frontControls.isEmpty { unused.append("--control front:") }
        guard !unused.isEmpty, !reporting.quiet else { return }
        say("warning: \(unused.joined(separator: ", ")) \(unused.count == 1 ? "applies" : "apply") to cameras only, and "
            + "\(unused.count == 1 && unused[0].hasPrefix("--control") ? "that camera is a file" : "these are files"): left unused")
    }

    /// --audio, in the engine's one type for it.
    var audioInput: AudioInput {
        switch audio {
        case nil: return .systemDefault
        case "none"?: return .none
        case "back"?, "front"?: return .fileSound(back: audio == "back")
        case let device?: return .device(device)
        }
    }

    /// A source named by --back or --front must be there: a file to play or a device (a
    /// mistyped name fails the recording rather than leave it with one camera).
    static func checkSource(_ spec: String, role: String) throws {
        var st = stat()
        guard stat(spec, &st) == 0 else {
            throw Failure("--\(role) \(spec): \(Errno.current) (`dualcam devices` lists the cameras; a file is played as one)")
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            throw Failure("--\(role) \(spec) is a folder: give a camera (/dev/videoN) or a video file")
        }
    }

    /// `--control back:NAME=VALUE,...` options, sorted by role (a later value for a name wins).
    static func controlsByRole(_ options: [String]) throws -> (back: [ControlSetting], front: [ControlSetting]) {
        var back: [ControlSetting] = [], front: [ControlSetting] = []
        for option in options {
            let parts = option.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, ["back", "front"].contains(parts[0].lowercased()) else {
                throw ValidationError("--control must be back:NAME=VALUE[,NAME=VALUE...] or front:...; got '\(option)'")
            }
            switch ControlSetting.parseList(parts[1]) {
            case let .failure(e): throw ValidationError("--control: \(e)")
            case let .success(list):
                if parts[0].lowercased() == "back" { back = ControlStore.merged(back, list) } else { front = ControlStore.merged(front, list) }
            }
        }
        return (back, front)
    }
}

extension Record {
    /// A file as its picture is ("file h264 1920x1080 30 fps"); a device as named.
    static func describeSource(_ spec: String) -> String {
        var st = stat()
        guard stat(spec, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, let reader = try? VideoReader(path: spec, decoderThreads: 1) else {
            return spec
        }
        return "\(spec) (file, \(reader.codecName) \(reader.displaySize), "
            + String(format: "%.0f fps", 1 / max(reader.nominalFrameDuration, 1e-3)) + ")"
    }

    /// The plan's sound: the default microphone tried as the take opens it (the plan
    /// promised the system's default capture device where none opened).
    static func soundLine(_ audio: AudioInput) -> String {
        switch audio {
        case .none: return "sound: none (a silent track)"
        case .systemDefault:
            let (device, why) = ALSADevices.defaultDevice()
            if device != nil { return "sound: the system's default capture device (dualcam devices lists it)" }
            if let other = ALSADevices.list().first(where: { !$0.busy }) {
                return "sound: ALSA's default capture device cannot be opened (\(why ?? "?")): \(other.device) (\(other.card)) if it opens, "
                    + "else a silent track"
            }
            return "sound: none: ALSA's default capture device cannot be opened (\(why ?? "?")) and there is no other: a silent "
                + "track (--audio back or front records a file's own sound)"
        case let .device(name): return "sound: the capture device \(name)"
        case let .fileSound(back): return "sound: the \(back ? "back" : "front") file's own, in sync with its picture"
        }
    }

    /// `--dry-run`: what a recording would do on this machine, nothing opened but the
    /// encoder the live settings are measured with (once per machine).
    func printPlan(_ asked: RecordPlan) throws {
        // A file that is no video fails the plan as it would fail the recording.
        for (role, spec) in [("back", asked.back), ("front", asked.front)] {
            var st = stat()
            guard let spec, stat(spec, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            do { _ = try VideoReader(path: spec, decoderThreads: 1) } catch { throw Failure("--\(role) \(spec): \(error.description)") }
        }
        var plan = asked
        let choice = plan.fit(to: .current(), mayMeasure: !skipSpeedCheck, cache: EncoderSpeed.defaultCache)
        let video = plan.video
        let encoding = plan.file == nil ? EncodeMode.live : plan.encode
        let perSecond = Recorder.expectedBytesPerSecond(video)
        let intermediate = encoding == .live ? 0 : Recorder.intermediateBytesPerSecond(video)
        let free = plan.file.flatMap { RecordPlan.freeBytes(near: $0) }
        if reporting.json {
            struct DryRun: Encodable {
                var output: String, back: String?, front: String?, encode: String, codec: String, encoder: String, preset: String
                var width: Int, height: Int, rate: Int, takeMbPerMinute: Double, intermediateMbPerMinute: Double, freeBytes: Int64?
            }
            let facts = DryRun(output: plan.shownName, back: plan.back, front: plan.front, encode: encoding.rawValue,
                               codec: video.codec.rawValue, encoder: video.encoder, preset: video.preset, width: video.size.width,
                               height: video.size.height, rate: Int(video.framesPerSecond), takeMbPerMinute: perSecond * 60 / 1e6,
                               intermediateMbPerMinute: intermediate * 60 / 1e6, freeBytes: free)
            print(try JSONOutput.line(schema: "dualcam.plan/1", facts,
                                      PlanFacts(plan.stagePlan, encoder: video.encoder, live: choice, recording: plan.file != nil)))
            return
        }
        printLine("plan for \(plan.shownName) (--dry-run: nothing is opened or recorded)"
                  + (plan.duration.map { String(format: ", %g s", $0) } ?? ", until stopped"))
        for (role, spec) in [("back", plan.back), ("front", plan.front)] {
            printLine("\(role): " + (spec.map(Self.describeSource) ?? (role == "back" ? "the first camera" : "the next camera, if there is one")))
        }
        let files = [plan.back, plan.front].compactMap { $0 }.filter { (try? FileManager.default.attributesOfItem(atPath: $0)[.type] as? FileAttributeType) == .typeRegular }
        if files.count < 2 {
            printLine("cameras are asked for \(plan.capture) at \(String(format: "%g", plan.framesPerSecond)) fps, the format agreed when they open")
        }
        printLine(Self.soundLine(plan.audio))
        printLine("output: \(video.size) at \(video.framesPerSecond) fps, \(video.codec.displayName) (\(video.encoder) \(video.preset), "
                  + (video.bitrate.map { "\($0 / 1000) kb/s" } ?? "crf \(video.crf)") + "), AAC 48 kHz stereo \(video.audioBitrate / 1000) kb/s")
        for line in RecordSession.planLines(plan, choice: choice) { printLine(line) }
        let rate = Double(video.framesPerSecond)
        switch encoding {
        case .live: printLine("encoding: live; slots the encoder has no time for are skipped")
        case .after: printLine("encoding: every frame into the intermediate (H.264), encoded as asked after the stop")
        case .auto where (choice?.fps ?? rate) < rate:
            let fps = choice?.fps ?? 0, atMost = choice?.trials.contains { $0.cutShort == true } == true ? "at most " : ""
            // A tenth where a whole number would read as the rate itself ("30 fps, under the 30 needed").
            printLine("encoding: \(video.encoder) makes \(atMost)" + String(format: fps < 10 || fps.rounded() >= rate ? "%.1f" : "%.0f", fps)
                      + String(format: " fps here, under the %.0f needed: every frame goes to the intermediate (H.264) from ", rate)
                      + "the first ones it cannot take; the encoder works through it during the take, and what it has not "
                      + "reached is encoded after the stop")
        case .auto:
            let speed = choice.map { String(format: "%.0f fps measured, %.0f needed", $0.fps, rate) } ?? "not measured"
            printLine("encoding: live while \(video.encoder) keeps up (\(speed)); from the first frame it cannot take, every frame "
                      + "goes to the intermediate, which the encoder works through during the take; what it has not reached is "
                      + "encoded after the stop")
        }
        guard plan.file != nil else {
            printLine("disk: nothing written (-o none)")
            return
        }
        var disk = String(format: "disk: about %.0f MB a minute", perSecond * 60 / 1e6)
        if let duration = plan.duration { disk += String(format: " (about %.0f MB for %g s)", perSecond * duration / 1e6, duration) }
        if intermediate > 0 { disk += String(format: "; the intermediate up to %.0f MB a minute while it is used", intermediate * 60 / 1e6) }
        if let free {
            let minutes = Double(free) / perSecond / 60
            disk += "; \(Recorder.amount(bytes: Double(free))) free there: about "
                + (minutes < 120 ? String(format: "%.0f minutes", minutes) : String(format: "%.0f hours", minutes / 60))
        }
        printLine(disk)
    }
}
