import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// The record loop in virtual time (`VirtualTake`): cameras, keys and encoder speeds
/// scripted at exact instants, and every slot, repeat, skip and line asserted exactly. Both
/// cameras run at 30 fps unless a test says otherwise: the back camera's pictures arrive at
/// 0.01 s + n/30, the front's at 0.02 s + n/30, so the file starts with the back camera's
/// second picture (its first came before the front had one) and slot i shows back picture
/// i + 1 with front picture i in the inset.
@Suite(.timeLimit(.minutes(1))) struct RecordLoopVirtualTests {
    /// Both cameras at 30 fps until `until` seconds.
    static func twoCameras(_ take: VirtualTake, until: Double = 10) {
        take.delivers(take.back, from: 0.01, to: until)
        take.delivers(take.front!, from: 0.02, to: until)
    }

    static func backs(_ range: Range<Int>) -> [String] { range.map { "b\($0 % 50)" } }
    static func fronts(_ range: Range<Int>) -> [String] { range.map { "f\($0 % 50)" } }

    // MARK: Slots and the clock

    @Test func picturesOnTimeFillOneSlotEachWithTheNewestInsetPicture() throws {
        let take = VirtualTake()
        take.plan.duration = 2
        Self.twoCameras(take)
        let summary = try take.run()
        #expect(take.indices == Array(0..<60))
        #expect(take.mains == Self.backs(1..<61))
        #expect(take.insets == Self.fronts(0..<60))
        #expect(take.sink.written.allSatisfy { $0.corner == .topRight })
        #expect((summary.frames, summary.repeatedFrames, summary.droppedBackFrames, summary.encoderSkippedFrames) == (60, 0, 0, 0))
        #expect(abs(summary.seconds - 2) < 1e-9)
    }

    @Test func aMissedPictureRepeatsThePreviousOneInItsSlot() throws {
        let take = VirtualTake()
        take.plan.duration = 1
        take.delivers(take.back, from: 0.01, to: 2, skipping: [10])
        take.delivers(take.front!, from: 0.02, to: 2)
        let summary = try take.run()
        #expect(take.indices == Array(0..<30))
        // The camera's pictures are named as they come: the one after the gap is b10.
        #expect(take.mains == Self.backs(1..<10) + ["b9"] + Self.backs(10..<30))
        #expect((summary.repeatedFrames, summary.droppedBackFrames) == (1, 0))
    }

    @Test func aGapOfFivePicturesRepeatsFiveSlots() throws {
        let take = VirtualTake()
        take.plan.duration = 1
        take.delivers(take.back, from: 0.01, to: 2, skipping: [10, 11, 12, 13, 14])
        take.delivers(take.front!, from: 0.02, to: 2)
        let summary = try take.run()
        #expect(take.mains == Self.backs(1..<10) + Array(repeating: "b9", count: 5) + Self.backs(10..<26))
        #expect(summary.repeatedFrames == 5)
    }

    @Test func aCameraAt50FpsHasTwoPicturesInFiveDropped() throws {
        let take = VirtualTake()
        take.plan.duration = 1
        take.delivers(take.back, from: 0.011, to: 2, every: 1.0 / 50)
        take.delivers(take.front!, from: 0.02, to: 2)
        let summary = try take.run()
        #expect(take.indices == Array(0..<30))
        // The second back picture (0.031 s) starts the file; slot j shows the first picture
        // taken no more than half a frame before it is due: k/50 >= j/30 - 1/60.
        let shown = take.mains.compactMap { Int($0.dropFirst()) }
        let firstWithinHalfAFrame = (0..<30).map { (j: Int) -> Int in 1 + Int((Double(10 * j - 5) / 6).rounded(.up)) }
        #expect(shown == firstWithinHalfAFrame)
        #expect((summary.frames, summary.repeatedFrames, summary.droppedBackFrames) == (30, 0, 19))
    }

    @Test func aCameraAt25FpsRepeatsOneSlotInSix() throws {
        let take = VirtualTake()
        take.plan.duration = 1
        take.delivers(take.back, from: 0.01, to: 2, every: 1.0 / 25)
        take.delivers(take.front!, from: 0.005, to: 2)
        let summary = try take.run()
        #expect(take.indices == Array(0..<30))
        #expect((summary.frames, summary.repeatedFrames, summary.droppedBackFrames) == (30, 5, 0))
        #expect(Set(take.mains).count == 25)
    }

    @Test func stampsJitteringWithinAQuarterFrameNeitherRepeatNorDrop() throws {
        let take = VirtualTake()
        take.plan.duration = 2
        let jitter = [0.0, 0.008, -0.007, 0.004, -0.008, 0.006]
        for n in 0..<90 {
            let at = take.t(0.01 + Double(n) / 30)
            take.clock.at(at) { take.back.deliver(stampedAt: at + jitter[n % jitter.count]) }
        }
        take.delivers(take.front!, from: 0.005, to: 3)
        let summary = try take.run()
        #expect(take.mains == Self.backs(0..<60))
        #expect((summary.repeatedFrames, summary.droppedBackFrames) == (0, 0))
    }

    @Test func theDurationEndsTheTakeOnItsLastSlot() throws {
        let take = VirtualTake()
        take.plan.duration = 1.5
        Self.twoCameras(take)
        let summary = try take.run()
        #expect(take.indices == Array(0..<45))
        #expect(summary.frames == 45)
        #expect(abs(summary.seconds - 1.5) < 1e-9)
    }

    @Test func aStopEndsTheTakeBeforeTheNextPicture() throws {
        let take = VirtualTake()
        Self.twoCameras(take)
        take.press(.stop, at: 1.0)
        let summary = try take.run()
        // Back pictures 1...29 arrived before 1.0 s.
        #expect(take.indices == Array(0..<29))
        #expect(summary.frames == 29)
    }

    @Test func latencyIsCountedFromEachPicturesStamp() throws {
        let take = VirtualTake()
        take.plan.duration = 1
        take.delivers(take.back, from: 0.03, to: 2, stampOffset: 0.02)
        take.delivers(take.front!, from: 0.02, to: 2)
        let summary = try take.run()
        #expect(summary.frames == 30)
        #expect(abs(summary.latencyP50Ms - 20) < 1e-6 && abs(summary.latencyP99Ms - 20) < 1e-6 && abs(summary.latencyMaxMs - 20) < 1e-6)
    }

    // MARK: The start

    @Test func theFileWaitsForTheOtherCamerasFirstPicture() throws {
        let take = VirtualTake()
        take.plan.duration = 1
        take.delivers(take.back, from: 0.01, to: 3)
        take.delivers(take.front!, from: 0.5, to: 3)
        _ = try take.run()
        // Back picture 15 (0.51 s) is the first after the front's first (0.50 s).
        #expect(take.mains.first == "b15")
        #expect(take.insets.first == "f0")
        #expect(take.insets.allSatisfy { $0 != nil })
    }

    @Test func anOtherCameraThatSendsNothingIsWaitedForOneSecondThenDropped() throws {
        let take = VirtualTake()
        take.plan.duration = 6
        take.delivers(take.back, from: 0.013, to: 8)
        _ = try take.run()
        // The first picture came at 0.013 s; the one a second later starts the file, alone. The
        // front gets its start-up time (5 s from the start, 4 s into the file) before it is lost.
        #expect(take.mains.first == "b30")
        #expect(take.insets.allSatisfy { $0 == nil })
        #expect(take.heard.lines.contains("at 4.00 s front lost (no frame since it started): back goes on alone, full frame"))
    }

    @Test func picturesStampedBeforeTheStartAreNotRecorded() throws {
        let take = VirtualTake()
        take.plan.duration = 1
        // A camera's first buffers can be a second old: three of them, then pictures as they come.
        for n in 0..<3 {
            take.clock.at(take.t(0.001 * Double(n + 1))) { take.back.deliver(stampedAt: take.t(-1 + 0.1 * Double(n))) }
        }
        take.delivers(take.back, from: 0.01, to: 2)
        take.delivers(take.front!, from: 0.005, to: 2)
        let summary = try take.run()
        #expect(take.mains.first == "b3")
        #expect(summary.frames == 30)
    }

    @Test func aPauseBeforeTheFirstPictureStartsTheFileAtTheResume() throws {
        let take = VirtualTake()
        take.plan.duration = 1
        take.press(.pauseOrResume, at: 0)
        take.press(.pauseOrResume, at: 0.5)
        Self.twoCameras(take, until: 3)
        let summary = try take.run()
        // Back picture 15 (0.51 s) is the first after the resume.
        #expect(take.mains.first == "b15")
        #expect(summary.frames == 30)
        #expect(summary.pauses == 1)
    }

    // MARK: One camera

    @Test func oneCameraIsRecordedAloneWithNoInset() throws {
        let take = VirtualTake(twoCameras: false)
        take.plan.duration = 1
        take.delivers(take.back, from: 0.01, to: 2)
        let summary = try take.run()
        #expect(take.mains == Self.backs(0..<30))
        #expect(take.insets.allSatisfy { $0 == nil })
        #expect(summary.singleCamera)
    }

    @Test func aSwapWithOneCameraDoesNothing() throws {
        let take = VirtualTake(twoCameras: false)
        take.plan.duration = 1
        take.delivers(take.back, from: 0.01, to: 2)
        take.press(.swap, at: 0.5)
        let summary = try take.run()
        #expect(take.mains == Self.backs(0..<30))
        #expect(summary.swaps.isEmpty)
    }
}
