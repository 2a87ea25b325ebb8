import CFFmpeg
import CLinuxCalls
import Compositor
import Foundation

/// How many frames per second the chosen video encoder manages on this machine, measured
/// on a short synthetic clip of the output size with moving detail (a flat picture would
/// flatter it), and remembered per setting in the user's cache folder so a recording starts
/// at once the next time.
public enum EncoderSpeed {
    /// How long each configuration is measured for.
    public static let measuringSeconds = 1.2

    /// Encodes for about `seconds` (at least 8 frames, at most 90) and returns frames per second.
    /// `stop`: asked before each frame; true sends no more and lets the encoder finish.
    /// `packetOut`: told of each packet the encoder gives.
    /// `begun`: told as the clock starts, the clip painted and the encoder open.
    public static func measure(_ settings: VideoEncoderSettings, seconds: Double = measuringSeconds, stop: () -> Bool = { false },
                               packetOut: () -> Void = {}, begun: () -> Void = {}) throws(MediaError) -> Double {
        var s = settings
        s.inOrder = true  // as a recording encodes
        let encoder = try VideoEncoder(settings: s)
        // Painted before the clock starts: only the encoder (and a frame copy, as the
        // product makes) is timed.
        let clip = (0..<4).map { i in
            let b = I420Buffer(size: s.size)
            paint(b.view, frame: i)
            return b
        }
        let start = monotonicNow()
        begun()
        var sent = 0
        while sent < 90 && (sent < 8 || monotonicNow() - start < seconds) && !stop() {
            try encoder.canvas().copy(from: clip[sent % clip.count].view)
            try encoder.send(frameIndex: Int64(sent)) { _ in packetOut() }
            sent += 1
        }
        try encoder.encode(nil) { _ in packetOut() }  // what is still in its lookahead counts too
        return Double(sent) / (monotonicNow() - start)
    }

    /// A measurement not over after `patience` times its `seconds` of encoding (the clip's
    /// painting, slow in a debug build, not counted) is left to end by itself,
    /// sent no more frames and its threads put at the lowest priority, and counts as at most
    /// what came out of it by then: at 8K with placebo one frame takes minutes, and
    /// `record --dry-run` sat silent for over two of them measuring it.
    public static let patience = 4.0

    /// `measure` on a thread of its own, for at most `seconds * patience`: frames per second
    /// and whether it was cut short (then at most that); nil when the encoder does not open.
    static func measureWithin(_ settings: VideoEncoderSettings, seconds: Double) -> (fps: Double, cutShort: Bool)? {
        struct Progress { var stop = false, packets = 0, fps: Double?, begun: Double? }
        let progress = Locked(Progress())
        let name = "dualcam-measure"
        let thread = OwnedThread(name: name) {
            let fps = try? measure(settings, seconds: seconds, stop: { progress.withLock { $0.stop } },
                                   packetOut: { progress.withLock { $0.packets += 1 } },
                                   begun: { progress.withLock { $0.begun = monotonicNow() } })
            progress.withLock { $0.fps = fps }
        }
        while !thread.join(timeout: 0.05) {
            guard let begun = progress.withLock({ $0.begun }), monotonicNow() - begun > seconds * patience else { continue }
            let packets = progress.withLock { p in p.stop = true; return p.packets }
            // Every thread the encoder started carries the measuring thread's name.
            dc_lower_threads_named(name, 19)
            return (Double(max(1, packets)) / (monotonicNow() - begun), true)
        }
        return progress.withLock { $0.fps }.map { ($0, false) }
    }

    /// Soft bands drifting across smooth gradients under a camera's grain, new in every
    /// frame: motion and noise in the measure of a camera's picture. A flat picture flatters
    /// the encoder, fine texture everywhere wrongs it tenfold, and a grain that repeats with
    /// the motion (as this clip's did) is predicted away: x265 encoded that clip 1.2-1.7x
    /// faster than composed testsrc2 with sensor-like noise at ultrafast and medium (1080p
    /// ultrafast 88 fps against 62-65; medium 40 against 29-30), so a take the check called
    /// live fell behind at once. Uniform grain of +-10 in luma and +-5 in chroma brings it within
    /// that content's range at ultrafast and below it at veryfast and medium
    /// (Benchmarks/HISTORY.md, "Speed check clip"). Under +-9 CRF 28 quantizes the grain away and
    /// the clip flatters again; the step is steep, so the figure errs towards slow.
    static func paint(_ view: I420View, frame: Int) {
        @inline(__always) func triangle(_ v: Int) -> Int { abs((v & 255) - 128) }
        @inline(__always) func grain(_ x: Int, _ y: Int, _ salt: UInt32, amplitude: Int) -> Int {
            var h = UInt32(truncatingIfNeeded: x) &* 0x9E37_79B1 &+ UInt32(truncatingIfNeeded: y) &* 0x85EB_CA77
                &+ UInt32(truncatingIfNeeded: frame) &* 0xC2B2_AE3D &+ salt
            h = (h ^ (h >> 15)) &* 0x2C1B_3C6D
            h ^= h >> 12
            return Int(h % UInt32(2 * amplitude + 1)) - amplitude
        }
        for y in 0..<view.y.height {
            let row = view.y.row(y)
            for x in 0..<view.y.width {
                let v = 30 + triangle(x / 3 + 4 * frame) / 2 + triangle((y + x / 4) / 2) + grain(x, y, 0, amplitude: 10)
                row[x] = UInt8(clamping: v)
            }
        }
        for (plane, salt) in [(view.u, UInt32(1)), (view.v, 2)] {
            for y in 0..<plane.height {
                let row = plane.row(y)
                for x in 0..<plane.width { row[x] = UInt8(clamping: 96 + triangle(x + y / 2 + 2 * frame) / 4 + grain(x, y, salt, amplitude: 5)) }
            }
        }
    }

    /// The clip `paint` makes, remembered with each figure: a figure measured on another
    /// clip is measured again.
    static let clipVersion = 2

    /// One remembered choice: the configurations tried, their speeds, the one kept, when.
    struct Entry: Codable {
        var trials: [Trial]
        /// Seconds since 1970.
        var measuredAt: Double
        /// `libraryIdentity` when it was measured.
        var libraries: String
        /// Other programs kept the CPUs busy while it was measured.
        var busy = false
        /// `clipVersion` when it was measured (none before the clip had grain).
        var clip: Int?
    }

    /// A configuration and the frames per second it made.
    public struct Trial: Codable, Sendable, Equatable {
        public var threading: EncoderThreading
        public var fps: Double
        /// The measurement was cut short (`patience`), or not made after one was: `fps` is
        /// at most what it makes.
        public var cutShort: Bool? = nil
    }

    /// A remembered choice older than this is measured again: machines change.
    public static let maxAge: Double = 7 * 24 * 3600
    /// ...and one under the rate asked after an hour: a figure taken in a busy moment is only
    /// ever slower than the machine (one kept for good once warned on every later recording),
    /// but measuring again at every start cost each of them 1.5 s.
    public static let slowFigureAge: Double = 3600
    /// ...and one measured while other programs kept the CPUs busy after ten minutes: it says
    /// what that moment allowed (1080p HEVC measured 5-20 fps here beside two busy loops, and
    /// 45-51 idle), and chose for it: wavefront collapses under load.
    public static let busyFigureAge: Double = 600
    /// Other programs' CPU time, in CPUs, from which a measurement counts as taken while busy.
    public static let busyCPUs = 0.5

    /// The FFmpeg and x265 libraries this process runs with: another of either can encode at
    /// another speed. (Not dualcam's own build: it hands the encoder the same frames.)
    static let libraryIdentity: String = {
        let x265: String
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "x265_version_str"),
           let text = symbol.assumingMemoryBound(to: UnsafePointer<CChar>?.self).pointee {
            x265 = String(cString: text)
        } else {
            x265 = "unknown"
        }
        return "libavcodec \(avcodec_version()) x265 \(x265)"
    }()

    /// The processor's model, as /proc/cpuinfo names it.
    public static let processorModel: String = {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = info.split(separator: "\n").first { $0.hasPrefix("model name") || $0.hasPrefix("Processor") }
        return line.flatMap { $0.split(separator: ":", maxSplits: 1).last }.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
    }()

    /// What a choice is remembered by: everything that changes the encoder's work but the
    /// threading it chooses (this machine, the CPUs allowed, the settings).
    public static func key(_ s: VideoEncoderSettings, cpus: CPUAllowance) -> String {
        "\(s.encoder) \(s.preset) \(s.bitrate.map { "\($0)b/s" } ?? "crf\(s.crf)") \(s.size) in-order; "
            + "\(processorModel); \(cpus.description)"
    }

    /// The fastest of `candidates` for `settings` on this machine, remembered in `cache`, or
    /// measured now (each for about `seconds`) and remembered. With `mayMeasure` false only
    /// a remembered choice is returned (nil when there is none). `othersBusy`: other programs
    /// keep the CPUs busy as the take starts (`LiveEncoderChoice`).
    public static func choose(_ settings: VideoEncoderSettings, candidates: [EncoderThreading], cpus: CPUAllowance,
                              rate: Double, steady: Bool = false, othersBusy: Bool = false, cache: URL?, mayMeasure: Bool = true,
                              seconds: Double = measuringSeconds, now: Double = Date().timeIntervalSince1970) -> LiveEncoderChoice? {
        let k = key(settings, cpus: cpus)
        let steady = steady && LiveEncoderChoice.steadyMatters(cpus: cpus.wholeCPUs)
        if let entry = table(in: cache)[k], entry.libraries == libraryIdentity, entry.clip == clipVersion,
           now - entry.measuredAt >= 0, now - entry.measuredAt < maxAge,
           Set(entry.trials.map(\.threading)) == Set(candidates),
           entry.trials.allSatisfy({ $0.fps.isFinite && $0.fps >= 0.1 && $0.fps <= 100_000 }),
           var best = LiveEncoderChoice(trials: entry.trials, measured: false, rate: rate, steady: steady, othersBusy: othersBusy),
           !mayMeasure || (entry.busy ? now - entry.measuredAt < busyFigureAge
                                      : best.fps >= rate || now - entry.measuredAt < slowFigureAge) {
            best.busy = entry.busy
            return best
        }
        guard mayMeasure else { return nil }
        var trials: [Trial] = []
        let others = OtherProgramsLoad()
        var bound: Double?
        for threading in candidates {
            // After one cut short the others would be too: each counts as at most as fast.
            if let bound {
                trials.append(Trial(threading: threading, fps: bound, cutShort: true))
                continue
            }
            var s = settings
            s.threading = threading
            guard let (fps, cutShort) = measureWithin(s, seconds: seconds) else { continue }
            trials.append(Trial(threading: threading, fps: fps, cutShort: cutShort ? true : nil))
            if cutShort { bound = fps }
        }
        guard var choice = LiveEncoderChoice(trials: trials, measured: true, rate: rate, steady: steady, othersBusy: othersBusy)
        else { return nil }
        choice.busy = others.cpus() >= busyCPUs
        if let cache, !remember(Entry(trials: trials, measuredAt: now, libraries: libraryIdentity, busy: choice.busy, clip: clipVersion),
                                as: k, in: cache) {
            choice.notRememberedIn = cache.path
        }
        return choice
    }

    /// The remembered table; empty when there is none or it is in another layout (measured afresh).
    static func table(in cache: URL?) -> [String: Entry] {
        guard let cache, let data = try? Data(contentsOf: cache),
              let table = try? JSONDecoder().decode([String: Entry].self, from: data) else { return [:] }
        return table
    }

    /// Adds `entry` to the table in `cache`, read again under a lock beside it: two dualcams
    /// measuring at once each keep what the other measured (the last writer's table replaced
    /// the other's whole). A lock still held after `lockPatience` seconds (another program
    /// holding it, a stopped dualcam) is not waited for: the figure is used by this run and
    /// not remembered (a held lock kept `record` and `doctor` silent until it was let go).
    /// Returns whether the table was written.
    @discardableResult
    static func remember(_ entry: Entry, as key: String, in cache: URL) -> Bool {
        let folder = cache.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let lock = open(folder.appendingPathComponent(".live-encoder.lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        defer { if lock >= 0 { close(lock) } }
        if lock >= 0 {
            let giveUp = monotonicNow() + lockPatience
            while flock(lock, LOCK_EX | LOCK_NB) != 0 {
                guard errno == EWOULDBLOCK || errno == EINTR, monotonicNow() < giveUp else { return false }
                usleep(20_000)
            }
        }
        var known = table(in: cache)
        known[key] = entry
        guard let data = try? JSONEncoder().encode(known) else { return false }
        return (try? data.write(to: cache, options: .atomic)) != nil
    }

    /// How long `remember` waits for another writer: writing the table takes milliseconds.
    static let lockPatience = 2.0

    /// $XDG_CACHE_HOME/dualcam/live-encoder.json (~/.cache when unset). Not the earlier
    /// encoder-speed.json: a dualcam from before kept another layout there, and replaced this
    /// one's table whole whenever it ran. A HOME that does not exist (a service account's
    /// /nonexistent) is never made: nothing is remembered then.
    public static var defaultCache: URL? {
        let env = ProcessInfo.processInfo.environment
        // A relative XDG_CACHE_HOME is to be ignored (the XDG base directory specification).
        var isFolder: ObjCBool = false
        let base = env["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? env["HOME"].flatMap { home in
                home.hasPrefix("/") && FileManager.default.fileExists(atPath: home, isDirectory: &isFolder) && isFolder.boolValue
                    ? home + "/.cache" : nil
            }
        return base.map { URL(fileURLWithPath: $0).appendingPathComponent("dualcam/live-encoder.json") }
    }
}

/// The live encoder's configuration kept for this machine: the fastest measured, except for a
/// take encoded live (`--encode live`, a stream) on two or three CPUs, where one that holds
/// the rate without the wavefront is kept before a faster one with it. There a busy neighbour
/// takes half the machine, and the wavefront, whose rows wait on each other, collapses under
/// it: on two cores beside two busy loops, 1080p x265 made 4.7-5.3 fps with it against 10-30
/// without, and a live take killed at 8 s kept under 4.5 s of picture (5.6 s without). With
/// the intermediate to fall back on (`--encode auto`) the fastest is kept: idle it is what
/// keeps a take live (here 45-67 fps with the wavefront, 41-50 without: a take of two 1080p
/// files fell behind at 6 s at 41). On more CPUs a neighbour takes a smaller share, and
/// without the wavefront x265 is far slower (16 cores: 40 fps against 123).
public struct LiveEncoderChoice: Sendable, Equatable {
    public var threading: EncoderThreading
    public var fps: Double
    /// Every configuration tried, in the order tried.
    public var trials: [EncoderSpeed.Trial]
    /// Measured by this run (not remembered from an earlier one).
    public var measured: Bool
    /// Measured while other programs kept the CPUs busy: the figures are that moment's.
    public var busy = false
    /// Kept for other programs keeping the CPUs busy as the take started.
    public var keptForBusyMachine = false
    /// Measured now, but the table at this path could not be written (a read-only cache
    /// folder, a lock held elsewhere): every start measures again.
    public var notRememberedIn: String?

    /// Whether on `cpus` whole CPUs a steady configuration is worth some speed.
    public static func steadyMatters(cpus: Int) -> Bool { cpus <= 3 }

    /// The one of `trials` to keep for `rate` (what a live take needs, headroom included):
    /// with `steady`, the fastest without the wavefront that holds it, and with `othersBusy`
    /// too the fastest without it whatever it made (the figures are an idle machine's: beside
    /// the busy programs the wavefront's are the ones that collapse; a 2-CPU machine whose
    /// no-wavefront figure was 30 fps kept the wavefront for 36, and a live take beside two
    /// busy loops killed at 8 s kept no picture at all); else the fastest (the first of
    /// equals). nil when there is none.
    init?(trials: [EncoderSpeed.Trial], measured: Bool, rate: Double, steady: Bool, othersBusy: Bool = false) {
        func fastest(_ among: [EncoderSpeed.Trial]) -> EncoderSpeed.Trial? {
            guard var best = among.first else { return nil }
            for trial in among.dropFirst() where trial.fps > best.fps { best = trial }
            return best
        }
        let held = trials.filter { !$0.threading.wavefront && ($0.fps >= rate || othersBusy) }
        guard let best = (steady ? fastest(held) : nil) ?? fastest(trials) else { return nil }
        threading = best.threading
        fps = best.fps
        keptForBusyMachine = steady && othersBusy && !best.threading.wavefront && best.fps < rate
        self.trials = trials
        self.measured = measured
    }
}

/// The CPU time other programs take from the moment it is made: the machine's busy time
/// (/proc/stat) less this process's own (getrusage), in CPUs.
package struct OtherProgramsLoad {
    private let start: (machine: Double, own: Double, wall: Double)?

    package init() { start = Self.sample() }

    /// Whether other programs use at least `EncoderSpeed.busyCPUs` over the next `seconds`
    /// (a sleep: /proc/stat counts in hundredths of a second).
    package static func busyNow(over seconds: Double = 0.2) -> Bool {
        let load = OtherProgramsLoad()
        usleep(UInt32(seconds * 1e6))
        return load.cpus() >= EncoderSpeed.busyCPUs
    }

    /// CPUs' worth of time others used since `init`; 0 when it cannot be told.
    package func cpus() -> Double {
        guard let start, let end = Self.sample(), end.wall > start.wall else { return 0 }
        return max(0, (end.machine - start.machine) - (end.own - start.own)) / (end.wall - start.wall)
    }

    private static func sample() -> (machine: Double, own: Double, wall: Double)? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return nil }
        // user nice system idle iowait irq softirq steal: all but idle and iowait is busy.
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 5 else { return nil }
        let busy = ticks.prefix(8).enumerated().filter { $0.offset != 3 && $0.offset != 4 }.reduce(0) { $0 + $1.element }
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let own = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return (busy / hz, own, monotonicNow())
    }
}
