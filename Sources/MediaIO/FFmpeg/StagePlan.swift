import Compositor
import Foundation

/// How a job's work is spread over the CPUs this process may use: the one place every
/// thread count is decided, from `CPUAllowance` and the sizes involved, never from a
/// constant measured on one machine. `--verbose`, `--json`, `record --dry-run` and
/// `dualcam doctor` show it.
public struct StagePlan: Sendable, Equatable, Codable {
    public var cpus: CPUAllowance
    /// libavcodec threads for each input's decoder (`compose`), back then front.
    public var decoderThreads: [Int]
    /// Threads composing each frame (the caller's and helpers).
    public var compositorThreads: Int
    /// The output's encoder. For a live recording the first of `liveCandidates`, until a
    /// measurement on this machine picked another (`LiveEncoderChoice`).
    public var encoder: EncoderThreading
    /// Live configurations worth measuring, fastest on an idle machine first (`record`).
    public var liveCandidates: [EncoderThreading]
    /// x264's frame threads for the intermediate a recording falls back to: two per CPU
    /// allowed (one on one), at most 16. It runs at the process's level beside whatever else
    /// runs, and the kernel shares the CPUs by thread, so its thread count is its share beside
    /// busy programs. Two cores, two busy loops, a noisy 1080p camera (the busy-take test):
    /// one thread skipped 29 slots of a take that must keep every frame; three (x264's own
    /// rule, a thread and a half per CPU) as zero-latency slices 20-92 in 4 runs, as frame
    /// threads 0-24 in 3; four frame threads 0 in 3.
    public var intermediateThreads: Int
    /// The take's encoder after the stop: nothing else runs then, so the whole machine.
    public var afterStop: EncoderThreading

    /// Decoding one input of a composition, which has no deadline: one thread on two CPUs or
    /// fewer (Benchmarks/compare-ffmpeg.sh, 2 cores: one per input is as fast as libavcodec's
    /// three, and holds 24 MiB less); beyond, a frame thread per CPU, at most 16, as libavcodec
    /// gives the ffmpeg CLI. A frame thread with nothing to decode waits without costing CPU,
    /// so the encoder is the only limit. A thread per started megapixel (1080p: 3) held compose
    /// on 16 cores to 0.71x the ffmpeg CLI at 1080p and its CPUs half busy (7 of 16, ffmpeg 10):
    /// high-rate 1080p H.264 could not feed x265's 142 fps there (Benchmarks/many-cores.sh).
    public static func decoderThreads(cpus: Int) -> Int {
        cpus > 2 ? min(cpus, 16) : 1
    }

    /// The compositor splits a large placement's rows (`ForkJoin`): a second thread nearly
    /// halves a frame, which is bound by the misses a core keeps in flight. A thread for each
    /// started 1080p frame's worth of pixels, two at least (4K: 4, 8K: 16, at most
    /// `PictureScaler.maxThreads`), and never more than half the CPUs beyond two: the
    /// encoder, the slowest stage wherever it was measured, has the rest.
    public static func compositorThreads(pixels: Int, cpus: Int) -> Int {
        guard cpus >= 2 else { return 1 }
        let byPixels = max(2, (pixels + fullHDPixels - 1) / fullHDPixels)
        return min(byPixels, max(2, cpus / 2), PictureScaler.maxThreads)
    }

    private static let fullHDPixels = 1920 * 1080

    /// How many pictures may wait between compose's stages (each input's decoded pictures,
    /// the composed frames before the encoder). On two CPUs or fewer the stages cannot all run
    /// at once, so a third picture bought nothing and held its memory: two each made compose
    /// as fast (1.03-1.04x the ffmpeg CLI against 1.044x) in 7-11 MiB less at 1080p (337-340 MiB
    /// peak against ffmpeg's 347; three each: 348; Benchmarks/compare-ffmpeg.sh). Beyond, where decoders, composer and encoder run
    /// side by side, three absorb their uneven paces, as measured on 16 cores (peak RSS under
    /// ffmpeg's there).
    public static func composeQueueDepth(cpus: Int) -> Int { cpus <= 2 ? 2 : 3 }

    /// A composition: every input and the encoder as fast as they go, side by side.
    public static func compose(cpus: CPUAllowance, output: Size, inputs: [Size]) -> StagePlan {
        let n = cpus.wholeCPUs
        return StagePlan(cpus: cpus, decoderThreads: inputs.map { _ in decoderThreads(cpus: n) },
                         compositorThreads: compositorThreads(pixels: output.width * output.height, cpus: n),
                         encoder: EncoderThreading(threads: n, wavefront: n > 1), liveCandidates: [],
                         intermediateThreads: intermediateThreads(cpus: n), afterStop: EncoderThreading(threads: n))
    }

    /// A recording: the live encoder's candidates, the intermediate, the encoding after the stop.
    /// `steady`: the take is encoded live, with no intermediate to fall back on.
    public static func record(cpus: CPUAllowance, output: Size, steady: Bool = false) -> StagePlan {
        let n = cpus.wholeCPUs
        let candidates = liveCandidates(cpus: n, steady: steady)
        return StagePlan(cpus: cpus, decoderThreads: [], compositorThreads: compositorThreads(pixels: output.width * output.height, cpus: n),
                         encoder: candidates[0], liveCandidates: candidates,
                         intermediateThreads: intermediateThreads(cpus: n),
                         afterStop: EncoderThreading(threads: n, wavefront: candidates[0].wavefront))
    }

    static func intermediateThreads(cpus n: Int) -> Int { n == 1 ? 1 : min(16, 2 * n) }

    /// x265's in-order configurations for a live take, over `cpus` threads, the one a
    /// recording takes unmeasured (`--skip-speed-check` with nothing remembered) first. The
    /// wavefront (the rows of a frame in parallel) is the fastest idle everywhere measured
    /// (ffmpeg CLI, raw 1080p: 49.5 fps against 43.7 without on 2 cores, 123 against 40 on
    /// 16), and on two or three CPUs x265 makes one frame thread, where a second beside the
    /// wavefront made 51.1. Beside a busy neighbour the wavefront collapses (4.7 fps against
    /// 10-30 on 2 cores): `steady` (a take encoded live, where what the encoder cannot take is
    /// lost) on two or three CPUs, where a neighbour takes half the machine, puts the one
    /// without it, with frame threads, first (`LiveEncoderChoice` keeps it while it holds the
    /// rate). With the intermediate to fall back on (`--encode auto`) speed comes first.
    public static func liveCandidates(cpus n: Int, steady: Bool = false) -> [EncoderThreading] {
        var candidates: [EncoderThreading]
        if n == 1 {
            candidates = [EncoderThreading(threads: 1, wavefront: true), EncoderThreading(threads: 1, wavefront: false)]
        } else if n < 4 {
            candidates = [EncoderThreading(threads: n, wavefront: true), EncoderThreading(threads: n, frameThreads: 2, wavefront: true),
                          EncoderThreading(threads: n, frameThreads: 2, wavefront: false)]
        } else {
            return [EncoderThreading(threads: n, wavefront: true), EncoderThreading(threads: n, frameThreads: min(n, 4), wavefront: false)]
        }
        if steady, let without = candidates.firstIndex(where: { !$0.wavefront }) { candidates.insert(candidates.remove(at: without), at: 0) }
        return candidates
    }

    /// The plan as lines for `--verbose`, `--dry-run` and `doctor`.
    public func lines(encoder name: String, intermediate: Bool = false) -> [String] {
        // Each count with the rule that gave it: a count alone left users to guess why
        // (three x264 threads on two CPUs).
        var lines = ["CPUs: \(cpus.description)"]
        if !decoderThreads.isEmpty {
            lines.append("decoders: " + decoderThreads.map { "\($0) thread\($0 == 1 ? "" : "s")" }.joined(separator: ", ")
                         + " (one on two CPUs or fewer, else a frame thread per CPU, at most 16)")
        }
        lines.append("compositor: \(compositorThreads) thread\(compositorThreads == 1 ? "" : "s") (one per started 1080p of output "
                     + "pixels, two at least, at most half the CPUs beyond two)")
        lines.append("encoder \(name): \(encoder.text(for: name))")
        if intermediate {
            lines.append("intermediate libx264: \(intermediateThreads) thread\(intermediateThreads == 1 ? "" : "s") (two per CPU allowed, "
                         + "at most 16: the kernel shares CPUs by thread, so it keeps its share beside other programs)")
            let decoders = Self.decoderThreads(cpus: cpus.wholeCPUs)
            lines.append("the intermediate worked through during the take by \(name): as live, at the encoders' priority, "
                         + "its packets decoded on \(decoders) thread\(decoders == 1 ? "" : "s")")
            lines.append("after the stop \(name): \(afterStop.text(for: name))")
        }
        return lines
    }
}
