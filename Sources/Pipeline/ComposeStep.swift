import Compositor
import MediaIO

/// One output frame of `compose`: the pictures due, composed into the frame the encoder
/// takes. When the main picture is canvas-sized BT.709 I420 that the decoder no longer
/// references, the inset is drawn into it where it lies and it goes to the encoder as it is:
/// no copy of the full picture at all. Otherwise both are composed into `canvas`.
public struct ComposeStep {
    public let compositor: PiPCompositor

    public init(compositor: PiPCompositor) { self.compositor = compositor }

    /// The frame to encode, and whether it is the main picture's own, composed in place.
    public func frame(back: VideoPicture, front: VideoPicture, swapped: Bool,
                      canvas: () throws(MediaError) -> EncoderFrame) throws(MediaError) -> (EncoderFrame, inPlace: Bool) {
        let (main, inset) = swapped ? (front, back) : (back, front)
        if let target = inPlaceTarget(main) {
            compositor.compose(main: main.picture, inset: inset.picture, into: target.view)
            return (target, true)
        }
        let target = try canvas()
        compositor.compose(main: main.picture, inset: inset.picture, into: target.view)
        return (target, false)
    }

    /// The main picture's frame, when drawing the inset into it is safe. The picture may be
    /// shown again (a slower source) or, after a swap, be the inset source: the inset is then
    /// redrawn over the old one, or read from a crop the old one is outside of.
    private func inPlaceTarget(_ main: VideoPicture) -> EncoderFrame? {
        let layout = compositor.layout
        guard main.picture.matrix == compositor.outputMatrix, layout.insetCornerUnseenInInset else { return nil }
        return main.composableFrame(size: layout.canvas)
    }
}
