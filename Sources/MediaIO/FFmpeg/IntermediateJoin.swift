import CFFmpeg
import Compositor
import Foundation

/// Frames of an intermediate encoded so far, and how many it holds (0 when not known).
public typealias JoinProgress = (_ done: Int, _ total: Int) -> Void

/// Puts an intermediate's pictures, encoded as the take asked, and its sound, copied, after
/// the take's own packets in the finished file. Each picture goes to its own slot (from the
/// tag's `fromFrame`, as far after the intermediate's first picture as it was recorded); the
/// sound keeps its place against the pictures it was recorded with.
final class IntermediateJoin {
    let info: Intermediate
    let path: String
    private let pictures: InputContext
    private let decoder: StreamDecoder
    private let sound: InputContext
    private let soundIndex: Int32?
    let encoder: VideoEncoder
    private let frame = Frame()
    private let packet = Packet()
    private var packetWaiting = false
    /// The intermediate's first picture, in its own seconds: what its slots count from.
    private var firstPicture: Double?
    private var lastSlot = -1
    private var lastSoundDTS = Int64.min
    /// The length prefix the track's packets carry; nil for Annex B.
    private var prefix: Int?
    private(set) var framesWritten = 0
    private(set) var soundPacketsWritten = 0
    /// Where the last picture written ends, in slots.
    private(set) var endSlot = 0

    init(path: String, info: Intermediate) throws(MediaError) {
        self.info = info
        self.path = path
        pictures = try InputContext(path: path)
        guard let video = pictures.bestStream(AVMEDIA_TYPE_VIDEO) else { throw .noVideoStream(path: path) }
        decoder = try StreamDecoder(input: pictures, streamIndex: video)
        sound = try InputContext(path: path)
        soundIndex = sound.bestStream(AVMEDIA_TYPE_AUDIO)
        let par = pictures.stream(video).pointee.codecpar.pointee
        guard par.width > 0, par.height > 0, par.width % 2 == 0, par.height % 2 == 0 else {
            throw .damaged(path: path, reason: "its pictures are \(par.width)x\(par.height)")
        }
        var settings = info.settings
        settings.size = Size(width: Int(par.width), height: Int(par.height))
        let opening = settings
        encoder = try ThreadPriority.madeAtProcessLevel(poolThreads: opening.poolThreads) { () throws(MediaError) in
            try VideoEncoder(settings: opening)
        }
    }

    /// Whether the encoder's parameter sets are those of `stream` (the take's track, as a file
    /// holds them): its packets then continue that track.
    func continues(_ stream: UnsafeMutablePointer<AVStream>) -> Bool {
        let ours = encoder.context.pointer.pointee, theirs = stream.pointee.codecpar.pointee
        guard ours.width == theirs.width, ours.height == theirs.height, ours.codec_id == theirs.codec_id,
              let mine = NALUnits.decodingParameterSets(of: ours), let taken = NALUnits.decodingParameterSets(of: theirs)
        else { return false }
        return mine == taken
    }

    /// Pictures it holds, as far as the file says (0 when it does not).
    var expectedFrames: Int {
        let st = pictures.stream(decoder.streamIndex).pointee
        if st.nb_frames > 0 { return Int(st.nb_frames) }
        guard st.duration > 0 else { return 0 }
        return Int((Double(st.duration) * av_q2d(st.time_base) * Double(info.settings.framesPerSecond)).rounded())
    }

    private var fps: Double { Double(info.settings.framesPerSecond) }

    /// Encodes every picture into `video`, copying the sound into `audio` alongside.
    func write(into output: RemuxOutput, video: UnsafeMutablePointer<AVStream>, audio: UnsafeMutablePointer<AVStream>?,
               progress: JoinProgress?) throws(MediaError) {
        let par = video.pointee.codecpar.pointee
        // The track copied from the take's file carries its units length-prefixed: the
        // encoder's follow in that form.
        prefix = NALUnits.parameterSets(UnsafeBufferPointer(start: par.extradata, count: Int(par.extradata_size)),
                                        codec: par.codec_id)?.prefix
        // What is left to encode: the intermediate's pictures after those the take's file holds.
        let held = expectedFrames
        let total = held > 0 ? max(0, min(held, info.fromFrame + held - 1 - lastSlot)) : 0
        let pictureBase = pictures.stream(decoder.streamIndex).pointee.time_base
        let size = encoder.settings.size
        while try decoder.next(into: frame) {
            defer { av_frame_unref(frame.pointer) }
            let f = frame.pointer.pointee
            guard f.format == AV_PIX_FMT_YUV420P.rawValue, Int(f.width) == size.width, Int(f.height) == size.height else {
                throw .damaged(path: path, reason: "a picture that is not \(size) I420")
            }
            let stamp = f.best_effort_timestamp != AVCode.noPTS ? f.best_effort_timestamp : f.pts
            let seconds = stamp == AVCode.noPTS ? Double(framesWritten) / fps : Double(stamp) * av_q2d(pictureBase)
            let first = firstPicture ?? seconds
            let slot = info.fromFrame + Int(((seconds - first) * fps).rounded())
            if firstPicture == nil, lastSlot > slot + 1 {
                // The take's own file goes on past this (encoded while the take went on):
                // what it holds is read, not decoded.
                let wanted = first + (Double(lastSlot + 1 - info.fromFrame) - 0.5) / fps
                decoder.skipPackets(before: Int64((wanted / av_q2d(pictureBase)).rounded(.down)))
            }
            firstPicture = first
            guard slot > lastSlot else { continue }  // never two pictures on one slot
            lastSlot = slot
            try encoder.send(frame.pointer, frameIndex: Int64(slot)) { (p) throws(MediaError) in
                try self.writePicture(p, into: output, stream: video)
            }
            framesWritten += 1
            if let audio { try copySound(until: Double(slot + 1) / fps, into: output, stream: audio) }
            progress?(framesWritten, max(total, framesWritten))
        }
        try encoder.encode(nil) { (p) throws(MediaError) in try self.writePicture(p, into: output, stream: video) }
        // The sound that goes with the last picture; none a crafted file places far beyond.
        if let audio { try copySound(until: Double(endSlot) / fps + 0.5, into: output, stream: audio) }
    }

    private func writePicture(_ p: UnsafeMutablePointer<AVPacket>, into output: RemuxOutput,
                              stream: UnsafeMutablePointer<AVStream>) throws(MediaError) {
        if p.pointee.duration == 0 { p.pointee.duration = 1 }
        if let prefix { try NALUnits.lengthPrefixed(p, prefix: prefix) }
        endSlot = max(endSlot, Int(p.pointee.pts + p.pointee.duration))
        av_packet_rescale_ts(p, encoder.timeBase, stream.pointee.time_base)
        p.pointee.stream_index = stream.pointee.index
        try output.write(p)
    }

    /// Copies the sound recorded before `end` (seconds of the take), placed against the
    /// pictures as it was recorded.
    private func copySound(until end: Double, into output: RemuxOutput, stream: UnsafeMutablePointer<AVStream>) throws(MediaError) {
        guard let soundIndex else { return }
        let base = sound.stream(soundIndex).pointee.time_base, outBase = stream.pointee.time_base
        let shift = Double(info.fromFrame) / fps - (firstPicture ?? Self.startSeconds(pictures.stream(decoder.streamIndex)))
        while true {
            if !packetWaiting {
                let rc = av_read_frame(sound.pointer, packet.pointer)
                if rc < 0 { return }  // its end, or where a kill cut it: what came before is kept
                guard packet.pointer.pointee.stream_index == soundIndex, packet.pointer.pointee.size > 0,
                      packet.pointer.pointee.flags & AV_PKT_FLAG_CORRUPT == 0, packet.pointer.pointee.pts != AVCode.noPTS else {
                    packet.unref()
                    continue
                }
                packetWaiting = true
            }
            let p = packet.pointer
            let at = Double(p.pointee.pts) * av_q2d(base) + shift
            guard at < end else { return }
            packetWaiting = false
            defer { packet.unref() }
            // Before the take's start there is only the AAC encoder's priming (21 ms).
            guard at > -0.05 else { continue }
            let pts = Int64((at / av_q2d(outBase)).rounded())
            // A packet that would overlap the take's own sound (or a crafted file's
            // disorder) is left out: the muxer takes only increasing times.
            guard pts > lastSoundDTS else { continue }
            lastSoundDTS = pts
            p.pointee.duration = av_rescale_q(p.pointee.duration, base, outBase)
            p.pointee.pts = pts
            p.pointee.dts = pts
            p.pointee.pos = -1
            p.pointee.stream_index = stream.pointee.index
            try output.write(p)
            soundPacketsWritten += 1
        }
    }

    /// Where the take's own last picture starts, in seconds: a picture the intermediate holds
    /// too (the encoder handed out its packet as the take switched) is left out of the join.
    func picturesContinue(afterPictureAt seconds: Double) {
        lastSlot = max(lastSlot, Int((seconds * fps).rounded()))
        // Its sound is copied as far as the take's pictures go, if no picture of its own follows.
        endSlot = max(endSlot, lastSlot + 1)
    }

    /// Where the take's own sound ended, in `stream`'s time base: the intermediate's never
    /// starts before it.
    func soundContinues(after dts: Int64) { lastSoundDTS = max(lastSoundDTS, dts) }

    private static func startSeconds(_ st: UnsafeMutablePointer<AVStream>) -> Double {
        st.pointee.start_time == AVCode.noPTS ? 0 : Double(st.pointee.start_time) * av_q2d(st.pointee.time_base)
    }
}
