import Compositor
import Foundation
import MediaIO

/// A sink's encoding on a thread of its own, so that composing the next frame overlaps
/// encoding this one (`compose`: decoding, composing and encoding then run at once, and the
/// encoder never waits for the composer). At most `depth` pictures wait; the composer waits
/// beyond that, which is what bounds the memory. Each picture waits as a reference of its
/// own: a decoded frame composed in place is then not exclusive while it waits, so a picture
/// shown again is composed into a canvas instead of drawn over what the encoder has yet to read.
// Sendable: its queue, pool, counts and failure under `condition`; the sink touched only by
// its thread until that thread has ended.
final class EncodingStage: Sink, @unchecked Sendable {
    private enum Item {
        case picture(EncoderFrame, Int64)
        case sound(SampleQueue, final: Bool)
        case finish
    }

    private let condition = NSCondition()
    private var items: [Item] = []
    private var picturesWaiting = 0
    private let depth: Int
    /// The frames composed into, made as they are first needed (a composition in place
    /// needs none): at most one more than may wait, so one is free while the rest wait.
    private var canvases: [EncoderFrame] = []
    private let canvasSize: Size
    private var failure: MediaError?
    private var stopping = false
    private let sink: any Sink
    private var thread: OwnedThread?
    /// Samples handed on so far (the composer ends the sound where the picture ends).
    private(set) var soundSamplesWritten: Int64 = 0

    init(sink: any Sink, canvas: Size, depth: Int = 3) {
        self.sink = sink
        self.depth = max(1, depth)
        canvasSize = canvas
        thread = OwnedThread(name: "dualcam-encode") { [self] in encodeLoop() }
    }

    deinit { stop() }

    /// A frame to compose into that no waiting picture references; waits for the encoder
    /// to let go of one.
    func canvas() throws(MediaError) -> EncoderFrame {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let failure { throw failure }
            if let free = canvases.first(where: \.isExclusive) { return free }
            if canvases.count <= depth {
                canvases.append(try EncoderFrame(size: canvasSize))
                return canvases[canvases.count - 1]
            }
            condition.wait()
        }
    }

    func write(frame: EncoderFrame, index: Int64) throws(MediaError) {
        let waiting = EncoderFrame(referencing: frame)
        condition.lock()
        defer { condition.unlock() }
        while picturesWaiting >= depth && failure == nil { condition.wait() }
        if let failure { throw failure }
        picturesWaiting += 1
        items.append(.picture(waiting, index))
        condition.broadcast()
    }

    func write(sound: SampleQueue, final: Bool) throws(MediaError) {
        let chunk = SampleQueue()
        let count = sound.count
        sound.move(count, to: chunk)
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        soundSamplesWritten += Int64(count)
        items.append(.sound(chunk, final: final))
        condition.broadcast()
    }

    /// Everything queued encoded, then the sink's own finish; its failure, if any, thrown here.
    func finishWriting() throws(MediaError) {
        condition.lock()
        items.append(.finish)
        condition.broadcast()
        condition.unlock()
        thread?.join()
        thread = nil
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
    }

    /// Ends the thread after the item it is on; what waits is let go and the sink left as it is.
    func stop() {
        condition.lock()
        stopping = true
        items.removeAll()
        condition.broadcast()
        condition.unlock()
        thread?.join()
        thread = nil
    }

    private func encodeLoop() {
        // The samples of sound the sink has not taken yet (whole encoder frames go at a time).
        let sound = SampleQueue()
        while true {
            condition.lock()
            while items.isEmpty && !stopping { condition.wait() }
            if stopping { condition.unlock(); return }
            var item: Item? = items.removeFirst()
            condition.unlock()
            let wasPicture: Bool
            if case .picture = item { wasPicture = true } else { wasPicture = false }
            do throws(MediaError) {
                switch item! {
                case let .picture(frame, index):
                    try sink.write(frame: frame, index: index)
                case let .sound(chunk, final):
                    chunk.move(chunk.count, to: sound)
                    try sink.write(sound: sound, final: final)
                case .finish:
                    try sink.finishWriting()
                    return
                }
            } catch {
                condition.lock()
                failure = failure ?? error
                condition.broadcast()
                condition.unlock()
                return
            }
            // The picture's reference goes before the composer is told: a canvas it waits
            // for is then free when it looks.
            item = nil
            condition.lock()
            if wasPicture { picturesWaiting -= 1 }
            condition.broadcast()
            condition.unlock()
        }
    }
}
