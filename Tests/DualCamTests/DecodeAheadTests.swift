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

    /// A stop midway returns once the decoding thread has ended: what it decoded is still
    /// handed out, then the end, and the reader is the caller's again, going on from the
    /// picture after the last one decoded. A thread still running would take pictures from
    /// the reader behind the caller's back (some would be missing) or wait for ever.
    @Test func stoppingMidwayEndsTheThread() throws {
        let path = Env.fixture("back-16x9-30fps.mp4")
        let direct = try VideoReader(path: path)
        var expected: [Double] = []
        while let p = try direct.next() { expected.append(p.time) }
        try #require(expected.count > 3)

        let ahead = DecodeAhead(try VideoReader(path: path), depth: 1)
        var got = [try #require(try ahead.next()).time]
        ahead.stop()
        while let p = try ahead.next() { got.append(p.time) }
        #expect(got.count <= 2, "a thread of depth 1 had decoded \(got.count) pictures")
        #expect(try ahead.next() == nil, "still the end when asked again")
        while let p = try ahead.reader.next() { got.append(p.time) }
        #expect(got == expected, "\(got.count) pictures in all, \(expected.count) in the file")

        let again = Date()
        ahead.stop()
        #expect(Date().timeIntervalSince(again) < 1, "a second stop waited \(Date().timeIntervalSince(again)) s")
    }
}
