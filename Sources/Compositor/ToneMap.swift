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
/// of the four pixels it covers. The transfer functions are tables with linear
/// interpolation (`tableSize` steps), exact to well under a code value.
/// `convertSIMD` (8 chroma samples at a time) and `convertScalar` give the same bytes.
public struct ToneMap: Sendable {
    public enum Transfer: String, Sendable { case pq = "PQ (SMPTE ST 2084)", hlg = "HLG (ARIB STD-B67)" }

    public static let referenceWhite = 100.0
    public static let peak: Float = 10
    static let tableSize = 4096
    /// The largest linear value the output table covers: Hable's ratio stays under 1.3.
    static let largestOutput: Float = 2

    public let transfer: Transfer
    /// Coded value (0...1, `tableSize` steps) to linear: display light for PQ, scene light for HLG.
    let toLinear: [Float]
    /// HLG's OOTF gain, 10 * Ys^0.2, over sqrt(Ys).
    let ootfGain: [Float]
    /// sqrt(linear) (0...sqrt(largestOutput)) to the output signal, linear^(1/2.4).
    let toSignal: [Float]
    let hablePeak: Float

    public init(transfer: Transfer) {
        self.transfer = transfer
        let n = Self.tableSize
        toLinear = (0...n + 1).map { i in
            let e = min(1, Double(i) / Double(n))
            return Float(transfer == .pq ? Self.pqEOTF(e) * 10000 / Self.referenceWhite : Self.hlgInverseOETF(e))
        }
        ootfGain = (0...n + 1).map { i in
            let s = min(1, Double(i) / Double(n))
            return Float(1000 / Self.referenceWhite * pow(s * s, 0.2))
        }
        let top = Double(Self.largestOutput).squareRoot()
        toSignal = (0...n + 1).map { i in
            let u = min(top, Double(i) / Double(n) * top)
            return Float(pow(u * u, 1 / 2.4))
        }
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

    /// SMPTE ST 2084: signal (0...1) to luminance as a share of 10000 cd/m².
    static func pqEOTF(_ e: Double) -> Double {
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
        let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let p = pow(max(0, e), 1 / m2)
        return pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// ARIB STD-B67 (BT.2100 HLG): signal (0...1) to scene light (0...1).
    static func hlgInverseOETF(_ e: Double) -> Double {
        let a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a)
        return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12
    }

    /// FFmpeg's tonemap filter's Hable (Uncharted 2) curve, with its constants.
    static func hable(_ x: Float) -> Float {
        let a: Float = 0.15, b: Float = 0.50, c: Float = 0.10, d: Float = 0.20, e: Float = 0.02, f: Float = 0.30
        return (x * (x * a + b * c) + d * e) / (x * (x * a + b) + d * f) - e / f
    }

    // BT.2020 to BT.709 in linear light (ITU-R BT.2087).
    static let m00: Float = 1.660491, m01: Float = -0.587641, m02: Float = -0.072850
    static let m10: Float = -0.124550, m11: Float = 1.132900, m12: Float = -0.008349
    static let m20: Float = -0.018151, m21: Float = -0.100579, m22: Float = 1.118730

    /// A table read at `x` (scaled to table steps) with linear interpolation.
    @inline(__always)
    static func lookup(_ table: UnsafePointer<Float>, _ x: Float) -> Float {
        let clamped = min(max(x, 0), Float(tableSize))
        let i = Int(clamped)
        let f = clamped - Float(i)
        return table[i] + (table[i + 1] - table[i]) * f
    }

    /// 10-bit limited-range planes, 4:2:0.
    public struct Source: @unchecked Sendable {
        public var y: UnsafePointer<UInt16>
        public var yStride: Int
        public var u: UnsafePointer<UInt16>
        public var v: UnsafePointer<UInt16>
        public var chromaStride: Int
        public init(y: UnsafePointer<UInt16>, yStride: Int, u: UnsafePointer<UInt16>, v: UnsafePointer<UInt16>, chromaStride: Int) {
            self.y = y
            self.yStride = yStride
            self.u = u
            self.v = v
            self.chromaStride = chromaStride
        }
    }

    /// One pixel, scalar: (Y, nearest Cb, Cr) 10-bit to SDR BT.709 (Y', Pb, Pr), Y' nominally
    /// 0...1. Every step as the SIMD kernel takes it, in the same order.
    func pixel(_ y: Float, _ cb: Float, _ cr: Float, _ lin: UnsafePointer<Float>, _ gain: UnsafePointer<Float>,
               _ signal: UnsafePointer<Float>) -> (Float, Float, Float) {
        let n = Float(Self.tableSize)
        let yy = (y - 64) / 876, pb = (cb - 512) / 896, pr = (cr - 512) / 896
        // BT.2020 (non-constant luminance) Y'CbCr to R'G'B'.
        let r1 = yy + 1.4746 * pr
        let b1 = yy + 1.8814 * pb
        let g1 = (yy - 0.2627 * r1 - 0.0593 * b1) / 0.6780
        var r = Self.lookup(lin, r1 * n), g = Self.lookup(lin, g1 * n), b = Self.lookup(lin, b1 * n)
        if transfer == .hlg {
            let ys = 0.2627 * r + 0.6780 * g + 0.0593 * b
            let k = Self.lookup(gain, ys.squareRoot() * n)
            r *= k; g *= k; b *= k
        }
        let r7 = Self.m00 * r + Self.m01 * g + Self.m02 * b
        let g7 = Self.m10 * r + Self.m11 * g + Self.m12 * b
        let b7 = Self.m20 * r + Self.m21 * g + Self.m22 * b
        let sig = max(max(r7, max(g7, b7)), 1e-6)
        let scale = Self.hable(sig) / hablePeak / sig
        let steps = n / Float(Self.largestOutput).squareRoot()
        let rs = Self.lookup(signal, max(r7 * scale, 0).squareRoot() * steps)
        let gs = Self.lookup(signal, max(g7 * scale, 0).squareRoot() * steps)
        let bs = Self.lookup(signal, max(b7 * scale, 0).squareRoot() * steps)
        let luma = 0.2126 * rs + 0.7152 * gs + 0.0722 * bs
        return (luma, (bs - luma) / 1.8556, (rs - luma) / 1.5748)
    }

    @inline(__always)
    static func code(_ v: Float, offset: Float, scale: Float) -> UInt8 {
        // Clamped first, then half added and cut: round-half-up, which for what is left
        // (0...255) is what rounding gives, without a libm call per lane in the SIMD twin.
        UInt8(min(max(offset + scale * v, 0), 255) + 0.5)
    }

    /// The plain reference: each 2x2 block of pixels in turn.
    public func convertScalar(_ s: Source, into out: I420View) {
        toLinear.withUnsafeBufferPointer { lin in
            ootfGain.withUnsafeBufferPointer { gain in
                toSignal.withUnsafeBufferPointer { signal in
                    for cy in 0..<out.u.height {
                        for cx in 0..<out.u.width {
                            blockScalar(s, out, cx: cx, cy: cy, lin.baseAddress!, gain.baseAddress!, signal.baseAddress!)
                        }
                    }
                }
            }
        }
    }
}

extension ToneMap {
    typealias F8 = SIMD8<Float>

    @inline(__always)
    static func lookup8(_ table: UnsafePointer<Float>, _ x: F8) -> F8 {
        let clamped = x.clamped(lowerBound: F8(repeating: 0), upperBound: F8(repeating: Float(tableSize)))
        var result = F8()
        for lane in 0..<8 {
            let i = Int(clamped[lane])
            let f = clamped[lane] - Float(i)
            result[lane] = table[i] + (table[i + 1] - table[i]) * f
        }
        return result
    }

    @inline(__always)
    static func hable8(_ x: F8) -> F8 {
        let a: Float = 0.15, b: Float = 0.50, c: Float = 0.10, d: Float = 0.20, e: Float = 0.02, f: Float = 0.30
        return (x * (x * a + b * c) + d * e) / (x * (x * a + b) + d * f) - e / f
    }

    /// `pixel` for eight pixels: the same operations, lane by lane.
    @inline(__always)
    func pixel8(_ y: F8, _ cb: F8, _ cr: F8, _ lin: UnsafePointer<Float>, _ gain: UnsafePointer<Float>,
                _ signal: UnsafePointer<Float>) -> (F8, F8, F8) {
        let n = Float(Self.tableSize)
        let yy = (y - 64) / 876, pb = (cb - 512) / 896, pr = (cr - 512) / 896
        let r1 = yy + 1.4746 * pr
        let b1 = yy + 1.8814 * pb
        let g1 = (yy - 0.2627 * r1 - 0.0593 * b1) / 0.6780
        var r = Self.lookup8(lin, r1 * n), g = Self.lookup8(lin, g1 * n), b = Self.lookup8(lin, b1 * n)
        if transfer == .hlg {
            let ys = 0.2627 * r + 0.6780 * g + 0.0593 * b
            let k = Self.lookup8(gain, ys.squareRoot() * n)
            r *= k; g *= k; b *= k
        }
        let r7 = Self.m00 * r + Self.m01 * g + Self.m02 * b
        let g7 = Self.m10 * r + Self.m11 * g + Self.m12 * b
        let b7 = Self.m20 * r + Self.m21 * g + Self.m22 * b
        let sig = pointwiseMax(pointwiseMax(r7, pointwiseMax(g7, b7)), F8(repeating: 1e-6))
        let scale = Self.hable8(sig) / hablePeak / sig
        let steps = n / Float(Self.largestOutput).squareRoot()
        let zero = F8(repeating: 0)
        let rs = Self.lookup8(signal, pointwiseMax(r7 * scale, zero).squareRoot() * steps)
        let gs = Self.lookup8(signal, pointwiseMax(g7 * scale, zero).squareRoot() * steps)
        let bs = Self.lookup8(signal, pointwiseMax(b7 * scale, zero).squareRoot() * steps)
        let luma = 0.2126 * rs + 0.7152 * gs + 0.0722 * bs
        return (luma, (bs - luma) / 1.8556, (rs - luma) / 1.5748)
    }

    @inline(__always)
    static func codes8(_ v: F8, offset: Float, scale: Float) -> SIMD8<UInt8> {
        let c = (offset + scale * v).clamped(lowerBound: F8(repeating: 0), upperBound: F8(repeating: 255)) + 0.5
        // Lane by lane: the vector conversion from Float went through a generic, unspecialised
        // path that took a third of the kernel's time.
        var codes = SIMD8<UInt8>()
        for lane in 0..<8 { codes[lane] = UInt8(c[lane]) }
        return codes
    }

    /// Eight chroma samples (16x2 pixels) at a time; the plain reference does the right
    /// and bottom edges left over. The same bytes as `convertScalar`.
    public func convertSIMD(_ s: Source, into out: I420View, chromaRows: Range<Int>? = nil) {
        let rows = chromaRows ?? 0..<out.u.height
        // Whole 2x2 blocks in 8s; an odd last column or row is the reference's.
        let fullWidth = out.y.width / 2, fullHeight = out.y.height / 2
        let blocks = fullWidth / 8
        toLinear.withUnsafeBufferPointer { lin in
            ootfGain.withUnsafeBufferPointer { gain in
                toSignal.withUnsafeBufferPointer { signal in
                    let (l, g, sg) = (lin.baseAddress!, gain.baseAddress!, signal.baseAddress!)
                    for cy in rows where cy < fullHeight {
                        let uRow = s.u + cy * s.chromaStride, vRow = s.v + cy * s.chromaStride
                        let top = s.y + 2 * cy * s.yStride, bottom = top + s.yStride
                        let outTop = out.y.row(2 * cy), outBottom = out.y.row(2 * cy + 1)
                        for block in 0..<blocks {
                            let cx = block * 8
                            var cb = F8(), cr = F8(), tl = F8(), tr = F8(), bl = F8(), br = F8()
                            for lane in 0..<8 {
                                cb[lane] = Float(uRow[cx + lane]); cr[lane] = Float(vRow[cx + lane])
                                tl[lane] = Float(top[2 * (cx + lane)]); tr[lane] = Float(top[2 * (cx + lane) + 1])
                                bl[lane] = Float(bottom[2 * (cx + lane)]); br[lane] = Float(bottom[2 * (cx + lane) + 1])
                            }
                            let p0 = pixel8(tl, cb, cr, l, g, sg), p1 = pixel8(tr, cb, cr, l, g, sg)
                            let p2 = pixel8(bl, cb, cr, l, g, sg), p3 = pixel8(br, cb, cr, l, g, sg)
                            let y0 = Self.codes8(p0.0, offset: 16, scale: 219), y1 = Self.codes8(p1.0, offset: 16, scale: 219)
                            let y2 = Self.codes8(p2.0, offset: 16, scale: 219), y3 = Self.codes8(p3.0, offset: 16, scale: 219)
                            for lane in 0..<8 {
                                outTop[2 * (cx + lane)] = y0[lane]; outTop[2 * (cx + lane) + 1] = y1[lane]
                                outBottom[2 * (cx + lane)] = y2[lane]; outBottom[2 * (cx + lane) + 1] = y3[lane]
                            }
                            // Summed in the reference's order: top-left, top-right, bottom-left, bottom-right.
                            let sumB = ((p0.1 + p1.1) + p2.1) + p3.1, sumR = ((p0.2 + p1.2) + p2.2) + p3.2
                            let u = Self.codes8(sumB * 0.25, offset: 128, scale: 224)
                            let v = Self.codes8(sumR * 0.25, offset: 128, scale: 224)
                            for lane in 0..<8 {
                                out.u.row(cy)[cx + lane] = u[lane]
                                out.v.row(cy)[cx + lane] = v[lane]
                            }
                        }
                    }
                    // What is left: the columns after the last whole block of 8, and an odd last row.
                    let restColumns = (8 * blocks)..<out.u.width
                    for cy in rows {
                        let columns = cy < fullHeight ? restColumns : 0..<out.u.width
                        for cx in columns { blockScalar(s, out, cx: cx, cy: cy, l, g, sg) }
                    }
                }
            }
        }
    }

    /// One 2x2 block (edges clamped), as the reference does it.
    @inline(__always)
    func blockScalar(_ s: Source, _ out: I420View, cx: Int, cy: Int, _ lin: UnsafePointer<Float>,
                     _ gain: UnsafePointer<Float>, _ signal: UnsafePointer<Float>) {
        let cb = Float(s.u[cy * s.chromaStride + cx]), cr = Float(s.v[cy * s.chromaStride + cx])
        var sumB: Float = 0, sumR: Float = 0
        for dy in 0..<2 {
            let y = min(2 * cy + dy, out.y.height - 1)
            for dx in 0..<2 {
                let x = min(2 * cx + dx, out.y.width - 1)
                let (l, pb, pr) = pixel(Float(s.y[y * s.yStride + x]), cb, cr, lin, gain, signal)
                out.y.base[y * out.y.stride + x] = Self.code(l, offset: 16, scale: 219)
                sumB += pb
                sumR += pr
            }
        }
        out.u.base[cy * out.u.stride + cx] = Self.code(sumB * 0.25, offset: 128, scale: 224)
        out.v.base[cy * out.v.stride + cx] = Self.code(sumR * 0.25, offset: 128, scale: 224)
    }
}
