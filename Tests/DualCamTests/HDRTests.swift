import Foundation
import Testing

/// Phone clips in HDR (10-bit HEVC, BT.2020, HLG or PQ, made here with libx265 main10 and
/// the colour tags) composed beside an SDR picture: the full-frame picture against FFmpeg's
/// own tone mapping of the same clip, with the same curve and parameters (ToneMap's).
@Suite struct HDRTests {
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
            let theirs = try Decode.frame(clip, index: index, filter: Self.reference)
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
}
