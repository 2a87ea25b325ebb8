import Foundation
import Testing

extension RecordTests {
    /// `record --iso` keeps each camera's own picture beside the take, frame for frame on its
    /// slots, and the swap made while recording; `relayout` composes them again: with the
    /// recorded swap it is the take again, and side by side with another swap time it is
    /// what ffmpeg makes of the same two camera files (scale to fill, centre crop, hstack).
    @Test(.timeLimit(.minutes(2)))
    func isoThenRelayoutSideBySideWithOtherSwapsMatchesFFmpeg() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let back = dir.path("back.mkv"), front = dir.path("front.mkv"), take = dir.path("take.mov")
        try makeClip(back, ["-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=6",
                            "-f", "lavfi", "-i", "aevalsrc='if(between(mod(t,0.7),0.5,0.6),0.3*sin(2*PI*1000*t),0)':s=44100:d=6",
                            "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"])
        try makeClip(front, ["-f", "lavfi", "-i", "smptehdbars=s=1280x720:r=30:d=6", "-vf", "scale=out_color_matrix=bt709:out_range=tv",
                             "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709",
                             "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p"])
        let r = try dualcam(["record", "--back", back, "--front", front, "--iso", "--duration", "3", "--audio", "back",
                             "--skip-speed-check", "--max-encoder-lag", "5", "--json", "-o", take]) { p, said in
            said.waitForTake(of: 1)
            kill(p.processIdentifier, SIGUSR1)
        }
        try #require(r.status == 0, "\(r.stderr)")
        let isoBack = dir.path("take.back.mov"), isoFront = dir.path("take.front.mov")
        let sidecar = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("take.dualcam.json"))))
                                   as? [String: Any])
        let swaps = try #require(sidecar["swaps"] as? [Double])
        #expect(swaps.count == 1 && swaps[0] > 0.5 && swaps[0] < 2.5, "\(sidecar)")
        try CommandLineTests.expectValid("iso", [dir.path("take.dualcam.json")])
        for (file, size) in [(isoBack, (640, 360)), (isoFront, (1280, 720))] {
            let v = try #require(try Probe(file).stream("video"))
            #expect(v["codec_name"] as? String == "h264" && v["width"] as? Int == size.0 && v["height"] as? Int == size.1, "\(v)")
            #expect(abs((Probe.number(v["duration"]) ?? 0) - 3) < 0.04, "\(file): \(v)")
        }

        // With the swap recorded: the take again.
        let again = dir.path("again.mov")
        let same = try dualcam(["relayout", take, "--crf", "18", "-o", again])
        try #require(same.status == 0, "\(same.stderr)")
        for n in [10, 30, 50, 80] {
            let quality = psnr(try Decode.frame(take, index: n), try Decode.frame(again, index: n))
            #expect(quality > 35, "frame \(n): \(quality) dB against the take")
        }
        // And its sound is the take's, where it was: every beep within a millisecond.
        let (takeBeeps, againBeeps) = (try SyncTests.onsets(take).beeps, try SyncTests.onsets(again).beeps)
        #expect(takeBeeps.count == 4 && againBeeps.count == takeBeeps.count
                && zip(takeBeeps, againBeeps).allSatisfy { abs($0 - $1) < 0.001 }, "take \(takeBeeps), relaid \(againBeeps)")

        // Side by side, swapped at 2 s instead: ffmpeg's composition of the same camera files.
        let sbs = dir.path("sbs.mov")
        let laid = try dualcam(["relayout", take, "--layout", "side-by-side", "--swap-at", "2", "--crf", "18", "-o", sbs])
        try #require(laid.status == 0, "\(laid.stderr)")
        let fill = "scale=960:1080:force_original_aspect_ratio=increase,crop=960:1080"
        for (name, order) in [("unswapped.rgb", "[b][f]"), ("swapped.rgb", "[f][b]")] {
            try makeClip(dir.path(name), ["-i", isoBack, "-i", isoFront, "-filter_complex",
                                          "[0:v]\(fill)[b];[1:v]\(fill)[f];\(order)hstack", "-pix_fmt", "rgb24", "-f", "rawvideo"])
        }
        let frameBytes = 1920 * 1080 * 3
        for (n, reference) in [(15, "unswapped.rgb"), (45, "unswapped.rgb"), (75, "swapped.rgb")] {
            let all = try Data(contentsOf: URL(fileURLWithPath: dir.path(reference)))
            let want = [UInt8](all[(n * frameBytes)..<((n + 1) * frameBytes)])
            let ours = try Decode.frame(sbs, index: n, pixelFormat: "rgb24")
            let left = psnr(cut(ours, width: 5760, x: 0, y: 0, w: 2880, h: 1080), cut(want, width: 5760, x: 0, y: 0, w: 2880, h: 1080))
            let right = psnr(cut(ours, width: 5760, x: 2880, y: 0, w: 2880, h: 1080), cut(want, width: 5760, x: 2880, y: 0, w: 2880, h: 1080))
            print(String(format: "relayout side by side, frame %d: left %.1f dB, right %.1f dB against ffmpeg", n, left, right))
            #expect(left > 30 && right > 30, "frame \(n) against \(reference)")
        }

        // The front camera's file moved away: said so (the sidecar names it), one line. With
        // no sidecar either, nothing says there was a front camera.
        try FileManager.default.removeItem(atPath: isoFront)
        let moved = try dualcam(["relayout", take, "-o", dir.path("one.mov")])
        #expect(moved.status != 0 && moved.stderrLines.count == 1
                && moved.stderr.contains("\(isoFront) is missing: the take had two cameras"), "\(moved.stderr)")
        try FileManager.default.removeItem(atPath: dir.path("take.dualcam.json"))
        let one = try dualcam(["relayout", take, "-o", dir.path("one.mov")])
        #expect(one.status != 0 && one.stderrLines.count == 1 && one.stderr.contains("was recorded with one camera"), "\(one.stderr)")
    }
}

extension RecordTests {
    /// A take killed after a swap (SIGKILL: nothing is finished) keeps what relayout needs:
    /// the cameras' files play as they are and the swap was written when it happened.
    @Test(.timeLimit(.minutes(2)))
    func aKilledIsoTakeCanStillBeLaidOutWithItsSwap() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let take = dir.path("killed.mov")
        let r = try dualcam(["record", "--back", Self.back, "--front", Reference.front, "--iso", "--duration", "30", "--audio", "none",
                             "--skip-speed-check", "--size", "640x360", "-o", take]) { p, said in
            let started = said.waitForTake(of: 1) ?? Date()
            kill(p.processIdentifier, SIGUSR1)
            // Killed once the swap took effect, and a while after (frames on both sides of it).
            said.waitFor("swap at ")
            waitUntil(2.2, after: started)
            kill(p.processIdentifier, SIGKILL)
        }
        #expect(r.status != 0, "killed: \(r.stderr)")
        let sidecar = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("killed.dualcam.json"))))
                                   as? [String: Any], "no sidecar after the kill: \(dir.contents)")
        let swaps = try #require(sidecar["swaps"] as? [Double])
        #expect(swaps.count == 1 && swaps[0] > 0.5 && swaps[0] < 2, "\(sidecar)")
        let out = dir.path("laid.mov")
        let laid = try dualcam(["relayout", take, "--size", "640x360", "-o", out])
        try #require(laid.status == 0, "\(laid.stderr)")
        #expect(!laid.stderr.contains("missing or unreadable"), "\(laid.stderr)")
        #expect((Probe.number(try Probe(out).stream("video")?["duration"]) ?? 0) > 0.5)
    }
}

extension RecordTests {
    /// Every file of a take carries its identity (the take, each camera's own file, the
    /// sidecar), finished files too: a plain take recorded over an --iso one says the old
    /// companions are left, and relayout refuses them rather than compose the old take's
    /// cameras under the new take's sound (an attacker's trial: exit 0, the wrong pictures).
    @Test(.timeLimit(.minutes(2)))
    func anotherTakesCameraFilesAreNotLaidOutWithThisOne() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let take = dir.path("take.mov")
        let common = ["--back", Reference.back, "--front", Reference.front, "--duration", "1", "--audio", "none", "--size", "640x360",
                      "--skip-speed-check", "--max-encoder-lag", "5", "-o", take]
        let iso = try dualcam(["record", "--iso"] + common)
        try #require(iso.status == 0, "\(iso.stderr)")
        func identity(_ path: String) throws -> String? {
            try Probe(path).format["tags"].flatMap { ($0 as? [String: Any])?["comment"] as? String }
        }
        let first = try #require(try identity(take), "the finished take carries no identity")
        #expect(first.hasPrefix("dualcam-take id="))
        for camera in ["take.back.mov", "take.front.mov"] { #expect(try identity(dir.path(camera)) == first, "\(camera)") }
        let sidecar = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("take.dualcam.json")))) as? [String: Any]
        #expect("dualcam-take id=" + (sidecar?["take_id"] as? String ?? "") == first, "\(sidecar ?? [:])")

        let plain = try dualcam(["record", "--overwrite"] + common)
        try #require(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stderr.contains("take.back.mov, take.front.mov, take.dualcam.json beside \(take) belong to the take it replaces"),
                "\(plain.stderr)")
        #expect(try identity(take) != first)
        let relaid = try dualcam(["relayout", take, "-o", dir.path("again.mov")])
        #expect(relaid.status == 1 && relaid.stderrLines.count == 1 && relaid.stderr.contains("is not \(take)'s own camera file"),
                "\(relaid.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("again.mov")))
    }
}
