import Compositor
import Foundation
import MediaIO
#if canImport(Glibc)
import Glibc
#endif

/// How a recording's file is encoded (`--encode`).
package enum EncodeMode: String, Sendable, CaseIterable {
    /// As the take goes, and frames skipped when the encoder cannot keep up.
    case live
    /// Every frame into a fast intermediate, encoded as asked after the stop.
    case after
    /// As the take goes while the encoder keeps up; from the first slot it cannot take in
    /// time, into the intermediate, the rest encoded after the stop.
    case auto
}

/// The take's file when every frame is to be kept (`--encode auto` or `after`). While the
/// encoder keeps up, frames and sound go to it on a thread below the picture's priority
/// (`BackgroundEncoder`); from the first frame it has no room for (or from the start with
/// `after`), to the intermediate (`IntermediateFile`), encoded here on the queue's thread at
/// full priority, the sound encoder handed over so the sound runs on packet for packet. The
/// file is joined to it after the stop (`RecordingFile.finalize`).
final class KeepingSink: Sink {
    let file: RecordingFile
    private let mode: EncodeMode
    private let worker: BackgroundEncoder
    private(set) var intermediate: IntermediateFile?
    /// Sound after the switch, until the worker hands the sound encoder over with what it held.
    private var soundWaiting = SampleQueue()
    private var soundHandedOver = false
    private var samplesAccepted: Int64 = 0
    private let metadata: MovWriter.Metadata
    /// The take's identity, in its file's tag and the intermediate's.
    private let takeID: String
    /// Told, as the switch is made and before any picture is written to the intermediate, the
    /// slot that found no room and the slot the intermediate starts at (the first one the
    /// encoder had not finished). Said later, after the pictures handed back were encoded, the
    /// line came after the loop's "skipping frames" that the switch's own delay caused, and
    /// named the earlier slot: "skipping at 1.67 s" before "fell behind at 0.00 s".
    private let onSwitch: (_ decidedAt: Int, _ from: Int) -> Void
    /// The intermediate's encoder's threads.
    private let intermediateThreads: Int
    /// Encodes the intermediate's pictures into the take's file while the take goes on
    /// (`--encode auto`); nil before the switch and with `after`.
    private var catchUp: IntermediateCatchUp?
    /// What it had done when the take stopped.
    private(set) var caughtUp: IntermediateCatchUp.Outcome?
    /// Its decoder's threads (`StagePlan.decoderThreads`).
    private let catchUpDecoderThreads: Int

    init(file: RecordingFile, mode: EncodeMode, metadata: MovWriter.Metadata, takeID: String, intermediateThreads: Int,
         catchUpDecoderThreads: Int = 1, onSwitch: @escaping (_ decidedAt: Int, _ from: Int) -> Void) throws(MediaError) {
        self.file = file
        self.intermediateThreads = intermediateThreads
        self.catchUpDecoderThreads = catchUpDecoderThreads
        self.mode = mode
        self.metadata = metadata
        self.takeID = takeID
        self.onSwitch = onSwitch
        worker = try BackgroundEncoder(file: file, depth: mode == .after ? 0 : Self.depth)
    }

    /// Frames the worker may hold before the intermediate takes over: two thirds of a second
    /// at 30 fps. x265's first frame takes it several times longer than the rest; a queue
    /// that short of it would send an idle machine's take to the intermediate.
    static let depth = 20

    /// The slot the intermediate starts at; nil while the take's encoder has kept up.
    var switchedAt: Int? { intermediate?.info.fromFrame }

    var soundSamplesWritten: Int64 { samplesAccepted }

    func write(frame: EncoderFrame, index: Int64) throws(MediaError) {
        if intermediate == nil {
            if mode == .auto, try worker.offer(frame, index: index) { return }
            try switchToIntermediate(at: Int(index))
        }
        try intermediate!.write(frame: frame, index: index)
    }

    func write(sound: SampleQueue, final: Bool) throws(MediaError) {
        samplesAccepted += Int64(sound.count)
        if intermediate == nil {
            try worker.offer(sound: sound, final: final)
            return
        }
        sound.move(sound.count, to: soundWaiting)
        soundEnded = soundEnded || final
        // Until the worker hands the sound encoder over, what comes waits; the end of the
        // sound waits for `finishWriting` rather than hold this thread.
        if !soundHandedOver, let held = worker.handedOver { takeSound(held) }
        if soundHandedOver && !soundEnded { try intermediate!.write(sound: soundWaiting, final: false) }
    }

    /// Whether the last sound has come (it is encoded once the sound encoder is here).
    private var soundEnded = false

    /// The worker's unencoded samples, then what waited.
    private func takeSound(_ held: SampleQueue) {
        soundWaiting.move(soundWaiting.count, to: held)
        soundWaiting = held
        soundHandedOver = true
    }

    /// The worker stops after the frame it is encoding; what it had not begun comes back and
    /// goes to the intermediate first, so the take's file ends at once, not after a backlog
    /// its low priority would take long over on a busy machine.
    private func switchToIntermediate(at slot: Int) throws(MediaError) {
        let handedBack = worker.detach()
        let from = handedBack.lazy.compactMap { item -> Int? in
            if case let .picture(_, index) = item { return Int(index) }
            return nil
        }.first ?? slot
        let opened = try IntermediateFile(take: file.path, takeID: takeID, from: from, takeSettings: file.encoders.video.settings,
                                          audio: file.encoders.audio, metadata: metadata, threads: intermediateThreads)
        intermediate = opened
        onSwitch(slot, from)
        if mode == .auto { startCatchUp(from: opened) }
        for item in handedBack {
            switch item {
            case let .picture(frame, index): try opened.write(frame: frame, index: index)
            case let .sound(chunk, _): chunk.move(chunk.count, to: soundWaiting)
            case .finish: break  // sent only once the queue is done, never before a switch
            }
        }
    }

    /// From the intermediate's first picture on, its packets go to the catch-up too, which
    /// writes into the take's file once the worker has left it.
    private func startCatchUp(from opened: IntermediateFile) {
        guard let catchUp = try? IntermediateCatchUp(intermediate: opened.encoders.video, take: file.encoders.video,
                                                     decoderThreads: catchUpDecoderThreads,
                                                     byteLimit: IntermediateCatchUp.defaultByteLimit) else { return }
        self.catchUp = catchUp
        opened.encoders.subscribe { packet, isVideo in if isVideo { catchUp.offer(packet) } }
        let worker = worker
        catchUp.start(into: file.writer) { worker.lastPictureWhenEnded() }
    }

    /// The catch-up stopped: from here on the take's file is this thread's alone.
    private func stopCatchUp() {
        guard let catchUp, caughtUp == nil else { return }
        caughtUp = catchUp.stop()
    }

    /// After the take is finished: the catch-up's thread has ended (the frames its encoder
    /// held done), within `timeout` seconds.
    func catchUpEnded(timeout: Double) { catchUp?.waitUntilEnded(timeout: timeout) }

    /// The worker done (the take's file then ends where the intermediate begins, or where the
    /// catch-up got to), the intermediate complete, the take's file's last fragment and index
    /// written.
    func finishWriting() throws(MediaError) {
        guard let intermediate else {
            try worker.finish()
            return
        }
        if !soundHandedOver { takeSound(worker.waitForHandover()) }
        worker.waitUntilDone()
        stopCatchUp()
        if let failure = worker.failure { throw failure }
        try intermediate.write(sound: soundWaiting, final: true)
        try intermediate.finishWriting()
        try file.finishWriting(drained: true)
    }

    /// After a failure: what each file holds stays, playable.
    func abandon() {
        stopCatchUp()
        worker.stop()
        intermediate?.abandon()
    }
}

/// Encodes into the take's file on a thread of its own, below the priority of capture and
/// composing (`ThreadPriority.encoderNiceness`), from copies of the frames it is offered,
/// holding at most `depth` of them.
// Sendable: its queue, and its pool and state under the queue's lock (`items.withLock`); the
// file only touched by its thread until that thread has ended.
final class BackgroundEncoder: @unchecked Sendable {
    enum Item {
        case picture(EncoderFrame, Int64)
        case sound(SampleQueue, final: Bool)
        /// Finish what is queued and the file's writing.
        case finish
    }

    /// What the worker has not begun, in order; closed `now` at a detach or a stop. Pictures
    /// are bounded by `free`, not here: a frame is free again once its packet is out of the
    /// encoder, not when the worker takes it.
    private let items = HandoffQueue<Item>(overflow: .refuseNew)
    private var free: [EncoderFrame] = []
    private var ended = false
    /// Asked to stop after the item it is on, empty the picture encoder, hand the sound over.
    private var detaching = false
    private(set) var failureHeld: MediaError?
    /// The sound encoder's unencoded samples, once the worker no longer uses it.
    private var handedOverSound: SampleQueue?
    private let file: RecordingFile
    private var thread: OwnedThread?

    init(file: RecordingFile, depth: Int) throws(MediaError) {
        self.file = file
        for _ in 0..<depth { free.append(try EncoderFrame(size: file.encoders.video.settings.size)) }
        thread = OwnedThread(name: "dualcam-encoder") { [self] in
            ThreadPriority.lowerCurrentThreadToEncoders()
            run()
        }
    }

    var failure: MediaError? { items.withLock { _ in failureHeld } }

    /// Queues a copy of `frame`; false when it holds as many as it may (it is behind).
    func offer(_ frame: EncoderFrame, index: Int64) throws(MediaError) -> Bool {
        let spare = try items.withLock { _ throws(MediaError) -> EncoderFrame? in
            if let failureHeld { throw failureHeld }
            return free.popLast()
        }
        guard let copy = spare else { return false }
        try copy.prepareForWriting()
        copy.view.copy(from: frame.view)
        send(.picture(copy, index))
        return true
    }

    /// Queues every sample in `sound` (which is left empty).
    func offer(sound: SampleQueue, final: Bool) throws(MediaError) {
        if let failure { throw failure }
        let chunk = SampleQueue()
        sound.move(sound.count, to: chunk)
        send(.sound(chunk, final: final))
    }

    /// Stops the worker and returns, at once, the pictures inside the encoder (sent, no packet
    /// out yet, the one being sent included) and the items it had not begun, in order: they go
    /// to the intermediate rather than wait for an encoder this slow to empty. The sound
    /// encoder is handed over with them (`handedOver`). The worker writes out what came out
    /// of the encoder meanwhile, then ends: the file may hold a frame or two the intermediate
    /// holds too, which the join leaves out.
    func detach() -> [Item] {
        let rest = items.withLock { queued in
            detaching = true
            return queued.close(.now)
        }
        let inside = items.withLock(when: { _ in !encodingSound }) { _ in
            // The picture being sent is still the encoder's to read (and its fields the
            // worker's to set): the intermediate takes a copy of that one.
            let inside = inFlight.map { entry -> Item in
                guard entry.index == sending else { return .picture(entry.frame, entry.index) }
                let copy = EncoderFrame.camera(size: entry.frame.size)
                copy.view.copy(from: entry.frame.view)
                return .picture(copy, entry.index)
            }
            inFlight.removeAll()
            if handedOverSound == nil { handedOverSound = sound }
            return inside
        }
        return inside + rest
    }

    /// Pictures sent to the encoder whose packets have not come out, oldest first.
    private var inFlight: [(frame: EncoderFrame, index: Int64)] = []
    /// The sound encoder's samples not yet encoded; the worker's until handed over.
    private let sound = SampleQueue()
    /// The worker is in the sound encoder (the handover waits for it).
    private var encodingSound = false
    /// The picture the worker is sending to the encoder, if any.
    private var sending: Int64?

    /// Once detached or stopped, the worker takes nothing more: what comes is not kept.
    private func send(_ item: Item) { items.offer(item) }

    /// The sound encoder's samples not yet encoded, once handed over; nil before.
    var handedOver: SampleQueue? { items.withLock { _ in handedOverSound } }

    /// Waits until the sound is handed over (at a detach, or the worker done), and returns it.
    func waitForHandover() -> SampleQueue {
        items.withLock(when: { _ in handedOverSound != nil }) { _ in handedOverSound! }
    }

    /// Waits until the worker's thread has ended (after a detach: what came out of the encoder
    /// written out).
    func waitUntilDone() { thread?.join() }

    /// From another thread than the owner's: waits until the worker has left the file (it
    /// does nothing after handing over at its end), and returns the last slot the file holds;
    /// nil when the worker failed.
    func lastPictureWhenEnded() -> Int64? {
        items.withLock(when: { _ in ended }) { _ in failureHeld == nil ? file.encoders.lastPictureOut : nil }
    }

    /// Finishes the file's writing on the worker and waits for it.
    func finish() throws(MediaError) {
        send(.finish)
        thread?.join()
        if let failure { throw failure }
    }

    /// Ends the worker after what it is doing; the file is left as it stands.
    func stop() {
        items.withLock { queued in
            ended = true
            queued.close(.now)
        }
        thread?.join()
    }

    private func run() {
        while let item = items.next(taking) {
            do throws(MediaError) {
                switch item {
                case let .picture(frame, index):
                    defer { items.withLock { _ in sending = nil } }
                    try file.write(frame: frame, index: index)
                    let out = file.encoders.lastPictureOut
                    items.withLock { _ in
                        // After a detach the pictures inside the encoder are the intermediate's.
                        while !detaching, let first = inFlight.first, first.index <= out { free.append(inFlight.removeFirst().frame) }
                    }
                case let .sound(chunk, final):
                    defer { items.withLock { _ in encodingSound = false } }
                    chunk.move(chunk.count, to: sound)
                    try file.write(sound: sound, final: final)
                case .finish:
                    try file.finishWriting(drained: false)
                    handOver()
                    return
                }
            } catch {
                fail(error)
                handOver()
                return
            }
        }
        // Detached or stopped.
        let flush = items.withLock { _ in detaching && !ended }
        // What came out of the encoder goes on disk at once: the file ends there.
        if flush {
            do throws(MediaError) { try file.writer.flushFragment() } catch { fail(error) }
        }
        handOver()
    }

    /// What the worker has in hand, marked as it leaves the queue: a detach that comes next
    /// finds the picture among those inside the encoder, or waits for the sound.
    private func taking(_ item: Item) -> Item {
        switch item {
        case let .picture(frame, index):
            inFlight.append((frame, index))
            sending = index
        case .sound: encodingSound = true
        case .finish: break
        }
        return item
    }

    private func fail(_ error: MediaError) {
        items.withLock { _ in failureHeld = failureHeld ?? error }
    }

    /// The worker is done: the sound (if not handed over already) and its end are known.
    private func handOver() {
        items.withLock { _ in
            ended = true
            if handedOverSound == nil { handedOverSound = sound }
            free.removeAll()
        }
    }
}
