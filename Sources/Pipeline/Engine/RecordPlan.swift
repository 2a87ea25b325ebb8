import Compositor
import Foundation
import MediaIO

/// What `record` is to do, as the command line asked it, checked: the sources, the file
/// (or none), the outputs beside it, the encoding. The engine (`Recorder`) carries it out.
package struct RecordPlan: Sendable {
    /// The take's file; nil for none (`-o none`: the pictures go only to the outputs).
    package var file: String?
    /// A V4L2 device path or a video file; nil picks the first capture device.
    package var back: String?
    /// As `back`; nil picks the next capture device, if there is one.
    package var front: String?
    package var duration: Double?
    /// How many seconds of slots the encoder may fall behind before slots are skipped (a
    /// test knob: the emulated VM's shared folder stalls writes for a second now and then).
    package var maxEncoderLag = 1.0
    /// The size asked of the cameras: the output's by default, so the main picture is not
    /// scaled up. `captureGiven`: the user asked for it, and it is kept even when slow.
    package var capture = Size(width: 1920, height: 1080)
    package var captureGiven = false
    package var framesPerSecond = 30.0
    /// Start with the roles swapped (`--swap`).
    package var swap = false
    package var audio = AudioInput.systemDefault
    /// Use only this pixel format (e.g. MJPEG on a bus too slow for two uncompressed streams).
    package var pixelFormat: FourCC?
    package var layout = PiPLayout()
    package var video = VideoEncoderSettings()
    /// When the file's pictures are encoded: as recorded, or (to keep every frame on a
    /// machine too busy for that) after the stop from an intermediate.
    package var encode = EncodeMode.auto
    /// Why the file is encoded live although every frame was to be kept (a stream), if so.
    package var liveBecause: String?
    package var overwrite = false
    package var metadata = MovWriter.Metadata()
    /// The take's identity, in the comment tag of every file it writes (the take, its
    /// intermediate, each camera's own file) and in its sidecar: `finish` and `relayout` join
    /// or lay out only files of one take (a later take under the same name left the earlier
    /// one's camera files beside it, and relayout composed them under the new take's sound).
    package var takeID = Intermediate.newTakeID()
    /// Camera controls to set when each camera opens (`--control back:brightness=200`).
    package var backControls: [ControlSetting] = []
    package var frontControls: [ControlSetting] = []
    /// Controls saved per camera, applied when it opens; nil applies none.
    package var controlStore: ControlStore? = ControlStore.standard()
    /// Where else the pictures go: the preview, the virtual camera, the stream, each
    /// camera's own file (`--iso`). Each is one `OutputRequest`.
    package var outputs: [OutputRequest] = []
    /// How the work is spread over this machine's CPUs; nil: planned from the CPUs allowed now.
    package var stages: StagePlan?

    package init(file: String?) { self.file = file }

    /// `stages`, or the plan for this process's CPUs and the output's size.
    package var stagePlan: StagePlan { stages ?? .record(cpus: .current(), output: layout.canvas) }

    /// What the outputs are checked and opened against.
    package var outputSettings: OutputSettings {
        OutputSettings(take: file, overwrite: overwrite, canvas: layout.canvas, video: video, metadata: namedMetadata,
                       inputs: [back, front].compactMap { $0 }, takeID: file == nil ? nil : takeID)
    }

    /// What the take's files say of themselves: the metadata asked for, and the take's identity.
    package var namedMetadata: MovWriter.Metadata {
        var named = metadata
        if file != nil { named.comment = Intermediate.takeTag(takeID) }
        return named
    }

    /// The take's name as reports show it ("none" with no file).
    package var shownName: String { file ?? "none" }
}

/// Where the sound comes from.
package enum AudioInput: Sendable, Equatable {
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

extension RecordPlan {
    /// Plans the stages for `cpus` and picks the live encoder's configuration: the one
    /// remembered for this machine, or measured now (`mayMeasure`) when none is, or else the
    /// plan's first candidate. Returns the choice when there was one to make and it was made.
    package mutating func fit(to cpus: CPUAllowance, mayMeasure: Bool, cache: URL?) -> LiveEncoderChoice? {
        // Encoded live (no file, or --encode live: a stream forces it), what the encoder cannot
        // take is lost: a configuration that holds up beside busy programs is worth some speed.
        let steady = file == nil || encode == .live
        var stages = StagePlan.record(cpus: cpus, output: video.size, steady: steady)
        if video.encoder != "libx265" {
            // x264 has one setting here, its thread count; any other encoder (a hardware one,
            // the VM tests' mpeg4) keeps its library's own choice.
            stages.liveCandidates = [EncoderThreading(threads: video.encoder == "libx264" ? cpus.wholeCPUs : 0)]
            stages.encoder = stages.liveCandidates[0]
        }
        var choice: LiveEncoderChoice?
        let software = video.encoder == "libx265" || video.encoder == "libx264"
        if software && (file != nil || outputs.contains { $0.needsEncoding }) {
            // A take encoded live on a machine others keep busy now: the idle figures mislead.
            let othersBusy = steady && LiveEncoderChoice.steadyMatters(cpus: cpus.wholeCPUs) && OtherProgramsLoad.busyNow()
            choice = EncoderSpeed.choose(video, candidates: stages.liveCandidates, cpus: cpus,
                                         rate: 1.2 * Double(video.framesPerSecond), steady: steady, othersBusy: othersBusy, cache: cache,
                                         mayMeasure: mayMeasure && !(file != nil && encode == .after))
            if let choice { stages.encoder = choice.threading }
        }
        video.threading = stages.encoder
        // The pictures encoded after the stop continue the take's track: its wavefront.
        stages.afterStop.wavefront = stages.encoder.wavefront
        self.stages = stages
        return choice
    }
}

extension RecordPlan {
    /// Free bytes on the disk a take at `path` would be written to.
    package static func freeBytes(near path: String) -> Int64? { RecordingFile.freeBytes(near: path) }
}
