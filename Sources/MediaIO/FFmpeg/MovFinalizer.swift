import CFFmpeg
import Foundation

/// Turns a fragmented recording into a regular QuickTime file with its index first, by
/// stream copy (no re-encoding). A recording killed mid-write ends in a fragment cut
/// short: its incomplete samples are left out, everything before them is kept.
public enum MovFinalizer {
    public struct Result: Sendable {
        public var videoFrames = 0
        public var audioPackets = 0
        /// Samples found cut short (a killed recording's last fragment) and left out.
        public var incompleteSamples = 0
        /// Length of the video track written, in seconds.
        public var videoSeconds = 0.0
    }

    /// Writes `destination` (which must not be `source`), an empty file open at `descriptor`,
    /// from `source`; then, with `rest`, the intermediate's pictures encoded as the take asked
    /// and its sound (`IntermediateJoin`).
    public static func remux(from source: String, to destination: String, descriptor: Int32, reportedPath: String,
                             rest: (path: String, info: Intermediate)? = nil, copiesSource: Bool = true,
                             progress: JoinProgress? = nil) throws(MediaError) -> Result {
        let input = try InputContext(path: source)
        let output = try RemuxOutput(path: destination, descriptor: descriptor, reportedPath: reportedPath)
        var map: [Int32: (out: UnsafeMutablePointer<AVStream>, type: AVMediaType)] = [:]
        for i in 0..<Int32(input.pointer.pointee.nb_streams) {
            let st = input.stream(i)
            let type = st.pointee.codecpar.pointee.codec_type
            // Finishing copies every stream or none: another program's fragmented file with a
            // subtitle track lost it, where the help promises a stream copy.
            guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO else {
                let kind = av_get_media_type_string(type).map { String(cString: $0) } ?? "unknown"
                // A data track has no codec FFmpeg names: its tag says what it is (tmcd, a timecode).
                let tag = st.pointee.codecpar.pointee.codec_tag
                let fourcc = String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: tag >> ($0 * 8)) }, as: UTF8.self)
                let named = avcodec_get_name(st.pointee.codecpar.pointee.codec_id).map { String(cString: $0) } ?? "none"
                let codec = named == "none" && tag != 0 ? fourcc : named
                throw .cannotWrite(path: reportedPath, reason: "\(source) has a \(kind) stream (#\(i), \(codec)), which finish "
                                   + "does not copy: nothing was written (ffmpeg -i \(source) -map 0 -c copy NEW copies every stream)")
            }
            map[i] = (try output.addStream(copying: st), type)
        }
        guard let videoOut = map.values.first(where: { $0.type == AVMEDIA_TYPE_VIDEO })?.out else { throw .noVideoStream(path: source) }
        let join = try rest.map { (r) throws(MediaError) in try IntermediateJoin(path: r.path, info: r.info) }
        var keepsOwnPictures = copiesSource
        if let join, !copiesSource || !join.continues(videoOut) {
            // Another encoder's parameter sets: its packets cannot follow the take's own in one
            // track. A take with no picture of its own (all in the intermediate) takes its.
            let ownPictures = copiesSource ? try videoPacketCount(source, limit: 1) > 0 : false
            guard !ownPictures else {
                throw .cannotWrite(path: reportedPath, reason: "the intermediate \(join.path) is encoded unlike the take's "
                                   + "own pictures and cannot follow them; both files are kept as they are")
            }
            try check(avcodec_parameters_from_context(videoOut.pointee.codecpar, join.encoder.context.pointer)) {
                .cannotWrite(path: reportedPath, reason: $0)
            }
            if videoOut.pointee.codecpar.pointee.codec_id == AV_CODEC_ID_HEVC { videoOut.pointee.codecpar.pointee.codec_tag = MovWriter.fourcc("hvc1") }
            keepsOwnPictures = false
        }
        output.copyMetadata(from: input.pointer)
        // The finished take keeps its identity, by which finish and relayout know its
        // companions; an intermediate's tag (what it continues) becomes its take's.
        let comment = av_dict_get(input.pointer.pointee.metadata, "comment", nil, 0).flatMap { $0.pointee.value }.map { String(cString: $0) }
        if let takeID = rest?.info.takeID ?? comment.flatMap(Intermediate.init(tag:))?.takeID {
            av_dict_set(&output.context.pointee.metadata, "comment", Intermediate.takeTag(takeID), 0)
        }
        try output.writeHeader()
        var result = copiesSource
            ? try copyPackets(input, map: map, output: output, reportedPath: reportedPath, keepPictures: keepsOwnPictures) : Copied()
        if let join {
            let audioOut = map.values.first(where: { $0.type == AVMEDIA_TYPE_AUDIO })?.out
            if let audioOut, result.lastAudioDTS != .min {
                join.soundContinues(after: av_rescale_q(result.lastAudioDTS, result.audioTimeBase, audioOut.pointee.time_base))
            }
            if let last = result.lastPictureStart { join.picturesContinue(afterPictureAt: last) }
            try join.write(into: output, video: videoOut, audio: audioOut, progress: progress)
            result.result.videoFrames += join.framesWritten
            result.result.audioPackets += join.soundPacketsWritten
            result.result.videoSeconds = max(result.result.videoSeconds, Double(join.endSlot) / Double(join.info.settings.framesPerSecond))
        }
        guard result.result.videoFrames > 0 else {
            throw .damaged(path: source, reason: "no complete video frame to keep")
        }
        try output.finish()
        return result.result
    }

    /// Complete video packets in `path` (up to where a killed recording was cut), counted up
    /// to `limit`.
    public static func videoPacketCount(_ path: String, limit: Int = .max) throws(MediaError) -> Int {
        let input = try InputContext(path: path)
        let packet = Packet()
        var count = 0
        while count < limit, av_read_frame(input.pointer, packet.pointer) >= 0 {
            defer { packet.unref() }
            let p = packet.pointer.pointee
            if input.stream(p.stream_index).pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO, p.size > 0,
               p.flags & AV_PKT_FLAG_CORRUPT == 0 { count += 1 }
        }
        return count
    }

    /// What `copyPackets` copied, and where the sound ended.
    private struct Copied {
        var result = Result()
        var lastAudioDTS = Int64.min
        var audioTimeBase = AVRational(num: 1, den: 1)
        /// Where the last picture copied starts, in seconds. Its end is no measure of where
        /// the take's pictures end: a fragment flushed with one picture in it reads back with
        /// that picture's duration 0.
        var lastPictureStart: Double?
    }

    /// Copies every complete packet of `input` (pictures only with `keepPictures`), up to the
    /// end or where a killed recording was cut.
    private static func copyPackets(_ input: InputContext, map: [Int32: (out: UnsafeMutablePointer<AVStream>, type: AVMediaType)],
                                    output: RemuxOutput, reportedPath: String, keepPictures: Bool) throws(MediaError) -> Copied {
        let source = input.path
        var copied = Copied()
        var videoEnd: Int64 = 0
        /// Where the last packet read ends in the file.
        var readUpTo: Int64 = 0
        var videoTimeBase = AVRational(num: 1, den: 1)
        // A last fragment cut short (a power cut, a copy stopped midway: a kill leaves it
        // hidden) is left out whole: its pictures come first in it, and kept without the sound
        // after them, the take's sound ended up to half a second before its picture.
        // (Last in the bytes, not only in the chain of boxes: a size damaged in the middle ends
        // the chain early, and what follows the damage is refused below, not cut.)
        let cutShort = lastFragmentOffset(source).flatMap {
            isCutShortLastFragment(source, at: $0) && fragmentHeader(in: source, after: $0 + 8) == nil ? $0 : nil
        }
        let packet = Packet()
        while true {
            let rc = av_read_frame(input.pointer, packet.pointer)
            // The end, or the point where a killed recording was cut (inside its last
            // fragment): what came before is kept. Any other read error keeps the fragmented
            // file as it is rather than put a shortened copy in its place.
            if rc < 0 {
                if rc == dc_averror_eof() { break }
                let at = input.pointer.pointee.pb.map { avio_tell($0) } ?? 0
                if let last = lastFragmentOffset(source), at >= last { break }
                throw .damaged(path: source, reason: "cannot read past byte \(at) (\(averrorText(rc))): "
                               + "the fragmented file is kept as it is")
            }
            defer { packet.unref() }
            let p = packet.pointer
            guard let (out, type) = map[p.pointee.stream_index] else { continue }
            if p.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 || p.pointee.size <= 0 || cutShort.map({ p.pointee.pos >= $0 }) == true {
                copied.result.incompleteSamples += 1
                continue
            }
            if p.pointee.pos >= 0 { readUpTo = max(readUpTo, p.pointee.pos + Int64(p.pointee.size)) }
            let inTimeBase = input.stream(p.pointee.stream_index).pointee.time_base
            if type == AVMEDIA_TYPE_VIDEO {
                guard keepPictures else { continue }
                copied.result.videoFrames += 1
                videoTimeBase = inTimeBase
                if p.pointee.pts != AVCode.noPTS {
                    videoEnd = max(videoEnd, p.pointee.pts + max(p.pointee.duration, 0))
                    let start = Double(p.pointee.pts) * av_q2d(inTimeBase)
                    copied.lastPictureStart = max(copied.lastPictureStart ?? start, start)
                }
            } else {
                copied.result.audioPackets += 1
                copied.audioTimeBase = inTimeBase
                if p.pointee.dts != AVCode.noPTS { copied.lastAudioDTS = max(copied.lastAudioDTS, p.pointee.dts) }
            }
            av_packet_rescale_ts(p, inTimeBase, out.pointee.time_base)
            p.pointee.stream_index = out.pointee.index
            p.pointee.pos = -1
            try output.write(p)
        }
        // The demuxer takes a box whose size runs past the end of the file for the end: a
        // damaged size in the middle would leave every fragment after it out.
        if let later = fragmentHeader(in: source, after: readUpTo), !isCutShortLastFragment(source, at: later) {
            // One offset said twice ("ends the reading at byte N, before the fragment at byte N")
            // told nothing: there the fragment itself is what could not be read.
            let damage = later == readUpTo ? "the fragment at byte \(later) could not be read"
                : "a damaged box ends the reading at byte \(readUpTo), before the fragment at byte \(later)"
            throw .damaged(path: source, reason: damage + ": the fragmented file is kept as it is")
        }
        copied.result.videoSeconds = Double(videoEnd) * av_q2d(videoTimeBase)
        return copied
    }

    /// The offset of the first fragment header (a `moof` box holding an `mfhd`) at or after
    /// `offset` in `path`, read in chunks; nil when there is none.
    static func fragmentHeader(in path: String, after offset: Int64) -> Int64? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard (try? file.seek(toOffset: UInt64(max(offset, 0)))) != nil else { return nil }
        let pattern = Array("moof".utf8), child = Array("mfhd".utf8)
        var position = max(offset, 0), carry: [UInt8] = []
        while let chunk = try? file.read(upToCount: 1 << 20), !chunk.isEmpty {
            let bytes = carry + [UInt8](chunk), base = position - Int64(carry.count)
            if bytes.count >= 16 {
                for i in 4...(bytes.count - 12) where bytes[i] == pattern[0] && Array(bytes[i..<(i + 4)]) == pattern
                    && Array(bytes[(i + 8)..<(i + 12)]) == child {
                    return base + Int64(i - 4)
                }
            }
            position += Int64(chunk.count)
            carry = Array(bytes.suffix(15))
        }
        return nil
    }

    /// Whether the fragment at `offset` is where a killed recording was cut: its moof, or the
    /// mdat after it, runs past the end of the file (a fragment is written in one piece, so
    /// only the last one can be cut short).
    static func isCutShortLastFragment(_ path: String, at offset: Int64) -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        guard let end = try? file.seekToEnd(), (try? file.seek(toOffset: UInt64(offset))) != nil,
              let moof = try? file.read(upToCount: 8), moof.count == 8 else { return true }
        let moofSize = UInt64(moof.prefix(4).reduce(0) { $0 << 8 | UInt32($1) })
        guard UInt64(offset) + moofSize + 8 <= end, (try? file.seek(toOffset: UInt64(offset) + moofSize)) != nil,
              let mdat = try? file.read(upToCount: 8), mdat.count == 8 else { return true }
        let mdatSize = UInt64(mdat.prefix(4).reduce(0) { $0 << 8 | UInt32($1) })
        return UInt64(offset) + moofSize + mdatSize > end
    }

    /// Where the file's last fragment (moof) starts; nil when it has none.
    static func lastFragmentOffset(_ path: String) -> Int64? {
        (try? MovAtoms.topLevel(path))?.last { $0.type == "moof" }?.offset
    }

    /// Replaces the fragmented recording at `path` with its finalised form, atomically:
    /// written beside it, put on disk, renamed over it. On any failure the fragmented file
    /// is left as it was. `holding`: the caller's descriptor that holds the recording's lock.
    /// The result's `lock` holds the finished file's lock for as long as the caller keeps it.
    public static func finalizeInPlace(_ path: String, holding: Int32, rest: (path: String, info: Intermediate)? = nil,
                                       progress: JoinProgress? = nil) throws(MediaError) -> (Result, lock: AtomicOutput) {
        try finalizeHeld(path, into: path, overwrite: true, holding: holding, rest: rest, progress: progress)
    }

    /// As `finalizeInPlace`, writing `destination` instead (replaced only with `overwrite`).
    public static func finalize(_ source: String, into destination: String, overwrite: Bool, holding: Int32? = nil,
                                rest: (path: String, info: Intermediate)? = nil, progress: JoinProgress? = nil) throws(MediaError) -> Result {
        try finalizeHeld(source, into: destination, overwrite: overwrite, holding: holding, rest: rest, progress: progress).0
    }

    /// An intermediate that holds the whole take (from its first frame), finished alone into
    /// `destination`: its pictures encoded as the take asked, its sound copied.
    public static func finalize(intermediate path: String, info: Intermediate, into destination: String, overwrite: Bool,
                                holding: Int32?, progress: JoinProgress?) throws(MediaError) -> Result {
        let output = try AtomicOutput(destination: destination, overwrite: overwrite, holding: holding)
        let result = try remux(from: path, to: output.temporaryPath, descriptor: output.descriptor, reportedPath: destination,
                               rest: (path, info), copiesSource: false, progress: progress)
        try output.commit()
        return result
    }

    private static func finalizeHeld(_ source: String, into destination: String, overwrite: Bool, holding: Int32?,
                                     rest: (path: String, info: Intermediate)?,
                                     progress: JoinProgress?) throws(MediaError) -> (Result, lock: AtomicOutput) {
        let output = try AtomicOutput(destination: destination, overwrite: overwrite || destination == source, holding: holding)
        let result = try remux(from: source, to: output.temporaryPath, descriptor: output.descriptor, reportedPath: destination,
                               rest: rest, progress: progress)
        try output.commit()
        return (result, output)
    }
}

/// The regular (faststart) mov muxer a remux writes to; owns its context and file.
final class RemuxOutput {
    private let muxer: OutputContext
    var context: UnsafeMutablePointer<AVFormatContext> { muxer.pointer }
    let reportedPath: String

    /// Writes through `descriptor`, which must stay open until `finish`.
    init(path: String, descriptor: Int32, reportedPath: String) throws(MediaError) {
        self.reportedPath = reportedPath
        muxer = try OutputContext(path: path, descriptor: descriptor, reportedPath: reportedPath)
    }

    func addStream(copying input: UnsafeMutablePointer<AVStream>) throws(MediaError) -> UnsafeMutablePointer<AVStream> {
        guard let st = avformat_new_stream(context, nil) else {
            throw .cannotWrite(path: reportedPath, reason: "cannot add a stream")
        }
        try check(avcodec_parameters_copy(st.pointee.codecpar, input.pointee.codecpar)) {
            .cannotWrite(path: reportedPath, reason: $0)
        }
        // Apple players open HEVC in QuickTime only when tagged hvc1.
        if st.pointee.codecpar.pointee.codec_id == AV_CODEC_ID_HEVC {
            st.pointee.codecpar.pointee.codec_tag = MovWriter.fourcc("hvc1")
        }
        st.pointee.time_base = input.pointee.time_base
        st.pointee.avg_frame_rate = input.pointee.avg_frame_rate
        st.pointee.disposition = input.pointee.disposition
        // The display matrix (--rotate) lives beside the parameters before FFmpeg 6.1.
        try check(dc_stream_copy_display_matrix(st, input)) { .cannotWrite(path: reportedPath, reason: $0) }
        av_dict_copy(&st.pointee.metadata, input.pointee.metadata, 0)
        return st
    }

    /// Creation time, location and the rest of the file's tags.
    func copyMetadata(from input: UnsafeMutablePointer<AVFormatContext>) {
        av_dict_copy(&context.pointee.metadata, input.pointee.metadata, 0)
    }

    func writeHeader() throws(MediaError) {
        var options: OpaquePointer?
        av_dict_set(&options, "movflags", "+faststart", 0)
        defer { av_dict_free(&options) }
        try check(avformat_write_header(context, &options)) { .cannotWrite(path: reportedPath, reason: $0) }
    }

    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws(MediaError) {
        try check(av_interleaved_write_frame(context, packet)) { .cannotWrite(path: reportedPath, reason: $0) }
    }

    func finish() throws(MediaError) {
        try check(av_write_trailer(context)) { .cannotWrite(path: reportedPath, reason: $0) }
        try check(muxer.closeFile()) { .cannotWrite(path: reportedPath, reason: $0) }
    }
}
