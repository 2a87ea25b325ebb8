import Foundation
import MediaIO
@testable import Pipeline
import Testing

@Suite(.timeLimit(.minutes(10))) struct SourceTimelineTests {
    @Test func startOffsetsAreMeasuredFromTheFirstVideoFrame() {
        let t = SourceTimeline()
        var video = SourceTimeline.Cursor(), audio = SourceTimeline.Cursor()
        t.setOrigin(1.4)
        #expect(t.place(1.4, duration: 0.04, cursor: &video) == 0)
        #expect(abs(t.place(1.38, duration: 0.021, cursor: &audio) + 0.02) < 1e-9)
    }

    @Test func aResetFollowsOnAndBothStreamsShareTheOffset() {
        let t = SourceTimeline()
        var video = SourceTimeline.Cursor(), audio = SourceTimeline.Cursor()
        t.setOrigin(1.4)
        for i in 0..<50 { _ = t.place(1.4 + Double(i) * 0.04, duration: 0.04, cursor: &video) }  // to 3.4 s
        for i in 0..<94 { _ = t.place(1.39 + Double(i) * 0.02133, duration: 0.02133, cursor: &audio) }
        // Both go back to 1.4 s (video) and 1.39 s (audio): the second segment follows the first.
        let v = t.place(1.4, duration: 0.04, cursor: &video)
        let a = t.place(1.39, duration: 0.02133, cursor: &audio)
        #expect(abs(v - 2.0) < 1e-9, "\(v)")
        #expect(abs((v - a) - 0.01) < 1e-9, "audio keeps its 10 ms lead in the new segment: \(v - a)")
    }

    @Test func smallStepsAreNotJumps() {
        let t = SourceTimeline()
        var c = SourceTimeline.Cursor()
        t.setOrigin(0)
        _ = t.place(0, duration: 0.04, cursor: &c)
        #expect(t.place(0.5, duration: 0.04, cursor: &c) == 0.5)   // a 0.46 s pause stays a pause
        #expect(t.place(0.49, duration: 0.04, cursor: &c) == 0.49) // a small step back is no reset
        let leap = t.place(7200, duration: 0.04, cursor: &c)
        #expect(abs(leap - 0.54) < 1e-9, "\(leap)")
    }
}
