import Compositor
import MediaIO

extension PiPCompositor {
    /// One output frame of `record`: the driving camera's picture (the back, or whichever
    /// camera is left) and the other's newest. `swapped` puts the other camera full frame;
    /// with no other picture there is no inset. When the main picture is the output's size
    /// and nothing else references it, it is made the frame to encode where it lies: its
    /// colours re-encoded in place if need be (and it is retagged: a picture shown twice is
    /// converted once), the inset drawn in. Otherwise both go into `canvas`.
    /// Returns the frame to encode and whether it is the main picture's own.
    package func compose(driver: LiveFrame, other: LiveFrame?, swapped: Bool, canvas: EncoderFrame)
        -> (frame: EncoderFrame, inPlace: Bool) {
        let (main, inset) = swapped && other != nil ? (other!, driver) : (driver, other)
        if layout.insetCornerUnseenInInset, main.buffer.size == layout.canvas, main.storage.isExclusive {
            compose(main: main.picture, inset: inset?.picture, into: main.buffer.view)
            main.retag(outputMatrix)
            return (main.storage, true)
        }
        compose(main: main.picture, inset: inset?.picture, into: canvas.view)
        return (canvas, false)
    }
}
