import Compositor
import Foundation
import MediaIO

/// The composed picture as a camera other programs read (a video call in the browser):
/// each composed frame is copied, on the composing thread, into one of three buffers, and a
/// thread of its own writes the newest to the device. It is fed each picture as it is
/// composed, as the preview is (a slot the file's encoder has no room for, with `--encode
/// live`, is not composed at all: the call misses it too). Nothing it meets stops or slows
/// the recording: a device with no room skips the frame, one that goes away (the module
/// unloaded) is said once and written to no more.
// Sendable: the free buffers and the counts under `ready`'s lock; a buffer is written by one
// side at a time (the composing thread's while free, then the writer's once handed over).
public final class VirtualCamera: @unchecked Sendable {
    public let path: String
    private let device: V4L2Output
    private let buffers: [UnsafeMutableRawBufferPointer]
    /// The newest picture packed (a buffer's index), waiting for the writer: one newer still
    /// takes its place. Closed at the stop, or once the device fails.
    private let ready = HandoffQueue<Int>(countLimit: 1, overflow: .replaceNewest)
    /// The buffers neither waiting nor being written: with three, the composing thread always
    /// finds one.
    private var free: [Int]
    private var thread: OwnedThread?
    private let log: (String) -> Void
    private var _written = 0, _skipped = 0, _failure: String?

    /// Opens the device; the one-line reason when it cannot be.
    public init(path: String, size: Size, framesPerSecond: Int, log: @escaping (String) -> Void) throws(V4L2Output.Problem) {
        self.path = path
        let device = try V4L2Output(path: path, size: size, framesPerSecond: framesPerSecond)
        self.device = device
        buffers = (0..<3).map { _ in .allocate(byteCount: device.frameBytes, alignment: 64) }
        free = Array(buffers.indices)
        self.log = log
        thread = OwnedThread(name: "dualcam-virtual-camera") { [self] in writeLoop() }
    }

    deinit {
        stop()
        for b in buffers { b.deallocate() }
    }

    /// Frames written to the device, and frames it had no room for or came while one was
    /// being written (a newer one replaced them).
    public var written: Int { ready.withLock { _ in _written } }
    public var skipped: Int { ready.withLock { _ in _skipped } }
    /// Why it stopped writing, if it did.
    public var failure: String? { ready.withLock { _ in _failure } }

    public func offer(_ picture: I420View) {
        guard picture.size == device.size else { return }
        // A picture with no buffer to go in is skipped too, and counted: on an emulated VM whose
        // writer lagged, 5 of 112 pictures went uncounted.
        let spare = ready.withLock { queued -> Int? in
            guard queued.closing == nil else { return nil }
            if let spare = free.popLast() { return spare }
            _skipped += 1
            return nil
        }
        guard let spare else { return }
        Self.pack(picture, into: buffers[spare])
        let offered = ready.offer(spare) { replaced in
            _skipped += replaced.count
            free += replaced
        }
        if offered != .queued { ready.withLock { _ in free.append(spare) } }
    }

    /// The three planes one after another, rows without padding: the I420 layout readers
    /// of a V4L2 camera expect.
    static func pack(_ picture: I420View, into out: UnsafeMutableRawBufferPointer) {
        var offset = 0
        for plane in picture.planes {
            for y in 0..<plane.height {
                (out.baseAddress! + offset).copyMemory(from: plane.row(y), byteCount: plane.width)
                offset += plane.width
            }
        }
    }

    private func writeLoop() {
        while let next = ready.next() {
            let error = device.write(UnsafeRawBufferPointer(buffers[next]))
            let failed = ready.withLock { queued -> String? in
                free.append(next)
                switch error?.rawValue {
                case nil: _written += 1
                case EAGAIN, ENOBUFS, ENOSPC: _skipped += 1
                case let code?:
                    _failure = "virtual camera \(path): \(Errno(code)): no longer written to (the recording goes on)"
                    free += queued.close(.now)
                }
                return _failure
            }
            if let failed {
                log(failed)
                return
            }
        }
    }

    /// Stops writing (the device is closed with the object).
    public func stop() {
        // A picture still waiting is not written: skipped.
        ready.withLock { queued in
            let unwritten = queued.close(.now)
            _skipped += unwritten.count
            free += unwritten
        }
        _ = thread?.join(timeout: 2)
        thread = nil
    }
}

extension OutputRequest {
    /// `--virtual-camera DEV`: the composed picture written to a v4l2loopback device,
    /// opened before any camera (a missing module or a busy device is the one line there is).
    package static func virtualCamera(path: String) -> OutputRequest {
        let device = OpenedEarly<VirtualCamera>()
        return OutputRequest(check: { settings, log throws(MediaError) in
            do throws(V4L2Output.Problem) {
                device.keep(try VirtualCamera(path: path, size: settings.canvas,
                                              framesPerSecond: Int(settings.video.framesPerSecond), log: log))
            } catch { throw .outputUnusable(error.description) }
        }) { _ throws(MediaError) in
            guard let camera = device.take() else { throw .outputUnusable("\(path): opened once already") }
            return camera
        }
    }
}

extension VirtualCamera: LiveOutput {
    func offer(_ picture: I420View, recording: Bool) { offer(picture) }
    var showsPictures: Bool { true }
    func finish(lastSlot: Int?) -> OutputReport {
        stop()
        let summary = VirtualCameraSummary(device: path, framesWritten: written, framesSkipped: skipped, failure: failure)
        return OutputReport { $0.virtualCamera = summary }
    }
}
