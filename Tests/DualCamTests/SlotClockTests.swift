import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// The pure timing pieces of record and compose, driven with made-up timestamps.
@Suite(.timeLimit(.minutes(10))) struct SlotClockTests {
    @Test func aSteadyCameraFillsOneSlotPerPicture() {
        var clock = SlotClock(fps: 30, duration: 1)
        for n in 0..<30 {
            let (repeats, shows) = clock.due(pictureAt: 100 + Double(n) / 30 + 0.002)
            #expect(repeats == 0 && shows == 1, "picture \(n)")
        }
        #expect(clock.isComplete && clock.next == 30)
        #expect(clock.due(pictureAt: 101.01) == (0, 0))
    }

    /// After a pause the first picture fills the next slot, with nothing repeated for the
    /// time paused, and the pictures after it keep their spacing; a fixed length counts the
    /// slots recorded, not the time paused.
    @Test func aResumedRecordingGoesStraightOn() {
        var clock = SlotClock(fps: 30, duration: 2)
        for n in 0..<30 { _ = clock.due(pictureAt: 10 + Double(n) / 30) }
        let moved = clock.resume(at: 15.004)
        #expect(abs(moved - (15.004 - 11)) < 1e-9)
        #expect(clock.due(pictureAt: 15.004) == (0, 1) && clock.next == 31)
        for n in 1..<29 { #expect(clock.due(pictureAt: 15.004 + Double(n) / 30 + 0.001) == (0, 1), "picture \(n)") }
        #expect(!clock.isComplete)
        _ = clock.due(pictureAt: 15.004 + 29.0 / 30)
        #expect(clock.isComplete && clock.seconds == 2)
    }

    @Test func aMissedPictureRepeatsTheOneBeforeIt() {
        var clock = SlotClock(fps: 30, duration: nil)
        _ = clock.due(pictureAt: 10)
        _ = clock.due(pictureAt: 10 + 1.0 / 30)
        // Pictures 2 and 3 never came; 4 arrives on time.
        let (repeats, shows) = clock.due(pictureAt: 10 + 4.0 / 30)
        #expect(repeats == 2 && shows == 1)
        #expect(clock.next == 5)
    }

    @Test func aFastCameraLeavesPicturesUnused() {
        var clock = SlotClock(fps: 30, duration: nil)
        var used = 0
        for n in 0..<60 { used += clock.due(pictureAt: Double(n) / 60).shows }
        #expect((29...31).contains(used), "\(used) of 60 pictures at 60 fps used for 1 s at 30 fps")
    }

    @Test func absurdDurationsSaturateInsteadOfTrapping() {
        #expect(SlotClock(fps: 30, duration: 1e18).limit == Int.max)
        #expect(SlotClock(fps: 30, duration: .infinity).limit == Int.max)
        #expect(SlotClock(fps: 30, duration: .nan).limit == 1)
        #expect(clampedInt(-1e300) == Int.min && clampedInt(.nan) == 0 && clampedInt(41.9) == 41)
    }
}
