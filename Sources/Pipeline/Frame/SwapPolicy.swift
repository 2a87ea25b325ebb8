/// The role a picture was made for, stamped on it by its source from the demand it read
/// before making it (`PictureDemand`), as caps travel with GStreamer's buffers: the engine
/// decides what each source delivers and reads back only which of its demands a picture
/// answers, never the picture's size.
package enum PictureRole: Equatable, Sendable {
    /// Made whole whatever the role (a decoded file, a source that does not read the
    /// demand): fit for either.
    case any
    /// Made while the source was full frame (or asked to be): fit for either.
    case fullFrame
    /// Made for the inset (reduced, or only the columns the inset reads): never full frame.
    case inset

    package var fitsFullFrame: Bool { self != .inset }
}

/// When a swap that was asked for shows, for `compose` (asked by `SwapSchedule`) and
/// `record` (asked live: `--swap`, SIGUSR1, `s`, a tap) alike, and whether the slot's main
/// picture may be shown at all. The camera that moves to the full frame is told so when
/// the swap is asked; its pictures made before that were made for the inset (an MJPEG
/// camera decodes only the inset's size, an uncompressed one converts only the columns the
/// inset reads), so the swap shows with its first picture made for the full frame: its
/// next frame, however long that takes. A decoded file's pictures fit either role: its
/// swaps show on the frame asked for.
package struct SwapPolicy {
    package private(set) var showing = false

    package init() {}

    /// Whether this output frame shows the roles swapped. `asked`: the swap state asked for;
    /// `newMain`: the role the picture that would be full frame was made for (nil: no
    /// picture, nothing to wait for).
    package mutating func frame(asked: Bool, newMain: PictureRole?) -> Bool {
        if asked != showing && newMain?.fitsFullFrame ?? true { showing = asked }
        return showing
    }
}
