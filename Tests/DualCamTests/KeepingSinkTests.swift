import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// The take's file while every frame is kept (`--encode auto`): the switch to the intermediate.
@Suite(.timeLimit(.minutes(1))) struct KeepingSinkTests {
    /// Sixty pictures offered at once to x265, which cannot take them that fast: the switch is
    /// said for the slot that found no room (not the earlier slot the intermediate starts
    /// from, which made "fell behind at 0.00 s" follow "skipping at 1.67 s"), once, before the
    /// pictures handed back are written, and every picture from that first slot on is in the
    /// intermediate.
    @Test func theSwitchIsSaidForTheSlotThatFoundNoRoomBeforeTheHandedBackPicturesAreWritten() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let path = dir.path("take.mov")
        let (file, frame, takeID) = try IntermediateJoinTests.take(path, Self.settings)
        final class Held { weak var sink: KeepingSink? }
        let held = Held()
        var said: [(decidedAt: Int, from: Int, intermediatePictures: Int?)] = []
        let sink = try KeepingSink(file: file, mode: .auto, metadata: MovWriter.Metadata(), takeID: takeID,
                                   intermediateThreads: 1) { decidedAt, from in
            said.append((decidedAt, from, held.sink?.intermediate?.picturesWritten))
        }
        held.sink = sink
        var switchingWrite: Int?
        for slot in 0..<60 {
            frame.view.fill(y: UInt8(16 + slot * 3), u: 128, v: 128)
            try sink.write(frame: frame, index: Int64(slot))
            if switchingWrite == nil, sink.switchedAt != nil { switchingWrite = slot }
        }
        try sink.finishWriting()
        let switched = try #require(switchingWrite, "x265 took 60 pictures of 640x360 offered at once without falling behind")
        try #require(said.count == 1, "said \(said.count) times")
        #expect(said[0].decidedAt == switched, "said for slot \(said[0].decidedAt); the write of slot \(switched) switched")
        #expect(said[0].decidedAt >= KeepingSink.depth, "switched at \(said[0].decidedAt) with room for \(KeepingSink.depth)")
        #expect(said[0].from <= said[0].decidedAt && sink.switchedAt == said[0].from)
        #expect(said[0].intermediatePictures == 0, "said with \(said[0].intermediatePictures ?? -1) pictures in the intermediate")
        let (packets, _) = try Probe.packets(Intermediate.path(for: path), stream: "v:0")
        #expect(packets.count == 60 - said[0].from, "\(packets.count) pictures in the intermediate from slot \(said[0].from)")
    }

    /// Sound the take's encoder had encoded when the take switched to its intermediate at once,
    /// and a kill right after: the take's file holds it (its first flush wrote the header alone
    /// and kept the samples for the next), so the finished take's sound starts at 0, not at
    /// 0.11-0.15 s (a new user's ten kills beside busy loops).
    @Test func soundEncodedBeforeTheSwitchSurvivesAKill() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let path = dir.path("take.mov")
        try Self.takeKilledJustAfterItsSwitch(path, Self.settings)
        let finished = try dualcam(["finish", path])
        try #require(finished.status == 0, "\(finished.stdout) \(finished.stderr)")
        let start = try Probe(path).stream("audio")?["start_time"] as? String
        #expect(start.flatMap(Double.init) == 0, "the sound starts at \(start ?? "?") s")
    }

    /// HEVC at 640x360 in order: x265 takes pictures far slower than they are offered here.
    static var settings: VideoEncoderSettings {
        var settings = VideoEncoderSettings()
        settings.size = Size(width: 640, height: 360)
        settings.inOrder = true
        return settings
    }

    /// Sound, then pictures faster than x265 takes them, then a kill: the files closed (their
    /// locks let go) as a killed process's are.
    private static func takeKilledJustAfterItsSwitch(_ path: String, _ settings: VideoEncoderSettings) throws {
        let (file, frame, takeID) = try IntermediateJoinTests.take(path, settings)
        let sink = try KeepingSink(file: file, mode: .auto, metadata: MovWriter.Metadata(), takeID: takeID,
                                   intermediateThreads: 1) { _, _ in }
        let sound = SampleQueue()
        sound.appendSilence(48_000 / 5)
        try sink.write(sound: sound, final: false)
        // The worker's turn at the sound, as it has in a take: nothing outside the sink can tell
        // when it has had it (its counts are its thread's own), so a fixed pause.
        Thread.sleep(forTimeInterval: 0.2)
        for slot in 0..<60 {
            try sink.write(frame: frame, index: Int64(slot))
            if slot % 2 == 0 {
                sound.appendSilence(3_200)
                try sink.write(sound: sound, final: false)
            }
        }
        try #require(sink.switchedAt != nil, "x265 took 60 pictures of 640x360 offered at once without falling behind")
        // Killed once the worker has flushed the take's file (a kill comes later than this in a
        // take): nothing more is written, the locks go.
        waitUntil("the take's first fragment in \(path)", timeout: 10) {
            (try? MovAtoms.topLevel(path))?.contains(where: { $0.type == "moof" }) == true
        }
        sink.abandon()
        // And its threads gone, as a killed process's are: the catch-up's, at the encoders'
        // level, ends once its encoder has closed, and its reference to the take's file with
        // it (with both cores busy, `finish` once found the file's lock still held).
        sink.catchUpEnded(timeout: 30)
    }
}
