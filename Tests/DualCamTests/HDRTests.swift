import Foundation
import Testing

/// Phone clips in HDR (10-bit HEVC, BT.2020, HLG or PQ, made here with libx265 main10 and
/// the colour tags) composed beside an SDR picture: the full-frame picture against FFmpeg's
/// own tone mapping of the same clip, with the same curve and parameters (ToneMap's).
@Suite(.timeLimit(.minutes(10))) struct HDRTests {
    static let reference = "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,"
        + "tonemap=tonemap=hable:desat=0:peak=10,zscale=t=bt709:m=bt709:r=tv,format=yuv420p"
    static let size = (width: 640, height: 360)

    /// One second of colour bars, then one of a grey ramp, in `transfer`.
    static func makeClip(_ path: String, transfer: String) throws {
        let r = try run(Env.tool("ffmpeg")!, [
            "-nostdin", "-v", "error", "-f", "lavfi", "-t", "1", "-i", "smptehdbars=size=\(size.width)x\(size.height):rate=30",
            "-f", "lavfi", "-t", "1", "-i", "gradients=s=\(size.width)x\(size.height):c0=black:c1=white:x0=0:y0=0:x1=\(size.width - 1):y1=0:r=30",
            "-filter_complex", "[0]format=yuv420p10le[a];[1]format=yuv420p10le[b];[a][b]concat=n=2",
            "-c:v", "libx265", "-preset", "ultrafast", "-pix_fmt", "yuv420p10le",
            "-x265-params", "log-level=error:colorprim=bt2020:transfer=\(transfer):colormatrix=bt2020nc",
            "-color_primaries", "bt2020", "-color_trc", transfer, "-colorspace", "bt2020nc", "-y", path])
        try #require(r.status == 0, "\(r.stderr)")
    }

    static func meanAbsolute(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>, width: Int, columns: Int) -> Double {
        var sum = 0, n = 0
        for (i, (x, y)) in zip(a, b).enumerated() where i % width < columns {
            sum += abs(Int(x) - Int(y))
            n += 1
        }
        return Double(sum) / Double(max(n, 1))
    }

    /// Mean absolute differences of two I420 pictures' planes, over their first `columns` columns.
    static func errors(_ a: [UInt8], _ b: [UInt8], width w: Int, columns: Int) -> (y: Double, u: Double, v: Double) {
        let luma = w * (a.count * 2 / 3) / w, chroma = luma / 4
        return (meanAbsolute(a[0..<luma], b[0..<luma], width: w, columns: columns),
                meanAbsolute(a[luma..<(luma + chroma)], b[luma..<(luma + chroma)], width: w / 2, columns: columns / 2),
                meanAbsolute(a[(luma + chroma)...], b[(luma + chroma)...], width: w / 2, columns: columns / 2))
    }

    @Test(.timeLimit(.minutes(5)), arguments: ["arib-std-b67", "smpte2084"])
    func anHDRClipIsToneMappedAsFFmpegDoesIt(transfer: String) throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let clip = dir.path("hdr.mp4"), out = dir.path("pip.mov")
        try Self.makeClip(clip, transfer: transfer)
        // Lossless H.264 at the clip's size: no scaling and no coding error in the way.
        let r = try dualcam(["compose", clip, Reference.front, "-o", out, "--size", "\(Self.size.width)x\(Self.size.height)",
                             "--codec", "h264", "--crf", "0", "--quiet"])
        try #require(r.status == 0, "\(r.stderr)")
        let w = Self.size.width
        // Left of the inset (which sits in the top-right corner).
        let columns = w - 80
        for (index, what) in [(10, "colour bars"), (45, "grey ramp")] {
            let ours = try Decode.frame(out, index: index)
            let theirs = try Decode.frame(clip, index: index, filter: Self.reference, withoutAVX512: true)
            let untouched = try Decode.frame(clip, index: index)  // the 10-bit codes merely cut to 8 bits
            let (y, u, v) = Self.errors(ours, theirs, width: w, columns: columns)
            let plain = Self.errors(untouched, theirs, width: w, columns: columns)
            print(String(format: "%@ %@: mean |error| against zscale+tonemap: Y %.2f, Cb %.2f, Cr %.2f levels "
                         + "(the codes as they are, no tone mapping: Y %.2f, Cb %.2f, Cr %.2f)",
                         transfer, what, y, u, v, plain.y, plain.u, plain.v))
            #expect(y <= 4 && u <= 4 && v <= 4, "\(transfer) \(what): Y \(y), Cb \(u), Cr \(v)")
            // The measure tells tone mapping from none: on the bars, leaving the codes as they
            // are is further off (by 20 levels of luma for PQ; HLG's luma is meant to pass
            // for SDR, and leaving it is 3 levels off in every plane).
            if index == 10 {
                #expect(plain.y + plain.u + plain.v > 1.5 * (y + u + v), "\(transfer) \(what): \(plain)")
            }
        }
    }

    /// A 10-bit SDR clip in BT.2020 (10-bit SDR phones and cameras record it so) is
    /// re-encoded to BT.709 and cut to 8 bits in one rounding: every sample of the composed
    /// picture within half a code value of the exact result computed here from FFmpeg's own
    /// 10-bit decoding of the clip. Cut to 8 bits first and rounded again, as before, many
    /// were a whole code off.
    @Test(.timeLimit(.minutes(5)))
    func aTenBitSDRClipInAnotherMatrixIsRoundedOnce() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let clip = dir.path("sdr10-bt2020.mp4"), out = dir.path("pip.mov")
        try Self.makeClip(clip, transfer: "bt2020-10")
        let r = try dualcam(["compose", clip, Reference.front, "-o", out, "--size", "\(Self.size.width)x\(Self.size.height)",
                             "--codec", "h264", "--crf", "0", "--quiet"])
        try #require(r.status == 0, "\(r.stderr)")
        let w = Self.size.width, h = Self.size.height, columns = w - 80
        // BT.2020 Y'CbCr to BT.709, through R'G'B', in double precision. The layouts of the
        // 8-bit output and of the 10-bit samples are the same, sample for sample.
        func forward(_ kr: Double, _ kb: Double) -> [[Double]] {
            let kg = 1 - kr - kb
            return [[kr, kg, kb], [-kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5], [0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr))]]
        }
        let to709 = forward(0.2126, 0.0722)
        // R'G'B' from (Y', Pb, Pr) of BT.2020, then BT.709's rows applied.
        func exact(_ y: Double, _ pb: Double, _ pr: Double) -> (Double, Double, Double) {
            let kr = 0.2627, kb = 0.0593, kg = 1 - kr - kb
            let r = y + 2 * (1 - kr) * pr, b = y + 2 * (1 - kb) * pb, g = (y - kr * r - kb * b) / kg
            let c = to709.map { $0[0] * r + $0[1] * g + $0[2] * b }
            return (c[0], c[1], c[2])
        }
        for index in [10, 45] {
            let ours = try Decode.frame(out, index: index)
            let raw = try Decode.frame(clip, index: index, pixelFormat: "yuv420p10le")
            let ten = stride(from: 0, to: raw.count - 1, by: 2).map { Int(raw[$0]) | Int(raw[$0 + 1]) << 8 }
            let cw = w / 2, lumaCount = w * h, chromaCount = cw * h / 2
            var worst = 0.0, off = 0, total = 0
            for row in 0..<h {
                for x in 0..<columns {
                    let c = (row / 2) * cw + x / 2
                    let (yy, _, _) = exact((Double(ten[row * w + x]) - 64) / 876, (Double(ten[lumaCount + c]) - 512) / 896,
                                           (Double(ten[lumaCount + chromaCount + c]) - 512) / 896)
                    let e = abs(Double(ours[row * w + x]) - min(max(16 + 219 * yy, 0), 255))
                    worst = max(worst, e)
                    if e > 0.51 { off += 1 }
                    total += 1
                }
            }
            for row in 0..<(h / 2) {
                for x in 0..<(columns / 2) {
                    let c = row * cw + x
                    let (_, pb, pr) = exact((Double(ten[2 * row * w + 2 * x]) - 64) / 876, (Double(ten[lumaCount + c]) - 512) / 896,
                                            (Double(ten[lumaCount + chromaCount + c]) - 512) / 896)
                    for (plane, value) in [(lumaCount, pb), (lumaCount + chromaCount, pr)] {
                        let e = abs(Double(ours[plane + c]) - min(max(128 + 224 * value, 0), 255))
                        worst = max(worst, e)
                        if e > 0.51 { off += 1 }
                        total += 1
                    }
                }
            }
            print(String(format: "10-bit BT.2020 SDR frame %d: worst error %.3f, %d of %d samples more than half a code off",
                         index, worst, off, total))
            #expect(off == 0, "frame \(index): \(off) of \(total) samples more than half a code off (worst \(worst))")
        }
    }

    /// Makes an MP4 a Dolby Vision profile 8.4 file as phones write it: the HLG clip's HEVC
    /// sample entry gets a `dvvC` box (the DOVIDecoderConfigurationRecord: version 1.0,
    /// profile 8, level 4, RPU and base layer present, base-layer compatibility 4 = HLG).
    /// The moov box must follow the media data, so no chunk offset moves. What this clip
    /// lacks beside a phone's: the RPU NAL units (the dynamic metadata, type 62) in the
    /// samples; the base layer is the same either way.
    static func addDolbyVisionRecord(_ path: String) throws {
        var d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ o: Int) -> Int { d[o..<(o + 4)].reduce(0) { $0 << 8 | Int($1) } }
        func put32(_ o: Int, _ v: Int) { for i in 0..<4 { d[o + i] = UInt8(truncatingIfNeeded: v >> (8 * (3 - i))) } }
        func type(_ o: Int) -> String { String(decoding: d[(o + 4)..<(o + 8)], as: UTF8.self) }
        /// The first child box of one of those types between `start` and `end`.
        func child(_ names: String..., start: Int, end: Int) throws -> Int {
            var o = start
            while o + 8 <= end {
                if names.contains(type(o)) { return o }
                let size = u32(o)
                try #require(size >= 8, "box size \(size) at \(o)")
                o += size
            }
            throw ProbeError(message: "no \(names) box in \(path)")
        }
        let moov = try child("moov", start: 0, end: d.count)
        try #require(try child("mdat", start: 0, end: d.count) < moov, "moov before mdat: chunk offsets would move")
        var ancestors = [moov]
        for name in ["trak", "mdia", "minf", "stbl", "stsd"] {
            let parent = ancestors.last!
            ancestors.append(try child(name, start: parent + 8, end: parent + u32(parent)))
        }
        // Past stsd's version, flags and entry count. FFmpeg writes HEVC as hev1, phones as hvc1.
        let stsd = ancestors.last!, entry = try child("hvc1", "hev1", start: stsd + 16, end: stsd + u32(stsd))
        ancestors.append(entry)
        // Profile (7 bits), level (6), RPU, enhancement layer and base layer present (1 each).
        let flags = 8 << 9 | 4 << 3 | 1 << 2 | 0 << 1 | 1
        let record: [UInt8] = [0, 0, 0, 32] + Array("dvvC".utf8) + [1, 0, UInt8(flags >> 8), UInt8(flags & 0xff)]
            + [4 << 4, 0, 0, 0] + [UInt8](repeating: 0, count: 16)
        // At the end of the sample entry, after hvcC and colr.
        d.insert(contentsOf: record, at: entry + u32(entry))
        for box in ancestors { put32(box, u32(box) + record.count) }
        try Data(d).write(to: URL(fileURLWithPath: path))
    }

    /// A Dolby Vision profile 8.4 clip (what recent iPhones record) is taken as its HLG base
    /// layer: FFmpeg's ffprobe sees the Dolby Vision record, and the composed pictures are
    /// the same bytes as those of the clip without it.
    @Test(.timeLimit(.minutes(5)))
    func aDolbyVisionProfile84ClipIsTakenAsItsHLGBaseLayer() throws {
        try Env.requireFFmpegTools()
        let dir = try TempDir()
        let hlg = dir.path("hlg.mp4"), dolby = dir.path("dolby-vision-8.4.mp4")
        try Self.makeClip(hlg, transfer: "arib-std-b67")
        try FileManager.default.copyItem(atPath: hlg, toPath: dolby)
        try Self.addDolbyVisionRecord(dolby)
        let video = try #require(try Probe(dolby).streams.first { $0["codec_type"] as? String == "video" })
        let sideData = video["side_data_list"] as? [[String: Any]] ?? []
        let record = try #require(sideData.first { ($0["side_data_type"] as? String)?.contains("DOVI") == true },
                                  "ffprobe sees no Dolby Vision record: \(video)")
        #expect(record["dv_profile"] as? Int == 8 && record["dv_bl_signal_compatibility_id"] as? Int == 4, "\(record)")
        var composed: [[UInt8]] = []
        for clip in [hlg, dolby] {
            let out = dir.path("pip-\(composed.count).mov")
            let r = try dualcam(["compose", clip, Reference.front, "-o", out, "--size", "\(Self.size.width)x\(Self.size.height)",
                                 "--codec", "h264", "--crf", "0", "--quiet"])
            try #require(r.status == 0, "\(clip): \(r.stderr)")
            composed.append(try Decode.frame(out, index: 10) + Decode.frame(out, index: 45))
        }
        #expect(composed[0] == composed[1], "the Dolby Vision clip composes unlike its base layer")
    }
}
