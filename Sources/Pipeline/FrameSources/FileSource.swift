import Compositor
import Foundation
import MediaIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A video file played at its real-time pace, as if it were a camera: each picture is
/// published when its time comes, stamped with the monotonic clock; the end of the file is
/// treated as an unplugged camera.
final class FileSource: FrameSource, @unchecked Sendable {
    let feed: SourceFeed
    let path: String
    private var reader: VideoReader?
    private let paceLock = NSLock()
    private var _paceStart: Double?

    init(path: String) {
        self.path = path
        feed = SourceFeed(name: path)
    }

    /// The monotonic time of the file's time zero: its pictures are published at this plus
    /// their time. nil until the first picture.
    var paceStart: Double? { paceLock.withLock { _paceStart } }

    /// A reader of the file's sound on its pictures' timeline (after `open`); nil when the
    /// file has no sound track.
    func soundReader() throws(MediaError) -> AudioReader? {
        guard let reader else { return nil }
        return try AudioReader(path: path, timeline: reader.timeline)
    }

    func open() throws {
        reader = try VideoReader(path: path)
        setFormat("file \(reader!.codecName) \(reader!.displaySize)")
    }

    func captureLoop() {
        guard let reader else { return }
        // The pace starts with the first picture, not before it: opening the decoder takes
        // tens of ms, and a late first frame would shift the clock the recorder takes from it.
        var start: Double?
        do {
            while !stopping, case let decodeStart = monotonicNow(), let picture = try reader.next() {
                let decoding = monotonicNow() - decodeStart
                if start == nil {
                    start = monotonicNow() - picture.time
                    paceLock.withLock { _paceStart = start }
                }
                // In short naps, so that a stop request is seen within 50 ms whatever the gap.
                let due = start! + picture.time
                while !stopping, case let wait = due - monotonicNow(), wait > 0 {
                    usleep(UInt32(min(wait, 0.05) * 1e6))
                }
                if stopping { break }
                // Stamped with the time the picture is due, as a camera stamps its buffer at
                // capture, not with when this thread woke up: a wake-up 17 ms late (the
                // encoder busy on every core) would otherwise move the picture into the
                // next slot, once in ~6000 frames. The wait and the copy below stand for
                // the camera's DMA and count as latency.
                let captured = due
                let frame = exchange.frameToFill(size: picture.picture.image.size)
                frame.buffer.view.copy(from: picture.picture.image)
                published(frame, timestamp: captured, matrix: picture.picture.matrix, latencyOrigin: captured - decoding)
            }
            if !stopping { setState(.lost("the file ended")) }
        } catch {
            setState(.lost(error.description))
        }
    }
}
