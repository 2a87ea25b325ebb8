import CFFmpeg
import Foundation

/// The NAL units of H.264 and HEVC as the two forms carry them: Annex B (start codes, what
/// x264 and x265 hand out) and the length-prefixed form of an MP4 or QuickTime file, whose
/// parameter sets sit in an avcC or hvcC record. A file's track and an encoder's output are
/// compared, and joined, unit by unit.
enum NALUnits {
    /// The units of `bytes` in Annex B form: each after a start code, trailing zeros left out.
    static func annexB(_ bytes: UnsafeBufferPointer<UInt8>) -> [ArraySlice<UInt8>] {
        let all = Array(bytes)
        var starts: [(code: Int, payload: Int)] = []
        var i = 0
        while i + 2 < all.count {
            if all[i] == 0 && all[i + 1] == 0 && all[i + 2] == 1 {
                starts.append((i, i + 3))
                i += 3
            } else {
                i += 1
            }
        }
        var units: [ArraySlice<UInt8>] = []
        for (n, start) in starts.enumerated() {
            var end = n + 1 < starts.count ? starts[n + 1].code : all.count
            while end > start.payload && all[end - 1] == 0 { end -= 1 }
            if end > start.payload { units.append(all[start.payload..<end]) }
        }
        return units
    }

    /// The parameter sets (and SEI) of an extradata in either form, and the length of the
    /// prefix its packets carry (nil: Annex B). nil when it cannot be read.
    static func parameterSets(_ extradata: UnsafeBufferPointer<UInt8>, codec: AVCodecID) -> (units: [ArraySlice<UInt8>], prefix: Int?)? {
        guard extradata.count > 0 else { return ([], nil) }
        guard extradata[0] == 1 else { return (annexB(extradata), nil) }
        let b = Array(extradata)
        var units: [ArraySlice<UInt8>] = []
        func take(_ at: inout Int) -> Bool {
            guard at + 2 <= b.count else { return false }
            let n = Int(b[at]) << 8 | Int(b[at + 1])
            guard at + 2 + n <= b.count else { return false }
            units.append(b[(at + 2)..<(at + 2 + n)])
            at += 2 + n
            return true
        }
        if codec == AV_CODEC_ID_HEVC {
            guard b.count >= 23 else { return nil }
            var at = 23
            for _ in 0..<Int(b[22]) {
                guard at + 3 <= b.count else { return nil }
                let count = Int(b[at + 1]) << 8 | Int(b[at + 2])
                at += 3
                for _ in 0..<count { guard take(&at) else { return nil } }
            }
            return (units, Int(b[21] & 3) + 1)
        }
        guard b.count >= 6 else { return nil }
        var at = 6
        for _ in 0..<Int(b[5] & 0x1f) { guard take(&at) else { return nil } }
        guard at < b.count else { return nil }
        let pps = Int(b[at])
        at += 1
        for _ in 0..<pps { guard take(&at) else { return nil } }
        return (units, Int(b[4] & 3) + 1)
    }

    /// What a decoder of the track reads from its extradata (HEVC's VPS, SPS and PPS; H.264's
    /// SPS and PPS; another codec's whole header), in either form, in order; nil when it cannot be read. Two encoders whose
    /// units these are the same make packets that follow each other in one track. x265's
    /// extradata also holds an SEI that spells out its options, threads included (a take
    /// recorded with two frame threads and finished by `finish` without them differ there
    /// alone): that says nothing about the pictures.
    static func decodingParameterSets(of encoder: AVCodecContext) -> [[UInt8]]? {
        decodingParameterSets(UnsafeBufferPointer(start: encoder.extradata, count: Int(encoder.extradata_size)), codec: encoder.codec_id)
    }

    /// The same of a stream (a file's track).
    static func decodingParameterSets(of stream: AVCodecParameters) -> [[UInt8]]? {
        decodingParameterSets(UnsafeBufferPointer(start: stream.extradata, count: Int(stream.extradata_size)), codec: stream.codec_id)
    }

    static func decodingParameterSets(_ extradata: UnsafeBufferPointer<UInt8>, codec: AVCodecID) -> [[UInt8]]? {
        guard let units = parameterSets(extradata, codec: codec)?.units else { return nil }
        return units.filter { unit in
            guard let first = unit.first else { return false }
            switch codec {
            case AV_CODEC_ID_HEVC: return (32...34).contains((first >> 1) & 0x3F)
            case AV_CODEC_ID_H264: return [7, 8].contains(first & 0x1F)
            default: return true  // another codec's header, as it is
            }
        }.map(Array.init)
    }

    /// Rewrites `packet` (Annex B) with each unit behind a big-endian length of `prefix` bytes.
    static func lengthPrefixed(_ packet: UnsafeMutablePointer<AVPacket>, prefix: Int) throws(MediaError) {
        guard let data = packet.pointee.data else { return }
        let units = annexB(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
        var out: [UInt8] = []
        out.reserveCapacity(Int(packet.pointee.size) + units.count * prefix)
        for unit in units {
            for k in stride(from: prefix - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: unit.count >> (8 * k))) }
            out.append(contentsOf: unit)
        }
        let copy = Packet()
        try check(av_new_packet(copy.pointer, Int32(out.count))) { .encoderFailed(name: "packet", reason: $0) }
        out.withUnsafeBytes { copy.pointer.pointee.data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: out.count) }
        try check(av_packet_copy_props(copy.pointer, packet)) { .encoderFailed(name: "packet", reason: $0) }
        av_packet_unref(packet)
        av_packet_move_ref(packet, copy.pointer)
    }
}
