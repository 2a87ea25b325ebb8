import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

@Suite(.timeLimit(.minutes(1))) struct SwapPolicyTests {
    /// What a run of frames shows: `asked` and the role the new main picture was made for.
    func shown(_ frames: [(asked: Bool, newMain: PictureRole?)]) -> [Bool] {
        var swap = SwapPolicy()
        return frames.map { swap.frame(asked: $0.asked, newMain: $0.newMain) }
    }

    @Test func aSwapShowsAtOnceWhenTheNewMainPictureWasMadeForTheFullFrame() {
        #expect(shown([(false, .fullFrame), (true, .fullFrame), (false, .fullFrame)]) == [false, true, false])
        // A decoded file's pictures fit either role.
        #expect(shown([(true, .any), (false, .any)]) == [true, false])
        // No picture at all from the other camera: nothing to wait for.
        #expect(shown([(true, nil)]) == [true])
    }

    /// The inset camera's newest picture was made for the inset: that frame keeps the old
    /// roles; its next one was made after it was told its new role, and the swap shows. Once
    /// shown, what the pictures were made for no longer moves it.
    @Test func itWaitsForTheNewMainCamerasFirstPictureMadeForTheFullFrame() {
        #expect(shown([(true, .inset), (true, .fullFrame), (true, .inset)]) == [false, true, true])
    }

    /// However long that camera takes (a reduced picture is never blown up, one holding only
    /// the inset's columns never shown full frame), and the same on the way back.
    @Test func itNeverShowsAPictureMadeForTheInsetFullFrame() {
        var swap = SwapPolicy()
        let waiting = (0..<20).map { _ in swap.frame(asked: true, newMain: .inset) }
        #expect(!waiting.contains(true))
        let made = swap.frame(asked: true, newMain: .fullFrame)
        let back = [swap.frame(asked: false, newMain: .inset), swap.frame(asked: false, newMain: .fullFrame)]
        #expect(made && back == [true, false])
    }

    /// The timeline says, besides the swap, whether the picture full frame fits: not where
    /// the camera that is main without a swap (the other one gone) still sends pictures made
    /// for the inset.
    @Test func theMainPictureMustHaveBeenMadeForTheFullFrame() {
        var timeline = Timeline(fps: 30, duration: nil, layout: PiPLayout(), swapped: false)
        #expect(timeline.roles(driver: .inset, other: nil) == (false, false, false))
        #expect(timeline.roles(driver: .fullFrame, other: nil) == (false, false, true))
        #expect(timeline.roles(driver: .any, other: .inset) == (false, false, true))
    }
}
