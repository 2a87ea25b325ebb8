import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

/// Swaps, pauses, drags, cameras that leave and come back, and encoders slower than real
/// time, in virtual time (see `RecordLoopVirtualTests` for the cameras' schedule).
extension RecordLoopVirtualTests {
    // MARK: Swaps

    @Test func aSwapShowsAtTheNextPictureAndIsInTheSummary() throws {
        let take = VirtualTake()
        take.plan.duration = 2
        Self.twoCameras(take)
        take.press(.swap, at: 1.0)
        let summary = try take.run()
        // Slot 28 is the last before 1.0 s; from slot 29 the front is full frame.
        #expect(take.mains == Self.backs(1..<30) + Self.fronts(29..<60))
        let insets: [String] = Self.fronts(0..<29) + Self.backs(30..<61)
        #expect(take.insets == insets)
        #expect(summary.swaps.count == 1 && abs(summary.swaps[0] - 29.0 / 30) < 1e-9)
        #expect(take.heard.lines.contains("swap at 0.97 s: front full frame"))
    }

    @Test func twoSwapsPutTheRolesBack() throws {
        let take = VirtualTake()
        take.plan.duration = 2
        Self.twoCameras(take)
        take.press(.swap, at: 0.5)
        take.press(.swap, at: 1.5)
        let summary = try take.run()
        #expect(take.mains == Self.backs(1..<15) + Self.fronts(14..<44) + Self.backs(45..<61))
        #expect(summary.swaps.count == 2)
        #expect(take.heard.lines.contains("swap at 1.47 s: back full frame"))
    }

    @Test func startingSwappedShowsTheFrontFullFrameFromTheFirstSlot() throws {
        let take = VirtualTake()
        take.plan.duration = 1
        take.plan.swap = true
        Self.twoCameras(take)
        let summary = try take.run()
        #expect(take.mains == Self.fronts(0..<30))
        #expect(take.insets == Self.backs(1..<31))
        #expect(summary.swaps == [0])
    }

    @Test func aSwapNeverShowsAPictureMadeForTheInsetFullFrame() throws {
        let take = VirtualTake()
        take.plan.duration = 2
        take.front!.insetPictures = .insetOnly
        Self.twoCameras(take)
        take.press(.swap, at: 1.0)
        _ = try take.run()
        // Asked before slot 29: the front's newest picture (f29) was made for the inset, so
        // slot 29 still shows the back; f30, made after the swap was asked, shows at slot 30.
        #expect(take.mains == Self.backs(1..<31) + Self.fronts(30..<60))
        #expect(take.indices == Array(0..<60))
    }

    @Test func aReducedPictureDelaysTheSwapToTheFrontsNextOneMadeForTheFullFrame() throws {
        let take = VirtualTake()
        take.plan.duration = 2
        take.front!.insetPictures = .halved
        Self.twoCameras(take)
        take.press(.swap, at: 1.0)
        _ = try take.run()
        // f29 was made for the inset (half size): slot 29 still shows the back; f30, made
        // for the full frame, shows at slot 30.
        #expect(take.mains == Self.backs(1..<31) + Self.fronts(30..<60))
    }

    // MARK: Pauses

    @Test func aPauseLeavesOutItsTimeAndTheFileGoesStraightOn() throws {
        let take = VirtualTake()
        Self.twoCameras(take)
        take.press(.pauseOrResume, at: 1.0)
        take.press(.pauseOrResume, at: 2.0)
        take.press(.stop, at: 3.0)
        let summary = try take.run()
        // Back 1...29 before the pause; from the first taken after the resume (60, at 2.01 s)
        // to the last before the stop (89, at 2.977 s).
        #expect(take.mains == Self.backs(1..<30) + Self.backs(60..<90))
        #expect(take.indices == Array(0..<59))
        #expect(summary.pauses == 1)
        #expect(abs(summary.pausedSeconds - (31.0 / 30 - 1.0 / 30)) < 1e-6)
        #expect(take.heard.lines.contains("paused at 0.97 s"))
        #expect(take.heard.lines.contains("resumed at 0.97 s (1.0 s left out)"))
    }

    @Test func aStopWhilePausedEndsTheTake() throws {
        let take = VirtualTake()
        Self.twoCameras(take)
        take.press(.pauseOrResume, at: 1.0)
        take.press(.stop, at: 2.0)
        let summary = try take.run()
        #expect(take.indices == Array(0..<29))
        #expect(summary.pauses == 1)
        #expect(abs(summary.pausedSeconds - 1.0) < 1e-6)
    }

    @Test func aSwapAskedDuringAPauseShowsFromTheResume() throws {
        let take = VirtualTake()
        Self.twoCameras(take)
        take.press(.pauseOrResume, at: 1.0)
        take.press(.swap, at: 1.5)
        take.press(.pauseOrResume, at: 2.0)
        take.press(.stop, at: 3.0)
        _ = try take.run()
        #expect(take.mains == Self.backs(1..<30) + Self.fronts(59..<89))
    }

    @Test func pausingTwiceBeforeAPictureComesIsStillOnePause() throws {
        let take = VirtualTake()
        Self.twoCameras(take)
        take.press(.pauseOrResume, at: 1.0)
        take.press(.pauseOrResume, at: 2.0)
        take.press(.pauseOrResume, at: 2.001)
        take.press(.pauseOrResume, at: 2.5)
        take.press(.stop, at: 3.0)
        let summary = try take.run()
        #expect(summary.pauses == 1)
        // The resume asked at 2.0 s was taken back before a picture came: 2.5 s resumes.
        #expect(take.mains == Self.backs(1..<30) + Self.backs(75..<90))
    }

    // MARK: The inset dragged

    @Test func aDraggedInsetMovesAtTheNextSlot() throws {
        let take = VirtualTake()
        take.plan.duration = 2
        Self.twoCameras(take)
        take.press(.moveInset(.bottomLeft), at: 1.0)
        take.press(.moveInset(.bottomLeft), at: 1.5)
        _ = try take.run()
        let corners: [Corner?] = Array(repeating: .topRight, count: 29) + Array(repeating: .bottomLeft, count: 31)
        #expect(take.sink.written.map(\.corner) == corners)
        #expect(take.heard.lines.filter { $0.hasPrefix("inset moved") } == ["inset moved to bottom-left at 0.97 s"])
    }

    @Test func sideBySideShowsEachCameraInItsHalfAndIgnoresADrag() throws {
        let take = VirtualTake(arrangement: .sideBySide)
        take.plan.duration = 1
        Self.twoCameras(take)
        take.press(.moveInset(.bottomLeft), at: 0.5)
        _ = try take.run()
        #expect(take.mains == Self.backs(1..<31))
        #expect(take.insets == Self.fronts(0..<30))
        #expect(!take.heard.lines.contains { $0.hasPrefix("inset moved") })
    }

    // MARK: Cameras that leave and come back

    @Test func anUnpluggedBackLeavesTheFrontFullFrameUntilItIsBack() throws {
        let take = VirtualTake()
        take.plan.duration = 3
        take.delivers(take.back, from: 0.01, to: 1.0)
        take.set(take.back, .away("unplugged"), at: 1.0)
        take.delivers(take.back, from: 2.01, to: 5)
        take.delivers(take.front!, from: 0.02, to: 5)
        _ = try take.run()
        let lines = take.heard.lines
        #expect(lines.contains("at 0.97 s back lost (unplugged): front goes on alone, full frame"))
        #expect(lines.contains { $0.hasSuffix("back is back: full frame again") })
        // Alone, the front drives the clock: no slot is lost while the back is away.
        #expect(take.indices == Array(0..<90))
        let alone = take.sink.written.filter { $0.inset == nil }.count
        #expect(alone == 30)
    }

    @Test func aFrontThatStopsSendingIsDroppedAfterASecondAndTheBackGoesOn() throws {
        let take = VirtualTake()
        take.plan.duration = 3
        take.delivers(take.back, from: 0.01, to: 5)
        take.delivers(take.front!, from: 0.02, to: 1.0)
        _ = try take.run()
        #expect(take.heard.lines.contains("at 1.97 s front lost (no frame for 1 s): back goes on alone, full frame"))
        #expect(take.mains == Self.backs(1..<91))
        // Its last picture stays in the inset until it is counted lost.
        let held: [String] = Self.fronts(0..<29) + Array(repeating: "f29", count: 30)
        #expect(take.insets == held + Array(repeating: nil, count: 31))
    }

    @Test func camerasLostForGoodEndTheTake() throws {
        let take = VirtualTake()
        take.delivers(take.back, from: 0.01, to: 1.0)
        take.delivers(take.front!, from: 0.02, to: 1.0)
        take.set(take.back, .lost("the file ended"), at: 1.0)
        take.set(take.front!, .lost("the file ended"), at: 1.0)
        let summary = try take.run()
        #expect(summary.frames == 29)
        #expect(take.heard.lines.contains("at 0.97 s front lost (the file ended): no camera left, finishing the file"))
    }

    @Test func aDurationPassedWithEveryCameraAwayEndsTheTake() throws {
        let take = VirtualTake()
        take.plan.duration = 3
        take.delivers(take.back, from: 0.01, to: 1.0)
        take.delivers(take.front!, from: 0.02, to: 1.0)
        take.set(take.back, .away("unplugged"), at: 1.0)
        take.set(take.front!, .away("unplugged"), at: 1.0)
        let summary = try take.run()
        #expect(summary.frames == 29)
        #expect(take.heard.lines.contains("the 3.0 s asked for have passed with no camera: finishing the file at 0.97 s"))
    }

    // MARK: The encoder

    @Test func anEncoderThatKeepsUpHasNothingSkipped() throws {
        let take = VirtualTake(encoderSecondsPerFrame: [0.03])
        take.plan.duration = 2
        Self.twoCameras(take)
        let summary = try take.run()
        #expect(take.indices == Array(0..<60))
        #expect(summary.encoderSkippedFrames == 0)
    }

    @Test func anEncoderAtHalfRealTimeHasEveryOtherSlotSkippedOnceASecondOfItsTimeWaits() throws {
        let take = VirtualTake(encoderSecondsPerFrame: [1.0 / 15])
        take.plan.duration = 4
        Self.twoCameras(take)
        let summary = try take.run()
        // By slot 28 (0.93 s) the encoder has done 14 frames: the 15 waiting are a second of
        // its time. From there it takes one slot in two; the last slot is never skipped.
        #expect(take.indices == Array(0..<28) + Array(stride(from: 29, through: 119, by: 2)))
        #expect(summary.encoderSkippedFrames == 46)
        #expect(take.heard.lines.filter { $0.contains("the encoder is behind") }
                == ["at 0.93 s the encoder is behind (slower than real time): skipping frames until it catches up; the picture "
                    + "holds longer, the sound is untouched"])
    }

    @Test func anEncoderSixTimesTooSlowIsHeldToHalfASecondOfItsTime() throws {
        let take = VirtualTake(encoderSecondsPerFrame: [0.2])
        take.plan.duration = 4
        Self.twoCameras(take)
        let summary = try take.run()
        // Its second frame shows it slower than real time (0.2 s a frame): what waits is cut
        // to half a second of its time (slots 3...16 go), and from then on it takes one slot
        // in six, its speed; what waits at the stop and the last slot are encoded after it.
        #expect(take.indices == [0, 1, 2] + Array(stride(from: 17, through: 113, by: 6)) + [117, 118, 119])
        #expect(summary.encoderSkippedFrames == 97)
        #expect(take.heard.lines.contains { $0.hasPrefix("at 0.40 s the encoder is behind") })
    }

    @Test func composedInPlaceWhenTheCameraIsTheCanvasSize() throws {
        let same = VirtualTake()
        same.plan.duration = 1
        Self.twoCameras(same)
        let sameSummary = try same.run()
        #expect(sameSummary.composedInPlace == 30)
        let other = VirtualTake(cameraSize: Size(width: 160, height: 90))
        other.plan.duration = 1
        Self.twoCameras(other)
        #expect(try other.run().composedInPlace == 0)
        #expect(other.mains == Self.backs(1..<31))
    }

    @Test func theStatusIsReportedFourTimesASecond() throws {
        let take = VirtualTake()
        take.plan.duration = 2
        Self.twoCameras(take)
        _ = try take.run()
        let statuses = take.heard.statuses
        // Every quarter second from the first, on the pictures' instants: 0.29 s ... 1.79 s.
        #expect(statuses.count == 7)
        #expect(statuses.allSatisfy { $0.fullFrame == "back" && !$0.paused && $0.canSwap })
    }
}

/// Where the microphone's sound lands in the take (`VirtualMicrophone`: each sample says
/// when it was heard).
extension RecordLoopVirtualTests {
    /// Output sample `p` was heard this many samples after the microphone started.
    static func heard(_ take: VirtualTake, at p: Int) -> Int? { VirtualMicrophone.heardAt(take.sink.sound[p]) }

    static func withMicrophone(_ take: VirtualTake) {
        take.microphone = VirtualMicrophone(clock: take.clock)
    }

    @Test func theSoundStartsWithTheFirstFrameAndEndsWithTheLast() throws {
        let take = VirtualTake()
        Self.withMicrophone(take)
        take.plan.duration = 2
        Self.twoCameras(take)
        _ = try take.run()
        #expect(take.sink.sound.count == 60 * 1600)
        // The first slot is the back's picture at 0.01 + 1/30 s: 2080 samples after the start.
        #expect(Self.heard(take, at: 0) == 2080)
        // And it runs on without a gap to the end.
        #expect(Self.heard(take, at: 60 * 1600 - 1) == 2080 + 60 * 1600 - 1)
    }

    @Test func aPauseLeavesOutTheSoundOfExactlyTheTimeThePictureSkips() throws {
        let take = VirtualTake()
        Self.withMicrophone(take)
        Self.twoCameras(take)
        take.press(.pauseOrResume, at: 1.0)
        take.press(.pauseOrResume, at: 2.0)
        take.press(.stop, at: 3.0)
        _ = try take.run()
        let cut = 29 * 1600
        #expect(take.sink.sound.count == 59 * 1600)
        #expect(Self.heard(take, at: cut - 1) == 2080 + cut - 1)
        // The resume's picture (2.01 s) is due where the pause began: 1.0 s of sound left out.
        #expect(Self.heard(take, at: cut) == 2080 + cut + 48_000)
        #expect(Self.heard(take, at: 59 * 1600 - 1) == 2080 + 59 * 1600 - 1 + 48_000)
    }

    @Test func aPauseBeforeTheFirstPictureStartsTheSoundAtTheResume() throws {
        let take = VirtualTake()
        Self.withMicrophone(take)
        take.plan.duration = 1
        take.press(.pauseOrResume, at: 0)
        take.press(.pauseOrResume, at: 0.5)
        Self.twoCameras(take, until: 3)
        _ = try take.run()
        // Back picture 15 (0.51 s) starts the file, and the sound heard then.
        #expect(Self.heard(take, at: 0) == 24_480)
        #expect(take.sink.sound.count == 30 * 1600)
    }

    @Test func slotsSkippedForASlowEncoderLeaveTheSoundWhole() throws {
        let take = VirtualTake(encoderSecondsPerFrame: [1.0 / 15])
        Self.withMicrophone(take)
        take.plan.duration = 4
        Self.twoCameras(take)
        let summary = try take.run()
        #expect(summary.encoderSkippedFrames == 46)
        #expect(take.sink.sound.count == 120 * 1600)
        let heard = take.sink.sound.map(VirtualMicrophone.heardAt)
        #expect(heard == (0..<(120 * 1600)).map { Optional(2080 + $0) })
    }

    @Test func aStopWhilePausedEndsTheSoundWhereThePauseBegan() throws {
        let take = VirtualTake()
        Self.withMicrophone(take)
        Self.twoCameras(take)
        take.press(.pauseOrResume, at: 1.0)
        take.press(.stop, at: 2.0)
        _ = try take.run()
        #expect(take.sink.sound.count == 29 * 1600)
        #expect(Self.heard(take, at: 29 * 1600 - 1) == 2080 + 29 * 1600 - 1)
    }
}

/// What the outputs beside the take are given, and the skip policy of a take that keeps
/// every frame.
extension RecordLoopVirtualTests {
    @Test func whilePausedThePicturesAreShownButNotRecorded() throws {
        let take = VirtualTake()
        let window = WatchingOutput()
        take.outputs = [window]
        Self.twoCameras(take)
        take.press(.pauseOrResume, at: 1.0)
        take.press(.pauseOrResume, at: 2.0)
        take.press(.stop, at: 3.0)
        _ = try take.run()
        // Recorded: back 1...29, then 60...89; shown only: the 30 pictures in between (30...59).
        #expect(window.offered.filter(\.recording).map(\.main) == take.mains)
        #expect(window.offered.filter { !$0.recording }.map(\.main) == Self.backs(30..<60))
        #expect(window.offered.map(\.main) == Self.backs(1..<90))
    }

    @Test func theCamerasOwnPicturesOfEachSlotGoToTheOutputsThatTakeThem() throws {
        let take = VirtualTake()
        let iso = WatchingOutput(takesSourcePictures: true)
        take.outputs = [iso]
        take.plan.duration = 2
        Self.twoCameras(take)
        take.press(.swap, at: 1.0)
        _ = try take.run()
        #expect(iso.taken.map(\.slot) == Array(0..<60))
        // The driving camera's picture first, whichever is full frame.
        #expect(iso.taken.map(\.pictures) == (0..<60).map { ["b\(($0 + 1) % 50)", "f\($0 % 50)"] })
        #expect(iso.taken.map(\.swapped) == Array(repeating: false, count: 29) + Array(repeating: true, count: 31))
    }

    @Test func aSlotTheEncoderHasNoRoomForIsStillShownByTheOutputsThatShowPictures() throws {
        let take = VirtualTake(encoderSecondsPerFrame: [1.0 / 15])
        let window = WatchingOutput()
        take.outputs = [window]
        take.plan.duration = 4
        Self.twoCameras(take)
        let summary = try take.run()
        // The file's slots are those of an encoder at half real time, one in two from slot 28;
        // the window (or a virtual camera) is shown every picture, those the file skipped as
        // not recorded (it was shown 74 of the 120 before).
        #expect(take.indices == Array(0..<28) + Array(stride(from: 29, through: 119, by: 2)))
        #expect(window.offered.map(\.main) == Self.backs(1..<121))
        #expect(window.offered.filter(\.recording).map(\.main) == take.mains)
        #expect(window.offered.filter { !$0.recording }.count == summary.encoderSkippedFrames)
    }

    @Test func keepingEveryFrameASinkThatFallsBehindIsWaitedForUpToASecondOfSlots() throws {
        // The sink stands for a keeping sink that cannot take frames as they come (its
        // intermediate's disk stalled): 0.2 s a frame.
        let take = VirtualTake(encoderSecondsPerFrame: [0.2])
        take.keepsEveryFrame = true
        take.plan.duration = 4
        Self.twoCameras(take)
        let summary = try take.run()
        // Its speed is no reason to skip: slots wait until 30 of them do (slot 35, at 1.17 s,
        // with 5 done); from then on a second of them always waits, so every slot goes but
        // the last.
        #expect(take.heard.lines.contains { $0.hasPrefix("at 1.17 s the encoder is behind") })
        #expect(take.indices == Array(0..<35) + [119])
        #expect(summary.encoderSkippedFrames == 84)
    }
}
