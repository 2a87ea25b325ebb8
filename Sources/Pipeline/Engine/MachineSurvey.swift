import Compositor
import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// What this machine can do for `dualcam doctor`: the CPUs allowed and the plan per stage,
/// the encoders' speeds at the usual sizes (measured once and remembered, as a recording's
/// start uses them), the hardware encoders and why each is or is not used, the disk, and
/// what to change where something will not keep up.
package struct MachineSurvey {
    package struct EncoderFigure: Encodable, Sendable {
        package var codec: String
        package var encoder: String
        package var width: Int
        package var height: Int
        /// The fastest live configuration's frames per second; nil when it did not open.
        package var fps: Double?
        package var threading: String
        /// Whether it encodes the rate asked with the headroom a live take needs (1.2x).
        package var keepsUp: Bool
        /// Measured by this run (false: remembered from an earlier one on this machine).
        package var measured: Bool
        /// Measured while other programs kept the CPUs busy: that moment's figure (measured
        /// again after ten minutes).
        package var busy: Bool
    }

    package struct HardwareEncoder: Encodable, Sendable {
        package var name: String
        package var usable: Bool
        package var why: String
    }

    package struct Disk: Encodable, Sendable {
        package var folder: String
        package var freeBytes: Int64?
        /// Written and put on disk (fsync), in MB per second; nil when it could not be written.
        package var writeMBPerSecond: Double?
        package var writeError: String?
        /// What a 1080p30 HEVC take and its intermediate write per minute.
        package var takeMBPerMinute: Double
        package var intermediateMBPerMinute: Double
    }

    package var processor: String
    package var cpus: CPUAllowance
    package var threads: Int
    /// A 1080p30 HEVC recording and a 1080p composition of 1080p and 720p files, as planned here.
    package var recordPlan: StagePlan
    package var composePlan: StagePlan
    package var encoders: [EncoderFigure]
    package var hardwareEncoders: [HardwareEncoder]
    package var disk: Disk
    package var advice: [String]

    /// The sizes the encoders are measured at.
    package static let sizes = [Size(width: 1280, height: 720), Size(width: 1920, height: 1080), Size(width: 3840, height: 2160)]
    static let rate: Int32 = 30
    /// What a live take at `rate` needs of its encoder: a fifth more, for the cameras' work beside it.
    package static let liveFPS = Double(rate) * 1.2

    /// Surveys this machine now: measures what is not remembered (each configuration about a
    /// second), writes 64 MiB to `folder` to time the disk.
    package static func now(folder: String, cache: URL?) -> MachineSurvey {
        let cpus = CPUAllowance.current()
        var figures: [EncoderFigure] = []
        for codec in [VideoEncoderSettings.Codec.hevc, .h264] {
            for size in sizes { figures.append(figure(codec: codec, size: size, cpus: cpus, cache: cache)) }
        }
        var hardware: [HardwareEncoder] = []
        for codec in [VideoEncoderSettings.Codec.hevc, .h264] {
            var settings = VideoEncoderSettings()
            settings.codec = codec
            hardware += EncoderChoice.survey(settings).map { HardwareEncoder(name: $0.name, usable: $0.usable, why: $0.why) }
        }
        let take = VideoEncoderSettings()
        let disk = Disk(folder: folder, freeBytes: freeBytes(folder), writeMBPerSecond: nil, writeError: nil,
                        takeMBPerMinute: Recorder.expectedBytesPerSecond(take) * 60 / 1e6,
                        intermediateMBPerMinute: Recorder.intermediateBytesPerSecond1080p30 * 60 / 1e6)
        var survey = MachineSurvey(processor: EncoderSpeed.processorModel, cpus: cpus, threads: cpus.wholeCPUs,
                                   recordPlan: .record(cpus: cpus, output: PiPLayout.defaultCanvas),
                                   composePlan: .compose(cpus: cpus, output: PiPLayout.defaultCanvas,
                                                         inputs: [PiPLayout.defaultCanvas, Size(width: 1280, height: 720)]),
                                   encoders: figures, hardwareEncoders: hardware, disk: disk, advice: [])
        (survey.disk.writeMBPerSecond, survey.disk.writeError) = DiskSpeed.measure(folder)
        if let choice = EncoderSpeed.choose(liveSettings(.hevc, PiPLayout.defaultCanvas), candidates: survey.recordPlan.liveCandidates,
                                            cpus: cpus, rate: liveFPS, cache: cache, mayMeasure: false) {
            survey.recordPlan.encoder = choice.threading
        }
        survey.advice = advice(figures: figures, disk: survey.disk, cpus: cpus)
        return survey
    }

    static func liveSettings(_ codec: VideoEncoderSettings.Codec, _ size: Size) -> VideoEncoderSettings {
        var s = VideoEncoderSettings()
        s.codec = codec
        s.size = size
        s.framesPerSecond = rate
        return s
    }

    /// The fastest live configuration of `codec` at `size` here (remembered, or measured now).
    static func figure(codec: VideoEncoderSettings.Codec, size: Size, cpus: CPUAllowance, cache: URL?) -> EncoderFigure {
        let settings = liveSettings(codec, size)
        let candidates = codec == .hevc ? StagePlan.liveCandidates(cpus: cpus.wholeCPUs) : [EncoderThreading(threads: cpus.wholeCPUs)]
        let choice = EncoderSpeed.choose(settings, candidates: candidates, cpus: cpus, rate: liveFPS, cache: cache)
        return EncoderFigure(codec: codec.rawValue, encoder: settings.encoder, width: size.width, height: size.height,
                             fps: choice.map { ($0.fps * 10).rounded() / 10 },
                             threading: choice?.threading.text(for: settings.encoder) ?? "did not open",
                             keepsUp: (choice?.fps ?? 0) >= liveFPS, measured: choice?.measured ?? false,
                             busy: choice?.busy ?? false)
    }

    /// What to change, one line each, where something will not keep up: never empty.
    package static func advice(figures: [EncoderFigure], disk: Disk, cpus: CPUAllowance) -> [String] {
        var lines: [String] = []
        let slow = figures.filter { !$0.keepsUp }
        for f in slow where f.codec == "hevc" {
            let h264 = figures.first { $0.codec == "h264" && $0.width == f.width && $0.keepsUp }
            let smaller = figures.filter { $0.codec == "hevc" && $0.width < f.width && $0.keepsUp }.max { $0.width < $1.width }
            var ways: [String] = []
            if let smaller { ways.append("--size \(smaller.width)x\(smaller.height) records HEVC live") }
            if h264 != nil { ways.append("--codec h264 records \(f.width)x\(f.height) live") }
            lines.append(String(format: "HEVC at %dx%d encodes %.1f fps here, under %d with a live take's headroom: such a take goes on "
                                + "in the intermediate, which the HEVC encoder works through during the take, and what it has not "
                                + "reached is encoded after the stop (every frame kept)", f.width, f.height,
                                f.fps ?? 0, Int(rate)) + (ways.isEmpty ? "" : "; " + ways.joined(separator: ", ")))
        }
        for f in slow where f.codec == "h264" {
            let fps = f.fps ?? 0
            lines.append(fps < Double(rate)
                ? String(format: "H.264 at %dx%d encodes %.1f fps here, under %d: at that size even the intermediate (H.264) "
                         + "cannot keep up and frames are skipped; record a smaller --size", f.width, f.height, fps, Int(rate))
                : String(format: "H.264 at %dx%d encodes %.1f fps here, little above %d: with the cameras' work beside it a take "
                         + "of that size may fall behind, and the intermediate (H.264 too) with it", f.width, f.height, fps, Int(rate)))
        }
        if let q = cpus.quota, q < Double(cpus.allowed.count) {
            lines.append(String(format: "a CPU quota of %g limits this process to %d thread%@ at once: a larger quota is the "
                                + "fastest change", q, cpus.wholeCPUs, cpus.wholeCPUs == 1 ? "" : "s"))
        }
        if !ThreadPriority.picturesMayBeRaised {
            lines.append("capture and composing cannot run above other programs here: beside programs that keep every CPU busy "
                         + "they wait their turn (composing p99 15-31 ms beside two busy loops on two cores, 10-13 where permitted); "
                         + "an RLIMIT_NICE of 25 lets them (e.g. '@audio - nice -5' in /etc/security/limits.conf, for a user in "
                         + "the audio group)")
        }
        if let error = disk.writeError {
            lines.append("\(disk.folder): \(error): a take cannot be written there; record elsewhere (-o PATH)")
        }
        if let speed = disk.writeMBPerSecond, speed * 60 < disk.intermediateMBPerMinute * 1.5 {
            lines.append(String(format: "%@ writes %.0f MB/s: the intermediate a busy take falls back on needs up to %.0f MB/s; "
                                + "record onto a faster disk", disk.folder, speed, disk.intermediateMBPerMinute / 60))
        }
        if let free = disk.freeBytes, Double(free) / 1e6 < disk.intermediateMBPerMinute * 10 {
            lines.append(String(format: "%@ has room for %.0f minutes of intermediate: a busy take falls back on it, so free "
                                + "some space or record elsewhere", disk.folder, Double(free) / 1e6 / disk.intermediateMBPerMinute))
        }
        if lines.isEmpty { lines.append("nothing to change: 1080p and 4K HEVC keep up live here") }
        return lines
    }

    static func freeBytes(_ folder: String) -> Int64? {
        var s = statvfs()
        guard statvfs(folder, &s) == 0 else { return nil }
        return Int64(s.f_bavail) * Int64(s.f_frsize)
    }
}
