/// When a swap asked for during a recording shows. The camera that moves to the full frame
/// may have its last picture at inset size (an MJPEG camera decodes only what its role
/// needs), so the picture swaps once that camera has sent a full-size one, which it does
/// from its next frame: one frame later, `waitLimit` at most. An inset-sized picture is
/// never blown up to full frame.
struct LiveSwap {
    static let waitLimit = 3
    private(set) var showing = false
    private var waited = 0

    /// Whether this output frame shows the roles swapped. `asked`: the swap state asked for;
    /// `newMainShift`: how far the picture of the camera that would be full frame was
    /// reduced (0: full size; nil: no picture).
    mutating func frame(asked: Bool, newMainShift: Int?) -> Bool {
        guard asked != showing else { return showing }
        if (newMainShift ?? 0) == 0 || waited >= Self.waitLimit {
            showing = asked
            waited = 0
        } else {
            waited += 1
        }
        return showing
    }
}
