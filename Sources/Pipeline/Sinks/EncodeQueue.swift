import Compositor
import Foundation
import MediaIO

/// Hands composed frames to the encoder on its own thread. A fixed pool of encoder frames
/// goes round: the composer takes a free one and composes into it, the encoder takes it as
/// it is (no copy) and gives it back. A picture composed in place (a camera's own frame
/// with the inset drawn in) is sent instead of the pool frame, which then only stands for
/// its place in the queue: the queue never holds more pictures than the pool has frames.
/// The recorder keeps the encoder within half a second of real time (`lag`): slots it
/// cannot take in time are skipped,
/// never waited for (that would stall the clock and later fill the missed slots with
/// pictures from the future).
// Sendable: its pool, queue, sound and counts under `condition`.
final class EncodeQueue: @unchecked Sendable {
    enum Acquisition {
        case canvas(EncoderFrame)
        case encoderBehind
        case failed
    }

    private let condition = NSCondition()
    private var free: [EncoderFrame]
    /// Slots to encode in order: the picture and the pool frame whose place it takes (the
    /// same frame unless composed in place); none repeats the previous picture.
    private var queued: [(index: Int, picture: EncoderFrame?, token: EncoderFrame?)] = []
    /// The picture sent last, kept (with its pool frame) while a repeat may send it again.
    private var lastSent: (picture: EncoderFrame, token: EncoderFrame)?
    /// Frames allocated, all at the start: the pool never grows.
    let poolSize: Int
    private var finishing = false
    /// Given up on (compose stopped or failed): nothing more is written, not even the sound.
    private var abandoned = false
    private var failure: MediaError?
    private let sink: any Sink
    /// What the encoder's speed and the sound heard are timed on: the recording's clock.
    private let clock: any EngineClock
    private var thread: OwnedThread?
    private let audio = SampleQueue()
    private let samplesPerFrame: Int
    /// Captured audio, or nil for a silent track.
    var liveAudio: (any SoundSource)?
    private var origin: Double?
    private var framesEncoded = 0
    /// Sound heard during pauses, left out of the track (guarded by `condition`).
    private var cuts = SoundCuts()
    /// Where sound left out is drained to and dropped.
    private let discarded = SampleQueue()

    /// Whether `finish` sent the last slot, skipped before, after all.
    private(set) var lastSlotRefilled = false
    /// The slot being encoded now, if any.
    private var encoding: Int?

    /// Seconds one frame takes the encoder (picture and sound), recently.
    private var speed = RecentFrameTimes()
    private var secondsPerFrame: Double { speed.secondsPerFrame }

    /// How far behind real time the encoder is when slot `slot` is due: in slots, after the
    /// oldest one not yet encoded (0 when all are); and in seconds, the time the frames
    /// waiting (and the one being encoded) will take it at its recent speed.
    func lag(at slot: Int) -> (slots: Int, seconds: Double, secondsPerFrame: Double) {
        condition.lock(); defer { condition.unlock() }
        let slots = (encoding ?? queued.first?.index).map { max(0, slot - $0) } ?? 0
        return (slots, Double(queued.count + (encoding == nil ? 0 : 1)) * secondsPerFrame, secondsPerFrame)
    }

    /// Nothing queued and nothing being encoded (a virtual clock moves only then).
    var isIdle: Bool {
        condition.lock(); defer { condition.unlock() }
        return queued.isEmpty && encoding == nil
    }

    /// The encoder's recent time per frame (0 before its second frame).
    var recentSecondsPerFrame: Double {
        condition.lock(); defer { condition.unlock() }
        return secondsPerFrame
    }

    /// Drops the oldest slots waiting until what is left takes the encoder at most `seconds`
    /// at its recent speed (one always stays); returns how many were dropped. Slots queued
    /// before the encoder's speed was known (its first frames) can otherwise take it many
    /// times their length on a machine too slow for it.
    func trim(toSeconds seconds: Double) -> Int {
        condition.lock(); defer { condition.unlock() }
        guard secondsPerFrame > 0 else { return 0 }
        var dropped = 0
        while queued.count > 1 && Double(queued.count + (encoding == nil ? 0 : 1)) * secondsPerFrame > seconds {
            let oldest = queued.removeFirst()
            if let token = oldest.token { free.append(token) }
            dropped += 1
        }
        return dropped
    }

    /// Frames encoded and handed to the muxer so far.
    var encodedFrames: Int {
        condition.lock(); defer { condition.unlock() }
        return framesEncoded
    }

    /// Time zero of the output, on the monotonic clock (the first back frame's timestamp).
    func setOrigin(_ t: Double) {
        condition.lock(); origin = t; condition.unlock()
    }

    /// The recording pauses before slot `slot`, at monotonic `time` (where that slot would
    /// have been due): from there the sound heard is left out until it resumes.
    func pauseSound(atSlot slot: Int, at time: Double) {
        condition.lock()
        cuts.pause(atSample: slot * samplesPerFrame, at: time)
        condition.broadcast()
        condition.unlock()
    }

    /// A resume was asked for at monotonic `time`: sound from then on is kept until
    /// `resumeSound` says how much the pause left out.
    func resumeSoundAsked(at time: Double) {
        condition.lock(); cuts.resumeAsked(at: time); condition.unlock()
    }

    /// The recording goes on, `seconds` after it paused: that much sound is left out.
    func resumeSound(after seconds: Double) {
        condition.lock(); cuts.resume(after: seconds); condition.unlock()
    }

    /// `lowered`: it encodes the take itself, with no intermediate behind it: its thread runs
    /// at such an encoder's level (`ThreadPriority.liveEncoderLevel`), below the picture's.
    /// `companion`: it encodes a file beside the take, at that level (`companionNiceness`).
    /// `threadName`: what `top -H` shows for its thread, when the default says the wrong thing.
    init(sink: any Sink, canvas: Size, depth: Int = 32, fps: Int, lowered: Bool = false, companion: Bool = false,
         threadName: String? = nil, clock: any EngineClock = MonotonicClock.shared) throws(MediaError) {
        self.sink = sink
        self.clock = clock
        free = []
        for _ in 0..<depth { free.append(try EncoderFrame(size: canvas)) }
        poolSize = depth
        samplesPerFrame = Int(OutputAudio.sampleRate) / fps
        free.reserveCapacity(depth)
        queued.reserveCapacity(depth)
        // Not lowered, it hands frames to a sink that encodes on a thread of its own.
        thread = OwnedThread(name: threadName ?? (lowered ? "dualcam-encoder" : "dualcam-handover")) { [self] in
            if companion { ThreadPriority.lowerCurrentThreadToCompanions() } else if lowered {
                ThreadPriority.lowerCurrentThreadToEncoders(live: true)
            }
            encodeLoop()
        }
    }

    /// A frame to compose into: at once (`encoderBehind` when every frame is queued), or,
    /// `waiting`, once the encoder lets go of one (an input that keeps every slot: compose's files).
    func acquire(waiting: Bool = false) -> Acquisition {
        condition.lock()
        while waiting && free.isEmpty && failure == nil { condition.wait() }
        if failure != nil { condition.unlock(); return .failed }
        guard let frame = free.popLast() else { condition.unlock(); return .encoderBehind }
        condition.unlock()
        do { try frame.prepareForWriting() } catch {
            fail(error)
            return .failed
        }
        return .canvas(frame)
    }

    /// A frame from `acquire` that was not used.
    func giveBack(_ canvas: EncoderFrame) {
        condition.lock()
        free.append(canvas)
        condition.broadcast()
        condition.unlock()
    }

    private func fail(_ error: MediaError) {
        condition.lock()
        failure = failure ?? error
        condition.broadcast()
        condition.unlock()
    }

    func submit(index: Int, canvas: EncoderFrame) {
        submit(index: index, picture: canvas, token: canvas)
    }

    /// Slot `index` shows `picture`, composed in place, in the place of `canvas` (from
    /// `acquire`, unused). The queue keeps a reference: `picture`'s owner must not write
    /// into it while it is not exclusive.
    func submit(index: Int, inPlace picture: EncoderFrame, insteadOf canvas: EncoderFrame) {
        submit(index: index, picture: EncoderFrame(referencing: picture), token: canvas)
    }

    private func submit(index: Int, picture: EncoderFrame, token: EncoderFrame) {
        condition.lock()
        queued.append((index, picture, token))
        condition.signal()
        condition.unlock()
    }

    /// Slot `index` shows the previous slot's picture again (never the first slot).
    func submitRepeat(index: Int) {
        condition.lock()
        queued.append((index, nil, nil))
        condition.signal()
        condition.unlock()
    }

    var error: MediaError? {
        condition.lock(); defer { condition.unlock() }
        return failure
    }

    /// Encodes what is queued, then returns (the file is not finished here). `lastSlot`:
    /// the slot the file ends with; when it was skipped (the encoder behind), the picture
    /// before it is sent there again, so the file is as long as what was recorded.
    /// `patience`: how long a frame may take before the encoder is given up on; nil waits as
    /// long as it takes (compose: a 4K frame at a slow preset on two CPUs can take longer
    /// than a stalled disk would, and the user can stop it).
    func finish(lastSlot: Int? = nil, patience: Double? = stuckSeconds) throws(MediaError) {
        condition.lock()
        if let lastSlot, let last = queued.last?.index ?? encoding ?? (framesEncoded > 0 ? framesEncoded - 1 : nil), last < lastSlot {
            queued.append((lastSlot, nil, nil))
            lastSlotRefilled = true
        }
        finishing = true
        condition.broadcast()
        condition.unlock()
        // The backlog is bounded, so finishing takes seconds; an encoder that stops making
        // progress (a write the disk never answers) is given up on rather than waited for.
        var encoded = encodedFrames, progressAt = monotonicNow()
        while thread?.join(timeout: 0.5) == false {
            if encodedFrames != encoded {
                encoded = encodedFrames
                progressAt = monotonicNow()
            } else if let patience, monotonicNow() - progressAt > patience {
                isStuck = true
                throw .encoderFailed(name: "video", reason: String(format: "no frame finished for %.0f s (a disk that does "
                                     + "not answer?); stopped waiting for it", patience))
            }
        }
        if let failure { throw failure }
    }

    /// Ends the encoding thread after the frame it is on, letting go of what waits: the file
    /// is abandoned (a stopped or failed composition).
    func abandon() {
        condition.lock()
        for item in queued { if let token = item.token { free.append(token) } }
        queued.removeAll()
        abandoned = true
        finishing = true
        condition.broadcast()
        condition.unlock()
        thread?.join()
    }

    /// How long `finish` waits for a frame to be finished before it gives up on the encoder.
    static let stuckSeconds = 15.0
    /// Whether `finish` gave up on the encoder: its thread may still be in the muxer, which
    /// nothing else may then touch. Set and read by the thread that calls `finish`.
    private(set) var isStuck = false

    /// Brings the audio queued or written up to `total` samples: captured audio when there
    /// is some (and, with `padding`, silence for the rest), silence when recording none.
    /// Sound stops at a pause until what was heard during it is left out.
    private func addAudio(upTo total: Int, padding: Bool) {
        condition.lock(); let origin = self.origin; condition.unlock()
        var position = soundPosition
        while position < total {
            leaveOutPausedSound(at: position, origin: origin)
            condition.lock(); let room = cuts.room(at: position); condition.unlock()
            let wanted = min(total - position, room ?? .max)
            guard wanted > 0 else { break }  // a pause whose sound is not all left out yet
            var got = wanted
            if let live = liveAudio {
                got = origin.map { live.drain(into: audio, origin: $0, limit: wanted) } ?? 0
            } else {
                audio.appendSilence(wanted)
            }
            position += got
            if got < wanted { break }
        }
        if padding && position < total { audio.appendSilence(total - position) }
    }

    /// Output samples written or queued so far.
    private var soundPosition: Int { Int(sink.soundSamplesWritten) + audio.count }

    /// Drains and drops the sound heard during the pause at output sample `position`, as much
    /// of it as is surely in the pause by now.
    private func leaveOutPausedSound(at position: Int, origin: Double?) {
        condition.lock(); let due = cuts.dueForDiscard(at: position, heardUntil: clock.now()); condition.unlock()
        guard due > 0 else { return }
        var n = due
        if let live = liveAudio {
            n = origin.map { live.drain(into: discarded, origin: $0, limit: due) } ?? 0
            discarded.drop(discarded.count)
        }
        condition.lock(); cuts.discarded(n); condition.unlock()
    }

    /// While paused, with nothing to encode: the sound before the pause is queued and what
    /// has been heard since is dropped, so a long pause piles nothing up.
    private func keepUpWithPause() {
        condition.lock(); let at = cuts.cuts.first?.atSample; condition.unlock()
        guard let at else { return }
        addAudio(upTo: at, padding: false)
        condition.lock(); let origin = self.origin; condition.unlock()
        leaveOutPausedSound(at: soundPosition, origin: origin)
    }

    private func encodeLoop() {
        while true {
            condition.lock()
            while queued.isEmpty && !finishing {
                guard cuts.isOpen else { condition.wait(); continue }
                condition.unlock()
                keepUpWithPause()
                condition.lock()
                if queued.isEmpty && !finishing { _ = condition.wait(until: Date(timeIntervalSinceNow: 0.25)) }
            }
            if queued.isEmpty && finishing {
                condition.unlock()
                break
            }
            let (index, picture, token) = queued.removeFirst()
            encoding = index
            condition.unlock()
            let started = clock.now()
            do {
                // A repeat sends the last picture again (slot 0 is never a repeat).
                if let picture = picture ?? lastSent?.picture {
                    try sink.write(frame: picture, index: Int64(index))
                }
                // Audio up to this frame's end, as far as it has been captured.
                addAudio(upTo: (index + 1) * samplesPerFrame, padding: false)
                try sink.write(sound: audio, final: false)
                let took = clock.now() - started
                condition.lock()
                framesEncoded = index + 1
                encoding = nil
                // Not the first frame: it sets the encoder up and takes several times longer.
                if index > 0 { speed.add(took) }
                // In the same step as the slot's end, so a queue seen idle has its frames back.
                if let picture, let token {
                    if let previous = lastSent { free.append(previous.token) }
                    lastSent = (picture, token)
                }
                condition.broadcast()
                condition.unlock()
            } catch {
                fail(error)
                break
            }
        }
        // After a failure the file is kept as it stands: nothing more is written.
        if error != nil || condition.withLock({ abandoned }) { return }
        do {
            // The track ends exactly where the picture does.
            addAudio(upTo: encodedFrames * samplesPerFrame, padding: true)
            try sink.write(sound: audio, final: true)
        } catch {
            condition.lock(); failure = failure ?? error; condition.unlock()
        }
    }
}
