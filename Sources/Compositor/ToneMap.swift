import Foundation

/// HDR video (BT.2020 primaries, PQ or HLG, 10-bit limited-range 4:2:0 Y'CbCr: what phones
/// record) to SDR BT.709 8-bit limited-range I420, so it sits beside an SDR picture.
///
/// The same steps and parameters as FFmpeg's own chain, which the tests compare against:
///
///     zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,
///     tonemap=tonemap=hable:desat=0:peak=10,zscale=t=bt709:m=bt709:r=tv,format=yuv420p
///
/// - Linear light with 1.0 the reference white of 100 cd/m² (`referenceWhite`, zscale's
///   npl=100): PQ through its EOTF (10000 cd/m² is 100.0); HLG through its inverse OETF and
///   the BT.2100 OOTF of a 1000 cd/m² display (system gamma 1.2 on BT.2020 luminance), so
///   HLG's peak is 10.0, as zimg's display-referred HLG gives it.
/// - BT.2020 primaries to BT.709, in linear light (colours outside BT.709 go negative).
/// - Hable's filmic curve on the brightest component, `hable(max) / hable(peak)` with
///   `peak` = 10.0 (1000 cd/m²: HLG's nominal peak, and what FFmpeg's tonemap assumes for
///   linear input without metadata), every component scaled by it (no desaturation).
/// - Back to a signal with BT.1886's inverse EOTF (1/2.4 power: zimg's display-referred
///   BT.709), then BT.709 Y'CbCr; super-whites above 235 are kept, as FFmpeg keeps them.
///
/// Chroma is taken from the sample that covers each pixel and the output chroma is the mean
/// of the four pixels it covers. The curves are computed (`FastPow`), within a few
/// millionths of the exact ones. `convertSIMD` (8 chroma samples, 16x2 pixels, at a time) and
/// `convertScalar` give the same bytes; `Job` splits a picture over two threads.
public struct ToneMap: Sendable {
    public enum Transfer: String, Sendable { case pq = "PQ (SMPTE ST 2084)", hlg = "HLG (ARIB STD-B67)" }

    public static let referenceWhite = 100.0
    public static let peak: Float = 10
    /// The largest linear value brought back to a signal: Hable's ratio stays under 1.3, and
    /// the tables of the first version stopped here too.
    static let largestOutput: Float = 2

    public let transfer: Transfer
    let hablePeak: Float

    public init(transfer: Transfer) {
        self.transfer = transfer
        hablePeak = Self.hable(Self.peak)
    }

    /// The transfer a frame's tag names, or nil for SDR.
    public static func transfer(ffmpegTRC trc: Int32) -> Transfer? {
        switch trc {
        case 16: return .pq   // AVCOL_TRC_SMPTE2084
        case 18: return .hlg  // AVCOL_TRC_ARIB_STD_B67
        default: return nil
        }
    }

    /// SMPTE ST 2084: signal (0...1) to luminance as a share of 10000 cd/m² (double precision,
    /// for the tests).
    static func pqEOTF(_ e: Double) -> Double {
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
        let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let p = pow(max(0, e), 1 / m2)
        return pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// ARIB STD-B67 (BT.2100 HLG): signal (0...1) to scene light (0...1) (double precision).
    static func hlgInverseOETF(_ e: Double) -> Double {
        let a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a)
        return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12
    }

    /// FFmpeg's tonemap filter's Hable (Uncharted 2) curve, with its constants.
    static func hable(_ x: Float) -> Float {
        (x * (x * hA + hB * hC) + hD * hE) / (x * (x * hA + hB) + hD * hF) - hE / hF
    }
    static let hA: Float = 0.15, hB: Float = 0.50, hC: Float = 0.10, hD: Float = 0.20, hE: Float = 0.02, hF: Float = 0.30

    // BT.2020 to BT.709 in linear light (ITU-R BT.2087).
    static let m00: Float = 1.660491, m01: Float = -0.587641, m02: Float = -0.072850
    static let m10: Float = -0.124550, m11: Float = 1.132900, m12: Float = -0.008349
    static let m20: Float = -0.018151, m21: Float = -0.100579, m22: Float = 1.118730

    // The curves' constants in single precision, as both twins use them.
    static let pqM1Inverse = Float(16384.0 / 2610), pqM2Inverse = Float(4096.0 / 2523 / 128)
    static let pqC1 = Float(3424.0 / 4096), pqC2 = Float(2413.0 / 4096 * 32), pqC3 = Float(2392.0 / 4096 * 32)
    /// PQ's 10000 cd/m² over the reference white.
    static let pqScale = Float(10000 / referenceWhite)
    static let hlgA = 0.17883277
    static let hlgB = Float(1 - 4 * hlgA), hlgC = Float(0.5 - hlgA * log(4 * hlgA))
    /// exp(x / a) = 2^(x * log2(e) / a).
    static let hlgExponentScale = Float(1 / log(2) / hlgA)
    /// The BT.2100 OOTF of a 1000 cd/m² display over the reference white: 10 * Ys^0.2.
    static let ootfScale = Float(1000 / referenceWhite), ootfPower: Float = 0.2
    static let signalPower = Float(1 / 2.4)

    public typealias Source = TenBitPlanes

    /// A signal (clamped to 0...1) to linear light: display light for PQ, scene light for HLG.
    func linear(_ e: Float) -> Float {
        let e = min(max(e, 0), 1)
        if transfer == .pq {
            let p = FastPow.pow(e, Self.pqM2Inverse)
            let ratio = max(p - Self.pqC1, 0) / (Self.pqC2 - Self.pqC3 * p)
            return FastPow.pow(ratio, Self.pqM1Inverse) * Self.pqScale
        }
        let upper = (FastPow.exp2((e - Self.hlgC) * Self.hlgExponentScale) + Self.hlgB) * (1 / 12)
        return e <= 0.5 ? e * e * (1 / 3) : upper
    }

    /// One pixel, scalar: (Y, nearest Cb, Cr) 10-bit to SDR BT.709 (Y', Pb, Pr), Y' nominally
    /// 0...1. Every step as the SIMD kernel takes it, in the same order.
    func pixel(_ y: Float, _ cb: Float, _ cr: Float) -> (Float, Float, Float) {
        let yy = (y - 64) * (1 / 876), pb = (cb - 512) * (1 / 896), pr = (cr - 512) * (1 / 896)
        // BT.2020 (non-constant luminance) Y'CbCr to R'G'B'.
        let r1 = yy + 1.4746 * pr
        let b1 = yy + 1.8814 * pb
        let g1 = (yy - 0.2627 * r1 - 0.0593 * b1) * (1 / 0.6780)
        var r = linear(r1), g = linear(g1), b = linear(b1)
        if transfer == .hlg {
            let ys = 0.2627 * r + 0.6780 * g + 0.0593 * b
            let k = Self.ootfScale * FastPow.pow(ys, Self.ootfPower)
            r *= k; g *= k; b *= k
        }
        let r7 = Self.m00 * r + Self.m01 * g + Self.m02 * b
        let g7 = Self.m10 * r + Self.m11 * g + Self.m12 * b
        let b7 = Self.m20 * r + Self.m21 * g + Self.m22 * b
        let sig = max(max(r7, max(g7, b7)), 1e-6)
        // hable(sig) / hablePeak / sig, with one division.
        let numerator = sig * (sig * Self.hA + Self.hB * Self.hC) + Self.hD * Self.hE
        let denominator = sig * (sig * Self.hA + Self.hB) + Self.hD * Self.hF
        let scale = (numerator - denominator * (Self.hE / Self.hF)) / (denominator * hablePeak * sig)
        let rs = FastPow.pow(min(max(r7 * scale, 0), Self.largestOutput), Self.signalPower)
        let gs = FastPow.pow(min(max(g7 * scale, 0), Self.largestOutput), Self.signalPower)
        let bs = FastPow.pow(min(max(b7 * scale, 0), Self.largestOutput), Self.signalPower)
        let luma = 0.2126 * rs + 0.7152 * gs + 0.0722 * bs
        return (luma, (bs - luma) * (1 / 1.8556), (rs - luma) * (1 / 1.5748))
    }

    /// Clamped, then rounded to the nearest code (ties to even) through the bit pattern of
    /// the value plus 2^23, as the SIMD twin does it.
    @inline(__always)
    static func code(_ v: Float, offset: Float, scale: Float) -> UInt8 {
        let clamped = min(max(offset + scale * v, 0), 255)
        return UInt8(truncatingIfNeeded: (clamped + 8_388_608).bitPattern)
    }

    /// The plain reference: each 2x2 block of pixels in turn.
    public func convertScalar(_ s: Source, into out: I420View) {
        for cy in 0..<out.u.height {
            for cx in 0..<out.u.width { blockScalar(s, out, cx: cx, cy: cy) }
        }
    }

    /// One 2x2 block (edges clamped), as the reference does it.
    func blockScalar(_ s: Source, _ out: I420View, cx: Int, cy: Int) {
        let cb = Float(s.u[cy * s.chromaStride + cx]), cr = Float(s.v[cy * s.chromaStride + cx])
        var sumB: Float = 0, sumR: Float = 0
        for dy in 0..<2 {
            let y = min(2 * cy + dy, out.y.height - 1)
            for dx in 0..<2 {
                let x = min(2 * cx + dx, out.y.width - 1)
                let (l, pb, pr) = pixel(Float(s.y[y * s.yStride + x]), cb, cr)
                out.y.base[y * out.y.stride + x] = Self.code(l, offset: 16, scale: 219)
                sumB += pb
                sumR += pr
            }
        }
        out.u.base[cy * out.u.stride + cx] = Self.code(sumB * 0.25, offset: 128, scale: 224)
        out.v.base[cy * out.v.stride + cx] = Self.code(sumR * 0.25, offset: 128, scale: 224)
    }
}

extension ToneMap {
    typealias F8 = SIMD8<Float>
    typealias I8 = SIMD8<Int32>

    @inline(__always)
    static func clamp(_ x: F8, _ low: Float, _ high: Float) -> F8 {
        // Comparisons and blends: the standard library's pointwiseMin/Max were calls, not
        // minps/maxps, and took a sixth of the time.
        let raised = x.replacing(with: low, where: x .< low)
        return raised.replacing(with: high, where: raised .> high)
    }

    @inline(__always)
    func linear8(_ e: F8) -> F8 {
        let e = Self.clamp(e, 0, 1)
        if transfer == .pq {
            let p = FastPow.pow(e, Self.pqM2Inverse)
            let ratio = Self.clamp(p - Self.pqC1, 0, .greatestFiniteMagnitude) / (Self.pqC2 - Self.pqC3 * p)
            return FastPow.pow(ratio, Self.pqM1Inverse) * Self.pqScale
        }
        let upper = (FastPow.exp2((e - Self.hlgC) * Self.hlgExponentScale) + Self.hlgB) * (1 / 12)
        return upper.replacing(with: e * e * (1 / 3), where: e .<= 0.5)
    }

    /// `pixel` for eight pixels: the same operations, lane by lane.
    @inline(__always)
    func pixel8(_ y: F8, _ cb: F8, _ cr: F8) -> (F8, F8, F8) {
        let yy = (y - 64) * (1 / 876), pb = (cb - 512) * (1 / 896), pr = (cr - 512) * (1 / 896)
        let r1 = yy + 1.4746 * pr
        let b1 = yy + 1.8814 * pb
        let g1 = (yy - 0.2627 * r1 - 0.0593 * b1) * (1 / 0.6780)
        var r = linear8(r1), g = linear8(g1), b = linear8(b1)
        if transfer == .hlg {
            let ys = 0.2627 * r + 0.6780 * g + 0.0593 * b
            let k = Self.ootfScale * FastPow.pow(ys, Self.ootfPower)
            r *= k; g *= k; b *= k
        }
        let r7 = Self.m00 * r + Self.m01 * g + Self.m02 * b
        let g7 = Self.m10 * r + Self.m11 * g + Self.m12 * b
        let b7 = Self.m20 * r + Self.m21 * g + Self.m22 * b
        let brightest = g7.replacing(with: b7, where: b7 .> g7)
        var sig = brightest.replacing(with: r7, where: r7 .> brightest)
        sig = sig.replacing(with: 1e-6, where: sig .< 1e-6)
        let numerator = sig * (sig * Self.hA + Self.hB * Self.hC) + Self.hD * Self.hE
        let denominator = sig * (sig * Self.hA + Self.hB) + Self.hD * Self.hF
        let scale = (numerator - denominator * (Self.hE / Self.hF)) / (denominator * hablePeak * sig)
        let rs = FastPow.pow(Self.clamp(r7 * scale, 0, Self.largestOutput), Self.signalPower)
        let gs = FastPow.pow(Self.clamp(g7 * scale, 0, Self.largestOutput), Self.signalPower)
        let bs = FastPow.pow(Self.clamp(b7 * scale, 0, Self.largestOutput), Self.signalPower)
        let luma = 0.2126 * rs + 0.7152 * gs + 0.0722 * bs
        return (luma, (bs - luma) * (1 / 1.8556), (rs - luma) * (1 / 1.5748))
    }

    /// `code` for eight values: the bit patterns whose low byte is the code.
    @inline(__always)
    static func codes8(_ v: F8, offset: Float, scale: Float) -> I8 {
        unsafeBitCast(clamp(offset + scale * v, 0, 255) + 8_388_608, to: I8.self)
    }

    /// Eight 10-bit codes, `step` apart, as floats (exact), through the bit pattern.
    @inline(__always)
    static func load8(_ p: UnsafePointer<UInt16>, _ step: Int) -> F8 {
        FastPow.float(I8(Int32(p[0]), Int32(p[step]), Int32(p[2 * step]), Int32(p[3 * step]), Int32(p[4 * step]), Int32(p[5 * step]), Int32(p[6 * step]), Int32(p[7 * step])))
    }

    /// Eight chroma samples (16x2 pixels) at a time; the plain reference does the right and
    /// bottom edges left over. The same bytes as `convertScalar`. `chromaRows`: only those
    /// rows (and the luma rows they cover).
    public func convertSIMD(_ s: Source, into out: I420View, chromaRows: Range<Int>? = nil) {
        let rows = chromaRows ?? 0..<out.u.height
        // Whole 2x2 blocks in 8s; an odd last column or row is the reference's.
        let fullWidth = out.y.width / 2, fullHeight = out.y.height / 2
        let blocks = fullWidth / 8
        for cy in rows where cy < fullHeight {
            let uRow = s.u + cy * s.chromaStride, vRow = s.v + cy * s.chromaStride
            let top = s.y + 2 * cy * s.yStride, bottom = top + s.yStride
            let outTop = out.y.row(2 * cy), outBottom = out.y.row(2 * cy + 1)
            let outU = out.u.row(cy), outV = out.v.row(cy)
            for block in 0..<blocks {
                let cx = block * 8
                let cb = Self.load8(uRow + cx, 1), cr = Self.load8(vRow + cx, 1)
                let p0 = pixel8(Self.load8(top + 2 * cx, 2), cb, cr), p1 = pixel8(Self.load8(top + 2 * cx + 1, 2), cb, cr)
                let p2 = pixel8(Self.load8(bottom + 2 * cx, 2), cb, cr), p3 = pixel8(Self.load8(bottom + 2 * cx + 1, 2), cb, cr)
                let y0 = Self.codes8(p0.0, offset: 16, scale: 219), y1 = Self.codes8(p1.0, offset: 16, scale: 219)
                let y2 = Self.codes8(p2.0, offset: 16, scale: 219), y3 = Self.codes8(p3.0, offset: 16, scale: 219)
                // Summed in the reference's order: top-left, top-right, bottom-left, bottom-right.
                let u = Self.codes8((((p0.1 + p1.1) + p2.1) + p3.1) * 0.25, offset: 128, scale: 224)
                let v = Self.codes8((((p0.2 + p1.2) + p2.2) + p3.2) * 0.25, offset: 128, scale: 224)
                for lane in 0..<8 {
                    let x = 2 * (cx + lane)
                    outTop[x] = UInt8(truncatingIfNeeded: y0[lane]); outTop[x + 1] = UInt8(truncatingIfNeeded: y1[lane])
                    outBottom[x] = UInt8(truncatingIfNeeded: y2[lane]); outBottom[x + 1] = UInt8(truncatingIfNeeded: y3[lane])
                    outU[cx + lane] = UInt8(truncatingIfNeeded: u[lane])
                    outV[cx + lane] = UInt8(truncatingIfNeeded: v[lane])
                }
            }
        }
        // What is left: the columns after the last whole block of 8, and an odd last row.
        let restColumns = (8 * blocks)..<out.u.width
        for cy in rows {
            let columns = cy < fullHeight ? restColumns : 0..<out.u.width
            for cx in columns { blockScalar(s, out, cx: cx, cy: cy) }
        }
    }

    /// One picture's tone mapping for `ForkJoin`: each half does half the chroma rows.
    public final class Job: ForkJoinJob {
        public var map: ToneMap?, source: Source?, output: I420View?
        public init() {}
        public func run(part: Int, of parts: Int) {
            guard let map, let source, let output else { return }
            map.convertSIMD(source, into: output, chromaRows: ForkJoin.rows(part, of: output.u.height, parts: parts))
        }
    }
}
