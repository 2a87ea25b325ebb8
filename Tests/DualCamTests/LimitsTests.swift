import Foundation
import Testing

/// Inputs beyond what dualcam handles are refused before they cost memory, or handled: a
/// picture larger than 8192x8192 whose size only decoding tells (a PNG: 800 MB were spent
/// decoding it before the refusal), a sound track of 64 channels (compose said "cannot
/// decode video", record recorded silence).
@Suite(.timeLimit(.minutes(2))) struct LimitsTests {
    @Test func aHugePictureIsRefusedWithoutDecodingIt() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let huge = dir.path("huge.png")
        try makeClip(huge, ["-f", "lavfi", "-i", "color=s=16000x16000", "-frames:v", "1"])
        var peakKB = 0
        let r = try dualcam(["compose", huge, Reference.front, "-o", dir.path("out.mov")]) { p in
            // VmHWM: the most memory the process has held (a high-water mark, so any read after
            // the peak has it), read until it is gone.
            waitUntil("the refusal", timeout: 60) {
                let status = (try? String(contentsOfFile: "/proc/\(p.processIdentifier)/status", encoding: .utf8)) ?? ""
                if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                   let kb = Int(line.split(separator: " ").dropFirst().first ?? "") { peakKB = max(peakKB, kb) }
                return !p.isRunning
            }
        }
        #expect(r.status == 1 && r.stderrLines.count == 1 && r.stderr.contains("larger than 8192x8192"), "\(r.stderr)")
        #expect(peakKB < 300_000, "\(peakKB) kB held to refuse it")
        #expect(Set(dir.contents) == ["huge.png"])
    }

    /// 64 channels, each the same tone: mixed to stereo at the tone's own level (each side
    /// the mean of its channels), in compose and in record.
    @Test func sixtyFourChannelsAreMixedToStereo() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let clip = dir.path("ch64.mov")
        let split = (0..<64).map { "[a\($0)]" }.joined()
        try makeClip(clip, ["-f", "lavfi", "-i", "testsrc2=s=320x180:r=30:d=2", "-f", "lavfi", "-i", "sine=f=440:d=2",
                            "-filter_complex", "[1:a]aformat=channel_layouts=mono,asplit=64\(split);\(split)amerge=inputs=64[a]",
                            "-map", "0:v", "-map", "[a]", "-c:v", "libx264", "-c:a", "pcm_s16le"])
        let source = try Self.peakDB(clip, filter: "pan=mono|c0=c0,")
        let composed = try dualcam(["compose", clip, Reference.front, "-o", dir.path("c.mov"), "--size", "320x180"])
        #expect(composed.status == 0, "\(composed.stderr)")
        let recorded = try dualcam(["record", "--back", clip, "--audio", "back", "--duration", "1.5", "--size", "320x180",
                                    "--skip-speed-check", "-o", dir.path("r.mov")])
        #expect(recorded.status == 0 && !recorded.stderr.contains("silence"), "\(recorded.stderr)")
        for file in ["c.mov", "r.mov"] {
            let audio = try #require(try Probe(dir.path(file)).stream("audio"))
            #expect(audio["channels"] as? Int == 2, "\(file): \(audio)")
            let level = try Self.peakDB(dir.path(file), filter: "")
            #expect(abs(level - source) < 1, "\(file): peak \(level) dB, the tone's \(source) dB")
        }
    }

    /// ffmpeg's volumedetect: the peak, in dB.
    static func peakDB(_ path: String, filter: String) throws -> Double {
        let r = try run(Env.tool("ffmpeg")!, ["-nostdin", "-i", path, "-af", filter + "volumedetect", "-f", "null", "-"])
        let line = try #require(r.stderr.split(separator: "\n").first { $0.contains("max_volume:") }, "\(r.stderr)")
        return try #require(Double(line.split(separator: " ").dropLast().last ?? ""))
    }
}
