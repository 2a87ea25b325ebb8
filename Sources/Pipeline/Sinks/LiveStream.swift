import Foundation
import MediaIO

/// `record --stream URL`: the recording's own encoded picture and sound, sent live as well
/// (nothing is encoded twice). The encoder thread hands each packet over by reference and
/// returns; a thread of its own connects, writes and, when the network drops or the
/// server goes away, reconnects with backoff, resuming at the next keyframe (every 2 s).
/// Nothing it does waits on the recording or makes it wait: while it cannot send, packets
/// beyond a few seconds are let go, never queued without end.
// Sendable: its queue, and its state and counts under the queue's lock (`queue.withLock`).
public final class LiveStream: @unchecked Sendable {
    /// Where it sends, as it may be shown (its secrets masked: `LiveStreamWriter.masked`).
    public let url: String
    private let target: String
    private let parameters: StreamParameters
    private let log: (String) -> Void
    /// Packets waiting to be sent, by reference; closed (after them) at the stop. Over its
    /// bound, what waits is let go (`dropQueued`): sending resumes at a keyframe.
    private let queue = HandoffQueue<StreamPacket>(costLimit: LiveStream.queueLimitBytes, cost: { $0.size },
                                                   overflow: .dropQueued)
    /// Until a keyframe comes, nothing is sent (after a connection, or packets let go).
    private var awaitingKeyframe = true
    /// Sound that came while waiting for a keyframe: what is at or after it is sent with it.
    private var heldSound: [StreamPacket] = []
    /// The sound sent last (new references): a connection found lost had taken it, and the
    /// next one's keyframe may be earlier.
    private var recentlySent: [StreamPacket] = []
    /// That sound, after a loss: sent again with the keyframe it goes with (not counted as
    /// dropped when it is older).
    private var resendable: [StreamPacket] = []
    private var writer: LiveStreamWriter?
    /// The writer while it connects, so that a stop can cut the attempt short.
    private var connecting: LiveStreamWriter?
    private var thread: OwnedThread?
    private var state = State.connecting
    private var counts = Counts()

    public enum State: String, Sendable { case connecting, live, reconnecting, failed }

    struct Counts {
        var packetsSent = 0, bytesSent = 0, packetsDropped = 0, connections = 0, outages = 0
        var lastFailure: String?
    }

    /// How long one connection attempt or one write may take.
    static let connectTimeout = 5.0
    static let writeTimeout = 3.0
    /// Waits between attempts: doubling from the first to the last, then the last again.
    static let backoff = [0.5, 1.0, 2.0, 4.0]
    /// What may wait to be sent: about 5 s of a 1080p stream at the default quality.
    static let queueLimitBytes = 8 << 20

    /// Checks `url` (scheme, protocol in this FFmpeg, codec the container carries) without
    /// connecting: a wrong one is one line before anything is recorded.
    public static func check(url target: String, hevc: Bool) throws(MediaError) {
        let url = LiveStreamWriter.masked(target)
        guard let container = LiveStreamWriter.container(for: target) else {
            throw .cannotWrite(path: url, reason: "--stream takes srt://, rtmp://, rtmps://, udp:// or tcp:// URLs")
        }
        guard LiveStreamWriter.hasProtocol(for: target) else {
            throw .cannotWrite(path: url, reason: "this FFmpeg has no protocol for it (ffmpeg -protocols lists them)")
        }
        if container == "flv" && hevc {
            throw .cannotWrite(path: url, reason: "RTMP carries H.264 with this FFmpeg, not HEVC: add --codec h264, or stream "
                               + "over srt://")
        }
    }

    public init(url: String, parameters: StreamParameters, log: @escaping (String) -> Void) throws(MediaError) {
        try Self.check(url: url, hevc: parameters.isHEVC)
        self.url = LiveStreamWriter.masked(url)
        target = url
        self.parameters = parameters
        self.log = log
    }

    /// Starts connecting; packets offered meanwhile wait (within the limit).
    public func start() {
        thread = OwnedThread(name: "dualcam-stream") { [self] in sendLoop() }
    }

    /// A packet the encoder made (from the encoder's thread): kept by reference, sent in turn.
    public func offer(_ packet: StreamPacket) {
        queue.offer(packet) { letGo in dropQueued(letGo) }
    }

    /// Lets go of what waited (`letGo`, the network behind or gone): sending resumes at a
    /// keyframe. Caller holds the queue's lock.
    /// `keepingSound` (a connection lost or made): the newest sound, sent or not, is held for
    /// that keyframe. The encoder hands out sound before the picture it goes with: let go with
    /// the rest, or taken by a connection that was lost by then (SRT notices after 5 s), the
    /// stream came back with its first 85-107 ms silent (its server killed at 3 s of a take and
    /// back at 6 s: lost at the 8 s keyframe, twice in two runs).
    private func dropQueued(_ letGo: [StreamPacket], keepingSound: Bool = false) {
        let kept = keepingSound ? Array((heldSound + letGo.filter { !$0.isVideo }).suffix(Self.heldSoundLimit)) : []
        resendable = keepingSound ? Array((resendable + recentlySent).suffix(Self.recentSoundKept)) : []
        recentlySent.removeAll()
        counts.packetsDropped += letGo.count + heldSound.count - kept.count
        heldSound = kept
        awaitingKeyframe = true
    }

    public var currentState: State { queue.withLock { _ in state } }

    /// Sends what is left (a few seconds at most), ends the stream and disconnects.
    public func stop() {
        queue.withLock { queued in
            queued.close(.afterQueued)
            // Not connected: nothing is owed to a server that is not there.
            connecting?.interrupt()
        }
        // What is queued is sent within its time limits; a writer stuck past them is cut.
        if thread?.join(timeout: Self.writeTimeout + Self.connectTimeout + 1) == false {
            queue.withLock { _ in writer }?.interrupt()
            thread?.join(timeout: 2)
        }
    }

    public var summary: LiveStreamSummary {
        queue.withLock { _ in
            LiveStreamSummary(url: url, state: state.rawValue, connections: counts.connections, outages: counts.outages,
                              packetsSent: counts.packetsSent, bytesSent: counts.bytesSent,
                              packetsDropped: counts.packetsDropped, lastFailure: counts.lastFailure)
        }
    }

    private func sendLoop() {
        var attempt = 0
        while true {
            let stop = queue.closing != nil
            if stop && writer == nil { return }
            if writer == nil {
                if stop { return }
                guard connect(attempt: attempt) else {
                    attempt += 1
                    waitBeforeRetry(Self.backoff[min(attempt - 1, Self.backoff.count - 1)])
                    continue
                }
                attempt = 0
            }
            guard let (toSend, w) = queue.next(take) else {
                writer?.finish(timeout: Self.writeTimeout)
                queue.withLock { _ in writer = nil }
                return
            }
            guard let w else { continue }
            for packet in toSend {
                let size = packet.size  // the writer takes the packet's data
                do throws(MediaError) {
                    try w.write(packet, timeout: Self.writeTimeout)
                    queue.withLock { _ in
                        counts.packetsSent += 1
                        counts.bytesSent += size
                    }
                } catch {
                    lose(w, error.description)
                    break
                }
            }
        }
    }

    /// What goes out now that `packet` is the next: nothing while a keyframe is awaited (sound
    /// is held for it), and the writer to send it with. Caller holds the queue's lock: a loss
    /// or a drop cannot come between the packet leaving the queue and this.
    private func take(_ packet: StreamPacket) -> ([StreamPacket], LiveStreamWriter?) {
        var toSend: [StreamPacket] = []
        if !awaitingKeyframe {
            toSend = [packet]
        } else if packet.isVideo && packet.isKeyframe {
            // The sound that goes with the keyframe's picture and after it: the encoder's
            // lookahead hands out sound before the picture it goes with.
            awaitingKeyframe = false
            toSend = [packet] + (resendable + heldSound).filter { $0.seconds >= packet.seconds }
            counts.packetsDropped += heldSound.count { $0.seconds < packet.seconds }
            heldSound.removeAll()
            resendable.removeAll()
        } else if !packet.isVideo {
            // The newest are kept: those nearest the keyframe to come.
            heldSound.append(packet)
            if heldSound.count > Self.heldSoundLimit {
                heldSound.removeFirst()
                counts.packetsDropped += 1
            }
        } else {
            counts.packetsDropped += 1
        }
        if writer != nil {
            recentlySent += toSend.filter { !$0.isVideo }.compactMap { $0.copy() }
            recentlySent.removeFirst(max(0, recentlySent.count - Self.recentSoundKept))
        }
        return (toSend, writer)
    }

    /// Sound packets kept while waiting for a keyframe (about 2 s of AAC).
    static let heldSoundLimit = 96
    /// Sound packets sent kept for a reconnection (about half a second: more than the
    /// encoders hand out sound ahead of its picture).
    static let recentSoundKept = 24

    /// One attempt; says when the stream is lost for the first time and when it is back.
    private func connect(attempt: Int) -> Bool {
        do throws(MediaError) {
            let w = try LiveStreamWriter(url: target, parameters: parameters)
            let stop = queue.withLock { queued in
                connecting = w
                return queued.closing != nil
            }
            defer { queue.withLock { _ in connecting = nil } }
            if stop { return false }
            try w.connect(timeout: Self.connectTimeout)
            let resumed = queue.withLock { queued in
                writer = w
                // A new connection starts at a keyframe: what waited from before it is let go,
                // but for the sound that may go with that keyframe.
                if counts.connections > 0 { dropQueued(queued.removeAll(), keepingSound: true) }
                awaitingKeyframe = true
                counts.connections += 1
                state = .live
                return counts.connections > 1
            }
            log(resumed ? "stream: reconnected to \(url)" : "stream: sending to \(url)")
            return true
        } catch {
            let neverConnected = queue.withLock { _ in
                counts.lastFailure = error.description
                state = counts.connections == 0 ? .connecting : .reconnecting
                return counts.connections == 0
            }
            // Said once: an outage is said when the connection is lost, not at every attempt.
            if neverConnected && attempt == 0 {
                log("stream: cannot connect (\(error)): the recording goes on, trying again with backoff")
            }
            return false
        }
    }

    private func lose(_ w: LiveStreamWriter, _ why: String) {
        w.finish(timeout: 0.5)
        queue.withLock { queued in
            writer = nil
            counts.outages += 1
            counts.lastFailure = why
            state = .reconnecting
            dropQueued(queued.removeAll(), keepingSound: true)
        }
        log("stream: lost (\(why)): the recording goes on, reconnecting with backoff")
    }

    /// Sleeps `seconds` unless a stop comes first; meanwhile packets are let go as they come.
    private func waitBeforeRetry(_ seconds: Double) {
        queue.withLock(when: { $0.closing != nil }, deadline: Date(timeIntervalSinceNow: seconds)) { queued in
            dropQueued(queued.removeAll())
        }
    }
}

public struct LiveStreamSummary: Codable, Sendable {
    public var url: String
    /// At the end: live, reconnecting, or connecting (never connected).
    public var state: String
    /// Connections made, and times a live one was lost.
    public var connections: Int
    public var outages: Int
    public var packetsSent: Int
    public var bytesSent: Int
    /// Packets let go while the stream could not take them (it resumes at a keyframe).
    public var packetsDropped: Int
    public var lastFailure: String?
}

extension OutputRequest {
    /// `--stream URL`: the take's own encoding sent live too. It takes each packet the
    /// encoders hand the muxer (with no file, the take is encoded for it alone).
    package static func stream(url: String) -> OutputRequest {
        OutputRequest(check: { settings, _ throws(MediaError) in try LiveStream.check(url: url, hevc: settings.video.codec == .hevc) },
                      needsEncoding: true) { context throws(MediaError) in
            guard let encoders = context.encoders else { throw .outputUnusable("--stream: nothing is encoded to send") }
            let parameters = try StreamParameters(encoders: encoders)
            let live = try LiveStream(url: url, parameters: parameters, log: context.event)
            encoders.subscribe { packet, isVideo in
                if let kept = StreamPacket(referencing: packet, isVideo: isVideo, parameters: parameters) { live.offer(kept) }
            }
            live.start()
            return live
        }
    }
}

extension LiveStream: LiveOutput {
    var status: String? { currentState.rawValue }
    /// After the file is whole: what the stream still holds goes out (within its time limits).
    func finish(lastSlot: Int?) -> OutputReport {
        stop()
        let summary = summary
        return OutputReport { $0.stream = summary }
    }
}
