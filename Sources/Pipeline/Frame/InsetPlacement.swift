import Compositor

/// The renderer of a recording: the frame step of the layout the timeline is in, and a
/// compositor for each layout used so far (a drag moves the inset to another corner; each
/// is made once: its scaling plans and styled mask), switched between frames.
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

    /// Draws in `next` from the next frame on (the same sizes as the layout in use, which was
    /// made: it cannot fail, and if it did the inset would stay where it was).
    mutating func use(_ next: PiPLayout) {
        guard next != layout,
              let compositor = compositors[next.corner] ?? (try? PiPCompositor(layout: next, threads: threads)) else { return }
        compositors[next.corner] = compositor
        layout = next
        step = FrameStep(compositor: compositor)
    }
}
