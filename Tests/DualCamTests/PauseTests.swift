import Foundation
import Testing

extension RecordTests {
    /// A take paused (SIGUSR2) for 2 s between 1.7 s recorded on each side: the file is the 3.4 s recorded, going
    /// straight on at the pause point (no frozen run of frames, no gap: the source's own time
    /// jumps by exactly what the summary says was left out), and every flash still has its
    /// beep within a frame. The clip flashes all but its bottom and beeps every 0.7 s, and a
    /// dot moves along its bottom every frame, so that no two frames in a row are alike.
    @Test(.timeLimit(.minutes(2)))
    func sigusr2PausesAndTheFileGoesStraightOnInSync() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let clip = dir.path("marked.mp4"), out = dir.path("paused.mov")
        try makeClip(clip, ["-f", "lavfi", "-i", "color=black:s=320x240:r=30:d=12[bg];color=gray:s=8x8:r=30:d=12[dot];"
                            + "[bg][dot]overlay=x='160+mod(n*5\\,150)':y=200,"
                            + "drawbox=x=0:y=0:w=320:h=190:c=white:t=fill:enable='between(mod(t,0.7),0.5,0.6)'",
                            "-f", "lavfi", "-i", "aevalsrc='if(between(mod(t,0.7),0.5,0.6),0.3*sin(2*PI*1000*t),0)':s=44100:d=12",
                            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"])
        let r = try dualcam(["record", "--back", clip, "--audio", "back", "--size", "640x360", "--skip-speed-check",
                             "--max-encoder-lag", "5", "--json", "-o", out]) { p, said in
            said.waitForTake(of: 1.7)
            kill(p.processIdentifier, SIGUSR2)
            said.waitFor("paused at ")
            // The thing tested: a pause of 2 s of real time, counted from when it took effect.
            Thread.sleep(forTimeInterval: 2)
            kill(p.processIdentifier, SIGUSR2)
            guard let resumed = said.waitFor("resumed at ") else {
                kill(p.processIdentifier, SIGINT)
                return
            }
            waitUntil(1.7, after: resumed)
            kill(p.processIdentifier, SIGINT)
        }
        try #require(r.status == 0, "\(r.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let left = try #require(summary["paused_seconds"] as? Double)
        #expect(summary["pauses"] as? Int == 1, "\(summary)")
        #expect(left > 1.7 && left < 2.5, "\(left) s left out of a 2 s pause")
        let pausedAt = try #require(r.stderrLines.lazy.compactMap { line -> Double? in
            guard let range = line.range(of: "paused at ") else { return nil }
            return Double(line[range.upperBound...].prefix { $0 != " " })
        }.first, "\(r.stderr)")
        #expect(r.stderr.contains("resumed at "), "\(r.stderr)")

        let probe = try Probe(out)
        let video = try #require(Probe.number(probe.stream("video")?["duration"]))
        let audio = try #require(Probe.number(probe.stream("audio")?["duration"]))
        // 3.4 s of take, and what a stop's latency adds.
        #expect(video > 3 && video < 4.2, "\(video) s")
        #expect(abs(audio - video) < 0.05, "sound \(audio) s, picture \(video) s")
        try Probe.expectPicturesOnTheirSlots(out)

        // Straight on: no picture held over the pause (a busy machine may repeat one).
        let md5 = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", out, "-map", "0:v", "-f", "framemd5", "-"])
        let hashes = md5.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last }
        var run = 1, longest = 1
        for (a, b) in zip(hashes, hashes.dropFirst()) {
            run = a == b ? run + 1 : 1
            longest = max(longest, run)
        }
        #expect(hashes.count > 80 && longest <= 2, "\(hashes.count) frames, \(longest) alike in a row")

        // In sync on both sides of the pause, and the source's time goes on by what was left
        // out: every flash is at 0.5 s + a multiple of 0.7 s of the clip's time.
        let (flashes, beeps) = try SyncTests.onsets(out)
        print("paused at \(pausedAt) s for \(left) s: flashes \(flashes), beeps \(beeps)")
        #expect(flashes.count == beeps.count && flashes.count >= 4, "flashes \(flashes), beeps \(beeps)")
        #expect(flashes.contains { $0 < pausedAt } && flashes.contains { $0 > pausedAt }, "flashes \(flashes)")
        SyncTests.expectPairsInSync(flashes, beeps)
        for f in flashes {
            let clipTime = f < pausedAt ? f : f + left
            let phase = (clipTime - 0.5).truncatingRemainder(dividingBy: 0.7)
            #expect(min(phase, 0.7 - phase) <= 1.0 / 30 + 0.005, "flash at \(f) s is at \(clipTime) s of the clip")
        }
    }
}
