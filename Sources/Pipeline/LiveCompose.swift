import Compositor
import MediaIO

extension PiPCompositor {
    /// One output frame of `record`: the driving camera's picture (the back, or whichever
    /// camera is left) and the other's newest, composed into the frame the encoder takes.
    /// `swapped` puts the other camera full frame; with no other picture there is no inset.
    func compose(driver: LiveFrame, other: LiveFrame?, swapped: Bool, into target: EncoderFrame) {
        if swapped, let other {
            compose(main: other.picture, inset: driver.picture, into: target.view)
        } else {
            compose(main: driver.picture, inset: other?.picture, into: target.view)
        }
    }
}
