import Compositor
import Foundation
import MediaIO

/// Hands composed frames to the encoder on its own thread. A fixed pool of canvases goes
/// round: the composer takes a free one, the encoder gives it back. When none is free the
/// encoder is a whole pool (about a second) behind: the composer does not wait (that would
/// stall the clock and later fill the missed slots with pictures from the future); the slot
/// repeats the previous picture instead, so time and sync hold and the picture freezes
/// until the encoder catches up.
final class EncodeQueue: @unchecked Sendable {
    enum Acquisition {
        case canvas(I420Buffer)
        case encoderBehind
        case failed
    }

    private let condition = NSCondition()
    private var free: [I420Buffer]
    /// Slots to encode in order; a nil canvas repeats the previous picture.
    private var queued: [(index: Int, canvas: I420Buffer?)] = []
    private var finishing = false
    private var failure: MediaError?
    private let writer: MovWriter
    private let done = DispatchSemaphore(value: 0)
    private let audio = SampleQueue()
    private let samplesPerFrame: Int
    /// Captured audio, or nil for a silent track.
    var liveAudio: LiveAudio?
    private var origin: Double?
    private var framesEncoded = 0

    /// Frames encoded and handed to the muxer so far.
    var encodedFrames: Int {
        condition.lock(); defer { condition.unlock() }
        return framesEncoded
    }

    /// Time zero of the output, on the monotonic clock (the first back frame's timestamp).
    func setOrigin(_ t: Double) {
        condition.lock(); origin = t; condition.unlock()
    }

    init(writer: MovWriter, canvas: Size, depth: Int = 32, fps: Int) {
        self.writer = writer
        free = (0..<depth).map { _ in I420Buffer(size: canvas) }
        samplesPerFrame = Int(OutputAudio.sampleRate) / fps
        free.reserveCapacity(depth)
        queued.reserveCapacity(depth)
        let t = Thread { [self] in encodeLoop() }
        t.name = "dualcam-encoder"
        t.start()
    }

    /// A canvas to compose into, without waiting.
    func acquire() -> Acquisition {
        condition.lock()
        defer { condition.unlock() }
        if failure != nil { return .failed }
        return free.isEmpty ? .encoderBehind : .canvas(free.removeLast())
    }

    func submit(index: Int, canvas: I420Buffer) {
        condition.lock()
        queued.append((index, canvas))
        condition.signal()
        condition.unlock()
    }

    /// Slot `index` shows the previous slot's picture again (never the first slot).
    func submitRepeat(index: Int) {
        condition.lock()
        queued.append((index, nil))
        condition.signal()
        condition.unlock()
    }

    var error: MediaError? {
        condition.lock(); defer { condition.unlock() }
        return failure
    }

    /// Encodes what is queued, then returns (the file is not finished here).
    func finish() throws(MediaError) {
        condition.lock()
        finishing = true
        condition.broadcast()
        condition.unlock()
        done.wait()
        if let failure { throw failure }
    }

    /// Brings the audio queued or written up to `total` samples: captured audio when there
    /// is some (and, with `padding`, silence for the rest), silence when recording none.
    private func addAudio(upTo total: Int, padding: Bool) throws(MediaError) {
        let missing = total - Int(writer.audioSamplesWritten) - audio.count
        guard missing > 0 else { return }
        condition.lock(); let origin = self.origin; condition.unlock()
        if let live = liveAudio {
            var got = 0
            if let origin { got = live.drain(into: audio, origin: origin, limit: missing) }
            if padding { audio.appendSilence(missing - got) }
        } else {
            audio.appendSilence(missing)
        }
    }

    private func encodeLoop() {
        while true {
            condition.lock()
            while queued.isEmpty && !finishing { condition.wait() }
            if queued.isEmpty && finishing {
                condition.unlock()
                break
            }
            let (index, canvas) = queued.removeFirst()
            condition.unlock()
            do {
                // A repeat sends the encoder's frame again: it still holds the last picture.
                if let canvas { try writer.video.canvas().copy(from: canvas.view) }
                try writer.writeVideoFrame(index: Int64(index))
                condition.lock(); framesEncoded = index + 1; condition.unlock()
                // Audio up to this frame's end, as far as it has been captured.
                try addAudio(upTo: (index + 1) * samplesPerFrame, padding: false)
                try writer.writeAudio(from: audio, final: false)
            } catch {
                condition.lock()
                failure = error
                condition.broadcast()
                condition.unlock()
                break
            }
            if let canvas {
                condition.lock()
                free.append(canvas)
                condition.unlock()
            }
        }
        // After a failure the file is kept as it stands: nothing more is written.
        if error != nil {
            done.signal()
            return
        }
        do {
            // The track ends exactly where the picture does.
            try addAudio(upTo: encodedFrames * samplesPerFrame, padding: true)
            try writer.writeAudio(from: audio, final: true)
        } catch {
            condition.lock(); failure = failure ?? error; condition.unlock()
        }
        done.signal()
    }
}
