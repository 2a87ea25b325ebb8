import CFFmpeg
import Foundation

/// While a take goes on in its intermediate (its encoder fell behind real time), encodes the
/// intermediate's pictures as the take asked, on a thread of its own at the encoders' level,
/// into the take's own file after its last picture: the take's file grows at the encoder's
/// full speed on whatever CPU the picture leaves, and the stop leaves only what it has not
/// reached to encode. The intermediate stays whole and the join after the stop skips what
/// the take's file holds, so nothing here is needed for the take to be kept: a failure, a
/// memory bound reached or the stop just end it.
///
/// It takes the intermediate's packets as they are encoded (references, no copy), decodes
/// them, and writes into the take's file only between `start` and `stop`, one packet at a
/// time under `fileAccess`. At the stop its encoder's last frames are left inside (a flush
/// on a busy machine, at the encoders' level, would hold the stop up); let go before it, it
/// writes them out.
// Sendable: the queue, and the outcome under the queue's lock; the file written under
// `fileAccess`; the codecs the thread's own.
public final class IntermediateCatchUp: @unchecked Sendable {
    /// What it did, once stopped.
    public struct Outcome: Sendable, Equatable {
        /// Pictures of the intermediate now in the take's own file.
        public var frames = 0
        /// The last slot the take's file holds (-1: none).
        public var lastSlot: Int64 = -1
        /// Why it ended before the stop, if it did.
        public var endedEarly: String?
        /// Its thread has nothing more to do (let go and drained, or failed).
        public var idle = false
    }

    /// Packets not yet decoded, bounded by their bytes. Closed `afterQueued` once it lets go
    /// (its memory bound, a failure: no packet is taken any more, the rest waits for the
    /// stop), `now` at the stop.
    private let queue: HandoffQueue<UnsafeMutablePointer<AVPacket>>
    private var outcome = Outcome()
    private let fileAccess = NSLock()
    /// Whether the take's file is still this one's to write to.
    private var mayWrite = true
    private var thread: OwnedThread?

    /// The intermediate's picture parameters (its encoder's), owned.
    private let pictures: UnsafeMutablePointer<AVCodecParameters>
    private let pictureBase: AVRational
    private let settings: VideoEncoderSettings
    private let takeParameterSets: [[UInt8]]?
    private let decoderThreads: Int32

    /// `intermediate`: the intermediate's picture encoder (its packets come through `offer`).
    /// `take`: the take's own encoder, whose settings and parameter sets the packets written
    /// must have. `byteLimit`: the packets it may hold unencoded before it lets go.
    public init(intermediate: VideoEncoder, take: VideoEncoder, decoderThreads: Int, byteLimit: Int) throws(MediaError) {
        pictures = allocated(avcodec_parameters_alloc(), "codec parameters")
        pictureBase = intermediate.timeBase
        settings = take.settings
        takeParameterSets = NALUnits.decodingParameterSets(of: take.context.pointer.pointee)
        self.decoderThreads = Int32(decoderThreads)
        queue = HandoffQueue(costLimit: byteLimit, cost: { Int($0.pointee.size) }, overflow: .refuseNew)
        try check(avcodec_parameters_from_context(pictures, intermediate.context.pointer)) {
            .encoderFailed(name: "the catch-up's decoder", reason: $0)
        }
    }

    deinit {
        Self.free(queue.close(.now))
        var owned: UnsafeMutablePointer<AVCodecParameters>? = pictures
        avcodec_parameters_free(&owned)
    }

    /// The packets it may hold unencoded: an eighth of the memory, at most 512 MiB (at 4K,
    /// 15-25 MB a second of intermediate, a minute or more of a backlog).
    public static var defaultByteLimit: Int {
        let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
        return max(32 << 20, min(512 << 20, physical / 8))
    }

    /// Takes a reference to one of the intermediate's picture packets (its encoder's time
    /// base), on the intermediate's thread: it never waits for this one's.
    public func offer(_ packet: UnsafeMutablePointer<AVPacket>) {
        guard queue.closing == nil else { return }
        guard let copy = av_packet_clone(packet) else {
            letGo("out of memory", byOffer: true)
            return
        }
        switch queue.offer(copy) {
        case .queued: return
        case let .overflowed(_, bytesQueued):
            Self.free([copy])
            letGo("it held \(bytesQueued >> 20) MiB of the intermediate's pictures it had not reached", byOffer: true)
        case .closed:
            Self.free([copy])
        }
    }

    /// Takes no more packets; the first reason is the one kept. `dropping`: nor decodes those
    /// it holds (a failure). `byOffer`: a stop that came since the offer found the queue open
    /// ended it first, without a reason, as if the offer had come after it.
    private func letGo(_ why: String, dropping: Bool = false, byOffer: Bool = false) {
        let dropped = queue.withLock { queued -> [UnsafeMutablePointer<AVPacket>] in
            if byOffer && queued.closing != nil { return [] }
            outcome.endedEarly = outcome.endedEarly ?? why
            return queued.close(dropping ? .now : .afterQueued)
        }
        Self.free(dropped)
    }

    /// Starts the thread. `ready` runs on it first and returns once the take's file is free
    /// to write to (its own encoder done with it), and the last slot it holds (nil: do not
    /// catch up, the take's encoder failed). From then until `stop` returns, `writer` (the
    /// take's file's) is lent to this thread alone.
    public func start(into writer: MovWriter, ready: @escaping @Sendable () -> Int64?) {
        let lent = LentWriter(writer: writer)
        thread = OwnedThread(name: "dualcam-catchup") { [self] in
            ThreadPriority.lowerCurrentThreadToEncoders()
            run(ready: ready, write: { (p) throws(MediaError) in try lent.writer.writeVideo(p) },
                flush: { () throws(MediaError) in try lent.writer.flushFragment() })
        }
    }

    /// The take's file's writer on its way to the thread it is lent to.
    // Sendable: touched by one thread at a time (the owner's before `start`, the catch-up's
    // until `stop`).
    private struct LentWriter: @unchecked Sendable { let writer: MovWriter }

    /// Ends it: from here on nothing is written into the take's file (a packet being written
    /// is finished first). Returns at once otherwise: the thread ends after what it is doing,
    /// by itself. What the take's file holds, and why it ended early if it did.
    public func stop() -> Outcome {
        Self.free(queue.close(.now))
        fileAccess.lock()
        mayWrite = false
        fileAccess.unlock()
        return progress
    }

    /// What it has done so far.
    public var progress: Outcome { queue.withLock { _ in outcome } }

    /// Waits for the thread to end (after `stop`: the frames its encoder held done), at most
    /// `timeout` seconds.
    @discardableResult
    public func waitUntilEnded(timeout: Double) -> Bool { thread?.join(timeout: timeout) ?? true }

    /// `flush`: what the muxer holds goes on disk. With no sound after the switch, the
    /// muxer's interleaving would hold the pictures for 10 s; each second of them is put on
    /// disk instead, so a kill loses at most that (the intermediate has it all the same).
    private func run(ready: () -> Int64?, write: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void,
                     flush: () throws(MediaError) -> Void) {
        // Its codecs end with it, on this thread, after the stop: closing an encoder waits
        // for the frames inside it, at the encoders' level.
        defer { queue.withLock { _ in outcome.idle = true } }
        guard let takeLastSlot = ready() else {
            letGo("the take's own encoder failed")
            return
        }
        queue.withLock { _ in outcome.lastSlot = takeLastSlot }
        do throws(MediaError) {
            let (decoder, encoder) = try openCodecs()
            let frame = Frame()
            var lastSlot = takeLastSlot
            func deliver(_ p: UnsafeMutablePointer<AVPacket>) throws(MediaError) {
                fileAccess.lock()
                defer { fileAccess.unlock() }
                guard mayWrite else { return }
                let slot = p.pointee.pts
                try write(p)
                let frames = queue.withLock { _ in
                    outcome.frames += 1
                    outcome.lastSlot = max(outcome.lastSlot, slot)
                    return outcome.frames
                }
                if frames % Int(settings.framesPerSecond) == 0 { try flush() }
            }
            /// Encodes the pictures the decoder has ready that the take's file does not hold yet.
            func encodeDecoded() throws(MediaError) {
                while avcodec_receive_frame(decoder.pointer, frame.pointer) >= 0 {
                    defer { av_frame_unref(frame.pointer) }
                    let f = frame.pointer.pointee
                    guard f.format == AV_PIX_FMT_YUV420P.rawValue, Int(f.width) == settings.size.width,
                          Int(f.height) == settings.size.height else {
                        throw .encoderFailed(name: "the catch-up's decoder", reason: "a picture that is not \(settings.size) I420")
                    }
                    let stamp = f.best_effort_timestamp != AVCode.noPTS ? f.best_effort_timestamp : f.pts
                    guard stamp != AVCode.noPTS else { continue }
                    let slot = Int64((Double(stamp) * av_q2d(pictureBase) * Double(settings.framesPerSecond)).rounded())
                    guard slot > lastSlot else { continue }
                    lastSlot = slot
                    try encoder.send(frame.pointer, frameIndex: slot, sink: deliver)
                }
            }
            while let packet = queue.next() {
                defer {
                    var owned: UnsafeMutablePointer<AVPacket>? = packet
                    av_packet_free(&owned)
                }
                let sent = avcodec_send_packet(decoder.pointer, packet)
                guard sent >= 0 else { throw .encoderFailed(name: "the catch-up's decoder", reason: averrorText(sent)) }
                try encodeDecoded()
            }
            // Let go with nothing left to decode: what the decoder and the encoder hold goes in
            // too, so the take's file reaches as far as this got.
            guard queue.closing == .afterQueued else { return }
            avcodec_send_packet(decoder.pointer, nil)
            try encodeDecoded()
            try encoder.encode(nil, sink: deliver)
            fileAccess.lock()
            defer { fileAccess.unlock() }
            if mayWrite { try flush() }
        } catch {
            letGo(error.description, dropping: true)
        }
    }

    /// The decoder of the intermediate's pictures and an encoder as the take's, at the
    /// encoders' level; thrown when its packets could not continue the take's track.
    private func openCodecs() throws(MediaError) -> (CodecContext, VideoEncoder) {
        let decoder = try openDecoder()
        let opening = settings
        let encoder = try ThreadPriority.madeAtEncoderLevel(poolThreads: opening.poolThreads) { () throws(MediaError) in
            try VideoEncoder(settings: opening)
        }
        guard let sets = NALUnits.decodingParameterSets(of: encoder.context.pointer.pointee), !sets.isEmpty, sets == takeParameterSets else {
            throw .encoderFailed(name: settings.encoder, reason: "its parameter sets are not the take's")
        }
        return (decoder, encoder)
    }

    private static func free(_ packets: [UnsafeMutablePointer<AVPacket>]) {
        for p in packets {
            var owned: UnsafeMutablePointer<AVPacket>? = p
            av_packet_free(&owned)
        }
    }

    private func openDecoder() throws(MediaError) -> CodecContext {
        guard let codec = avcodec_find_decoder(pictures.pointee.codec_id), let ctx = CodecContext(codec: codec) else {
            throw .encoderFailed(name: "the catch-up's decoder", reason: "no decoder for the intermediate's pictures")
        }
        try check(avcodec_parameters_to_context(ctx.pointer, pictures)) {
            .encoderFailed(name: "the catch-up's decoder", reason: $0)
        }
        ctx.pointer.pointee.pkt_timebase = pictureBase
        ctx.pointer.pointee.thread_count = decoderThreads
        try check(avcodec_open2(ctx.pointer, codec, nil)) { .encoderFailed(name: "the catch-up's decoder", reason: $0) }
        return ctx
    }
}
