import Compositor
import Foundation
import MediaIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A video file played at its real-time pace, as if it were a camera: each picture is
/// published when its time comes, stamped with the monotonic clock; the end of the file is
/// treated as an unplugged camera. An MJPEG file is played as an MJPEG camera sends its
/// stream: each JPEG, as stored, decoded on this thread by the camera path
/// (`CameraFrameMaker`: libjpeg-turbo, at the inset's size while in the inset), so that a
/// recording of such files costs what one of two webcams costs.
// Sendable: its pictures are the capture thread's; the pace under `paceLock`, the demand its feed's, the damaged JPEGs' times locked.
final class FileSource: FrameSource, @unchecked Sendable {
    let feed: SourceFeed
    let path: String
    private let log: (String) -> Void
    private var pictures: Pictures?
    private let paceLock = NSLock()
    private var _paceStart: Double?
    /// When each damaged JPEG was due (monotonic seconds).
    private let damagedDue = Locked<[Double]>([])

    private enum Pictures {
        case decoded(VideoReader)
        case jpegs(PacketReader, StreamFormat, CameraFrameMaker)

        var timeline: SourceTimeline {
            switch self {
            case let .decoded(reader): reader.timeline
            case let .jpegs(reader, _, _): reader.timeline
            }
        }
    }

    init(path: String, log: @escaping (String) -> Void = { _ in }) {
        self.path = path
        self.log = log
        feed = SourceFeed(name: path)
    }

    /// JPEGs of an MJPEG file the camera path could not decode (skipped, as a camera's are)
    /// that were due from `start` to `end` (monotonic seconds): the file plays from before the
    /// take's first slot (its first picture sets the pace while the other source opens) to
    /// after its last (until the stop reaches it), and what came then is not the take's.
    func damagedJPEGs(dueFrom start: Double, to end: Double) -> Int {
        damagedDue.withLock { $0.lazy.filter { $0 >= start && $0 <= end }.count }
    }

    /// The monotonic time of the file's time zero: its pictures are published at this plus
    /// their time. nil until the first picture.
    var paceStart: Double? { paceLock.withLock { _paceStart } }

    /// A reader of the file's sound on its pictures' timeline (after `open`); nil when the
    /// file has no sound track.
    func soundReader() throws(MediaError) -> AudioReader? {
        guard let pictures else { return nil }
        return try AudioReader(path: path, timeline: pictures.timeline)
    }

    func open() throws {
        let reader = try VideoReader(path: path)
        if reader.codecName == "mjpeg", let (jpegs, stream) = Self.jpegPlayback(path) {
            pictures = .jpegs(jpegs, stream, CameraFrameMaker(name: path, matrix: .bt601, output: PiPCompositor.outputMatrix))
            setFormat("file MJPG \(stream.width)x\(stream.height), played as an MJPEG camera")
        } else {
            pictures = .decoded(reader)
            setFormat("file \(reader.codecName) \(reader.displaySize)")
        }
    }

    /// The JPEGs of an MJPEG file, when the camera path decodes its first one; nil leaves
    /// the file to libavcodec (a JPEG kind the camera path does not take, a picture turned
    /// by the file's display matrix, a named pipe, which cannot be read twice).
    private static func jpegPlayback(_ path: String) -> (PacketReader, StreamFormat)? {
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG,
              let probe = try? PacketReader(path: path), probe.isMJPEG, probe.rotation == .none else { return nil }
        let stream = StreamFormat(fourcc: .mjpeg, width: probe.size.width, height: probe.size.height, bytesPerLine: 0,
                                  imageSize: 0, framesPerSecond: 1 / probe.nominalFrameDuration)
        let maker = CameraFrameMaker(name: path, matrix: .bt601, output: PiPCompositor.outputMatrix)
        var decodes = false
        _ = try? probe.next { jpeg, _ in
            decodes = maker.make(jpeg, isDamaged: false, stream: stream, inset: nil, exchange: FrameExchange()) != nil
        }
        guard decodes, let reader = try? PacketReader(path: path) else { return nil }
        return (reader, stream)
    }

    func captureLoop() {
        switch pictures {
        case let .decoded(reader)?: play(reader)
        case let .jpegs(reader, stream, maker)?: play(reader, stream, maker)
        case nil: return
        }
    }

    /// The file's time zero on the monotonic clock, fixed by its first picture.
    private func startPace(at start: Double) { paceLock.withLock { _paceStart = start } }

    /// Sleeps until `due` in short naps, so that a stop request is seen within 50 ms
    /// whatever the gap. False when stopped.
    private func wait(until due: Double) -> Bool {
        while !stopping, case let wait = due - monotonicNow(), wait > 0 {
            usleep(UInt32(min(wait, 0.05) * 1e6))
        }
        return !stopping
    }

    private func play(_ reader: VideoReader) {
        // The pace starts with the first picture, not before it: opening the decoder takes
        // tens of ms, and a late first frame would shift the clock the recorder takes from it.
        var start: Double?
        do {
            while !stopping, case let decodeStart = monotonicNow(), let picture = try reader.next() {
                let decoding = monotonicNow() - decodeStart
                if start == nil {
                    start = monotonicNow() - picture.time
                    startPace(at: start!)
                }
                let due = start! + picture.time
                guard wait(until: due) else { break }
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

    /// Each JPEG arrives when its time comes, as a camera's buffer, and is decoded then:
    /// the decoding counts as latency, as it does for a camera.
    private func play(_ reader: PacketReader, _ stream: StreamFormat, _ maker: CameraFrameMaker) {
        var start: Double?
        do {
            while !stopping {
                var made: (frame: LiveFrame, shift: Int)?
                var due = 0.0
                let more = try reader.next { jpeg, time in
                    if start == nil {
                        start = monotonicNow() - time
                        startPace(at: start!)
                    }
                    due = start! + time
                    guard wait(until: due) else { return }
                    made = maker.make(jpeg, isDamaged: false, stream: stream, inset: demand.inset, exchange: exchange)
                }
                guard more, !stopping else { break }
                guard let made else {
                    damagedDue.withLock { $0.append(due) }
                    continue
                }
                if let note = maker.scaleChange(made.shift) { log(note) }
                published(made.frame, timestamp: due, matrix: maker.matrix, shift: made.shift, latencyOrigin: due)
            }
            if !stopping { setState(.lost("the file ended")) }
        } catch {
            setState(.lost(error.description))
        }
    }
}
