import Foundation
import MediaIO
import Testing

/// `finish` beside files dualcam did not make, or that another program still writes: it
/// rewrites in place only dualcam's own takes, copies every stream or writes nothing, and
/// leaves alone a file open for writing (an attacker's trial: a fragmented MP4 another
/// program was writing was finished in place, exit 0, and 4.5 s of its 8 were lost; a
/// subtitle track was dropped from a copy "by stream copy").
@Suite(.timeLimit(.minutes(2))) struct OtherProgramsFilesTests {
    private static func fragmented(_ path: String, subtitles: Bool) throws {
        var arguments = ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=30:d=2"]
        if subtitles {
            let srt = path + ".srt"
            try "1\n00:00:00,500 --> 00:00:01,500\nhello\n\n".write(toFile: srt, atomically: true, encoding: .utf8)
            arguments += ["-i", srt, "-map", "0", "-map", "1", "-c:s", "mov_text"]
        }
        arguments += ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+frag_keyframe+empty_moov", "-y", path]
        let r = try run(Env.tool("ffmpeg")!, arguments)
        try #require(r.status == 0, "\(r.stderr)")
    }

    @Test func anotherProgramsFileIsFinishedOnlyIntoACopyWithEveryStream() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let plain = dir.path("download.mp4"), titled = dir.path("titled.mp4")
        try Self.fragmented(plain, subtitles: false)
        try Self.fragmented(titled, subtitles: true)
        let before = try Data(contentsOf: URL(fileURLWithPath: plain))
        let inPlace = try dualcam(["finish", plain])
        #expect(inPlace.status == 1 && inPlace.stderrLines.count == 1 && inPlace.stderr.contains("not recorded by dualcam")
                && inPlace.stderr.contains("finish \(plain) -o NEW.mov"), "\(inPlace.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) == before)
        let copy = try dualcam(["finish", plain, "-o", dir.path("copy.mp4")])
        #expect(copy.status == 0 && copy.stdout.contains("60 frames"), "\(copy.stderr)")
        #expect(try MovAtoms.isWholeMovie(dir.path("copy.mp4")) && !(try MovAtoms.isFragmented(dir.path("copy.mp4"))))
        let decoded = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", dir.path("copy.mp4"), "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let subtitled = try dualcam(["finish", titled, "-o", dir.path("titled-copy.mp4")])
        #expect(subtitled.status == 1 && subtitled.stderrLines.count == 1 && subtitled.stderr.contains("subtitle stream (#1, mov_text)"),
                "\(subtitled.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("titled-copy.mp4")))
        #expect(Set(dir.contents) == ["download.mp4", "titled.mp4", "titled.mp4.srt", "copy.mp4"])
    }

    /// Held open for writing by this test process (any program but the dualcam itself counts).
    @Test func aFileAnotherProgramIsWritingIsLeftToIt() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let growing = dir.path("growing.mp4")
        try Self.fragmented(growing, subtitles: false)
        let before = try Data(contentsOf: URL(fileURLWithPath: growing))
        let writer = try #require(FileHandle(forWritingAtPath: growing))
        let held = try dualcam(["finish", growing, "-o", dir.path("copy.mp4")])
        #expect(held.status == 1 && held.stderrLines.count == 1 && held.stderr.contains("is open for writing by")
                && held.stderr.contains("(pid \(getpid()))"), "\(held.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: growing)) == before && !FileManager.default.fileExists(atPath: dir.path("copy.mp4")))
        try writer.close()
        let done = try dualcam(["finish", growing, "-o", dir.path("copy.mp4")])
        #expect(done.status == 0, "\(done.stderr)")
    }
}
