import CFFmpeg
import Foundation

/// Pulls decoded frames of one stream: reads packets, feeds the decoder, drains it at the
/// end. A packet the decoder rejects is skipped and counted, as players conceal it; a
/// container that cannot be read to its end is an error.
final class StreamDecoder {
    let input: InputContext
    let streamIndex: Int32
    let codec: CodecContext
    private let packet = Packet()
    private var draining = false
    private(set) var finished = false
    private(set) var damagedPackets = 0
    private(set) var lastError: Int32 = 0

    init(input: InputContext, streamIndex: Int32, threads: Int32 = 0) throws(MediaError) {
        self.input = input
        self.streamIndex = streamIndex
        codec = try input.openDecoder(stream: streamIndex, threads: threads)
    }

    deinit { dropHeld() }

    /// Packets read past while skipping, from the last keyframe on: decoded once the skip
    /// ends (with the packet that ended it), so the first picture wanted has its references.
    private var held: [UnsafeMutablePointer<AVPacket>] = []
    private var skipBefore: Int64?

    /// From here on, packets before `pts` (the stream's time base) are read but not decoded,
    /// except those from the last keyframe before the first packet at or after it (or from
    /// here, when no keyframe comes before it): the pictures before it cost a read, not a
    /// decode (the join of an intermediate whose first part the take's own file holds).
    func skipPackets(before pts: Int64) { skipBefore = pts }

    private func dropHeld() {
        for p in held {
            var owned: UnsafeMutablePointer<AVPacket>? = p
            av_packet_free(&owned)
        }
        held.removeAll()
    }

    /// Moves `p`'s packet to the end of `held`.
    private func hold(_ p: UnsafeMutablePointer<AVPacket>) {
        let kept = allocated(av_packet_alloc(), "a packet")
        av_packet_move_ref(kept, p)
        held.append(kept)
    }

    /// Whether the packet just read is one to hold back (the skip still on): every one since
    /// the skip began (the decoder goes on from where it was) or since the last keyframe. When
    /// the skip ends at it, the held packets go to the decoder before it.
    private func holdsBack(_ p: UnsafeMutablePointer<AVPacket>) -> Bool {
        guard let skip = skipBefore else { return false }
        let pts = p.pointee.pts != AVCode.noPTS ? p.pointee.pts : p.pointee.dts
        if pts != AVCode.noPTS && pts < skip {
            if p.pointee.flags & AV_PKT_FLAG_KEY != 0 { dropHeld() }
            hold(p)
            return true
        }
        skipBefore = nil
        guard !held.isEmpty else { return false }
        hold(p)
        takeHeld(into: p)
        return false
    }

    /// Moves the next held packet into `p`.
    private func takeHeld(into p: UnsafeMutablePointer<AVPacket>) {
        var first: UnsafeMutablePointer<AVPacket>? = held.removeFirst()
        av_packet_move_ref(p, first!)
        av_packet_free(&first)
    }

    /// Damaged frames in a row past which a stream counts as undecodable, not damaged:
    /// concealing them would only spin.
    static let damagedInARowLimit = 1000
    private var damagedInARow = 0

    /// Fills `frame` with the next decoded frame; false at the end of the stream.
    func next(into frame: Frame) throws(MediaError) -> Bool {
        while !finished {
            let rc = avcodec_receive_frame(codec.pointer, frame.pointer)
            if rc >= 0 { damagedInARow = 0; return true }
            if rc == AVCode.eof { finished = true; return false }
            if rc != AVCode.again {
                // A broken frame: remember it, keep going.
                damagedPackets += 1
                lastError = rc
                damagedInARow += 1
                if damagedInARow > Self.damagedInARowLimit {
                    throw .undecodable(path: input.path, reason: "\(damagedInARow) damaged frames in a row (\(averrorText(rc)))")
                }
                continue
            }
            if draining { finished = true; return false }
            try feed()
        }
        return false
    }

    private var packetPending = false

    private func feed() throws(MediaError) {
        if !packetPending && skipBefore == nil && !held.isEmpty {
            takeHeld(into: packet.pointer)
        } else if !packetPending {
            while true {
                let rc = av_read_frame(input.pointer, packet.pointer)
                if rc < 0 {
                    // The demuxer gives up only on a cut-off or mangled container: what is
                    // left would silently be a shorter video, so it is an error.
                    if rc != AVCode.eof {
                        throw .damaged(path: input.path, reason: averrorText(rc))
                    }
                    avcodec_send_packet(codec.pointer, nil)
                    draining = true
                    return
                }
                if packet.pointer.pointee.stream_index == streamIndex {
                    if holdsBack(packet.pointer) { continue }
                    // Cut short by the end of the file or a read error.
                    if packet.pointer.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 { damagedPackets += 1 }
                    break
                }
                packet.unref()
            }
        }
        let sent = avcodec_send_packet(codec.pointer, packet.pointer)
        // EAGAIN: the decoder has output to give first; the same packet goes in next time.
        packetPending = sent == AVCode.again
        if packetPending { return }
        packet.unref()
        if sent < 0 {
            damagedPackets += 1
            lastError = sent
            damagedInARow += 1
            if damagedInARow > Self.damagedInARowLimit {
                throw .undecodable(path: input.path, reason: "\(damagedInARow) damaged packets in a row (\(averrorText(sent)))")
            }
        }
    }
}
