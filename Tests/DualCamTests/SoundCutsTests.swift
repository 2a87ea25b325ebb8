@testable import Pipeline
import Testing

/// The sound left out for a pause: none of it before the pause point, exactly the picture's
/// time after it, and while the pause lasts only what is surely in it.
@Suite(.timeLimit(.minutes(10))) struct SoundCutsTests {
    @Test(.timeLimit(.minutes(1)))
    func aPauseLeavesOutExactlyWhatThePictureSkips() {
        var cuts = SoundCuts()
        #expect(cuts.room(at: 0) == nil)
        // Paused before slot 60 (1600 samples a slot at 30 fps), heard at monotonic 102 s.
        cuts.pause(atSample: 96_000, at: 102)
        #expect(cuts.isOpen && cuts.room(at: 90_000) == 6_000 && cuts.room(at: 96_000) == 0)
        // Before the pause point nothing is left out.
        #expect(cuts.dueForDiscard(at: 95_999, heardUntil: 110) == 0)
        // While paused, only what was heard more than half a second ago.
        #expect(cuts.dueForDiscard(at: 96_000, heardUntil: 102.4) == 0)
        #expect(cuts.dueForDiscard(at: 96_000, heardUntil: 103.5) == 48_000)
        cuts.discarded(48_000)
        // Once a resume is asked for (at 104 s), no more than half a second before it, however late.
        cuts.resumeAsked(at: 104)
        #expect(cuts.dueForDiscard(at: 96_000, heardUntil: 200) == 24_000)
        // The picture's clock moved 2.1 s: that much sound in all, then the cut is gone.
        cuts.resume(after: 2.1)
        #expect(!cuts.isOpen && cuts.dueForDiscard(at: 96_000, heardUntil: 200) == 100_800 - 48_000)
        cuts.discarded(52_800)
        #expect(cuts.isEmpty && cuts.room(at: 96_000) == nil)
    }

    @Test(.timeLimit(.minutes(1)))
    func pausesFollowOneAnother() {
        var cuts = SoundCuts()
        cuts.pause(atSample: 1_600, at: 10)
        cuts.pause(atSample: 3_200, at: 11)  // already paused: the same pause
        cuts.resume(after: 1)
        cuts.pause(atSample: 4_800, at: 13)
        cuts.resume(after: 0.5)
        #expect(cuts.cuts.map(\.atSample) == [1_600, 4_800] && cuts.cuts.map(\.length) == [48_000, 24_000])
        #expect(cuts.room(at: 0) == 1_600)
        cuts.discarded(48_000)
        #expect(cuts.room(at: 1_600) == 3_200)
    }
}
