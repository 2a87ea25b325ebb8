import Compositor
import CV4L2
import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// A V4L2 camera: negotiates the cheapest native format to turn into I420 at the requested
/// size, streams with mmap buffers and publishes each frame stamped with the middle of its
/// exposure. Damaged buffers are skipped and counted. When the camera goes (unplugged, a
/// broken stream) it is looked for again, by what it is rather than by its node, and
/// reopened with the format it had (`.away` until then).
// Sendable: the device and stream are its capture thread's (set before it starts, or by it); others read through `feed` (locked) and atomics.
final class CameraSource: FrameSource, @unchecked Sendable {
    let feed: SourceFeed
    let path: String
    let request: FormatNegotiation.Request
    var fps: Double { request.framesPerSecond }
    private let log: (String) -> Void
    private var device: V4L2Device?
    private(set) var devicePath: String
    private(set) var stream: StreamFormat?
    private var identity: CameraIdentity?
    private var exposure: Double?
    private lazy var maker = CameraFrameMaker(name: devicePath, matrix: .bt601, output: PiPCompositor.outputMatrix)
    private let counters = Locked(Counters())
    struct Counters {
        /// Frames the driver flagged, short buffers, JPEGs that would not decode.
        var damaged = 0
        var sequenceGaps = 0
        var reopened = 0
        /// Buffers whose driver stamp was not believed (after their dequeue, or long before
        /// it): timed by their dequeue instead.
        var untrustedStamps = 0
    }
    var counts: Counters { counters.withLock { $0 } }

    static let rescanInterval = 0.5
    /// Nodes open by a camera of this process: a camera looked for is never one of them.
    private static let claimed = Locked(Set<String>())

    /// Native formats, cheapest to convert first; MJPEG (a decode per frame) when nothing
    /// else fits. Formats libv4l2 makes up (a JPEG decode on the capture thread) come last.
    static var preference: [FourCC] { CameraPixelFormat.preference }

    private let only: FourCC?
    /// Why the format was chosen (what was passed over for its frame rate), once open.
    private(set) var choiceNote: (text: String, isWarning: Bool)?
    private var stamps = StampCorrection()
    private var rateWatch: DeliveryRateWatch

    /// Controls given for this camera's role on the command line; they take precedence over
    /// the ones saved for it in `store`.
    private let controls: [ControlSetting]
    private let store: ControlStore?

    init(path: String, request: FormatNegotiation.Request, only: FourCC? = nil, controls: [ControlSetting] = [],
         store: ControlStore? = nil, log: @escaping (String) -> Void) {
        self.only = only
        self.controls = controls
        self.store = store
        self.path = path
        self.devicePath = path
        self.request = request
        self.log = log
        rateWatch = DeliveryRateWatch(asked: request.framesPerSecond)
        feed = SourceFeed(name: path)
    }

    deinit { Self.claimed.withLock { _ = $0.remove(devicePath) } }

    func open() throws {
        let device = try V4L2Device(path: path)
        let caps = try device.capabilities()
        guard caps.canCapture else {
            throw V4L2Error(device: path, operation: "open (not a streaming capture device)", code: ENODEV)
        }
        let offered = try device.formats()
        let wanted = only.map { [$0] } ?? Self.preference
        let candidates = Self.candidates(wanted: wanted, offered: offered)
        guard !candidates.isEmpty else {
            throw V4L2Error(device: path, operation: "find a usable pixel format (has \(offered.map(\.fourcc)))", code: EINVAL)
        }
        let negotiation = FormatNegotiation(device: path, formats: candidates, offered: offered, request: request)
        let fps = fps
        let (f, choice) = try negotiation.run(log: log) { (choice) throws(V4L2Error) -> FormatNegotiation.Outcome<StreamFormat> in
            try Self.start(device, choice.fourcc, choice.size, fps: fps)
        }
        choiceNote = negotiation.explanation(of: choice, rate: f.framesPerSecond)
        attach(device, path: path, stream: f)
        identity = CameraIdentity(bus: caps.bus, card: caps.card, driver: caps.driver)
        applyControls(device)
        setFormat(f.description)
    }

    /// Writes the saved controls and those given for this camera, each failure in a line of
    /// its own: a control is never worth a recording.
    private func applyControls(_ device: V4L2Device) {
        let saved = identity.map { store?.saved(for: $0) ?? [] } ?? []
        let wanted = ControlStore.merged(saved, controls)
        guard !wanted.isEmpty else { return }
        let (applied, failures) = device.apply(wanted)
        for failure in failures { log("\(name): control \(failure)") }
        if !applied.isEmpty {
            let text = applied.map { s in s.description + (controls.contains { $0.name == s.name } ? "" : " (saved)") }
            log("\(name): controls set: \(text.joined(separator: ", "))")
        }
    }

    /// The wanted formats the camera has natively, in order; failing that, those libv4l2
    /// converts to.
    static func candidates(wanted: [FourCC], offered: [CaptureDeviceInfo.Format]) -> [FourCC] {
        let native = wanted.filter { f in offered.contains { $0.fourcc == f.description && !$0.emulated } }
        return native.isEmpty ? wanted.filter { f in offered.contains { $0.fourcc == f.description } } : native
    }

    /// Sets a format and rate and starts streaming.
    private static func start(_ device: V4L2Device, _ fourcc: FourCC, _ size: Size, fps: Double)
        throws(V4L2Error) -> FormatNegotiation.Outcome<StreamFormat> {
        var f = try device.setFormat(fourcc, width: size.width, height: size.height)
        guard f.fourcc == fourcc else { return .substituted }
        guard RawFrameConverter.isSound(f) else {
            return .refused(V4L2Error(device: device.path, operation: "VIDIOC_S_FMT (\(f.width)x\(f.height), \(f.bytesPerLine) bytes "
                                      + "a row: not a frame that can be read)", code: EINVAL))
        }
        f.framesPerSecond = try device.setFrameRate(fps)
        do throws(V4L2Error) { try device.startStreaming() } catch {
            // Buffers must go before S_FMT can be asked again.
            device.stopStreaming()
            return .refused(error)
        }
        return .started(f)
    }

    private func attach(_ device: V4L2Device, path: String, stream f: StreamFormat) {
        self.device = device
        stream = f
        devicePath = path
        Self.claimed.withLock { _ = $0.insert(path) }
        // V4L2_CID_EXPOSURE_ABSOLUTE counts 100 µs units.
        exposure = device.control(UInt32(V4L2_CID_EXPOSURE_ABSOLUTE)).flatMap { $0 > 0 ? Double($0) / 10_000 : nil }
    }

    private func detach(_ why: String) {
        device = nil  // closes it: a node pulled out comes back only once every handle is closed
        Self.claimed.withLock { _ = $0.remove(devicePath) }
        setState(.away(why))
        log(String(format: "%@: camera gone (%@) at %.2f s on the monotonic clock; looking for it again",
                   devicePath, why, monotonicNow()))
    }

    /// The camera has streamed since it was opened (formats are checked by streaming): the
    /// buffers it filled meanwhile are old, and the frames it skipped while they waited are
    /// no drop. They go back to the driver unseen.
    private func discardQueued(_ device: V4L2Device) {
        for _ in 0..<64 {
            guard let old = try? device.dequeue(timeout: 0) else { return }
            do { try device.requeue(old) } catch { return }
        }
    }

    func captureLoop() {
        if let device { discardQueued(device) }
        var lastSequence: UInt32?
        while !stopping {
            guard let device, let stream else {
                if reattach() { lastSequence = nil }
                continue
            }
            let buffer: CapturedBuffer?
            do {
                buffer = try device.dequeue(timeout: 0.2)
            } catch {
                if error.isFatal || error.code == EBADF {
                    detach(error.description)
                } else {
                    counters.withLock { $0.damaged += 1 }  // a single bad buffer
                }
                continue
            }
            guard let buffer else { continue }
            if let last = lastSequence, buffer.sequence > last &+ 1 {
                counters.withLock { $0.sequenceGaps += Int(buffer.sequence &- last &- 1) }
            }
            lastSequence = buffer.sequence
            let frame = fill(from: buffer, stream)
            do { try device.requeue(buffer) } catch {
                detach(error.description)
                continue
            }
            guard let frame else {
                counters.withLock { $0.damaged += 1 }
                continue
            }
            let period = 1 / (stream.framesPerSecond > 0 ? stream.framesPerSecond : fps)
            let (stamp, timing) = trustedStamp(buffer)
            published(frame.frame, timestamp: CaptureTiming.middleOfExposure(
                stamp: stamp, timing: timing, exposure: exposure, framePeriod: period),
                      matrix: maker.matrix, shift: frame.shift, latencyOrigin: stamp)
            if let slow = rateWatch.delivered(at: buffer.dequeuedAt) {
                log(String(format: "%@ delivers %.1f fps, under the %@ fps asked: pictures repeat "
                           + "(a webcam lengthens its exposure in low light: more light, or a fixed exposure with "
                           + "--control, keeps its rate)", name, slow, FormatNegotiation.rateText(fps)))
            }
        }
        Self.claimed.withLock { _ = $0.remove(devicePath) }
    }

    /// The buffer's stamp, corrected when it cannot be the frame's (`StampCorrection`): one
    /// after its dequeue would make latency negative and put the picture off the sound.
    private func trustedStamp(_ buffer: CapturedBuffer) -> (Double, CapturedBuffer.Timing) {
        guard buffer.timing.monotonic else { return (buffer.timestamp, buffer.timing) }
        let before = stamps.corrected
        let (stamp, note) = stamps.correct(stamp: buffer.timestamp, dequeuedAt: buffer.dequeuedAt)
        if let note { log("\(name): \(note)") }
        if stamps.corrected != before { counters.withLock { $0.untrustedStamps += 1 } }
        return (stamp, buffer.timing)
    }

    /// The buffer as an I420 frame of the exchange's, or nil when it is damaged (flagged by
    /// the driver, short, or a JPEG that does not decode).
    private func fill(from buffer: CapturedBuffer, _ stream: StreamFormat) -> (frame: LiveFrame, shift: Int)? {
        let made = maker.make(buffer.bytes, isDamaged: buffer.isDamaged, stream: stream, inset: demand.inset,
                              exchange: exchange)
        if let shift = made?.shift, let note = maker.scaleChange(shift) { log(note) }
        return made
    }

    /// Looks for the camera once (after a pause) and reopens it with the format it had.
    /// True when it is back.
    private func reattach() -> Bool {
        let wake = monotonicNow() + Self.rescanInterval
        while !stopping && monotonicNow() < wake { usleep(50_000) }
        guard !stopping, let identity, let old = stream else { return false }
        let taken = Self.claimed.withLock { $0 }
        guard let found = identity.find(among: V4L2Device.list(formats: false), claimed: taken),
              let device = try? V4L2Device(path: found.path),
              case let .started(f)? = try? Self.start(device, old.fourcc, Size(width: old.width, height: old.height), fps: fps)
        else { return false }
        attach(device, path: found.path, stream: f)
        // A camera plugged back in has its defaults again.
        applyControls(device)
        counters.withLock { $0.reopened += 1 }
        log(String(format: "%@: camera back as %@ (%@) at %.2f s on the monotonic clock",
                   name, found.path, f.description, monotonicNow()))
        discardQueued(device)
        return true
    }
}
