import Compositor
import Foundation
import MediaIO
@testable import Pipeline
import Testing

@Suite(.timeLimit(.minutes(1))) struct SwapPolicyTests {
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

    /// A picture that holds only the inset's columns is never shown full frame: the swap
    /// waits past the limit, for that camera's next picture, however long.
    @Test func itNeverShowsAPictureMadeForTheInsetAlone() {
        var swap = SwapPolicy()
        let waiting = (0..<(3 * SwapPolicy.waitLimit)).map { _ in
            swap.frame(asked: true, newMainReduction: 2, newMainIsInsetOnly: true)
        }
        #expect(!waiting.contains(true))
        let whole = swap.frame(asked: true, newMainReduction: 0, newMainIsInsetOnly: false)
        // And back: the old main picture, made for the inset meanwhile, waits the same way.
        let back = [swap.frame(asked: false, newMainReduction: 2, newMainIsInsetOnly: true),
                    swap.frame(asked: false, newMainReduction: 0, newMainIsInsetOnly: false)]
        #expect(whole && back == [true, false])
    }
}
