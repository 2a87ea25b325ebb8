import CSDL2
import Compositor
import Foundation
import MediaIO
import Pipeline

/// A window showing the composed picture while it is made, at a reduced size and rate
/// (half size at most 960 wide, 15 fps). The composing thread only scales each shown
/// picture into a spare buffer with our own kernels; everything SDL does (window, events,
/// upload, drawing) happens on the window's own thread. Clicking or tapping the inset,
/// or `s`, asks for a swap; dragging it (an outline follows the pointer) and letting go
/// asks for the corner nearest to where it was dropped; `p`, `q` and closing the window
/// are passed on as they are.
// Sendable: what both threads touch is under `lock`; SDL is called from the window's thread alone.
public final class PreviewWindow: PictureObserver, @unchecked Sendable {
    public enum Problem: Error, CustomStringConvertible {
        case noDisplay(String)
        public var description: String {
            switch self {
            case let .noDisplay(why): return "no display for the preview (\(why))"
            }
        }
    }

    public let canvas: Size
    public let size: Size
    /// The layout shown, whose corner a drag changes (guarded by `lock`).
    private var layout: PiPLayout
    public var insetRect: Rect { lock.withLock { layout.insetRect } }
    public static let framesPerSecond = 15.0
    public var onSwap: () -> Void = {}
    public var onQuitKey: () -> Void = {}
    public var onPauseKey: () -> Void = {}
    /// The inset was dragged and dropped nearest this corner (from the window's thread). Nil
    /// (`compose`, whose layout is fixed): the inset cannot be dragged.
    public var onCornerChange: ((Corner) -> Void)?
    /// A press on the inset, while it lasts (the window's thread only): where it began and
    /// where the pointer is, as fractions of the picture; dragging once it moved far enough.
    private var gesture: (start: (x: Double, y: Double), now: (x: Double, y: Double), dragging: Bool)?
    /// Keys other than s, p and q (the review's k, d and y).
    public var onOtherKey: ((UInt8) -> Void)?
    /// A title to show, set from any thread and applied by the window's (guarded by `lock`).
    private var pendingTitle: String?
    /// Preview pixels a press must move to be a drag rather than a tap.
    static let dragThreshold = 8.0
    public var onClose: () -> Void = {}

    private let scaler: PictureScaler
    /// Three, so the composing thread always finds one that is neither waiting to be shown
    /// nor being shown.
    private let buffers: [I420Buffer]
    private let lock = NSLock()
    private var ready: Int?
    private var showing: Int?
    private var stopping = false
    private var lastOffer = -Double.infinity
    /// The window's own thread: SDL's window and events live on it.
    private var thread: OwnedThread?

    /// The variables that name a desktop's display, and the SDL driver for each.
    static let displays = [(variable: "DISPLAY", driver: "x11"), (variable: "WAYLAND_DISPLAY", driver: "wayland")]

    /// The preview's picture size for a canvas: half size while that is wider than 960.
    public static func pictureSize(for canvas: Size) -> Size {
        var s = canvas
        while s.width > 960 { s = Size(width: (s.width / 2 + 1) & ~1, height: (s.height / 2 + 1) & ~1) }
        return s
    }

    /// Opens the window (`title` should start with "dualcam"); fails with one line's reason
    /// when there is no display to open it on.
    public init(layout: PiPLayout, title: String) throws(Problem) {
        let canvas = layout.canvas
        let env = ProcessInfo.processInfo.environment
        let displays = Self.displays.filter { !(env[$0.variable] ?? "").isEmpty }
        let drivers = displays.map(\.driver)
        if drivers.isEmpty { throw .noDisplay("neither DISPLAY nor WAYLAND_DISPLAY is set") }
        self.canvas = canvas
        self.layout = layout
        let size = Self.pictureSize(for: canvas)
        self.size = size
        guard size.width >= 2 && size.height >= 2 else { throw .noDisplay("preview size \(size): too small to show") }
        scaler = PictureScaler(canvas: size)
        buffers = (0..<3).map { _ in I420Buffer(size: size) }
        let opened = DispatchSemaphore(value: 0)
        // Written by the window's thread before it signals `opened`, read after.
        final class Failure: Sendable { let why = Locked<String?>(nil) }
        let failure = Failure()
        thread = OwnedThread(name: "dualcam-preview") { [self] in
            let window = SDLWindow.open(title: title, size: size, drivers: drivers)
            switch window {
            case let .failure(why):
                failure.why.withLock { $0 = why }
                opened.signal()
            case let .success(w):
                opened.signal()
                run(w)
                w.close()
            }
        }
        opened.wait()
        if let why = failure.why.withLock({ $0 }) {
            thread?.join()
            let named = displays.map { "\($0.variable)=\(env[$0.variable] ?? "")" }
            throw .noDisplay(why + "; " + named.joined(separator: ", "))
        }
    }

    /// Closes the window (if the user has not) and waits for its thread, at most 3 s: a
    /// display server that stopped answering must not hold up finishing the file. The thread
    /// keeps what it draws alive by itself.
    public func close() {
        lock.lock()
        stopping = true
        lock.unlock()
        thread?.join(timeout: 3)
    }

    public func offer(_ picture: I420View) {
        let now = ProcessInfo.processInfo.systemUptime
        guard now - lastOffer >= 1 / Self.framesPerSecond else { return }
        lock.lock()
        let spare = (0..<buffers.count).first { $0 != ready && $0 != showing }
        let closed = stopping
        lock.unlock()
        guard let spare, !closed else { return }
        lastOffer = now
        scaler.place(SourcePicture(image: picture, matrix: PiPCompositor.outputMatrix), in: scaler.fullRect,
                     of: buffers[spare].view)
        lock.lock()
        ready = spare
        lock.unlock()
    }

    /// Changes the window's title (SDL's calls stay on the window's thread).
    public func setTitle(_ title: String) {
        lock.withLock { pendingTitle = title }
    }

    /// Whether a point of the preview picture lies on the inset.
    public func isOnInset(x: Double, y: Double) -> Bool {
        let cx = x * Double(canvas.width) / Double(size.width), cy = y * Double(canvas.height) / Double(size.height)
        let insetRect = self.insetRect
        return cx >= Double(insetRect.x) && cx < Double(insetRect.maxX) && cy >= Double(insetRect.y) && cy < Double(insetRect.maxY)
    }

    /// Where the dragged inset is drawn, in preview pixels; nil when none is dragged.
    private var dragOutline: Rect? {
        guard let g = gesture, g.dragging else { return nil }
        let r = insetRect
        let sx = Double(size.width) / Double(canvas.width), sy = Double(size.height) / Double(canvas.height)
        let dx = (g.now.x - g.start.x) * Double(size.width), dy = (g.now.y - g.start.y) * Double(size.height)
        return Rect(x: Int((Double(r.x) * sx + dx).rounded()), y: Int((Double(r.y) * sy + dy).rounded()),
                    width: Int((Double(r.width) * sx).rounded()), height: Int((Double(r.height) * sy).rounded()))
    }

    /// A press on the inset becomes a tap (swap) or, once moved far enough, a drag that
    /// settles the inset in the corner nearest to where it is let go.
    private func handlePointer(_ event: SDLWindow.Event) {
        switch event {
        case let .press(x, y):
            let onInset = isOnInset(x: x * Double(size.width), y: y * Double(size.height))
            gesture = onInset ? (start: (x: x, y: y), now: (x: x, y: y), dragging: false) : nil
        case let .drag(x, y):
            guard var g = gesture, onCornerChange != nil else { return }
            g.now = (x, y)
            let moved = hypot((x - g.start.x) * Double(size.width), (y - g.start.y) * Double(size.height))
            if moved > Self.dragThreshold { g.dragging = true }
            gesture = g
        case let .release(x, y):
            guard let g = gesture else { return }
            gesture = nil
            guard g.dragging else { return onSwap() }
            let r = insetRect
            let centreX = Double(r.x) + Double(r.width) / 2 + (x - g.start.x) * Double(canvas.width)
            let centreY = Double(r.y) + Double(r.height) / 2 + (y - g.start.y) * Double(canvas.height)
            let corner = lock.withLock {
                layout.corner = layout.corner(nearest: centreX, centreY)
                return layout.corner
            }
            onCornerChange?(corner)
        default:
            break
        }
    }

    private func run(_ window: SDLWindow) {
        while true {
            lock.lock()
            let stop = stopping
            if let r = ready { showing = r; ready = nil }
            let show = showing
            let title = pendingTitle
            pendingTitle = nil
            lock.unlock()
            if stop { return }
            if let title { window.setTitle(title) }
            if let show {
                window.show(buffers[show].view, outline: dragOutline)
                lock.lock(); showing = nil; lock.unlock()
            }
            // Events for up to a frame's time, then the next picture.
            let deadline = ProcessInfo.processInfo.systemUptime + 1 / (2 * Self.framesPerSecond)
            while let event = window.nextEvent(until: deadline) { handle(event) }
        }
    }

    private func handle(_ event: SDLWindow.Event) {
        switch event {
        case let .key(k) where k == UInt8(ascii: "s") || k == UInt8(ascii: "S"): onSwap()
        case let .key(k) where k == UInt8(ascii: "q") || k == UInt8(ascii: "Q"): onQuitKey()
        case let .key(k) where k == UInt8(ascii: "p") || k == UInt8(ascii: "P"): onPauseKey()
        case let .key(k): onOtherKey?(k)
        case .press, .drag, .release: handlePointer(event)
        case .close:
            // The window goes now; what closing means for the job is the owner's to say.
            lock.lock(); stopping = true; lock.unlock()
            onClose()
        }
    }
}
