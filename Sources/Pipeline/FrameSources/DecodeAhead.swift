import Foundation
import MediaIO

/// A file's pictures decoded on a thread of its own, a few ahead of the composer: the two
/// inputs decode side by side and beside compositing and encoding instead of in turn. The
/// lead also lets the decoder let go of a picture before it is composed (it keeps the ones
/// later pictures are predicted from), so more can be composed in place.
// Sendable: its queue, outcome and stop under `condition`.
final class DecodeAhead: @unchecked Sendable {
    let reader: VideoReader
    private let depth: Int
    private let condition = NSCondition()
    private var ready: [VideoPicture] = []
    /// Set once the reader has ended: nil at the end of the stream, or its error.
    private var outcome: Result<Void, MediaError>?
    private var stopping = false
    private var thread: OwnedThread?

    init(_ reader: VideoReader, depth: Int = 3) {
        self.reader = reader
        self.depth = depth
        thread = OwnedThread(name: "dualcam-decode") { [self] in decodeLoop() }
    }

    deinit { stop() }

    /// The next picture, or nil at the end of the stream; waits for the decoder.
    func next() throws(MediaError) -> VideoPicture? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && outcome == nil { condition.wait() }
        if !ready.isEmpty {
            let picture = ready.removeFirst()
            condition.signal()
            return picture
        }
        if case let .failure(error) = outcome { throw error }
        return nil
    }

    /// Ends the decoding thread and waits for it (the reader is then the caller's again).
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        thread?.join()
    }

    private func decodeLoop() {
        while true {
            condition.lock()
            while ready.count >= depth && !stopping { condition.wait() }
            if stopping { outcome = outcome ?? .success(()); condition.unlock(); return }
            condition.unlock()
            let result: Result<VideoPicture?, MediaError>
            do { result = .success(try reader.next()) } catch { result = .failure(error) }
            condition.lock()
            switch result {
            case let .success(picture?): ready.append(picture)
            case .success(nil): outcome = .success(())
            case let .failure(error): outcome = .failure(error)
            }
            condition.broadcast()
            let ended = outcome != nil
            condition.unlock()
            if ended { return }
        }
    }
}
