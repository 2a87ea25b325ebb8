/// When a swap that was asked for shows, for `compose` (asked by `SwapSchedule`) and
/// `record` (asked live: `--swap`, SIGUSR1, `s`, a tap) alike. The picture that moves to
/// the full frame may be reduced (an MJPEG camera decodes only what its role needs), so the
/// swap shows once that picture is full size, which a camera sends from its next frame: one
/// frame later, `waitLimit` at most, after which a reduced picture is shown blown up. One
/// made for the inset alone (an uncompressed camera converts only the columns the inset
/// reads) is never shown full frame: the swap waits for that camera's next picture however
/// long it takes. A decoded file's pictures are always full size: its swaps show on the
/// frame asked for.
package struct SwapPolicy {
    package static let waitLimit = 3
    package private(set) var showing = false
    private var waited = 0

    package init() {}

    /// Whether this output frame shows the roles swapped. `asked`: the swap state asked for;
    /// `newMainReduction`: how far the picture that would be full frame was reduced (0:
    /// full size; nil: no picture); `newMainIsInsetOnly`: whether it holds only the inset's
    /// columns.
    package mutating func frame(asked: Bool, newMainReduction: Int?, newMainIsInsetOnly: Bool = false) -> Bool {
        guard asked != showing else { return showing }
        if newMainIsInsetOnly {
            waited += 1
        } else if (newMainReduction ?? 0) == 0 || waited >= Self.waitLimit {
            showing = asked
            waited = 0
        } else {
            waited += 1
        }
        return showing
    }
}
