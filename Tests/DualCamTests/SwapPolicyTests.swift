import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

@Suite struct SwapPolicyTests {
    /// What a run of frames shows: `asked` and the new main picture's shift for each.
    func shown(_ frames: [(asked: Bool, shift: Int?)]) -> [Bool] {
        var swap = SwapPolicy()
        return frames.map { swap.frame(asked: $0.asked, newMainReduction: $0.shift) }
    }

    @Test func aSwapShowsAtOnceWhenTheNewMainPictureIsFullSize() {
        #expect(shown([(false, 0), (true, 0), (false, 0)]) == [false, true, false])
    }

    /// The inset camera's last picture was decoded at 1/4: that frame keeps the old roles;
    /// its next picture is full size (it was told its new role), and the swap shows. Once
    /// shown, the picture's own size no longer matters.
    @Test func itWaitsForTheNewMainCamerasFirstFullSizePicture() {
        #expect(shown([(true, 2), (true, 0), (true, 2)]) == [false, true, true])
    }

    @Test func itWaitsNoLongerThanItsLimit() {
        let waiting = Array(repeating: (asked: true, shift: Int?.some(1)), count: SwapPolicy.waitLimit + 1)
        #expect(shown(waiting) == Array(repeating: false, count: SwapPolicy.waitLimit) + [true])
        // No picture at all from the other camera: nothing to wait for.
        #expect(shown([(true, nil)]) == [true])
    }
}
