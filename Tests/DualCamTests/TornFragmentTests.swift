import CFFmpegPolicy
import Foundation
import MediaIO
import Testing

/// A fragment reaches the file whole or hidden: its bytes wait in memory until the muxer has
/// completed it, then go out under a `free` box that only its real header, written last,
/// turns into the fragment. (Handed out in 64 KiB pieces, a kill between two of them left a
/// torn fragment in one CI run: FFmpeg played its 6 pictures and 0.26 s less sound than
/// picture, GStreamer dropped them.)
@Suite(.timeLimit(.minutes(1)))
struct FragmentStagingTests {
    @Test func whatIsStagedReachesTheFileOnlyAtTheCommit() throws {
        let dir = try TempDir(), path = dir.path("staged")
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        var pb: UnsafeMutablePointer<AVIOContext>?
        try #require(dc_avio_open_descriptor(&pb, fd, 1) == 0)
        let io = try #require(pb)
        dc_avio_stage_until_commit(io)
        // A box larger than the I/O buffer (64 KiB): AVIO hands it over in pieces.
        let box = Self.box("moof", payload: 200_000) + Self.box("mdat", payload: 90_000)
        box.withUnsafeBufferPointer { avio_write(io, $0.baseAddress, Int32($0.count)) }
        avio_flush(io)
        #expect(Self.size(fd) == 0, "written before the commit")
        #expect(dc_avio_commit(io) == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(box))
        // The next one goes after it, and closing commits what is left.
        let trailer = Self.box("mfra", payload: 100)
        trailer.withUnsafeBufferPointer { avio_write(io, $0.baseAddress, Int32($0.count)) }
        #expect(dc_avio_close_descriptor(&pb) == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(box + trailer))
    }

    static func box(_ type: String, payload: Int) -> [UInt8] {
        let size = UInt32(8 + payload)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xff), UInt8(size >> 8 & 0xff), UInt8(size & 0xff)]
            + Array(type.utf8) + (0..<payload).map { UInt8(truncatingIfNeeded: $0 * 7) }
    }

    static func size(_ fd: Int32) -> Int {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int(st.st_size) : -1
    }
}

extension CrashSafetyTests {
    /// Every state a kill during a fragment's writing can leave (nothing yet; the hidden
    /// fragment cut anywhere; all of it hidden; its header half written) reads, with FFmpeg and
    /// with GStreamer, as the fragments before it, and `finish` makes a take of exactly those.
    @Test(.timeLimit(.minutes(3)))
    func aFragmentCutByAKillIsHiddenFromEveryReader() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let cam = try Self.camera(in: dir), take = dir.path("take.mov")
        _ = try dualcam(["record", "--skip-speed-check", "--back", cam, "--front", Reference.front, "-o", take]) { p, said in
            said.waitForTake(of: 2.2)
            kill(p.processIdentifier, SIGKILL)
        }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: take)))
        let fragments = try MovAtoms.topLevel(take).filter { $0.type == "moof" }
        try #require(fragments.count >= 3, "\(fragments.count) fragments in 2.2 s")
        // The last fragment stands for the one being written; the file before it for what a
        // kill must leave readable.
        let last = Int(fragments.last!.offset), fragment = Array(bytes[last...])
        let before = dir.path("before.mov")
        try Data(bytes[..<last]).write(to: URL(fileURLWithPath: before))
        let expected = try Self.decoded(before), expectedByGStreamer = try Self.decodedByGStreamer(before, in: dir)
        #expect(expected.frames == expectedByGStreamer.frames && expected.frames > 0, "\(expected) \(expectedByGStreamer)")

        var hidden = fragment
        let whole = UInt32(fragment.count)
        hidden.replaceSubrange(0..<8, with: [UInt8(whole >> 24), UInt8(whole >> 16 & 0xff), UInt8(whole >> 8 & 0xff),
                                              UInt8(whole & 0xff)] + Array("free".utf8))
        var halfHeader = hidden
        halfHeader.replaceSubrange(0..<4, with: fragment[0..<4])
        let states: [(String, [UInt8])] = [
            ("cut at 8 bytes", Array(hidden[..<8])), ("cut at 64 KiB", Array(hidden[..<min(65536, hidden.count - 1)])),
            ("cut in half", Array(hidden[..<(hidden.count / 2)])), ("hidden whole", hidden),
            ("its header's size written, not its type", halfHeader),
        ]
        // What a power cut or a copy stopped midway can leave instead: the fragment itself cut
        // short, not hidden. Readers differ on it (FFmpeg plays its pictures without the sound
        // after them); finish leaves it out whole (it kept those pictures: sound 0.25 s short).
        let torn = Array(fragment[..<(fragment.count * 3 / 4)])
        for (state, tail) in states + [("torn, not hidden", torn)] {
            let path = dir.path("state.mov")
            try Data(bytes[..<last] + tail).write(to: URL(fileURLWithPath: path))
            if tail != torn {
                let ffmpeg = try Self.decoded(path), gstreamer = try Self.decodedByGStreamer(path, in: dir)
                #expect(ffmpeg.frames == expected.frames && abs(ffmpeg.audioSeconds - expected.audioSeconds) < 0.001,
                        "\(state): FFmpeg \(ffmpeg), the fragments before it \(expected)")
                #expect(gstreamer.frames == expected.frames && abs(gstreamer.audioSeconds - expectedByGStreamer.audioSeconds) < 0.001,
                        "\(state): GStreamer \(gstreamer), the fragments before it \(expectedByGStreamer)")
            }
            let f = try dualcam(["finish", path])
            #expect(f.status == 0, "\(state): \(f.stderr)")
            if f.status == 0 {
                try Self.expectRegularFaststart(path)
                let finished = try Self.decoded(path)
                #expect(finished.frames == expected.frames && abs(finished.audioSeconds - expected.audioSeconds) < 0.03,
                        "\(state): finish kept \(finished), the fragments before it \(expected)")
            }
            try FileManager.default.removeItem(atPath: path)
        }
    }
}
