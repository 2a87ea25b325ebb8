/// When a swap that was asked for shows, for `compose` (asked by `SwapSchedule`) and
/// `record` (asked live: `--swap`, SIGUSR1, `s`, a tap) alike. The picture that moves to
/// the full frame may be reduced (an MJPEG camera decodes only what its role needs), so the
/// swap shows once that picture is full size, which a camera sends from its next frame: one
/// frame later, `waitLimit` at most. A reduced picture is never blown up to full frame. A
/// decoded file's pictures are always full size: its swaps show on the frame asked for.
package struct SwapPolicy {
    package static let waitLimit = 3
    package private(set) var showing = false
    private var waited = 0

    package init() {}

    /// Whether this output frame shows the roles swapped. `asked`: the swap state asked for;
    /// `newMainReduction`: how far the picture that would be full frame was reduced (0:
    /// full size; nil: no picture).
    package mutating func frame(asked: Bool, newMainReduction: Int?) -> Bool {
        guard asked != showing else { return showing }
        if (newMainReduction ?? 0) == 0 || waited >= Self.waitLimit {
            showing = asked
            waited = 0
        } else {
            waited += 1
        }
        return showing
    }
}
