import Foundation
import Testing

/// An X server of its own (Xvfb) for a test, stopped when the test ends.
final class VirtualDisplay {
    let name: String
    private let process: Process
    private let number: Int

    /// Ready once a client is answered, not once the socket exists (which was waited for 5 s
    /// at most): twice today dualcam's SDL found no X server on the display it was given ("x11
    /// not available"), once in CI, once here. A server that exits before it answers is
    /// replaced on another display, twice at most; one that is slow is waited for, 30 s at
    /// most, and said when it took over 2 s.
    init() throws {
        guard let xvfb = Env.tool("Xvfb"), let xdotool = Env.tool("xdotool") else {
            throw ProbeError(message: "Xvfb or xdotool is not installed (Debian's xvfb and xdotool; Scripts/setup.sh installs them)")
        }
        var said: [String] = []
        for _ in 0..<3 {
            var number = Int.random(in: 50...899)
            while Self.inUse(number) { number += 1 }
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("xvfb-\(UUID().uuidString).log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: log) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: xvfb)
            // -noreset: by default the server resets when its last client leaves, and drops a
            // client that connected meanwhile (xorg/xserver#1102). A test's xdotool calls and
            // each dualcam come and go: a second review found "x11 not available" (2026-11-29).
            process.arguments = [":\(number)", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: log)
            try process.run()
            let started = Date()
            var answered = false
            waitUntil("Xvfb :\(number) to answer", timeout: 30, quietly: true) {
                let answer = try? run("/usr/bin/timeout", ["2", xdotool, "getdisplaygeometry"], environment: ["DISPLAY": ":\(number)"])
                answered = answer?.status == 0
                return answered || !process.isRunning
            }
            if answered {
                let waited = Date().timeIntervalSince(started)
                if waited > 2 { print(String(format: "Xvfb :%d answered after %.1f s", number, waited)) }
                (name, self.process, self.number) = (":\(number)", process, number)
                return
            }
            Self.stop(process, number: number)
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            said.append(":\(number): " + (text.split(separator: "\n").suffix(3).joined(separator: " / ")))
        }
        throw ProbeError(message: "Xvfb did not answer on three displays (30 s each at most): \(said.joined(separator: "; "))")
    }

    /// A display whose socket or lock file is there: a server that was killed leaves both,
    /// and Xvfb refuses a display with a lock file.
    private static func inUse(_ number: Int) -> Bool {
        FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") || FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock")
    }

    // SIGKILL: a SIGTERM can arrive blocked (the signal mask is inherited from the test
    // runner's thread) and leave this waiting for ever. What a killed server leaves behind
    // is removed.
    private static func stop(_ process: Process, number: Int) {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(number)")
        try? FileManager.default.removeItem(atPath: "/tmp/.X\(number)-lock")
    }

    deinit { Self.stop(process, number: number) }

    /// Runs an X client (xdotool, ffmpeg) on this display.
    func client(_ tool: String, _ arguments: [String]) throws -> RunResult {
        guard let path = Env.tool(tool) else { throw ProbeError(message: "\(tool) is not installed") }
        return try run(path, arguments, environment: ["DISPLAY": name])
    }

    /// The first window whose title matches `pattern`, waiting for it up to `seconds`.
    func window(named pattern: String, seconds: Double = 20) throws -> (id: String, x: Int, y: Int, width: Int, height: Int)? {
        var found: (id: String, x: Int, y: Int, width: Int, height: Int)?
        var failure: (any Error)?
        waitUntil("a window named \(pattern)", timeout: seconds, quietly: true) {
            do {
                guard let id = try client("xdotool", ["search", "--name", pattern]).stdout.split(separator: "\n").first else { return false }
                let shell = try client("xdotool", ["getwindowgeometry", "--shell", String(id)]).stdout
                var g: [String: Int] = [:]
                for line in shell.split(separator: "\n") {
                    let kv = line.split(separator: "=")
                    if kv.count == 2 { g[String(kv[0])] = Int(kv[1]) }
                }
                if let x = g["X"], let y = g["Y"], let w = g["WIDTH"], let h = g["HEIGHT"] { found = (String(id), x, y, w, h) }
            } catch {
                failure = error
            }
            return found != nil || failure != nil
        }
        if let failure { throw failure }
        return found
    }

    /// Grabs the window's rectangle until `shows` holds of the picture (its last grab either
    /// way, for the caller's expectations to judge), `seconds` at most: what a person sees
    /// once the program has drawn it, however long that takes on this machine.
    func grab(_ w: (id: String, x: Int, y: Int, width: Int, height: Int), until shows: ([UInt8]) -> Bool, seconds: Double = 10,
              png: String? = nil) throws -> [UInt8] {
        var last: [UInt8] = [], failure: (any Error)?
        waitUntil("the window to show it", timeout: seconds, quietly: true) {
            do { last = try grab(x: w.x, y: w.y, width: w.width, height: w.height) } catch { failure = error }
            return failure != nil || shows(last)
        }
        if let failure { throw failure }
        if let png { _ = try grab(x: w.x, y: w.y, width: w.width, height: w.height, png: png) }
        return last
    }

    /// What the screen shows in a rectangle, as rgb24 (ffmpeg's x11grab); also saved as
    /// PNG at `png` when given.
    /// Closes the window as a user's click on its close button does (WM_DELETE_WINDOW).
    func closeWindow(_ id: String) throws {
        let close = Env.repoRoot.appendingPathComponent("Tests/preview/close-window.py").path
        _ = try run("/usr/bin/env", ["python3", close, id], environment: ["DISPLAY": name])
    }

    func grab(x: Int, y: Int, width: Int, height: Int, png: String? = nil) throws -> [UInt8] {
        let input = ["-nostdin", "-v", "error", "-f", "x11grab", "-video_size", "\(width)x\(height)", "-i", "\(name)+\(x),\(y)",
                     "-frames:v", "1"]
        if let png { _ = try client("ffmpeg", input + ["-y", png]) }
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("grab-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let r = try client("ffmpeg", input + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-y", raw])
        guard r.status == 0, let data = FileManager.default.contents(atPath: raw) else {
            throw ProbeError(message: "x11grab failed: \(r.stderr)")
        }
        return [UInt8](data)
    }
}

/// `record --preview` under Xvfb: the window shows the composed picture, a click on its inset
/// or `s` swaps (on screen and in the file), closing it stops and finishes the recording; with
/// no display, one line says so and the recording is made all the same.
@Suite(.serialized, .timeLimit(.minutes(10))) struct PreviewTests {
    static let blueAndRed: Result<(TempDir, String, String), any Error> = Result {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let back = dir.path("blue.mkv"), front = dir.path("red.mkv")
        try makeClip(back, ["-f", "lavfi", "-i", "color=blue:s=1280x720:r=30:d=40", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        try makeClip(front, ["-f", "lavfi", "-i", "color=red:s=640x480:r=30:d=40", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        return (dir, back, front)
    }

    static func isBlue(_ c: (Int, Int, Int)) -> Bool { c.2 > 160 && c.0 < 90 }
    static func isRed(_ c: (Int, Int, Int)) -> Bool { c.0 > 160 && c.2 < 90 }

    /// The preview is 960x540 for the 1080p canvas: its inset is the canvas's halved.
    static let insetCentre = (x: (1744 + 80) / 2, y: (16 + 106) / 2)

    @Test func thePreviewShowsTheRecordingAndTheInsetSwapsWhenClicked() throws {
        let (dir, back, front) = try Self.blueAndRed.get()
        let display = try VirtualDisplay()
        let out = dir.path("preview.mov")
        var screens: [String: (full: (Int, Int, Int), inset: (Int, Int, Int))] = [:]
        let r = try run(Env.dualcam, ["record", "--skip-speed-check", "--back", back, "--front", front, "--duration", "30", "--preview", "-o", out],
                        environment: ["DISPLAY": display.name], whileRunning: { _, said in
            do {
                guard let w = try display.window(named: "^dualcam - recording") else { return }
                let started = said.waitFor("recording to") ?? Date()
                func regions(_ rgb: [UInt8]) -> (full: (Int, Int, Int), inset: (Int, Int, Int)) {
                    (meanRGB(rgb, width: w.width, x: 100, y: 200, w: 400, h: 200),
                     meanRGB(rgb, width: w.width, x: Self.insetCentre.x - 20, y: Self.insetCentre.y - 30, w: 40, h: 60))
                }
                // Each screen once it shows what it should (or 10 s on, judged below).
                func screen(_ label: String, blueFull: Bool, png: String? = nil) throws {
                    let rgb = try display.grab(w, until: { rgb in
                        let seen = regions(rgb)
                        return blueFull ? Self.isBlue(seen.full) && Self.isRed(seen.inset) : Self.isRed(seen.full) && Self.isBlue(seen.inset)
                    }, png: png)
                    screens[label] = regions(rgb)
                }
                try screen("start", blueFull: true, png: ProcessInfo.processInfo.environment["DUALCAM_PREVIEW_SCREENSHOT"])
                _ = try display.client("xdotool", ["mousemove", "--window", w.id, String(Self.insetCentre.x),
                                                   String(Self.insetCentre.y), "click", "1"])
                try screen("clicked", blueFull: false)
                _ = try display.client("xdotool", ["windowfocus", w.id])
                _ = try display.client("xdotool", ["key", "s"])
                try screen("s", blueFull: true)
                // Closed 6 s into the take: the file is to last over 5 s.
                waitUntil(6, after: started)
                try display.closeWindow(w.id)
            } catch {
                Issue.record("driving the preview: \(error)")
            }
        })
        try #require(r.status == 0, "\(r.stderr)")
        // On screen: the composed picture, then swapped by the click, then back by the key.
        // A CI run once found no window in 20 s and recorded the whole 30 s: what dualcam said.
        let start = try #require(screens["start"], "no preview window named 'dualcam - recording' within 20 s: \(r.stderr)")
        let clicked = try #require(screens["clicked"]), s = try #require(screens["s"])
        #expect(Self.isBlue(start.full) && Self.isRed(start.inset), "start: \(start)")
        #expect(Self.isRed(clicked.full) && Self.isBlue(clicked.inset), "after the click: \(clicked)")
        #expect(Self.isBlue(s.full) && Self.isRed(s.inset), "after s: \(s)")
        // Closing the window stopped the recording long before its 30 s, and finished the file.
        #expect(r.stdout.contains("recorded \(out)"))
        let swaps = r.stderr.components(separatedBy: "\n").filter { $0.contains("swap at") }
        #expect(swaps.count == 2, "\(r.stderr)")
        let p = try Probe(out)
        let duration = try #require(Probe.number(p.stream("video")?["duration"]))
        #expect(duration > 5 && duration < 20, "\(duration) s")
        // In the file: blue full frame, then red (the click), then blue again (the key).
        let fullColours = try Decode.thumbnails(out).map { t -> Character in
            let c = meanRGB(t, width: 8, x: 0, y: 4, w: 4, h: 4)
            return Self.isBlue(c) ? "B" : Self.isRed(c) ? "R" : "?"
        }
        let runs = fullColours.reduce(into: [Character]()) { if $0.last != $1 { $0.append($1) } }
        #expect(runs == ["B", "R", "B"], "full-frame colour runs: \(String(runs))")
    }

    /// Dragging the inset from the top-right corner to the lower-left quarter and letting go:
    /// it settles in the bottom-left corner, on screen and in the file from then on; a drag
    /// is not a tap (no swap).
    @Test(.timeLimit(.minutes(2)))
    func draggingTheInsetMovesItToTheNearestCornerOnScreenAndInTheFile() throws {
        let (dir, back, front) = try Self.blueAndRed.get()
        let display = try VirtualDisplay()
        let out = dir.path("dragged.mov")
        // The bottom-left inset's centre in the 960x540 preview: canvas (16, 851) 160x213, halved.
        let bottomLeft = (x: (16 + 80) / 2, y: (851 + 106) / 2)
        var screens: [String: (topRight: (Int, Int, Int), bottomLeft: (Int, Int, Int))] = [:]
        var outlineEdge: (Int, Int, Int)?
        let r = try run(Env.dualcam, ["record", "--skip-speed-check", "--back", back, "--front", front, "--duration", "30",
                                      "--preview", "-o", out], environment: ["DISPLAY": display.name], whileRunning: { _, said in
            do {
                guard let w = try display.window(named: "^dualcam - recording") else { return }
                let started = said.waitFor("recording to") ?? Date()
                func corners(_ rgb: [UInt8]) -> (topRight: (Int, Int, Int), bottomLeft: (Int, Int, Int)) {
                    (meanRGB(rgb, width: w.width, x: Self.insetCentre.x - 20, y: Self.insetCentre.y - 30, w: 40, h: 60),
                     meanRGB(rgb, width: w.width, x: bottomLeft.x - 20, y: bottomLeft.y - 30, w: 40, h: 60))
                }
                // Each screen once it shows what it should (or 10 s on, judged below).
                func screen(_ label: String, insetTopRight: Bool) throws {
                    let rgb = try display.grab(w, until: { rgb in
                        let seen = corners(rgb)
                        return insetTopRight ? Self.isRed(seen.topRight) && Self.isBlue(seen.bottomLeft)
                                             : Self.isBlue(seen.topRight) && Self.isRed(seen.bottomLeft)
                    })
                    screens[label] = corners(rgb)
                }
                try screen("start", insetTopRight: true)
                // The file's first second before the drag: it is read at 0.5 s.
                waitUntil(1, after: started)
                // One xdotool per step: its own start paces the pointer as a hand would.
                _ = try display.client("xdotool", ["mousemove", "--window", w.id, String(Self.insetCentre.x), String(Self.insetCentre.y),
                                                   "mousedown", "1"])
                for step in 1...10 {
                    let x = Self.insetCentre.x + (150 - Self.insetCentre.x) * step / 10
                    let y = Self.insetCentre.y + (420 - Self.insetCentre.y) * step / 10
                    _ = try display.client("xdotool", ["mousemove", "--window", w.id, String(x), String(y)])
                }
                // While held: a white outline the inset's size follows the pointer (centred on
                // it here, as the press was on the inset's centre: its left edge at x 110).
                func edge(_ rgb: [UInt8]) -> (Int, Int, Int) { meanRGB(rgb, width: w.width, x: 110, y: 400, w: 3, h: 40) }
                let held = try display.grab(w, until: { rgb in
                    let e = edge(rgb)
                    return e.0 > 200 && e.1 > 200 && e.2 > 200
                }, seconds: 5)
                outlineEdge = edge(held)
                _ = try display.client("xdotool", ["mouseup", "1"])
                try screen("dropped", insetTopRight: false)
                try display.closeWindow(w.id)
            } catch {
                Issue.record("driving the preview: \(error)")
            }
        })
        try #require(r.status == 0, "\(r.stderr)")
        let start = try #require(screens["start"], "no preview window within 20 s: \(r.stderr)")
        let dropped = try #require(screens["dropped"])
        #expect(Self.isRed(start.topRight) && Self.isBlue(start.bottomLeft), "start: \(start)")
        #expect(Self.isBlue(dropped.topRight) && Self.isRed(dropped.bottomLeft), "after the drag: \(dropped)")
        let edge = try #require(outlineEdge)
        #expect(edge.0 > 200 && edge.1 > 200 && edge.2 > 200, "no outline under the pointer while dragging: \(edge)")
        #expect(r.stderr.contains("inset moved to bottom-left at ") && !r.stderr.contains("swap at"), "\(r.stderr)")
        // In the file: the inset top-right at first, bottom-left at the end, never swapped.
        let duration = try #require(Probe.number(try Probe(out).stream("video")?["duration"]))
        let first = try Decode.frame(out, atSeconds: 0.5, pixelFormat: "rgb24")
        let last = try Decode.frame(out, atSeconds: duration - 0.1, pixelFormat: "rgb24")
        func corners(_ rgb: [UInt8]) -> (topRight: (Int, Int, Int), bottomLeft: (Int, Int, Int)) {
            (meanRGB(rgb, width: 1920, x: 1784, y: 80, w: 80, h: 60), meanRGB(rgb, width: 1920, x: 56, y: 930, w: 80, h: 60))
        }
        #expect(Self.isRed(corners(first).topRight) && Self.isBlue(corners(first).bottomLeft), "first frame: \(corners(first))")
        #expect(Self.isBlue(corners(last).topRight) && Self.isRed(corners(last).bottomLeft), "last frame: \(corners(last))")
    }

    /// `--review`: once stopped, the take plays in a window; `d` asks (the title says so),
    /// `y` deletes it. Another take: `d`, then `n` takes the `d` back, and `k` keeps it.
    @Test(.timeLimit(.minutes(2)))
    func theReviewPlaysTheTakeAndDThenYDiscardsItWhileKKeepsIt() throws {
        let (dir, back, front) = try Self.blueAndRed.get()
        let display = try VirtualDisplay()
        func review(_ out: String, keys: [String]) throws -> (RunResult, seen: (full: (Int, Int, Int), inset: (Int, Int, Int))?, titles: [String]) {
            var seen: (full: (Int, Int, Int), inset: (Int, Int, Int))?
            var titles: [String] = []
            let r = try run(Env.dualcam, ["record", "--skip-speed-check", "--back", back, "--front", front, "--duration", "2",
                                          "--audio", "none", "--review", "-o", out], environment: ["DISPLAY": display.name],
                            whileRunning: { p, _ in
                do {
                    guard let w = try display.window(named: "^dualcam - review") else { return }
                    func regions(_ rgb: [UInt8]) -> (full: (Int, Int, Int), inset: (Int, Int, Int)) {
                        (meanRGB(rgb, width: w.width, x: 100, y: 200, w: 400, h: 200),
                         meanRGB(rgb, width: w.width, x: Self.insetCentre.x - 20, y: Self.insetCentre.y - 30, w: 40, h: 60))
                    }
                    seen = regions(try display.grab(w, until: { rgb in
                        let s = regions(rgb)
                        return Self.isBlue(s.full) && Self.isRed(s.inset)
                    }))
                    func title() -> String {
                        ((try? display.client("xdotool", ["getwindowname", w.id]))?.stdout ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                    }
                    for key in keys {
                        let before = title()
                        _ = try display.client("xdotool", ["windowfocus", w.id])
                        _ = try display.client("xdotool", ["key", key])
                        // The key's answer: a new title, or the window closed and the program ended.
                        var now = before
                        waitUntil("an answer to \(key)", timeout: 10, quietly: true) {
                            now = title()
                            return now != before || !p.isRunning
                        }
                        titles.append(now)
                    }
                } catch {
                    Issue.record("driving the review: \(error)")
                }
            })
            return (r, seen, titles)
        }
        let discarded = dir.path("discarded.mov")
        let (r1, seen, titles) = try review(discarded, keys: ["d", "y"])
        #expect(r1.status == 0, "\(r1.stderr)")
        let shown = try #require(seen, "no review window within 20 s: \(r1.stderr)")
        #expect(Self.isBlue(shown.full) && Self.isRed(shown.inset), "the take as played: \(shown)")
        #expect(titles.first == "dualcam - discard discarded.mov? y deletes it, any other key keeps it", "\(titles)")
        #expect(r1.stderr.contains("dualcam: discarded \(discarded)") && !FileManager.default.fileExists(atPath: discarded),
                "\(r1.stderr)")

        let kept = dir.path("kept.mov")
        let (r2, _, titles2) = try review(kept, keys: ["d", "n", "k"])
        #expect(r2.status == 0, "\(r2.stderr)")
        #expect(titles2.prefix(2) == ["dualcam - discard kept.mov? y deletes it, any other key keeps it",
                                      "dualcam - review kept.mov: k keeps it, d discards it"], "\(titles2)")
        #expect(r2.stderr.contains("dualcam: kept \(kept)"), "\(r2.stderr)")
        #expect(Probe.number(try Probe(kept).stream("video")?["duration"]).map { abs($0 - 2) < 0.05 } == true)
    }

    /// The review plays the take's sound too: through ALSA's default device, here ALSA's file
    /// plugin (an .asoundrc in a HOME of its own), whose recording of what was played has the
    /// take's beeps where the take has them.
    @Test(.timeLimit(.minutes(2)))
    func theReviewPlaysTheTakesSound() throws {
        try Env.requireFFmpegTools()
        let display = try VirtualDisplay()
        let dir = try TempDir()
        let clip = dir.path("marked.mp4"), out = dir.path("sound.mov"), played = dir.path("played.raw")
        try SyncTests.periodicMarks(clip, seconds: 4, rate: 30, period: 0.7, on: 0.5, off: 0.6)
        try FileManager.default.createDirectory(atPath: dir.path("home"), withIntermediateDirectories: true)
        try "pcm.!default { type file slave.pcm \"null\" file \"\(played)\" format \"raw\" }\n"
            .write(toFile: dir.path("home/.asoundrc"), atomically: true, encoding: .utf8)
        let r = try run(Env.dualcam, ["record", "--back", clip, "--audio", "back", "--duration", "3", "--size", "640x360",
                                      "--skip-speed-check", "--review", "-o", out],
                        environment: ["DISPLAY": display.name, "HOME": dir.path("home")]) { _ in
            do {
                guard let w = try display.window(named: "^dualcam - review") else { return }
                // A whole pass (3 s at 48 kHz, 16-bit stereo), and the start of the next.
                waitUntil("3.5 s of sound played", timeout: 30) {
                    ((try? FileManager.default.attributesOfItem(atPath: played))?[.size] as? Int ?? 0) >= 48_000 * 4 * 7 / 2
                }
                _ = try display.client("xdotool", ["windowfocus", w.id])
                _ = try display.client("xdotool", ["key", "k"])
            } catch {
                Issue.record("driving the review: \(error)")
            }
        }
        try #require(r.status == 0, "\(r.stderr)")
        #expect(!r.stderr.contains("no sound device"), "\(r.stderr)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: played)))
        let frames = bytes.count / 4
        #expect(frames >= 3 * 48_000, "\(frames) frames played")
        var beeps: [Double] = [], quiet = 480
        for i in 0..<min(frames, 3 * 48_000) {
            let left = Int16(bitPattern: UInt16(bytes[4 * i]) | UInt16(bytes[4 * i + 1]) << 8)
            if abs(Int(left)) > 1600 {
                if quiet >= 480 { beeps.append(Double(i) / 48_000) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        let expected = [0.5, 1.2, 1.9, 2.6]
        #expect(beeps.count == expected.count && zip(beeps, expected).allSatisfy { abs($0 - $1) < 0.005 }, "played beeps at \(beeps)")
    }

    /// `-o none --preview`: the pictures in the window and no file at all; closing the
    /// window stops. With no display to open it on, there is nowhere to show them: one line.
    @Test(.timeLimit(.minutes(2)))
    func withNoFileThePreviewAloneShowsThePictures() throws {
        let (dir, back, front) = try Self.blueAndRed.get()
        let display = try VirtualDisplay()
        let before = Set(dir.contents)
        let work = try TempDir()
        var seen: (full: (Int, Int, Int), inset: (Int, Int, Int))?
        let r = try run("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", work.path(""), Env.dualcam, "record", "--back", back,
                                    "--front", front, "--duration", "30", "--preview", "-o", "none"],
                        environment: ["DISPLAY": display.name]) { _ in
            do {
                guard let w = try display.window(named: "^dualcam - live, no file") else { return }
                func regions(_ rgb: [UInt8]) -> (full: (Int, Int, Int), inset: (Int, Int, Int)) {
                    (meanRGB(rgb, width: w.width, x: 100, y: 200, w: 400, h: 200),
                     meanRGB(rgb, width: w.width, x: Self.insetCentre.x - 20, y: Self.insetCentre.y - 30, w: 40, h: 60))
                }
                seen = regions(try display.grab(w, until: { rgb in
                    let s = regions(rgb)
                    return Self.isBlue(s.full) && Self.isRed(s.inset)
                }))
                try display.closeWindow(w.id)
            } catch {
                Issue.record("driving the preview: \(error)")
            }
        }
        try #require(r.status == 0, "\(r.stderr)")
        let shown = try #require(seen, "no window named 'dualcam - live, no file' within 20 s: \(r.stderr)")
        #expect(Self.isBlue(shown.full) && Self.isRed(shown.inset), "\(shown)")
        #expect(r.stderr.contains("showing it, no file written (-o none)"), "\(r.stderr)")
        #expect(r.stdout.range(of: #"^showed \d+ frames \(\d+\.\d\d s\), no file written"#, options: .regularExpression) != nil,
                "\(r.stdout)")
        #expect(work.contents.isEmpty && Set(dir.contents) == before, "\(work.contents) \(dir.contents)")

        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        let nowhere = try run("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", work.path(""), Env.dualcam, "record", "--back",
                                          back, "--duration", "2", "--preview", "-o", "none"], environment: environment)
        #expect(nowhere.status != 0 && nowhere.stderrLines.last == "dualcam: with -o none and no preview window there is "
                + "nowhere to show the pictures: nothing recorded", "\(nowhere.stderr)")
        #expect(work.contents.isEmpty)
    }

    @Test func withNoDisplayOneLineSaysSoAndTheRecordingIsMade() throws {
        let (dir, back, front) = try Self.blueAndRed.get()
        let out = dir.path("no-display.mov")
        // No DISPLAY or WAYLAND_DISPLAY at all, as on a server or over plain ssh.
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Env.dualcam)
        p.arguments = ["record", "--back", back, "--front", front, "--duration", "2", "--preview", "-o", out]
        p.environment = environment
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let watchdog = ChildWatchdog(p)
        defer { watchdog.disarm() }
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(stderr)\(watchdog.verdict("dualcam"))")
        #expect(stderr.contains("dualcam: no display for the preview (neither DISPLAY nor WAYLAND_DISPLAY is set): recording goes on without it\n"),
                "\(stderr)")
        let v = try #require(try Probe(out).stream("video"))
        #expect(v["nb_frames"] as? String == "60", "\(v)")
    }

    /// A display that is named but cannot be reached: SDL's own reason, and the recording.
    @Test func anUnreachableDisplayIsTheSameOneLine() throws {
        let (dir, back, front) = try Self.blueAndRed.get()
        let out = dir.path("unreachable.mov")
        let r = try run(Env.dualcam, ["record", "--back", back, "--front", front, "--duration", "1", "--preview", "-o", out],
                        environment: ["DISPLAY": ":9999"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").filter { $0.contains("preview") }
        #expect(lines.count == 1 && lines[0].hasPrefix("dualcam: no display for the preview (SDL cannot start its video: ")
                && lines[0].hasSuffix("recording goes on without it"), "\(r.stderr)")
        #expect(!r.stderr.contains("error:"), "a library spoke on stderr: \(r.stderr)")
        #expect(try Probe(out).stream("video")?["nb_frames"] as? String == "30")
    }
}
