import Foundation
import Testing

extension RecordTests {
    /// `--stream srt://` to ffmpeg listening on loopback, killed (SIGKILL, as a crash) 3 s
    /// into the take and started again at 6 s: the file is whole and in sync, the stream comes back by
    /// itself (SRT notices the loss after its 5 s peer timeout) and what the second listener
    /// received decodes without an error, picture and sound, each beep with its flash.
    @Test(.timeLimit(.minutes(2)))
    func aStreamWhoseServerGoesAwayReconnectsAndTheFileIsWhole() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let clip = dir.path("marked.mp4"), out = dir.path("streamed.mov")
        try SyncTests.periodicMarks(clip, seconds: 16, rate: 30, period: 0.7, on: 0.5, off: 0.6)
        let port = Int.random(in: 20_000...60_000)
        func listener(_ name: String) throws -> Process { try Self.srtListener(port: port, writing: dir.path(name)) }
        let first = try listener("first.ts")
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        Self.waitForListener(on: port)
        nonisolated(unsafe) var second: Process?
        let r = try dualcam(["record", "--back", clip, "--audio", "back", "--size", "640x360", "--skip-speed-check",
                             "--max-encoder-lag", "5", "--duration", "12", "--json", "--stream", "srt://127.0.0.1:\(port)",
                             "-o", out]) { _, said in
            // At these times SRT finds the connection lost (5 s on) just as the 8 s keyframe is
            // made, whose sound the encoder had already handed out: the stream came back with its
            // first 85-107 ms silent, twice in two runs, until that sound was kept for it.
            let started = said.waitForTake(of: 3) ?? Date()
            kill(first.processIdentifier, SIGKILL)
            waitUntil(6, after: started)
            second = try? listener("second.ts")
        }
        // The stream's end reaches the listener, which then stops by itself; else it is asked.
        waitUntil("the second listener to end", timeout: 10, quietly: true) { second?.isRunning != true }
        if let second, second.isRunning { kill(second.processIdentifier, SIGINT); second.waitUntilExit() }
        try #require(r.status == 0, "\(r.stderr)")
        for said in ["stream: sending to srt://127.0.0.1:\(port)", "stream: lost (", "stream: reconnected to srt://127.0.0.1:\(port)"] {
            #expect(r.stderr.contains(said), "\(said): \(r.stderr)")
        }
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let stream = try #require(summary["stream"] as? [String: Any], "\(summary)")
        #expect(stream["connections"] as? Int == 2 && stream["outages"] as? Int == 1 && stream["state"] as? String == "live",
                "\(stream)")

        // The file: whole, and in sync from end to end.
        let video = try #require(Probe.number(try Probe(out).stream("video")?["duration"]))
        #expect(abs(video - 12) < 0.04, "\(video) s")
        try Probe.expectPicturesOnTheirSlots(out)
        let (flashes, beeps) = try SyncTests.onsets(out)
        #expect(flashes.count == 17 && beeps.count == 17, "flashes \(flashes), beeps \(beeps)")
        SyncTests.expectPairsInSync(flashes, beeps, "file", sanitizedSays: true)

        // The stream after it came back: starts on a keyframe, decodes cleanly, in sync.
        let received = dir.path("second.ts")
        let decoded = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", received, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let probe = try Probe(received)
        #expect(probe.stream("video")?["codec_name"] as? String == "hevc" && probe.stream("audio")?["codec_name"] as? String == "aac",
                "\(probe.streams)")
        // Decoded, each track starts at its own first packet: the sound's may start up to an
        // AAC frame after the keyframe. Onsets are put back on the stream's timeline.
        let videoStart = try #require(Probe.number(probe.stream("video")?["start_time"]))
        let audioStart = try #require(Probe.number(probe.stream("audio")?["start_time"]))
        #expect(audioStart >= videoStart && audioStart - videoStart < 0.03, "sound starts at \(audioStart) s, picture at \(videoStart) s")
        let (streamFlashes, decodedBeeps) = try SyncTests.onsets(received)
        let streamBeeps = decodedBeeps.map { $0 + audioStart - videoStart }
        print("stream after reconnecting: flashes \(streamFlashes), beeps \(streamBeeps)")
        #expect(streamFlashes.count >= 2 && streamFlashes.count == streamBeeps.count, "flashes \(streamFlashes), beeps \(streamBeeps)")
        SyncTests.expectPairsInSync(streamFlashes, streamBeeps, "stream", sanitizedSays: true)
    }

    /// `-o none --stream`: the recording encoded for the stream alone; what the listener
    /// receives has picture and sound in sync, and nothing is written where it ran.
    @Test(.timeLimit(.minutes(2)))
    func aStreamAloneWritesNoFile() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let clip = dir.path("marked.mp4"), received = dir.path("received.ts")
        try SyncTests.periodicMarks(clip, seconds: 6, rate: 30, period: 0.7, on: 0.5, off: 0.6)
        let port = Int.random(in: 20_000...60_000)
        let listener = try Self.srtListener(port: port, writing: received)
        defer { if listener.isRunning { kill(listener.processIdentifier, SIGKILL) } }
        Self.waitForListener(on: port)
        let work = try TempDir()
        let r = try run("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", work.path(""), Env.dualcam, "record", "--back", clip,
                                    "--audio", "back", "--duration", "4", "--size", "640x360", "--skip-speed-check",
                                    "--stream", "srt://127.0.0.1:\(port)", "-o", "none"])
        waitUntil("the listener to end", timeout: 10, quietly: true) { !listener.isRunning }
        if listener.isRunning { kill(listener.processIdentifier, SIGINT); listener.waitUntilExit() }
        try #require(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("streaming it, no file written (-o none)") && work.contents.isEmpty, "\(r.stderr) \(work.contents)")
        #expect(r.stdout.contains("stream srt://127.0.0.1:\(port): live at the end; 1 connection, 0 lost"), "\(r.stdout)")
        let probe = try Probe(received)
        let video = try #require(Probe.number(probe.stream("video")?["duration"]))
        #expect(abs(video - 4) < 0.1, "\(video) s received")
        let (flashes, beeps) = try SyncTests.onsets(received)
        #expect(flashes.count == 5 && flashes.count == beeps.count, "flashes \(flashes), beeps \(beeps)")
        SyncTests.expectPairsInSync(flashes, beeps)
    }

    /// A stream nothing answers: the take is recorded whole, and the summary says the stream
    /// never connected and why (it said "connecting at the end; 0 connections ... packets let go").
    @Test(.timeLimit(.minutes(2)))
    func aStreamNothingAnswersIsSaidToHaveNeverConnected() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let port = Int.random(in: 20_000...60_000)
        let r = try dualcam(["record", "--back", Reference.back, "--audio", "none", "--duration", "2", "--size", "320x180",
                             "--skip-speed-check", "--stream", "srt://127.0.0.1:\(port)", "-o", dir.path("take.mov")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("stream srt://127.0.0.1:\(port): never connected (") && r.stdout.contains("): nothing was sent"),
                "\(r.stdout)")
        #expect(try Probe(dir.path("take.mov")).stream("video")?["nb_frames"] as? String == "60")
    }

    /// Until a socket is bound to UDP `port` on loopback (SRT runs over UDP): the listener is
    /// there before the take first tries to connect.
    static func waitForListener(on port: Int) {
        let local = String(format: "0100007F:%04X", port)
        waitUntil("a listener on UDP port \(port)", timeout: 30) {
            ((try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? "").contains(local)
        }
    }

    /// ffmpeg listening for SRT on loopback `port`, copying what it receives to `path` (MPEG-TS).
    static func srtListener(port: Int, writing path: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Env.tool("ffmpeg")!)
        p.arguments = ["-nostdin", "-v", "error", "-y", "-i", "srt://127.0.0.1:\(port)?mode=listener", "-c", "copy",
                       "-f", "mpegts", path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }
}
