import Compositor
import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// A captured picture, owned by its source's pool. Its pixels are an encoder frame's: when
/// it is the main picture at the output size, the inset is drawn into it and it is encoded
/// as it is, without a copy.
// Sendable: filled by the capture thread before it is published, read by the composer after: the exchange's lock orders them.
public final class LiveFrame: @unchecked Sendable {
    let storage: EncoderFrame
    public let buffer: I420Buffer
    public fileprivate(set) var timestamp = 0.0
    /// Where its latency is counted from (monotonic seconds): a camera's buffer timestamp,
    /// so conversion or JPEG decoding is inside the figure; for a file, the time it was due
    /// less the time its decoding took (done ahead, as a camera exposes ahead of its buffer).
    public fileprivate(set) var latencyOrigin = 0.0
    public fileprivate(set) var matrix = YCbCrMatrix.bt601
    /// Decoded at 1/2^shift of the camera's size (a JPEG for the inset); 0 at full size.
    public fileprivate(set) var shift = 0
    /// The role its source made it for (`PictureDemand`): set by `CameraFrameMaker` as it
    /// fills it; a source that makes whole pictures whatever the role leaves `.any`.
    package internal(set) var madeFor = PictureRole.any
    init(size: Size) {
        storage = EncoderFrame.camera(size: size)
        buffer = I420Buffer(wrapping: storage.view, owner: storage)
    }
    public var picture: SourcePicture { SourcePicture(image: buffer.view, matrix: matrix) }
    /// Its pixels were re-encoded where they lie (by the composer, which holds it).
    func retag(_ m: YCbCrMatrix) { matrix = m }
}

/// The newest frame of a live source, handed from its capture thread to the composer.
/// Three frames circulate: the one published, the one the composer holds, and the one being
/// filled, so the capture thread never waits and never writes what is being read. Frames
/// composed in place wait to be encoded on top of these: while the encoder holds one, a new
/// one takes its turn (at most as many as the encoder's queue is deep).
package final class FrameExchange: Sendable {
    private struct Slots {
        var frames: [LiveFrame] = []
        var published: Int?
        var held: Int?
        var fresh = false
    }
    private let slots = Locked(Slots())

    package init() {}

    /// A frame the capture thread may fill (sized `size`; reallocated if the size changed).
    package func frameToFill(size: Size) -> LiveFrame {
        slots.withLock { s in
            if s.frames.isEmpty { s.frames = (0..<3).map { _ in LiveFrame(size: size) } }
            guard let i = s.frames.indices.first(where: { $0 != s.published && $0 != s.held && s.frames[$0].storage.isExclusive })
            else {
                s.frames.append(LiveFrame(size: size))
                return s.frames[s.frames.count - 1]
            }
            if s.frames[i].buffer.size != size { s.frames[i] = LiveFrame(size: size) }
            return s.frames[i]
        }
    }

    package func publish(_ frame: LiveFrame, timestamp: Double, matrix: YCbCrMatrix, shift: Int = 0, latencyOrigin: Double? = nil) {
        frame.timestamp = timestamp
        frame.latencyOrigin = latencyOrigin ?? timestamp
        frame.matrix = matrix
        frame.shift = shift
        slots.withLock { s in
            s.published = s.frames.firstIndex { $0 === frame }
            s.fresh = true
        }
    }

    /// Whether a frame was ever published.
    package var hasFrame: Bool { slots.withLock { $0.published != nil } }

    /// Frames allocated so far (they are kept and reused).
    var frameCount: Int { slots.withLock { $0.frames.count } }

    /// The newest frame, held until the next `take` (nil before the first).
    package func take() -> (frame: LiveFrame, isNew: Bool)? {
        slots.withLock { s in
            guard let p = s.published else { return nil }
            s.held = p
            let isNew = s.fresh
            s.fresh = false
            return (s.frames[p], isNew)
        }
    }
}
