import CFFmpeg
import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// A take that goes on in its intermediate, joined after the stop (`RecordingFile.finalize`).
@Suite(.timeLimit(.minutes(1))) struct IntermediateJoinTests {
    /// The take switched to its intermediate at its first picture, whose packet came out of
    /// the encoder as it switched: the take's file holds that picture alone in a fragment
    /// (read back with duration 0) and the intermediate holds it too. The finished file has
    /// each slot once (a CI run's emulated cameras gave two pictures at 0).
    @Test func aPictureBothFilesHoldIsJoinedOnce() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let path = dir.path("take.mov")
        var settings = VideoEncoderSettings()
        settings.encoder = "mpeg4"
        settings.size = Size(width: 320, height: 180)
        let (file, frame, takeID) = try Self.take(path, settings)
        try file.write(frame: frame, index: 0)
        try file.writer.flushFragment()
        let intermediate = try IntermediateFile(take: path, takeID: takeID, from: 0, takeSettings: file.encoders.video.settings,
                                                audio: file.encoders.audio, metadata: MovWriter.Metadata(), threads: 1)
        for slot in 0..<10 { try intermediate.write(frame: frame, index: Int64(slot)) }
        try intermediate.finishWriting()
        try file.finishWriting(drained: true)
        let result = try file.finalize(rest: intermediate)
        let (packets, timeBase) = try Probe.packets(path, stream: "v:0")
        let slots = packets.map { Int((Double($0.pts) * timeBase * 30).rounded()) }.sorted()
        #expect(slots == Array(0..<10), "pictures at slots \(slots)")
        #expect(result.videoFrames == 10)
    }

    /// The take's encoder fell behind at its 10th picture: its file holds what came out of it,
    /// the intermediate the rest (150 slots, each its own grey, keyframes every 60). The
    /// catch-up encodes the intermediate into the take's file, once with room for every
    /// packet, stopped when it is nearly through and finished in this process; once let go
    /// after 135 packets (drained, then idle), and the files left as a kill leaves them for
    /// `dualcam finish`. Either way the join after it skips what the take's file holds (from
    /// the keyframe before, read and not encoded), and the finished file has every slot once,
    /// each with its own picture, decoded without a message.
    @Test(arguments: [false, true])
    func theIntermediateEncodedDuringTheTakeIsJoinedOnce(killed: Bool) throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let path = dir.path("take.mov")
        // Its files closed (their locks let go) as a killed process's are.
        try Self.takeCaughtUpInPart(path, in: dir, killed: killed)
        if killed {
            let f = try dualcam(["finish", path])
            try #require(f.status == 0, "\(f.stderr)")
        }
        let (packets, timeBase) = try Probe.packets(path, stream: "v:0")
        let slots = packets.map { Int((Double($0.pts) * timeBase * 30).rounded()) }.sorted()
        #expect(slots == Array(0..<150), "pictures at slots \(slots)")
        let thumbnails = try Decode.thumbnails(path, side: 2)
        let greys = thumbnails.map { Int($0[3]) }, textures = thumbnails.map { Int($0[0]) }
        let expected = (0..<150).map { (Int(Self.grey($0)) - 16) * 255 / 219 }
        let wrong = zip(greys, expected).enumerated().filter { abs($0.element.0 - $0.element.1) > 6 }.map(\.offset)
        #expect(greys.count == 150 && wrong.isEmpty, "\(greys.count) pictures; not their slot's grey: \(wrong)")
        let texture = textures.first ?? 0
        let broken = textures.enumerated().filter { abs($0.element - texture) > 6 }.map(\.offset)
        #expect(texture > 180 && broken.isEmpty, "the still half (\(texture)) changed at \(broken)")
        let decoded = try run(Env.tool("ffmpeg")!, ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
    }

    /// Killed before the take's own file had a fragment (it went to the intermediate at its
    /// third picture; the two before it were still inside the encoder): the file is its header
    /// alone, and `finish` makes the take from the intermediate, saying what is missing before
    /// it (it said the header was "not that take", and the intermediate's seconds were lost;
    /// an attacker's trial, beside two busy loops, killed at 8 s: 7 s).
    @Test func aTakeKilledBeforeItsFirstFragmentIsFinishedFromItsIntermediate() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let path = dir.path("take.mov")
        // Its files closed (their locks let go) as a killed process's are.
        try Self.takeKilledBeforeItsFirstFragment(path)
        let atoms = try MovAtoms.topLevel(path)
        #expect(atoms.map(\.type) == ["ftyp", "moov"], "a header alone, as the kill left it: \(atoms)")
        let f = try dualcam(["finish", path])
        try #require(f.status == 0, "\(f.stderr)")
        #expect(f.stdout.contains("finished \(path): 58 frames") && f.stdout.contains("2 frames (0.07 s) the kill left unwritten"),
                "\(f.stdout)")
        #expect(!FileManager.default.fileExists(atPath: Intermediate.path(for: path)))
        let greys = try Decode.thumbnails(path, side: 2).map { (Int($0[0]) * 219 + 127) / 255 + 16 }
        let expected = (2..<60).map { Int(Self.grey($0)) }
        #expect(greys.count == 58 && zip(greys, expected).allSatisfy { abs($0 - $1) <= 6 }, "\(greys)")
    }

    private static func takeKilledBeforeItsFirstFragment(_ path: String) throws {
        var settings = VideoEncoderSettings()
        settings.size = Size(width: 320, height: 180)
        settings.inOrder = true
        let (file, frame, takeID) = try Self.take(path, settings)
        for slot in 0..<2 {
            frame.view.fill(y: Self.grey(slot), u: 128, v: 128)
            try file.write(frame: frame, index: Int64(slot))
        }
        let intermediate = try IntermediateFile(take: path, takeID: takeID, from: 2, takeSettings: file.encoders.video.settings,
                                                audio: file.encoders.audio, metadata: MovWriter.Metadata(), threads: 1)
        for slot in 2..<60 {
            frame.view.fill(y: Self.grey(slot), u: 128, v: 128)
            try intermediate.write(frame: frame, index: Int64(slot))
        }
        try intermediate.finishWriting()
        // The header goes out with the first flush, before any picture has left the encoder.
        try file.writer.flushFragment()
        file.writer.abandon()
    }

    /// A take's file at `path` as a recording makes it (its identity in its tag), and a frame
    /// of its size to paint.
    static func take(_ path: String, _ settings: VideoEncoderSettings) throws -> (RecordingFile, EncoderFrame, String) {
        let takeID = Intermediate.newTakeID()
        var metadata = MovWriter.Metadata()
        metadata.comment = Intermediate.takeTag(takeID)
        let file = try RecordingFile(path: path, overwrite: false, video: settings, metadata: metadata)
        let frame = try EncoderFrame(size: settings.size)
        try frame.prepareForWriting()
        return (file, frame, takeID)
    }

    private static func takeCaughtUpInPart(_ path: String, in dir: TempDir, killed: Bool) throws {
        var settings = VideoEncoderSettings()
        settings.size = Size(width: 320, height: 180)
        settings.inOrder = true
        // Two frame threads, as a live take on two CPUs has them and `finish` does not: x265
        // says its options (threads included) in an SEI beside the parameter sets, which is no
        // reason for pictures not to follow the take's (an attacker's trial: every take killed
        // after a switch later than its first frame was refused).
        settings.threading = EncoderThreading(threads: 2, frameThreads: 2)
        let (file, frame, takeID) = try Self.take(path, settings)
        // The left half a still texture (bright, 160-239): a picture decoded without the ones
        // before it would not have it. The right half its slot's grey.
        func paint(_ slot: Int) {
            let view = frame.view
            view.fill(y: Self.grey(slot), u: 128, v: 128)
            for y in 0..<view.y.height {
                let row = view.y.row(y)
                for x in 0..<view.y.width / 2 { row[x] = UInt8(160 + ((x * 7 + y * 13) ^ (x * y)) % 80) }
            }
        }
        for slot in 0..<10 {
            paint(slot)
            try file.write(frame: frame, index: Int64(slot))
        }
        try file.writer.flushFragment()
        let from = Int(file.encoders.lastPictureOut) + 1
        let intermediate = try IntermediateFile(take: path, takeID: takeID, from: from, takeSettings: file.encoders.video.settings,
                                                audio: file.encoders.audio, metadata: MovWriter.Metadata(), threads: 1)
        var sizes: [Int] = []
        intermediate.encoders.subscribe { p, isVideo in if isVideo { sizes.append(Int(p.pointee.size)) } }
        for slot in from..<150 {
            paint(slot)
            try intermediate.write(frame: frame, index: Int64(slot))
        }
        try intermediate.finishWriting()
        let limit = killed ? sizes.prefix(135).reduce(0, +) : Int.max
        // The same packets again, as the take would have offered them, into a catch-up that
        // starts once they are all there: where it lets go does not depend on its speed.
        let catchUp = try IntermediateCatchUp(intermediate: intermediate.encoders.video, take: file.encoders.video,
                                              decoderThreads: 1, byteLimit: limit)
        let replay = try IntermediateFile(take: dir.path("again.mov"), takeID: takeID, from: from,
                                          takeSettings: file.encoders.video.settings, audio: try AudioEncoder(bitrate: 64_000),
                                          metadata: MovWriter.Metadata(), threads: 1)
        replay.encoders.subscribe { p, isVideo in if isVideo { catchUp.offer(p) } }
        for slot in from..<150 {
            paint(slot)
            try replay.write(frame: frame, index: Int64(slot))
        }
        try replay.finishWriting()
        let last = file.encoders.lastPictureOut
        catchUp.start(into: file.writer) { last }
        waitUntil(killed ? "the catch-up to go idle" : "the catch-up to reach slot 140", timeout: 30) {
            killed ? catchUp.progress.idle : catchUp.progress.lastSlot >= 140
        }
        let outcome = catchUp.stop()
        #expect(catchUp.waitUntilEnded(timeout: 10))
        if killed {
            #expect(outcome.idle && outcome.endedEarly?.contains("MiB") == true, "\(outcome)")
            #expect(Int(outcome.lastSlot) == from + 134, "let go after 135 packets from \(from), the take reached \(outcome)")
        } else {
            #expect(outcome.endedEarly == nil && outcome.lastSlot >= 140 && outcome.lastSlot < 149, "\(outcome)")
        }
        #expect(outcome.frames == Int(outcome.lastSlot) + 1 - from, "\(outcome) from \(from)")
        if killed {
            file.writer.abandon()
            // Beyond 120 frames past where the intermediate begins: more than a kill leaves in
            // a take's encoder, which `finish` allowed before the catch-up.
            #expect(try MovFinalizer.videoPacketCount(path) == Int(outcome.lastSlot) + 1)
            #expect(Int(outcome.lastSlot) + 1 > from + 120, "\(outcome) from \(from)")
        } else {
            try file.finishWriting(drained: true)
            let result = try file.finalize(rest: intermediate)
            #expect(result.videoFrames == 150)
        }
    }

    /// Neighbouring slots' greys differ by 37 levels (of 16-235).
    static func grey(_ slot: Int) -> UInt8 { UInt8(20 + (slot * 37) % 200) }
}

