import MediaIO
@testable import Pipeline
import Foundation
import Synchronization
import Testing

/// Paths and processes shared by the end-to-end tests, which run the real `dualcam` binary
/// and check its output with FFmpeg's own command-line tools.
enum Env {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func fixture(_ name: String) -> String { repoRoot.appendingPathComponent("Fixtures/\(name)").path }

    /// Run by Scripts/sanitizers.sh: the dualcam under test is instrumented, several times
    /// slower, and the question is its threads, not whether it keeps real time.
    static let sanitized = ProcessInfo.processInfo.environment["DUALCAM_SANITIZED"] == "1"

    /// The `dualcam` the tests run: the release build where Scripts/test.sh gives it to the
    /// suites that run in real time (DUALCAM_TEST_BINARY), else the one built beside this
    /// bundle. Real time is the release build's question, as users run it: the README's file
    /// recipes took 86 s on it against 170 s on the debug build, and in the emulated VM, which
    /// emulates every instruction, a `devices` scenario took 24.7 s against 31.9-37.5 s. The
    /// suites without real time, the fuzzers and the campaigns run the debug build.
    static let dualcam: String = ProcessInfo.processInfo.environment["DUALCAM_TEST_BINARY"] ?? built("dualcam")

    /// A product built beside this test bundle (swift test builds every product).
    static func built(_ product: String) -> String { builtProducts.appendingPathComponent(product).path }
    static let builtProducts: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // The test runner may sit inside a .xctest bundle directory.
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("dualcam").path) && dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()

    /// Whether this CPU has AVX-512 (the kernel's flags for the first CPU).
    static let hostHasAVX512: Bool = {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        return info.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").contains("avx512f") ?? false
    }()

    static func tool(_ name: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let p = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return nil
    }

    /// For a test that needs something a developer's machine may lack (root, a VM): says
    /// why it cannot run, and fails instead where CI demands every test (DUALCAM_REQUIRE_ALL=1).
    /// Returns whether the test can go on.
    static func canRun(_ needed: Bool, otherwise why: String) -> Bool {
        if needed { return true }
        if ProcessInfo.processInfo.environment["DUALCAM_REQUIRE_ALL"] == "1" {
            Issue.record("cannot run: \(why) (DUALCAM_REQUIRE_ALL=1 makes this a failure)")
        } else {
            print("NOT RUN: \(why)")
        }
        return false
    }

    /// Fails loudly (not a silent skip) when the independent checkers are missing.
    static func requireFFmpegTools() throws {
        guard tool("ffmpeg") != nil, tool("ffprobe") != nil else {
            Issue.record("ffmpeg/ffprobe not installed: run Scripts/setup.sh (apt-get install ffmpeg)")
            throw CancellationError()
        }
        guard FileManager.default.isExecutableFile(atPath: dualcam) else {
            Issue.record("dualcam binary not found at \(dualcam)")
            throw CancellationError()
        }
    }
}

struct RunResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: true) }
}

/// What a child has written so far, readable while it runs: a test waits for the line that
/// says the program got somewhere instead of guessing how long that takes on this machine.
final class ChildOutput: Sendable {
    // A lock ThreadSanitizer sees (Synchronization's Mutex is a futex it does not: each pipe's
    // reader was reported racing the other).
    private let buffers = Locked((out: Data(), err: Data(), ended: 0))

    var stdout: String { buffers.withLock { String(decoding: $0.out, as: UTF8.self) } }
    var stderr: String { buffers.withLock { String(decoding: $0.err, as: UTF8.self) } }
    /// Both pipes are at their end: the child has exited (or closed them), nothing more comes.
    var ended: Bool { buffers.withLock { $0.ended == 2 } }

    /// Reads `pipe` to its end on a thread of its own; `group` is left when it has.
    fileprivate func drain(_ pipe: Pipe, isStderr: Bool, group: DispatchGroup) {
        group.enter()
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffers.withLock { if isStderr { $0.err.append(chunk) } else { $0.out.append(chunk) } }
            }
            buffers.withLock { $0.ended += 1 }
            group.leave()
        }
    }

    /// Waits until the child has said `text` (on stderr, or on stdout with `onStdout`), and
    /// returns when it was seen; nil, with an Issue, when it ended or `timeout` passed first.
    @discardableResult
    func waitFor(_ text: String, onStdout: Bool = false, timeout: Double = 60,
                 sourceLocation: SourceLocation = #_sourceLocation) -> Date? {
        var gaveUp = false
        let said = waitUntil("the line \"\(text)\"", timeout: timeout, quietly: true, sourceLocation: sourceLocation) {
            // Whether it had ended before the look: its last words may hold the line.
            let over = ended
            if (onStdout ? stdout : stderr).contains(text) { return true }
            gaveUp = over
            return over
        }
        guard said, !gaveUp else {
            let why = gaveUp ? "the program ended" : "\(timeout) s passed"
            Issue.record("\(why) before it said \"\(text)\"; it said: \(stderr.suffix(2000))", sourceLocation: sourceLocation)
            return nil
        }
        return Date()
    }

    /// Waits until the program has said it records (the take's file opens once the cameras
    /// deliver, which takes anything from 0.1 s to several on a busy machine) and then until
    /// `seconds` of take have passed since; when it said so (nil, with an Issue, if never).
    @discardableResult
    func waitForTake(of seconds: Double, timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) -> Date? {
        guard let started = waitFor("recording to", timeout: timeout, sourceLocation: sourceLocation) else { return nil }
        waitUntil(seconds, after: started, sourceLocation: sourceLocation)
        return started
    }
}

/// The size of the largest file process `pid` has open in `folder` (0 if none): how far
/// a writer has got, even with a file that has no name until it is whole.
func bytesWritten(by pid: Int32, in folder: String) -> Int {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
    return fds.map { fd -> Int in
        var st = stat()
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) ?? ""
        guard target.hasPrefix(folder + "/"), stat("/proc/\(pid)/fd/\(fd)", &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return 0 }
        return Int(st.st_size)
    }.max() ?? 0
}

/// Until `seconds` have passed since `moment`: a time in the take, counted from what the
/// program said (when it started recording, paused, ...) rather than from its launch.
func waitUntil(_ seconds: Double, after moment: Date, sourceLocation: SourceLocation = #_sourceLocation) {
    waitUntil("\(seconds) s after \(moment)", timeout: seconds + 5, sourceLocation: sourceLocation) {
        Date().timeIntervalSince(moment) >= seconds
    }
}

/// Polls `condition` every 15 ms until it holds, and says whether it did within `timeout`
/// seconds; when not, the test fails here naming `what` (unless `quietly`: the caller says
/// why itself). The one place the tests sleep to wait for something.
@discardableResult
func waitUntil(_ what: String, timeout: Double, quietly: Bool = false, sourceLocation: SourceLocation = #_sourceLocation,
               _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() >= deadline {
            if !quietly { Issue.record("waited \(timeout) s for \(what) in vain", sourceLocation: sourceLocation) }
            return false
        }
        usleep(15_000)
    }
    return true
}

/// `whileRunning` is called once the child has started, with what it has said so far (the
/// pipes are read meanwhile, so a child that says much never stalls on a full pipe).
@discardableResult
func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
         input: Pipe? = nil, onStart: ((Process) -> Void)? = nil,
         whileRunning: ((Process, ChildOutput) -> Void)? = nil) throws -> RunResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    if !environment.isEmpty {
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = input ?? FileHandle.nullDevice
    try p.run()
    let watchdog = ChildWatchdog(p)
    defer { watchdog.disarm() }
    let live = ChildOutput(), group = DispatchGroup()
    live.drain(out, isStderr: false, group: group)
    live.drain(err, isStderr: true, group: group)
    onStart?(p)
    whileRunning?(p, live)
    group.wait()
    p.waitUntilExit()
    return RunResult(status: p.terminationStatus, stdout: live.stdout, stderr: live.stderr + watchdog.verdict(executable))
}

/// Swift Testing's time limit fails a test but cannot end a child it waits on: a dualcam
/// that never exited held the test process until CI was cut at 90 minutes (2026-11-28). Armed
/// when the child starts, this kills it once the test's own limit has passed since then.
final class ChildWatchdog {
    let limit: Duration
    private final class Flag: Sendable { let raised = Mutex(false) }
    private let fired = Flag()
    private let work: DispatchWorkItem

    init(_ child: Process) {
        limit = Test.current?.timeLimit ?? .seconds(600)
        let fired = self.fired
        work = DispatchWorkItem {
            guard child.isRunning else { return }
            fired.raised.withLock { $0 = true }
            kill(child.processIdentifier, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(limit.components.seconds)), execute: work)
    }

    func disarm() { work.cancel() }
    var killed: Bool { fired.raised.withLock { $0 } }
    /// What a test's failure message should add: nothing, or that the child was killed.
    func verdict(_ executable: String) -> String {
        killed ? "\n(test harness: \(executable) still running after the test's limit of \(limit), killed)" : ""
    }
}

func dualcam(_ arguments: [String], input: Pipe? = nil, onStart: ((Process) -> Void)? = nil) throws -> RunResult {
    try run(Env.dualcam, arguments, input: input, onStart: onStart)
}

/// With what it says while it runs, for a test that acts on it (a trailing closure of two
/// arguments lands here).
func dualcam(_ arguments: [String], input: Pipe? = nil, whileRunning: ((Process, ChildOutput) -> Void)?) throws -> RunResult {
    try run(Env.dualcam, arguments, input: input, whileRunning: whileRunning)
}

/// A scratch directory removed when the test ends.
final class TempDir: Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("dualcam-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    var contents: [String] { (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] }
}

/// ffprobe's view of a file.
struct Probe {
    let json: [String: Any]

    init(_ path: String) throws {
        let r = try run(Env.tool("ffprobe")!, ["-v", "error", "-print_format", "json", "-show_format",
                                                "-show_streams", path])
        guard r.status == 0, let j = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any] else {
            throw ProbeError(message: "ffprobe failed on \(path): \(r.stderr)")
        }
        json = j
    }

    var streams: [[String: Any]] { json["streams"] as? [[String: Any]] ?? [] }
    var format: [String: Any] { json["format"] as? [String: Any] ?? [:] }
    func stream(_ type: String) -> [String: Any]? { streams.first { $0["codec_type"] as? String == type } }
    static func number(_ v: Any?) -> Double? { (v as? String).flatMap(Double.init) ?? (v as? Double) }

    /// Each packet's pts and duration in the stream's own ticks, and its time base.
    static func packets(_ path: String, stream: String) throws -> (times: [(pts: Int, duration: Int)], timeBase: Double) {
        let r = try run(Env.tool("ffprobe")!, ["-v", "error", "-select_streams", stream, "-show_entries",
                                                "stream=time_base:packet=pts,duration", "-of", "csv=p=0", path])
        guard r.status == 0 else { throw ProbeError(message: "ffprobe failed on \(path): \(r.stderr)") }
        var times: [(Int, Int)] = [], timeBase = 0.0
        for line in r.stdout.split(separator: "\n") {
            let f = line.split(separator: ",")
            if f.count == 1, case let q = f[0].split(separator: "/"), q.count == 2, let n = Double(q[0]), let d = Double(q[1]) {
                timeBase = n / d
            } else if f.count >= 2, let pts = Int(f[0]), let duration = Int(f[1]) {
                times.append((pts, duration))
            }
        }
        return (times, timeBase)
    }

    /// Every picture starts on its slot of the output's frame grid (slot 0 first, slots a
    /// too-slow encoder skipped left out) and lasts until the next: no shift by the AAC
    /// encoder's priming. The priming is the audio track's edit list: its first packet
    /// starts 1024 samples before zero and the track at zero.
    static func expectPicturesOnTheirSlots(_ path: String, fps: Int = 30, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (video, tb) = try packets(path, stream: "v:0")
        try #require(!video.isEmpty && tb > 0, "no video packets in \(path)", sourceLocation: sourceLocation)
        let slot = 1 / (Double(fps) * tb)
        #expect(slot == slot.rounded(), "time base \(tb) cannot hold \(fps) fps", sourceLocation: sourceLocation)
        let ticks = Int(slot.rounded())
        let sorted = video.sorted { $0.pts < $1.pts }
        #expect(sorted[0].pts == 0, "first picture at \(sorted[0].pts) ticks", sourceLocation: sourceLocation)
        let off = sorted.filter { $0.pts % ticks != 0 }
        #expect(off.isEmpty, "\(off.count) of \(sorted.count) pictures off their slots, first: \(off.prefix(3))", sourceLocation: sourceLocation)
        let wrong = zip(sorted, sorted.dropFirst()).filter { $0.0.duration != $0.1.pts - $0.0.pts }
        #expect(wrong.isEmpty, "\(wrong.count) durations do not reach the next picture, first: \(wrong.prefix(2))",
                sourceLocation: sourceLocation)
        let (audio, _) = try packets(path, stream: "a:0")
        #expect(audio.map(\.pts).min() == -1024, "audio starts at \(audio.map(\.pts).min() ?? 0), not at the priming",
                sourceLocation: sourceLocation)
        // Finished files read 0 (the demuxer trims the priming); fragmented ones -1024 samples
        // (it shows the priming before zero): either way the first real sample is at zero.
        let start = try Probe(path).stream("audio").flatMap { number($0["start_time"]) } ?? .nan
        #expect(abs(start) < 1e-6 || abs(start + 1024 / 48_000) < 1e-6, "audio track starts at \(start) s",
                sourceLocation: sourceLocation)
    }
}

struct ProbeError: Error { var message: String }

/// Decodes frames with the ffmpeg CLI, as raw 8-bit planes.
enum Decode {
    /// Frame `index` of `path` after the filter chain `filter`, as raw `pixelFormat` bytes.
    /// `withoutAVX512`: on a host with AVX-512, ffmpeg runs under qemu-user as a Haswell
    /// (AVX2): zimg 3.0.4 (Debian 12's) converts matrices and primaries wrongly on AVX-512
    /// (sekrit-twc/zimg#190; seen on an AMD EPYC here: saturated bars 40 levels dark).
    static func frame(_ path: String, index: Int, filter: String? = nil, pixelFormat: String = "yuv420p",
                      decoderOptions: [String] = [], withoutAVX512: Bool = false) throws -> [UInt8] {
        var chain = "select=eq(n\\,\(index))"
        if let filter { chain += ",\(filter)" }
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("frame-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        var tool = Env.tool("ffmpeg")!
        var arguments = ["-nostdin", "-v", "error"] + decoderOptions + ["-i", path, "-vf", chain, "-frames:v", "1",
                                                                        "-f", "rawvideo", "-pix_fmt", pixelFormat, "-y", tmp]
        if withoutAVX512 && Env.hostHasAVX512 {
            guard let qemu = Env.tool("qemu-x86_64") else {
                throw ProbeError(message: "this CPU has AVX-512, on which zimg 3.0.4 is wrong: the reference needs qemu-x86_64 "
                                 + "(Debian's qemu-user, Scripts/setup.sh installs it)")
            }
            arguments = ["-cpu", "Haswell", tool] + arguments
            tool = qemu
        }
        let r = try run(tool, arguments)
        guard r.status == 0, let data = FileManager.default.contents(atPath: tmp), !data.isEmpty else {
            throw ProbeError(message: "ffmpeg could not decode frame \(index) of \(path): \(r.stderr)")
        }
        return [UInt8](data)
    }

    /// Every frame of `path` shrunk to `side`x`side` (area average), as rgb24: one entry per frame.
    /// The frame shown at `seconds` into `path` (by timestamp: a recording that skipped slots
    /// while its encoder was behind has fewer frames than slots), as raw `pixelFormat` bytes.
    static func frame(_ path: String, atSeconds seconds: Double, pixelFormat: String = "yuv420p") throws -> [UInt8] {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("frame-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", path, "-vf", "fps=30", "-ss", String(format: "%.3f", seconds),
                                               "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", pixelFormat, "-y", tmp])
        guard r.status == 0, let data = FileManager.default.contents(atPath: tmp), !data.isEmpty else {
            throw ProbeError(message: "ffmpeg could not decode \(path) at \(seconds) s: \(r.stderr)")
        }
        return [UInt8](data)
    }

    /// `onGridOf`: one per slot of that rate, from the timestamps (a frame that lasts two
    /// slots is there twice), rather than one per frame in the file.
    static func thumbnails(_ path: String, side: Int = 8, onGridOf rate: Int? = nil) throws -> [[UInt8]] {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("thumbs-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        // Without a grid, one per frame: ffmpeg's default for raw output is a constant rate,
        // which repeated the frame before a skipped slot (a VM take's 90 frames gave 270).
        let grid = rate.map { ["-fps_mode", "cfr", "-r", "\($0)"] } ?? ["-fps_mode", "passthrough"]
        let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", path, "-vf", "scale=\(side):\(side):flags=area"] + grid
                        + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-y", tmp])
        guard r.status == 0, let data = FileManager.default.contents(atPath: tmp) else {
            throw ProbeError(message: "ffmpeg could not decode \(path): \(r.stderr)")
        }
        let bytes = [UInt8](data), size = side * side * 3
        return stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<($0 + size)]) }
    }

    /// Every audio sample of `path` as 48 kHz interleaved stereo Float32.
    static func audio(_ path: String) throws -> [Float] {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("audio-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", path, "-vn", "-f", "f32le", "-ac", "2",
                                               "-ar", "48000", "-y", tmp])
        guard r.status == 0, let data = FileManager.default.contents(atPath: tmp) else {
            throw ProbeError(message: "ffmpeg could not decode audio of \(path): \(r.stderr)")
        }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}

/// Peak signal-to-noise ratio of two equally sized 8-bit regions, in dB.
func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
    precondition(a.count == b.count && !a.isEmpty)
    var se = 0.0
    for i in 0..<a.count {
        let d = Double(a[i]) - Double(b[i])
        se += d * d
    }
    let mse = se / Double(a.count)
    return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
}

/// A rectangle cut out of a luma plane `width` pixels wide.
func cut(_ plane: [UInt8], width: Int, x: Int, y: Int, w: Int, h: Int) -> [UInt8] {
    var out = [UInt8]()
    out.reserveCapacity(w * h)
    for row in y..<(y + h) { out.append(contentsOf: plane[(row * width + x)..<(row * width + x + w)]) }
    return out
}

/// Where things are on the 1920x1080 canvas with the default layout.
enum Canvas {
    static let width = 1920, height = 1080
    static let inset = (x: 1744, y: 16, w: 160, h: 213)

    static func luma(_ frame: [UInt8]) -> [UInt8] { Array(frame[0..<(width * height)]) }
    static func insetLuma(_ frame: [UInt8]) -> [UInt8] {
        cut(frame, width: width, x: inset.x, y: inset.y, w: inset.w, h: inset.h)
    }
    /// The full frame minus the inset and a 4 px band around it (scaler edge effects).
    static func outsideInsetLuma(_ frame: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        for y in 0..<height {
            for x in 0..<width {
                let near = x >= inset.x - 4 && x < inset.x + inset.w + 4 && y >= inset.y - 4 && y < inset.y + inset.h + 4
                if !near { out.append(frame[y * width + x]) }
            }
        }
        return out
    }
}

/// References made by ffmpeg's own filters from the source files: the same crop, scale and
/// colour conversion we claim to do, by an independent implementation.
enum Reference {
    static let back = Env.fixture("back-16x9-30fps.mp4")      // 640x360, BT.709, 30 fps
    static let front = Env.fixture("front-4x3-25fps.mkv")     // 640x480, BT.601, 25 fps
    static let portrait = Env.fixture("portrait-rotated-60fps.mp4")

    // Aspect-fill crops, rounded to whole pixels (ours are sub-pixel).
    // (FFmpeg 5.1's colormatrix filter overruns its buffer on odd heights; swscale converts
    // the matrix as well.)
    static let toBT709 = "in_color_matrix=bt601:out_color_matrix=bt709"
    static let frontAsInset = "crop=361:480:140:0,scale=160:213:flags=area:\(toBT709)"
    static let frontAsFull = "crop=640:360:0:60,scale=1920:1080:flags=bilinear:\(toBT709)"
    static let backAsInset = "crop=270:360:185:0,scale=160:213:flags=area"
    static let backAsFull = "scale=1920:1080:flags=bilinear"

    static func insetLuma(_ path: String, frame: Int, filter: String) throws -> [UInt8] {
        Array(try Decode.frame(path, index: frame, filter: filter)[0..<(160 * 213)])
    }
    static func fullLuma(_ path: String, frame: Int, filter: String) throws -> [UInt8] {
        Canvas.luma(try Decode.frame(path, index: frame, filter: filter))
    }
}

/// PSNR bounds (luma). Measured on these fixtures at the default crf 28: a region compared
/// with the source it should show scores 28.7-48 dB (x265's loss, two different scalers,
/// and our sub-pixel crop against ffmpeg's whole-pixel one; the lowest is BACK's detailed
/// test pattern shrunk into the inset). Compared with the other source it scores 5.4-9.5 dB.
/// 25 dB leaves 3.7 dB for encoder noise below the worst match and 15 dB above the best
/// mismatch; 15 dB is the ceiling for "shows the other picture".
let samePicture = 25.0
let otherPicture = 15.0

/// A small seeded generator, so the simulations are the same every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Makes a short synthetic clip with the ffmpeg CLI for a test.
func makeClip(_ path: String, _ arguments: [String]) throws {
    let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-y"] + arguments + [path])
    guard r.status == 0 else { throw ProbeError(message: "ffmpeg could not make \(path): \(r.stderr)") }
}

func meanRGB(_ rgb: [UInt8], width: Int, x: Int, y: Int, w: Int, h: Int) -> (Int, Int, Int) {
    var s = (0, 0, 0)
    for yy in y..<(y + h) {
        for xx in x..<(x + w) {
            let i = (yy * width + xx) * 3
            s.0 += Int(rgb[i]); s.1 += Int(rgb[i + 1]); s.2 += Int(rgb[i + 2])
        }
    }
    return (s.0 / (w * h), s.1 / (w * h), s.2 / (w * h))
}

/// Zero crossings per second of one channel: twice the frequency of a pure tone.
func dominantFrequency(_ stereo: [Float], channel: Int, from: Int, count: Int) -> Double {
    var crossings = 0
    var previous = stereo[from * 2 + channel]
    for i in (from + 1)..<(from + count) {
        let s = stereo[i * 2 + channel]
        if (previous < 0) != (s < 0) { crossings += 1 }
        previous = s
    }
    return Double(crossings) / 2 / (Double(count) / 48000)
}

func rms(_ stereo: [Float], channel: Int, from: Int, count: Int) -> Double {
    var sum = 0.0
    for i in from..<(from + count) { sum += Double(stereo[i * 2 + channel]) * Double(stereo[i * 2 + channel]) }
    return (sum / Double(count)).squareRoot()
}

/// Two stills in a directory, back.png (640x360 testsrc2) and front.png (1280x720 SMPTE
/// bars), and ffmpeg's composition of them in our layout (reference.rgb: scaled to
/// 1920x1080; the front centre-cropped to 160:213 and scaled into the inset, top right,
/// 16 px in), for checking where a recording put each camera's picture.
enum StillsComposition {
    static func make(in dir: TempDir) throws {
        try makeClip(dir.path("back.png"), ["-f", "lavfi", "-i", "testsrc2=s=640x360", "-frames:v", "1"])
        try makeClip(dir.path("front.png"), ["-f", "lavfi", "-i", "smptehdbars=s=1280x720", "-frames:v", "1"])
        try makeClip(dir.path("reference.rgb"), [
            "-i", dir.path("back.png"), "-i", dir.path("front.png"), "-filter_complex",
            "[0]scale=1920:1080[b];[1]crop=w=ih*160/213:h=ih,scale=160:213[f];[b][f]overlay=1744:16",
            "-pix_fmt", "rgb24", "-f", "rawvideo"])
    }

    /// PSNR of `ours` (rgb24, 1920x1080) against the reference: the full frame left of the
    /// inset, the inset, and the inset's place against the back picture (what a swap or a
    /// missing inset would show).
    static func psnrs(_ ours: [UInt8], in dir: TempDir) throws -> (full: Double, inset: Double, wrong: Double) {
        let reference = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.path("reference.rgb"))))
        try #require(ours.count == reference.count)
        let full = (x: 0, y: 0, w: 1700, h: 1080), inset = (x: 1748, y: 20, w: 152, h: 205)
        let backThere = try Decode.frame(dir.path("back.png"), index: 0, filter: "scale=1920:1080", pixelFormat: "rgb24")
        func region(_ rgb: [UInt8], _ r: (x: Int, y: Int, w: Int, h: Int)) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(r.w * r.h * 3)
            for y in r.y..<(r.y + r.h) { out += rgb[(3 * (y * 1920 + r.x))..<(3 * (y * 1920 + r.x + r.w))] }
            return out
        }
        return (psnr(region(ours, full), region(reference, full)), psnr(region(ours, inset), region(reference, inset)),
                psnr(region(ours, inset), region(backThere, inset)))
    }
}

/// A tmpfs of `size` ("64k", "24m") mounted at `name` in `dir`, for a test of a small or full
/// disk (`unmount` it when done); nil, said as the test's reason, where mounting is not allowed.
func smallDisk(_ name: String, size: String, in dir: TempDir, for test: String) throws -> String? {
    let mountPoint = dir.path(name)
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
    let mounted = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint])
    guard Env.canRun(mounted.status == 0, otherwise: "\(test) test needs root to mount a tmpfs: \(mounted.stderr)") else { return nil }
    return mountPoint
}

func unmount(_ mountPoint: String) { _ = try? run("/bin/umount", [mountPoint]) }
