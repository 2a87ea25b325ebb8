import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// Decoding on a thread of its own changes nothing of what comes out.
@Suite(.timeLimit(.minutes(10))) struct DecodeAheadTests {
    @Test func picturesComeInOrderAndEndAsTheReaderEnds() throws {
        let path = Env.fixture("front-4x3-25fps.mkv")
        let direct = try VideoReader(path: path)
        var expected: [Double] = []
        while let p = try direct.next() { expected.append(p.time) }
        let ahead = DecodeAhead(try VideoReader(path: path), depth: 2)
        defer { ahead.stop() }
        var got: [Double] = []
        while let p = try ahead.next() { got.append(p.time) }
        #expect(got == expected && !got.isEmpty)
        #expect(try ahead.next() == nil, "still the end when asked again")
    }

    @Test func aDamagedFileThrowsItsErrorThroughTheQueue() throws {
        let dir = try TempDir()
        let original = try Data(contentsOf: URL(fileURLWithPath: Env.fixture("back-16x9-30fps.mp4")))
        let cut = dir.path("cut.mp4")
        // An index that declares 3 s over media cut at 60 %: the reader reports the cut at the end.
        try original.prefix(original.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
        func drain(_ next: () throws -> VideoPicture?) -> String? {
            do { while try next() != nil {}; return nil } catch { return "\(error)" }
        }
        let direct = try VideoReader(path: cut)
        let ahead = DecodeAhead(try VideoReader(path: cut))
        defer { ahead.stop() }
        let expected = drain { try direct.next() }
        #expect(expected != nil)
        #expect(drain { try ahead.next() } == expected)
    }

    @Test func stoppingMidwayEndsTheThread() throws {
        let ahead = DecodeAhead(try VideoReader(path: Env.fixture("back-16x9-30fps.mp4")), depth: 1)
        _ = try ahead.next()
        ahead.stop()  // returns only once the decoding thread has ended
        ahead.stop()  // and again at once
    }
}
