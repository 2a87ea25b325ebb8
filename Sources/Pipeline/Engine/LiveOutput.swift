import Compositor
import MediaIO

/// Something a recording's pictures go to besides the take's file: the preview window,
/// the virtual camera, the live stream, each camera's own file (`--iso`). One lifecycle for
/// all: asked for by an `OutputRequest` in the plan, checked before any device opens,
/// opened once the sources and the encoding are, offered every slot on the composing thread
/// (returning at once: an output never costs the recording its real time), finished once
/// the take is, reporting how it went. A new kind of output is one conformer and the option
/// that puts its request in the plan; the engine names none of them.
protocol LiveOutput: AnyObject {
    /// The sources' own pictures for a recorded slot, before they are composed (the inset
    /// may then be drawn into the main picture's buffer).
    func take(_ slot: SlotPictures)
    /// The composed picture: recorded, or while paused shown live only (`recording` false).
    func offer(_ picture: I420View, recording: Bool)
    /// A word for the status line ("live", "reconnecting"), if it has one.
    var status: String? { get }
    /// It shows pictures as they are made: while paused, pictures are composed for it.
    var showsPictures: Bool { get }
    /// It takes the sources' own pictures (`take`): they are gathered for it each slot.
    var takesSourcePictures: Bool { get }
    /// What it writes to the take's disk per second, for the warning of too little room.
    var diskBytesPerSecond: Double { get }
    /// The take is finished (`lastSlot` nil: nothing was recorded): the output finishes
    /// what it holds, in its own way, and says how it went.
    func finish(lastSlot: Int?) -> OutputReport
}

extension LiveOutput {
    func take(_ slot: SlotPictures) {}
    func offer(_ picture: I420View, recording: Bool) {}
    var status: String? { nil }
    var showsPictures: Bool { false }
    var takesSourcePictures: Bool { false }
    var diskBytesPerSecond: Double { 0 }
}

/// A slot's pictures as the sources gave them.
struct SlotPictures {
    var slot: Int
    var fps: Int
    /// Whether the slot shows the roles swapped (the front camera full frame).
    var swapped: Bool
    /// Each source with the picture it gave this slot: the one driving the clock first.
    var pictures: [(source: any FrameSource, frame: LiveFrame)]
}

/// What an output says of itself at the end: its own entry in the recording's summary,
/// which it writes itself (the engine knows no output by kind).
struct OutputReport {
    let contribute: @Sendable (inout RecordSummary) -> Void
    static var nothing: OutputReport { OutputReport { _ in } }
}

/// What an output is checked and opened against: the take's file (if any) and how it is
/// encoded. `record` and `compose` each make one.
package struct OutputSettings: Sendable {
    /// The take's file; nil with none (`record -o none`).
    package var take: String?
    package var overwrite: Bool
    package var canvas: Size
    package var video: VideoEncoderSettings
    package var metadata: MovWriter.Metadata
    /// The files the take is made from: nothing written beside it may be one of them.
    package var inputs: [String] = []
    /// The take's identity (`RecordPlan.takeID`); nil with no take.
    package var takeID: String?
}

/// What an output may use when it opens.
struct OutputContext {
    let settings: OutputSettings
    /// The live sources opened, the back one first (none for `compose`).
    let sources: [any FrameSource]
    /// The take's encoding, when something is encoded (a file, or an output that asked for it).
    let encoders: OutputEncoders?
    /// Says a line in the recording's log and its summary's events (any thread).
    let event: @Sendable (String) -> Void
    /// Says a line in the log alone.
    let log: @Sendable (String) -> Void
}

/// An output asked for on the command line, not yet open: how to check it before any
/// camera opens (a wrong one is then the one line there is; a device may be opened there,
/// and kept for `open`), and how to open it once the sources and the encoding are. Each kind makes its own (`.virtualCamera(path:)` beside
/// `VirtualCamera`, `.stream(url:)` beside `LiveStream` ...).
package struct OutputRequest: Sendable {
    package let check: @Sendable (OutputSettings, _ log: @escaping @Sendable (String) -> Void) throws(MediaError) -> Void
    let open: @Sendable (OutputContext) throws(MediaError) -> any LiveOutput
    /// It sends the take's encoded packets: with no file, the take is encoded for it alone.
    package let needsEncoding: Bool
    /// It keeps the sources' whole pictures: none is made at the size of its role alone.
    package let needsWholePictures: Bool

    init(check: @escaping @Sendable (OutputSettings, _ log: @escaping @Sendable (String) -> Void) throws(MediaError) -> Void = { _, _ in },
         needsEncoding: Bool = false, needsWholePictures: Bool = false,
         open: @escaping @Sendable (OutputContext) throws(MediaError) -> any LiveOutput) {
        self.check = check
        self.open = open
        self.needsEncoding = needsEncoding
        self.needsWholePictures = needsWholePictures
    }
}

extension OutputRequest {
    /// The preview window (or anything that shows pictures as they are made), opened by
    /// the caller: given every composed picture, recorded or not.
    package static func preview(_ observer: any PictureObserver) -> OutputRequest {
        OutputRequest { _ in PreviewOutput(observer) }
    }
}

final class PreviewOutput: LiveOutput {
    let observer: any PictureObserver
    init(_ observer: any PictureObserver) { self.observer = observer }
    func offer(_ picture: I420View, recording: Bool) { observer.offer(picture) }
    var showsPictures: Bool { true }
    func finish(lastSlot: Int?) -> OutputReport { .nothing }
}

/// What an output's `check` opened, kept for its `open` (or closed with the request when the
/// recording never starts).
final class OpenedEarly<Value: Sendable>: Sendable {
    private let value = Locked<Value?>(nil)
    init() {}
    func keep(_ v: Value) { value.withLock { $0 = v } }
    func take() -> Value? { value.withLock { v in defer { v = nil }; return v } }
}
