import Foundation
import Testing

/// Sources whose timestamps do not start at zero or do not run straight: the sound must stay
/// with the picture. Each clip flashes white and beeps at the same instants; the output is
/// decoded with ffmpeg and every flash must have its beep within one frame (33 ms).
@Suite(.timeLimit(.minutes(10))) struct SyncTests {
    /// `seconds` of black with a white flash and a 1 kHz beep from `at` to the end.
    /// 25 fps and 44.1 kHz, so that neither lines up with the output's grid by accident.
    static func markedClip(_ path: String, seconds: Double, at: Double, extra: [String] = []) throws {
        try makeClip(path, ["-f", "lavfi", "-i", "color=black:s=320x240:r=25:d=\(seconds),drawbox=c=white:t=fill:enable='gte(t,\(at))'",
                            "-f", "lavfi", "-i", "sine=f=1000:r=44100:d=\(seconds),volume=enable='lt(t,\(at))':volume=0",
                            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"] + extra)
    }

    /// `seconds` of black at `rate` fps flashing white, and a 1 kHz beep drawn sample-exact
    /// (aevalsrc, 44.1 kHz), from `on` to `off` seconds into every `period`.
    static func periodicMarks(_ path: String, seconds: Int, rate: Int, period: Double, on: Double, off: Double) throws {
        let when = "between(mod(t,\(period)),\(on),\(off))"
        try makeClip(path, ["-f", "lavfi", "-i", "color=black:s=320x240:r=\(rate):d=\(seconds),drawbox=c=white:t=fill:enable='\(when)'",
                            "-f", "lavfi", "-i", "aevalsrc='if(\(when),0.3*sin(2*PI*1000*t),0)':s=44100:d=\(seconds)",
                            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"])
    }

    /// Times of the output's dark-to-white changes and silence-to-tone changes. `onGrid`: the
    /// pictures sampled on the 30 fps grid by their timestamps (a slot with no picture of its
    /// own shows the one before it), not counted one after another.
    static func onsets(_ path: String, onGrid: Bool = false) throws -> (flashes: [Double], beeps: [Double]) {
        var flashes: [Double] = []
        var wasDark = true
        for (n, t) in try Decode.thumbnails(path, onGridOf: onGrid ? 30 : nil).enumerated() {
            let level = meanRGB(t, width: 8, x: 0, y: 0, w: 8, h: 8).0
            if wasDark && level > 128 { flashes.append(Double(n) / 30) }
            wasDark = level < 64
        }
        let s = try Decode.audio(path)
        var beeps: [Double] = []
        var quiet = 0
        for i in 0..<(s.count / 2) {
            if abs(s[2 * i]) > 0.05 {
                if quiet >= 480 { beeps.append(Double(i) / 48000) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return (flashes, beeps)
    }

    static func expectInSync(_ out: String, flashes expected: [Double], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (flashes, beeps) = try onsets(out)
        print("\(URL(fileURLWithPath: out).lastPathComponent): flashes \(flashes), beeps \(beeps)")
        #expect(flashes.count == expected.count && beeps.count == expected.count,
                "flashes \(flashes), beeps \(beeps), expected \(expected)", sourceLocation: sourceLocation)
        for (f, e) in zip(flashes, expected) {
            #expect(abs(f - e) <= 1.0 / 30 + 1e-6, "flash at \(f) s, expected \(e) s", sourceLocation: sourceLocation)
        }
        expectPairsInSync(flashes, beeps, sourceLocation: sourceLocation)
    }

    /// Each beep within a frame (and 5 ms) of its flash. `sanitizedSays`: under a sanitizer
    /// (Env.sanitized) the offsets are printed instead, for a test run there for its threads
    /// whose file camera, instrumented, can hand over a picture a slot or two late (it is
    /// shown where it came: ThreadSanitizer, once, a flash 67 ms after its beep).
    static func expectPairsInSync(_ flashes: [Double], _ beeps: [Double], _ what: String = "", sanitizedSays: Bool = false,
                                  sourceLocation: SourceLocation = #_sourceLocation) {
        let label = what.isEmpty ? "" : "\(what): "
        for (f, b) in zip(flashes, beeps) where abs(b - f) > 1.0 / 30 + 0.005 {
            if sanitizedSays && Env.sanitized { print("sanitized: \(label)beep at \(b) s, flash at \(f) s") }
            else { Issue.record("\(label)beep at \(b) s, flash at \(f) s", sourceLocation: sourceLocation) }
        }
    }

    /// As `expectInSync`, for a take that may have skipped slots (a machine too busy to compose
    /// in real time): a slot skipped holds no picture of its own, so a flash whose first slots
    /// were skipped shows with the first picture kept after them, and no later. Every beep is
    /// within a frame of its flash's time whatever was skipped: sound is placed by when it was
    /// heard. A flash every slot of which (`flashSlots`) was skipped cannot show, and is not
    /// looked for; its beep still is. With nothing skipped this is `expectInSync`'s check.
    static func expectInSyncAroundSkippedSlots(_ out: String, flashes expected: [Double], flashSlots: Int,
                                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (video, timeBase) = try Probe.packets(out, stream: "v:0")
        let keptSlots = Set(video.map { Int((Double($0.pts) * timeBase * 30).rounded()) })
        let (flashes, beeps) = try onsets(out, onGrid: true)
        print("\(URL(fileURLWithPath: out).lastPathComponent): flashes \(flashes), beeps \(beeps), \(keptSlots.count) slots kept")
        try #require(beeps.count == expected.count, "beeps \(beeps), expected \(expected)", sourceLocation: sourceLocation)
        let shown = expected.filter { e in
            let first = Int((e * 30).rounded())
            return (first..<first + flashSlots).contains { keptSlots.contains($0) }
        }
        if shown.count < expected.count { print("flashes whose every slot was skipped: \(expected.filter { !shown.contains($0) })") }
        #expect(flashes.count == shown.count, "flashes \(flashes), expected \(shown) of \(expected)", sourceLocation: sourceLocation)
        let frame = 1.0 / 30
        for (f, e) in zip(flashes, shown) {
            // The slots the flash's first picture may have been made for, and the first of them kept.
            let slots = Int(((e - frame) * 30).rounded())...Int(((e + frame) * 30).rounded())
            let firstKept = (slots.lowerBound...).first { keptSlots.contains($0) || $0 > slots.upperBound + 300 }!
            #expect(f >= e - frame - 1e-6 && f <= max(e + frame, Double(firstKept) / 30) + 1e-6,
                    "flash at \(f) s, expected \(e) s (the first slot kept from \(slots.lowerBound) on: \(firstKept))",
                    sourceLocation: sourceLocation)
            // Where the flash's slot was kept, the beep is within a frame of it; where it was
            // skipped, within a frame of where it may have been.
            let skippedBefore = slots.contains { !keptSlots.contains($0) && Double($0) / 30 <= f + 1e-6 }
            let (from, to) = skippedBefore ? (e - 2 * frame, e + 2 * frame) : (f - frame, f + frame)
            let b = beeps[expected.firstIndex(of: e)!]
            #expect(b >= from - 0.005 && b <= to + 0.005, "beep at \(b) s, flash at \(f) s (expected \(e) s)", sourceLocation: sourceLocation)
        }
        for (b, e) in zip(beeps, expected) where !shown.contains(e) {
            #expect(abs(b - e) <= 2 * frame + 0.005, "beep at \(b) s where a flash was skipped (expected \(e) s)", sourceLocation: sourceLocation)
        }
    }

    /// Two marked 2 s MPEG-TS recordings joined byte for byte, as `cat` joins them (the
    /// second's clock restarts, or starts at `secondStartsAt` seconds), composed as BACK.
    static func composeJoined(in dir: TempDir, secondStartsAt offset: Int?) throws -> String {
        let a = dir.path("a.ts"), b = dir.path("b.ts"), joined = dir.path("joined.ts"), out = dir.path("joined.mov")
        try markedClip(a, seconds: 2, at: 1.2, extra: ["-f", "mpegts"])
        try markedClip(b, seconds: 2, at: 0.8, extra: ["-f", "mpegts"] + (offset.map { ["-output_ts_offset", "\($0)"] } ?? []))
        var data = try Data(contentsOf: URL(fileURLWithPath: a))
        data.append(try Data(contentsOf: URL(fileURLWithPath: b)))
        try data.write(to: URL(fileURLWithPath: joined))
        let r = try dualcam(["compose", joined, Reference.front, "-o", out])
        try #require(r.status == 0, "\(r.stderr)")
        return out
    }

    /// Camcorder .MTS and broadcast .ts start at ~1.4 s, audio and video separately.
    @Test func mpegTSStartingAt1point4Seconds() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let ts = dir.path("camcorder.ts"), out = dir.path("ts.mov")
        try Self.markedClip(ts, seconds: 3, at: 1.5, extra: ["-f", "mpegts"])
        let start = try #require(Probe.number(try Probe(ts).format["start_time"]))
        try #require(start > 1, "the clip should start late, as MPEG-TS does: \(start)")
        let r = try dualcam(["compose", ts, Reference.front, "-o", out])
        try #require(r.status == 0, "\(r.stderr)")
        try Self.expectInSync(out, flashes: [1.5])
    }

    /// Two recordings joined by `cat`: the timestamps go back to ~1.4 s halfway through.
    @Test func concatenatedMPEGTSWithATimestampReset() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = try Self.composeJoined(in: dir, secondStartsAt: nil)
        let duration = try #require(Probe.number(try Probe(out).stream("video")?["duration"]))
        #expect(abs(duration - 4) < 0.2, "\(duration) s for two 2 s recordings")
        try Self.expectInSync(out, flashes: [1.2, 2.8])
    }

    /// A clock that leaps an hour ahead mid-file: the leap is closed up, not filled with an
    /// hour of frozen picture and silence.
    @Test func aJumpOfAnHourIsClosedUp() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let out = try Self.composeJoined(in: dir, secondStartsAt: 3600)
        let duration = try #require(Probe.number(try Probe(out).stream("video")?["duration"]))
        #expect(duration < 4.5, "\(duration) s: the hour was not closed up")
        try Self.expectInSync(out, flashes: [1.2, 2.8])
    }

    /// A file whose timestamps start ten hours in (a camera stamping from power-on).
    @Test func aStartTenHoursInNeedsNoSilenceForThem() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let late = dir.path("late.mkv"), out = dir.path("late.mov")
        try Self.markedClip(late, seconds: 3, at: 1.5, extra: ["-output_ts_offset", "36000"])
        let r = try dualcam(["compose", late, Reference.front, "-o", out])
        try #require(r.status == 0, "\(r.stderr)")
        try Self.expectInSync(out, flashes: [1.5])
    }
}
