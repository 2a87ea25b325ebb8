import Compositor

/// Where the inset is while recording, moved to another corner from the preview (a drag):
/// the frame step of the current layout, and a compositor for each corner used so far
/// (each is made once: its scaling plans and styled mask), switched between frames.
struct InsetPlacement {
    private(set) var layout: PiPLayout
    private(set) var step: FrameStep
    private var compositors: [Corner: PiPCompositor]
    private let threads: Int

    init(compositor: PiPCompositor, threads: Int) {
        layout = compositor.layout
        step = FrameStep(compositor: compositor)
        compositors = [compositor.layout.corner: compositor]
        self.threads = threads
    }

    /// Moves the inset to `corner` from the next frame on; false when it is there already.
    mutating func move(to corner: Corner) -> Bool {
        guard corner != layout.corner, layout.arrangement == .pip else { return false }
        var moved = layout
        moved.corner = corner
        // The same sizes as the layout in use, which was made: it cannot fail.
        guard let compositor = compositors[corner] ?? (try? PiPCompositor(layout: moved, threads: threads)) else { return false }
        compositors[corner] = compositor
        layout = moved
        step = FrameStep(compositor: compositor)
        return true
    }
}
