import Compositor
import Foundation
import MediaIO

/// Hands composed frames to the encoder on its own thread. A fixed pool of canvases goes
/// round: the composer takes a free one (waiting when all are queued: the encoder sets the
/// pace, the cameras keep their newest frames meanwhile), the encoder gives it back.
final class EncodeQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var free: [I420Buffer]
    private var queued: [(index: Int, canvas: I420Buffer)] = []
    private var finishing = false
    private var failure: MediaError?
    private let writer: MovWriter
    private let done = DispatchSemaphore(value: 0)
    private let audio = SampleQueue()
    private let samplesPerFrame: Int
    /// Times the composer had to wait for the encoder.
    private(set) var waits = 0

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

    /// A canvas to compose into; nil when the encoder has failed.
    func acquire() -> I420Buffer? {
        condition.lock()
        defer { condition.unlock() }
        if free.isEmpty { waits += 1 }
        while free.isEmpty && failure == nil { condition.wait() }
        return failure == nil ? free.removeLast() : nil
    }

    func submit(index: Int, canvas: I420Buffer) {
        condition.lock()
        queued.append((index, canvas))
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
                try writer.video.canvas().copy(from: canvas.view)
                try writer.writeVideoFrame(index: Int64(index))
                // Silent audio keeps the same shape as compose's; it follows the picture
                // sample for sample.
                audio.appendSilence((index + 1) * samplesPerFrame - Int(writer.audioSamplesWritten) - audio.count)
                try writer.writeAudio(from: audio, final: false)
            } catch {
                condition.lock()
                failure = error
                condition.broadcast()
                condition.unlock()
                break
            }
            condition.lock()
            free.append(canvas)
            condition.signal()
            condition.unlock()
        }
        do { try writer.writeAudio(from: audio, final: true) } catch {
            condition.lock(); failure = failure ?? error; condition.unlock()
        }
        done.signal()
    }
}
