import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// The pure timing pieces of record and compose, driven with made-up timestamps.
@Suite struct SlotClockTests {
    @Test func aSteadyCameraFillsOneSlotPerPicture() {
        var clock = SlotClock(fps: 30, duration: 1)
        for n in 0..<30 {
            let (repeats, shows) = clock.due(pictureAt: 100 + Double(n) / 30 + 0.002)
            #expect(repeats == 0 && shows == 1, "picture \(n)")
        }
        #expect(clock.isComplete && clock.next == 30)
        #expect(clock.due(pictureAt: 101.01) == (0, 0))
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
