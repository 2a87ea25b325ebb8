import CFFmpeg
import Compositor
import Foundation

/// How many frames per second the chosen video encoder manages on this machine, measured
/// on a short synthetic clip of the output size with moving detail (a flat picture would
/// flatter it), and remembered per setting in the user's cache folder so a recording starts
/// at once the next time.
public enum EncoderSpeed {
    /// Encodes for about `seconds` (at least 8 frames, at most 60) and returns frames per second.
    public static func measure(_ settings: VideoEncoderSettings, seconds: Double = 1.2) throws(MediaError) -> Double {
        var s = settings
        s.inOrder = true  // as a recording encodes
        s.wavefront = false
        let encoder = try VideoEncoder(settings: s)
        // Painted before the clock starts: only the encoder (and a frame copy, as the
        // product makes) is timed.
        let clip = (0..<4).map { i in
            let b = I420Buffer(size: s.size)
            paint(b.view, frame: i)
            return b
        }
        let start = monotonicNow()
        var sent = 0
        while sent < 60 && (sent < 8 || monotonicNow() - start < seconds) {
            try encoder.canvas().copy(from: clip[sent % clip.count].view)
            try encoder.send(frameIndex: Int64(sent)) { _ in }
            sent += 1
        }
        try encoder.encode(nil) { _ in }  // what is still in its lookahead counts too
        return Double(sent) / (monotonicNow() - start)
    }

    /// Soft bands drifting across smooth gradients, with a little sensor-like grain: motion
    /// and detail in the measure of a camera's picture (a flat picture flatters the encoder,
    /// fine texture everywhere wrongs it tenfold).
    static func paint(_ view: I420View, frame: Int) {
        @inline(__always) func triangle(_ v: Int) -> Int { abs((v & 255) - 128) }
        for y in 0..<view.y.height {
            let row = view.y.row(y)
            for x in 0..<view.y.width {
                let v = 30 + triangle(x / 3 + 4 * frame) / 2 + triangle((y + x / 4) / 2) + ((x &* 7 &+ y &* 13 &+ frame) & 3)
                row[x] = UInt8(clamping: v)
            }
        }
        for plane in [view.u, view.v] {
            for y in 0..<plane.height {
                let row = plane.row(y)
                for x in 0..<plane.width { row[x] = UInt8(clamping: 96 + triangle(x + y / 2 + 2 * frame) / 4) }
            }
        }
    }

    /// What the measurement is remembered by: everything that changes the encoder's work.
    public static func key(_ s: VideoEncoderSettings) -> String {
        "\(s.encoder) \(s.preset) \(s.bitrate.map { "\($0)b/s" } ?? "crf\(s.crf)") \(s.size) no-wpp "
            + "\(ProcessInfo.processInfo.activeProcessorCount)cpu"
    }

    /// One remembered measurement: what it was, when, and by which build.
    struct Entry: Codable {
        var fps: Double
        /// Seconds since 1970.
        var measuredAt: Double
        /// `buildIdentity` when it was measured.
        var build: String
    }

    /// A remembered figure older than this is measured again: machines change (a figure
    /// taken in a busy moment was once kept for good and warned on every later recording).
    public static let maxAge: Double = 7 * 24 * 3600

    /// This dualcam binary and FFmpeg's libavcodec: another of either can encode at
    /// another speed.
    static let buildIdentity: String = {
        var st = stat()
        let exe = stat("/proc/self/exe", &st) == 0 ? "\(st.st_size)-\(st.st_mtim.tv_sec)" : "unknown"
        return "dualcam \(exe) libavcodec \(avcodec_version())"
    }()

    /// The remembered speed for `settings`, or a new measurement (then remembered). A figure
    /// is measured again when it is older than `maxAge`, came from another build or FFmpeg,
    /// is not a plausible speed, or is under `rate` (a busy moment only ever makes it slower,
    /// so the better of the two is kept and the warning rests on that).
    public static func cachedOrMeasured(_ settings: VideoEncoderSettings, rate: Double = 0, cache: URL?,
                                        now: Double = Date().timeIntervalSince1970) throws(MediaError) -> (fps: Double, measured: Bool) {
        let k = key(settings)
        var known: [String: Entry] = [:]
        // A table in an older layout (bare numbers) is read as empty: measured afresh.
        if let cache, let data = try? Data(contentsOf: cache),
           let table = try? JSONDecoder().decode([String: Entry].self, from: data) {
            known = table
        }
        var previous: Double?
        if let entry = known[k], entry.fps.isFinite, entry.fps >= 0.1, entry.fps <= 100_000,
           entry.build == buildIdentity, now - entry.measuredAt >= 0, now - entry.measuredAt < maxAge {
            if entry.fps >= rate { return (entry.fps, false) }
            previous = entry.fps
        }
        let fps = max(try measure(settings), previous ?? 0)
        if let cache {
            known[k] = Entry(fps: fps, measuredAt: now, build: buildIdentity)
            try? FileManager.default.createDirectory(at: cache.deletingLastPathComponent(), withIntermediateDirectories: true)
            if let data = try? JSONEncoder().encode(known) { try? data.write(to: cache, options: .atomic) }
        }
        return (fps, true)
    }

    /// $XDG_CACHE_HOME/dualcam/encoder-speed.json (~/.cache when unset).
    public static var defaultCache: URL? {
        let env = ProcessInfo.processInfo.environment
        let base = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? env["HOME"].map { $0 + "/.cache" }
        return base.map { URL(fileURLWithPath: $0).appendingPathComponent("dualcam/encoder-speed.json") }
    }
}
