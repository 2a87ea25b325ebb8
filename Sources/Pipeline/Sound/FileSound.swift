import Foundation
import MediaIO

/// Where a recording's sound comes from: a microphone (`LiveAudio`) or the sound track of a
/// file played as a camera (`FileSound`). The encoder drains it onto the output's timeline.
protocol SoundSource: AnyObject {
    /// What the sound is, for messages: "microphone", "sound track of take.mp4".
    var kind: String { get }
    func start()
    /// False when its thread did not stop in time (see `LiveAudio.stop`).
    @discardableResult func stop() -> Bool
    var isLost: Bool { get }
    /// Monotonic time up to which there is sound to drain.
    var capturedUntil: Double { get }
    /// The loudest sample (0-1) since the last call: the status line's level meter.
    func takePeak() -> Float
    var overruns: Int { get }
    var driftCorrection: Int { get }
    var silenceInserted: Int { get }
    var onLost: (String) -> Void { get set }
    /// Moves up to `limit` samples, placed on the output timeline that starts at monotonic
    /// time `origin`, into `queue`; returns how many.
    @discardableResult func drain(into queue: SampleQueue, origin: Double, limit: Int) -> Int
}

extension LiveAudio: SoundSource {
    var kind: String { "microphone" }
}

/// The sound track of a file played as a camera (`record --audio back` with a file as
/// --back): decoded on the timeline its pictures are read on (`SourceTimeline`) and placed
/// on the monotonic clock where `FileSource` placed them, so the file's own sync is kept to
/// the sample. Decoded on demand on the encoder's thread: nothing waits for it.
// Sendable: its peak, loss and placement under `lock`; decoded on the encoder's thread alone.
final class FileSound: SoundSource, @unchecked Sendable {
    let kind: String
    private let source: FileSource
    private let reader: AudioReader
    private let decoded = SampleQueue()
    private let lock = NSLock()
    private var peak: Float = 0
    private var lostReason: String?
    private var placement = SoundPlacement()
    var onLost: (String) -> Void = { _ in }

    init(source: FileSource) throws(MediaError) {
        guard let reader = try source.soundReader() else {
            throw .cannotOpen(path: source.name, reason: "it has no sound track to record (--audio back and front take a file source's sound)")
        }
        self.source = source
        self.reader = reader
        kind = "sound track of \(source.name)"
    }

    func start() {}
    func stop() -> Bool { true }
    var isLost: Bool { lock.withLock { lostReason != nil } }
    var capturedUntil: Double { .infinity }
    var overruns: Int { 0 }
    var driftCorrection: Int { 0 }
    var silenceInserted: Int { 0 }

    func takePeak() -> Float {
        lock.withLock {
            let p = peak
            peak = 0
            return p
        }
    }

    func drain(into queue: SampleQueue, origin: Double, limit: Int) -> Int {
        guard limit > 0, let start = source.paceStart else { return 0 }
        placement.place(start: start, origin: origin)
        var moved = placement.padSilence(into: queue, limit: limit)
        let ended = !isLost && !fill(placement.dropDue + limit - moved)
        placement.dropWhatIsDue(from: decoded)
        let n = min(limit - moved, decoded.count)
        let loudest = decoded.moveMeasuringPeak(n, to: queue)
        moved += n
        lock.withLock { peak = max(peak, loudest) }
        // The sound track ended before the picture (or the file did): silence from here.
        if moved < limit && (ended || isLost) {
            queue.appendSilence(limit - moved)
            moved = limit
        }
        return moved
    }

    /// Decodes until `decoded` holds `count` samples; false when the track has ended.
    private func fill(_ count: Int) -> Bool {
        do throws(MediaError) { try reader.fill(decoded, upTo: count) } catch {
            lock.withLock { lostReason = error.description }
            onLost(error.description)
            return false
        }
        return decoded.count >= count || !reader.finished
    }
}
