import Compositor
import Foundation
import MediaIO

/// compose's input: two decoded files, every slot composed as fast as the encoder takes
/// them, each showing the pictures that meet there (`FilePictures`, framesync's rule), the
/// --swap-at times the timeline's swap events. Only a stop is taken from the inbox (the
/// swaps are the schedule's). Its time is the file's: slot n at n/fps from 0.
final class FileInput: SlotInput {
    let pictures: FilePictures
    private let swaps: SwapSchedule
    private let controls: ControlInbox
    /// Frames written, and how many there will be (nil until known).
    private let progress: (Int, Int?) -> Void
    private let expected: Int?
    /// The sound track's failure, if it failed (it is decoded on the encoder's thread).
    private let soundFailure: () -> MediaError?
    /// Why the input ended before its end, if it did.
    private(set) var failure: MediaError?

    init(pictures: FilePictures, swaps: SwapSchedule, controls: ControlInbox, expected: Int?,
         soundFailure: @escaping () -> MediaError?, progress: @escaping (Int, Int?) -> Void) {
        self.pictures = pictures
        self.swaps = swaps
        self.controls = controls
        self.expected = expected
        self.soundFailure = soundFailure
        self.progress = progress
    }

    var waitsForTheEncoder: Bool { true }
    var canSwap: Bool { true }
    func begin(_ loop: RecordLoop) { loop.queue.setOrigin(0) }
    func end(_ loop: RecordLoop) {}

    func awaitNext(_ loop: RecordLoop) -> Bool {
        failure = failure ?? soundFailure()
        return failure == nil
    }

    func accepted(_ events: [ControlEvent]) -> [ControlEvent] { events.filter { $0 == .stop } }
    func now(_ loop: RecordLoop) -> Double { loop.timeline.clock.seconds }

    func fillSlots(_ loop: RecordLoop) -> Bool {
        let n = loop.timeline.clock.next
        do {
            guard try pictures.advance(toFrame: n) else { return false }
        } catch {
            // A stop interrupts the inputs' reads: what they then fail with is the stop.
            failure = controls.stopRequested ? .interrupted : error
            return false
        }
        if swaps.isSwapped(frame: n, fps: loop.fps) != loop.timeline.swapAsked { loop.ask([.swap]) }
        let slot = loop.timeline.takeSlot()
        guard loop.show(slot, driver: pictures.back, other: pictures.front, recording: true) else { return false }
        progress(slot + 1, pictures.total ?? expected)
        return true
    }

    func swapLine(swapped: Bool, at: Double) -> String? { nil }
    func fullFrameName(swapped: Bool) -> String { swapped ? "front" : "back" }
    func rolesDecided(asked: Bool, showing: Bool, insetRect: Rect) {}
    func willCompose(slot: Int, swapped: Bool) {}
    func latency(of driver: any StepPicture, now: Double) -> Double? { nil }
}

/// A file's sound track on the output's own time (compose): sample for sample from its
/// start, silence once it ends, so the sound ends exactly where the picture does. Decoded
/// on the encoder's thread as it goes.
final class TrackSound: SoundSource {
    let kind = "sound track"
    private let reader: AudioReader
    private let decoded = SampleQueue()
    private let failed = Locked<MediaError?>(nil)
    var onLost: (String) -> Void = { _ in }

    init(_ reader: AudioReader) { self.reader = reader }

    var failure: MediaError? { failed.withLock { $0 } }
    func start() {}
    func stop() -> Bool { true }
    var isLost: Bool { failure != nil }
    var capturedUntil: Double { .infinity }
    func takePeak() -> Float { 0 }
    var overruns: Int { 0 }
    var driftCorrection: Int { 0 }
    var silenceInserted: Int { 0 }

    func drain(into queue: SampleQueue, origin: Double, limit: Int) -> Int {
        if failure == nil {
            do throws(MediaError) { try reader.fill(decoded, upTo: limit) } catch { failed.withLock { $0 = error } }
        }
        let n = min(limit, decoded.count)
        decoded.move(n, to: queue)
        if n < limit { queue.appendSilence(limit - n) }
        return limit
    }
}
