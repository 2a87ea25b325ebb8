import Compositor
import Foundation
import MediaIO

public struct RecordOptions: Sendable {
    /// A V4L2 device path or a video file; nil picks the first capture device.
    public var back: String?
    /// As `back`; nil picks the next capture device, if there is one.
    public var front: String?
    public var output: String
    public var duration: Double?
    public var capture = Size(width: 1280, height: 720)
    public var framesPerSecond = 30.0
    public var swap = false
    /// An ALSA capture device (`hw:1`, `default`), or nil for a silent track.
    public var audioDevice: String?
    /// Use only this pixel format (e.g. MJPEG on a bus too slow for two uncompressed streams).
    public var pixelFormat: FourCC?
    public var layout = PiPLayout()
    public var video = VideoEncoderSettings()
    public var overwrite = false
    public var metadata = MovWriter.Metadata()
    public init(output: String) { self.output = output }
}

public struct RecordSummary: Sendable, Codable {
    public var output: String
    public var frames: Int
    public var seconds: Double
    public var singleCamera: Bool
    public var sources: [String]
    public var latencyP50Ms: Double
    public var latencyP99Ms: Double
    public var latencyMaxMs: Double
    /// Output frames that repeat the previous back picture (the camera was slower than 30 fps).
    public var repeatedFrames: Int
    /// Back pictures captured but not shown (the camera was faster than 30 fps, or the encoder behind).
    public var droppedBackFrames: Int
    /// Frames the cameras' drivers report lost (gaps in buffer sequence numbers) or damaged.
    public var cameraDroppedFrames: Int
    /// Output frames that repeat the previous picture because the encoder was a whole
    /// canvas pool (about a second) behind: time and sync are kept, the picture freezes.
    public var encoderBehindFrames: Int
    public var events: [String]
}

public enum RecordError: Error, CustomStringConvertible {
    case noCamera(String)
    case media(MediaError)
    public var description: String {
        switch self {
        case let .noCamera(why): return why
        case let .media(e): return e.description
        }
    }
}

/// Records picture-in-picture from two live sources. The back source drives the clock: the
/// output has a slot every 1/30 s from its first frame, and each back frame fills the slots
/// due by then (half a frame's slack), with the newest front frame in the inset. A source
/// that fails, ends or sends nothing for a second is dropped and the other goes on alone.
public final class Recorder {
    public let options: RecordOptions
    public var log: (String) -> Void = { _ in }
    public var shouldStop: () -> Bool = { false }
    /// How many swap requests (SIGUSR1, `s`) have come in so far.
    public var swapRequests: () -> Int = { 0 }

    static let lostAfter = 1.0

    public init(options: RecordOptions) { self.options = options }

    func makeSource(_ spec: String) -> LiveSource {
        var st = stat()
        if stat(spec, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG { return FileSource(path: spec) }
        return CameraSource(path: spec, size: options.capture, fps: options.framesPerSecond,
                            only: options.pixelFormat, log: log)
    }

    public func run() throws(RecordError) -> RecordSummary {
        let o = options
        var events: [String] = []
        func event(_ s: String) { events.append(s); log(s) }

        // The audio device first: a wrong --audio fails before anything else happens.
        var liveAudio: LiveAudio?
        if let device = o.audioDevice {
            do { liveAudio = try LiveAudio(device: device) } catch { throw .media(error) }
        }
        var specs: [String] = []
        if let b = o.back { specs.append(b) }
        if let f = o.front { specs.append(f) }
        if o.back == nil || o.front == nil {
            let found = V4L2Device.list().map(\.path).filter { !specs.contains($0) }
            specs += found.prefix(2 - specs.count)
        }
        var sources: [LiveSource] = []
        for spec in specs {
            let s = makeSource(spec)
            do {
                try s.open()
                sources.append(s)
            } catch {
                event("cannot use \(spec): \(error)")
            }
        }
        guard !sources.isEmpty else {
            throw .noCamera(specs.isEmpty ? "no camera found (no V4L2 capture device, and no --back given)"
                            : "no usable camera: " + events.joined(separator: "; "))
        }
        if sources.count == 1 { event("single-camera mode: recording \(sources[0].name) alone") }
        for s in sources { log("\(s.name): \(s.format)") }

        let compositor: PiPCompositor
        do { compositor = try PiPCompositor(layout: o.layout, threads: 2) } catch {
            throw .media(.encoderFailed(name: "compositor", reason: error.description))
        }
        let writer: MovWriter, output: AtomicOutput
        do {
            output = try AtomicOutput(destination: o.output, overwrite: o.overwrite)
            writer = try MovWriter(path: output.temporaryPath, reportedPath: o.output,
                                   video: try VideoEncoder(settings: o.video), audio: try AudioEncoder(),
                                   metadata: o.metadata, faststart: true)
        } catch { throw .media(error) }
        let fps = Int(o.video.framesPerSecond)
        let queue = EncodeQueue(writer: writer, canvas: o.layout.canvas, fps: fps)
        queue.liveAudio = liveAudio

        var driver = sources[0]
        var other: LiveSource? = sources.count > 1 ? sources[1] : nil
        let arrived = DispatchSemaphore(value: 0)
        driver.onFrame = { arrived.signal() }
        for s in sources { s.start() }
        liveAudio?.start()
        defer { for s in sources { s.stop() } }

        let slotSeconds = 1.0 / Double(fps)
        let maxSlots = o.duration.map { max(1, Int(($0 * Double(fps)).rounded())) }
        var origin: Double?
        var slot = 0
        var latencies: [Double] = []
        latencies.reserveCapacity(maxSlots ?? 18000)
        var repeated = 0, droppedBack = 0
        var swapsSeen = 0, encoderBehind = 0
        let startedAt = monotonicNow()

        func alive(_ s: LiveSource) -> Bool {
            if case .lost = s.state { return false }
            // A camera that has gone quiet for a second counts as unplugged.
            let quietSince = s.lastArrival > 0 ? s.lastArrival : startedAt
            return monotonicNow() - quietSince < Self.lostAfter + (s.lastArrival > 0 ? 0 : 4)
        }
        func reason(_ s: LiveSource) -> String {
            if case let .lost(why) = s.state { return why }
            return "no frame for \(Int(Self.lostAfter)) s"
        }

        recording: while !shouldStop() {
            if let m = maxSlots, slot >= m { break }
            _ = arrived.wait(timeout: .now() + 0.1)
            if let e = queue.error { throw .media(e) }
            if let f = other, !alive(f) {
                event("\(f.name) lost (\(reason(f))): recording \(driver.name) alone, full frame")
                f.stopping = true
                other = nil
            }
            if !alive(driver) {
                guard let f = other else {
                    event("\(driver.name) lost (\(reason(driver))): no camera left, finishing the file")
                    break recording
                }
                event("\(driver.name) lost (\(reason(driver))): \(f.name) goes on alone, full frame")
                driver.onFrame = nil
                driver.stopping = true
                driver = f
                other = nil
                driver.onFrame = { arrived.signal() }
            }
            guard let (frame, isNew) = driver.exchange.take(), isNew else { continue }
            if origin == nil {
                origin = frame.timestamp
                queue.setOrigin(frame.timestamp)
            }
            var filled = 0
            while origin! + Double(slot) * slotSeconds <= frame.timestamp + slotSeconds / 2 {
                if let m = maxSlots, slot >= m { break }
                // A slot due more than half a frame before this picture was taken (the camera
                // slowed down, or a frame was missed) shows the previous picture, the nearer
                // in time: showing this one there would put the picture ahead of the sound.
                if slot > 0 && origin! + Double(slot) * slotSeconds < frame.timestamp - slotSeconds / 2 {
                    queue.submitRepeat(index: slot)
                    repeated += 1
                    slot += 1
                    continue
                }
                let canvas: I420Buffer
                switch queue.acquire() {
                case .failed: break recording
                case let .canvas(c): canvas = c
                case .encoderBehind:
                    if encoderBehind == 0 {
                        event(String(format: "at %.2f s the encoder is a second behind: repeating pictures until it catches up",
                                     Double(slot) / Double(fps)))
                    }
                    encoderBehind += 1
                    queue.submitRepeat(index: slot)
                    slot += 1
                    continue
                }
                let inset = other?.exchange.take()?.frame
                let requests = swapRequests()
                if requests != swapsSeen, let f = other {
                    swapsSeen = requests
                    let main = (requests + (o.swap ? 1 : 0)) % 2 == 1 ? f.name : driver.name
                    event(String(format: "swap at %.2f s: %@ full frame", Double(slot) / Double(fps), main))
                }
                let swapped = inset != nil && ((requests + (o.swap ? 1 : 0)) % 2 == 1)
                if swapped, let inset {
                    compositor.compose(main: inset.picture, inset: frame.picture, into: canvas.view)
                } else {
                    compositor.compose(main: frame.picture, inset: inset?.picture, into: canvas.view)
                }
                latencies.append(monotonicNow() - frame.timestamp)
                queue.submit(index: slot, canvas: canvas)
                slot += 1
                filled += 1
            }
            // A frame past the requested duration is not a drop.
            let pastTheEnd = maxSlots.map { slot >= $0 } ?? false
            if filled == 0 && !pastTheEnd { droppedBack += 1 } else if filled > 1 { repeated += filled - 1 }
        }
        for s in sources { s.stop() }
        if let live = liveAudio, let origin {
            // Let the audio catch up with the last frame (it arrives in 10 ms periods).
            let end = origin + Double(slot) / Double(fps)
            let deadline = monotonicNow() + 0.5
            while live.capturedUntil < end && monotonicNow() < deadline { usleep(5_000) }
            live.stop()
            if live.overruns > 0 { event("audio: \(live.overruns) overrun(s), gaps filled with silence") }
        } else {
            liveAudio?.stop()
        }
        do {
            try queue.finish()
            try writer.finish()
            try output.commit()
        } catch { throw .media(error) }

        let sorted = latencies.sorted()
        func pct(_ q: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((q * Double(sorted.count)).rounded(.up)) - 1)] * 1000
        }
        let cameraDrops = sources.compactMap { $0 as? CameraSource }.reduce(0) { $0 + $1.sequenceGaps + $1.damagedFrames }
        return RecordSummary(output: o.output, frames: slot, seconds: Double(slot) / Double(fps),
                             singleCamera: sources.count == 1, sources: sources.map { "\($0.name): \($0.format)" },
                             latencyP50Ms: pct(0.5), latencyP99Ms: pct(0.99), latencyMaxMs: sorted.last.map { $0 * 1000 } ?? 0,
                             repeatedFrames: repeated, droppedBackFrames: droppedBack, cameraDroppedFrames: cameraDrops,
                             encoderBehindFrames: encoderBehind, events: events)
    }
}
