import Compositor
import MediaIO

/// A picture the frame step composes: a decoded file's or a camera's.
package protocol StepPicture {
    var picture: SourcePicture { get }
    /// The role it was made for: one made for the inset is never full frame (`SwapPolicy`,
    /// and the loop holds the last frame rather than show it).
    var madeFor: PictureRole { get }
    /// Whether it is retagged once its colours were re-encoded where they lie, so that a
    /// picture shown twice is converted once. One that is not must already be in the
    /// output's colours to be composed in place: it would be converted again.
    var isRetaggable: Bool { get }
    /// Its own frame when it is `size` and nothing else references it: drawn into and
    /// encoded as it is, with no copy of the full picture at all.
    func ownFrame(size: Size) -> EncoderFrame?
    /// Its pixels now carry `matrix`.
    func didConvert(to matrix: YCbCrMatrix)
}

/// One output frame, for `compose` and `record` alike: the main picture full frame with the
/// inset drawn in. The in-place rule lives here and only here: when the main picture is
/// the output's size and nothing else references it, the inset is drawn into it and it
/// goes to the encoder as it is; otherwise both are composed into `canvas`.
public struct FrameStep {
    public let compositor: PiPCompositor

    public init(compositor: PiPCompositor) { self.compositor = compositor }

    /// The frame to encode, and whether it is the main picture's own, composed in place.
    /// `swapped` puts the front picture full frame; with no front picture (one camera left)
    /// there is no inset and nothing to swap.
    package func frame<E: Error>(back: any StepPicture, front: (any StepPicture)?, swapped: Bool,
                                 canvas: () throws(E) -> EncoderFrame) throws(E)
        -> (frame: EncoderFrame, inPlace: Bool) {
        let (main, inset) = Self.roles(back: back, front: front, swapped: swapped)
        if let own = inPlaceTarget(main) {
            compositor.compose(main: main.picture, inset: inset?.picture, into: own.view)
            main.didConvert(to: compositor.outputMatrix)
            return (own, true)
        }
        let target = try canvas()
        compositor.compose(main: main.picture, inset: inset?.picture, into: target.view)
        return (target, false)
    }

    /// Which picture is full frame and which the inset: with no front picture (one camera
    /// left), the back one is full frame whatever `swapped` says.
    package static func roles<P>(back: P, front: P?, swapped: Bool) -> (main: P, inset: P?) {
        swapped && front != nil ? (front!, back) : (back, front)
    }

    /// The main picture's frame, when drawing the inset into it is safe. The picture may be
    /// shown again (a slower source) or, after a swap, be the inset source: the inset is then
    /// redrawn over the old one, or read from a crop the old one is outside of.
    private func inPlaceTarget(_ main: any StepPicture) -> EncoderFrame? {
        let layout = compositor.layout
        guard layout.insetCornerUnseenInInset,
              main.isRetaggable || main.picture.matrix == compositor.outputMatrix else { return nil }
        return main.ownFrame(size: layout.canvas)
    }
}

extension VideoPicture: StepPicture {
    package var madeFor: PictureRole { .any }
    package var isRetaggable: Bool { false }
    package func ownFrame(size: Size) -> EncoderFrame? { composableFrame(size: size) }
    package func didConvert(to matrix: YCbCrMatrix) {}
}

extension LiveFrame: StepPicture {
    package var isRetaggable: Bool { true }
    package func ownFrame(size: Size) -> EncoderFrame? {
        buffer.size == size && storage.isExclusive ? storage : nil
    }
    package func didConvert(to matrix: YCbCrMatrix) { retag(matrix) }
}
