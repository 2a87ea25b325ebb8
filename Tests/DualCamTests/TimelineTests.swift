import Compositor
import Foundation
@testable import Pipeline
import Testing

/// The recording's timeline without threads, cameras or files: events and pictures' times
/// in, decisions and effects out.
@Suite(.timeLimit(.minutes(1))) struct TimelineTests {
    static let fps = 30
    static let period = 1.0 / Double(fps)

    func timeline(duration: Double? = nil, swapped: Bool = false) -> Timeline {
        Timeline(fps: Self.fps, duration: duration, layout: PiPLayout(), swapped: swapped)
    }

    /// Pictures every frame period from `start`, each filling its slots; the slots shown.
    func play(_ t: inout Timeline, from start: Double, count: Int) -> [Int] {
        var shown: [Int] = []
        for i in 0..<count {
            let picture = start + Double(i) * Self.period
            if t.pause.isPaused && t.resumes(withPictureAt: picture) == nil { continue }
            shown += Array(t.slots(forPictureAt: picture).shows)
        }
        return shown
    }

    @Test func picturesOnTimeFillOneSlotEachAndALateOneRepeats() {
        var t = timeline()
        #expect(play(&t, from: 10, count: 3) == [0, 1, 2])
        // The next picture comes two periods late: the slot it missed repeats the last picture.
        let late = t.slots(forPictureAt: 10 + 4 * Self.period)
        #expect(late.repeats == 3..<4 && late.shows == 4..<5)
    }

    @Test func theDurationEndsTheTimeline() {
        var t = timeline(duration: 0.1)
        #expect(play(&t, from: 5, count: 10) == [0, 1, 2])
        #expect(t.isOver)
    }

    /// A swap asked while paused is taken at once (the preview shows it), and the slots after
    /// the resume go straight on from the last before the pause, the swap in force.
    @Test func aSwapDuringAPauseShowsWhenTheRecordingGoesOn() {
        var t = timeline()
        _ = play(&t, from: 0, count: 10)
        let paused = t.take([.pauseOrResume], now: 0.34)
        #expect(paused == [.soundPaused(slot: 10, at: 10 * Self.period), .said("paused at 0.33 s")])
        #expect(t.take([.swap], now: 1.0) == [.swapAsked(swapped: true, at: 10 * Self.period)])
        #expect(t.roles(driver: .fullFrame, other: .fullFrame) == (true, true, true))
        // Pictures during the pause fill nothing.
        #expect(play(&t, from: 0.34, count: 30) == [])
        #expect(t.take([.pauseOrResume], now: 2.0) == [.resumeAsked(at: 2.0)])
        // A picture taken before the resume was asked (more than half a frame) does not end it.
        #expect(t.resumes(withPictureAt: 1.9) == nil)
        let resumed = t.resumes(withPictureAt: 2.01)
        #expect(resumed?.first == .soundResumed(leftOut: 2.01 - 10 * Self.period))
        #expect(Array(t.slots(forPictureAt: 2.01).shows) == [10])
        #expect(t.swapAsked && abs(t.pausedSeconds(now: 99) - (2.01 - 10 * Self.period)) < 1e-9)
    }

    /// A drag while a swap waits for a picture made for the full frame moves the inset at
    /// once; the swap still waits, and shows when that picture comes.
    @Test func aDragDuringASwapMovesTheInsetAndTheSwapStillWaits() {
        var t = timeline()
        _ = play(&t, from: 0, count: 3)
        _ = t.take([.swap], now: 0.1)
        #expect(t.roles(driver: .fullFrame, other: .inset) == (true, false, true))
        let moved = t.take([.moveInset(.bottomLeft)], now: 0.12)
        #expect(moved.contains(.said("inset moved to bottom-left at 0.10 s")))
        guard case let .layoutChanged(layout)? = moved.first else { Issue.record("no layout change: \(moved)"); return }
        #expect(layout.corner == .bottomLeft && t.layout.corner == .bottomLeft)
        #expect(t.roles(driver: .fullFrame, other: .fullFrame) == (true, true, true))
        // Moving it to where it is already says nothing.
        #expect(t.take([.moveInset(.bottomLeft)], now: 0.2) == [])
    }

    /// Stopped while paused: nothing more is filled, later events are ignored, and the time
    /// paused counts up to the stop, not up to when the summary is made.
    @Test func aStopWhilePausedEndsItAndThePauseCountsUpToTheStop() {
        var t = timeline()
        _ = play(&t, from: 0, count: 5)
        _ = t.take([.pauseOrResume], now: 1.0)
        _ = t.take([.stop, .swap, .pauseOrResume], now: 3.5)
        #expect(t.isOver && !t.swapAsked && t.pause.isPaused)
        #expect(t.pausedSeconds(now: 100) == 2.5)
        #expect(t.pause.count == 1)
    }

    /// A pause asked before the first picture leaves no sound out (the file starts later),
    /// and a second pause key before a picture came to resume with cancels the resume.
    @Test func pausesBeforeTheFirstPictureAndARepeatedKey() {
        var t = timeline()
        #expect(t.take([.pauseOrResume], now: 1) == [.said("paused at 0.00 s")])
        #expect(t.take([.pauseOrResume, .pauseOrResume], now: 2) == [.resumeAsked(at: 2)])
        #expect(t.resumes(withPictureAt: 2.5) == nil)
        _ = t.take([.pauseOrResume], now: 3)
        let resumed = t.resumes(withPictureAt: 3.2)
        #expect(resumed == [.soundResumed(leftOut: 0), .said("resumed at 0.00 s (2.2 s left out)")])
        #expect(play(&t, from: 3.2, count: 2) == [0, 1])
    }

    /// The inbox between the senders (a signal handler, keys, the preview) and the loop.
    @Test func theInboxGivesEachEventOnceInItsOrder() {
        let inbox = ControlInbox()
        var reader = ControlReader(inbox)
        #expect(reader.drain() == [])
        inbox.send(.swap); inbox.send(.pauseOrResume); inbox.send(.swap)
        inbox.send(.moveInset(.topLeft)); inbox.send(.moveInset(.bottomRight))
        #expect(reader.drain() == [.moveInset(.bottomRight), .swap, .swap, .pauseOrResume])
        #expect(reader.drain() == [])
        inbox.send(.stop)
        #expect(inbox.stopRequested && reader.drain() == [.stop])
    }
}
