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
        let path = dir.path("take.mov"), takeID = Intermediate.newTakeID()
        var settings = VideoEncoderSettings()
        settings.encoder = "mpeg4"
        settings.size = Size(width: 320, height: 180)
        var metadata = MovWriter.Metadata()
        metadata.comment = Intermediate.takeTag(takeID)
        let file = try RecordingFile(path: path, overwrite: false, video: settings, metadata: metadata)
        let frame = try EncoderFrame(size: settings.size)
        try frame.prepareForWriting()
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
}
