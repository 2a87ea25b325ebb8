/// 10-bit limited-range 4:2:0 planes (what 10-bit video decodes to, or libswscale makes of it).
// Sendable: read-only pointers into a decoded frame its owner keeps.
public struct TenBitPlanes: @unchecked Sendable {
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

/// 10-bit SDR sources in another matrix than the output's (BT.2020 or BT.601 10-bit video):
/// re-encoded and cut to 8 bits in one step, so they are rounded once. Cut to 8 bits first
/// and re-encoded after, as 8-bit sources are, they were rounded twice.
///
/// The same fixed-point arithmetic as `ColorConversion` on 8-bit samples, two more bits
/// below the point:
///   Y'  = (Y10 * 2^14 + a*(Cb10-512) + b*(Cr10-512) + 2^15) >> 16
///   Cb' = 128 + (c*(Cb10-512) + d*(Cr10-512) + 2^15) >> 16, Cr' likewise.
/// Luma uses the chroma sample that covers it. `narrowSIMD` (8 chroma samples, 16x2 pixels,
/// at a time) gives the same bytes as `narrowScalar`.
extension ColorConversion {
    static let narrowShift: Int32 = Int32(shift) + 2
    static let narrowRound: Int32 = 1 << (narrowShift - 1)

    /// The plain reference: each pixel, then each chroma sample, in turn.
    public func narrowScalar(_ s: TenBitPlanes, into out: I420View) {
        for y in 0..<out.y.height {
            let row = out.y.row(y), source = s.y + y * s.yStride
            let cb = s.u + (y >> 1) * s.chromaStride, cr = s.v + (y >> 1) * s.chromaStride
            for x in 0..<out.y.width {
                let u = Int32(cb[x >> 1]) - 512, v = Int32(cr[x >> 1]) - 512
                row[x] = narrowedLuma(Int32(source[x]), u, v)
            }
        }
        for y in 0..<out.u.height {
            let cb = s.u + y * s.chromaStride, cr = s.v + y * s.chromaStride
            for x in 0..<out.u.width {
                let u = Int32(cb[x]) - 512, v = Int32(cr[x]) - 512
                (out.u.row(y)[x], out.v.row(y)[x]) = narrowedChroma(u, v)
            }
        }
    }

    @inline(__always)
    func narrowedLuma(_ y: Int32, _ u: Int32, _ v: Int32) -> UInt8 {
        let sum: Int32 = (y << Int32(Self.shift)) + lumaFromCb * u + lumaFromCr * v + Self.narrowRound
        return clamp8(sum >> Self.narrowShift)
    }

    @inline(__always)
    func narrowedChroma(_ u: Int32, _ v: Int32) -> (UInt8, UInt8) {
        let cb: Int32 = (cbFromCb * u + cbFromCr * v + Self.narrowRound) >> Self.narrowShift
        let cr: Int32 = (crFromCb * u + crFromCr * v + Self.narrowRound) >> Self.narrowShift
        return (clamp8(128 + cb), clamp8(128 + cr))
    }

    typealias I8 = SIMD8<Int32>

    /// Eight samples `step` apart, widened.
    @inline(__always)
    static func load8(_ p: UnsafePointer<UInt16>, _ step: Int) -> I8 {
        I8(Int32(p[0]), Int32(p[step]), Int32(p[2 * step]), Int32(p[3 * step]),
           Int32(p[4 * step]), Int32(p[5 * step]), Int32(p[6 * step]), Int32(p[7 * step]))
    }

    /// Clamped to 0...255; the low byte of each lane is the sample. With shifts and masks: the
    /// blends `replacing(with:where:)` gives were a call per vector, a third of the time.
    @inline(__always)
    static func clamped8(_ v: I8) -> I8 {
        let nonNegative = v & ~(v &>> 31)
        let over = (255 &- nonNegative) &>> 31  // all ones above 255
        return (nonNegative & ~over) | (over & 255)
    }

    /// The same bytes as `narrowScalar`; the columns after the last whole block of 8 chroma
    /// samples, and an odd last row, are the reference's.
    public func narrowSIMD(_ s: TenBitPlanes, into out: I420View) {
        let blocks = (out.y.width / 2) / 8
        let round = I8(repeating: Self.narrowRound), shift = I8(repeating: Self.narrowShift)
        for cy in 0..<out.u.height {
            let cbRow = s.u + cy * s.chromaStride, crRow = s.v + cy * s.chromaStride
            let lumaRows = (2 * cy)..<min(2 * cy + 2, out.y.height)
            for block in 0..<blocks {
                let cx = 8 * block
                let u = Self.load8(cbRow + cx, 1) &- 512, v = Self.load8(crRow + cx, 1) &- 512
                let lumaDelta = lumaFromCb &* u &+ lumaFromCr &* v &+ round
                for y in lumaRows {
                    let source = s.y + y * s.yStride + 2 * cx, row = out.y.row(y) + 2 * cx
                    let even = Self.clamped8(((Self.load8(source, 2) &<< Int32(Self.shift)) &+ lumaDelta) &>> shift)
                    let odd = Self.clamped8(((Self.load8(source + 1, 2) &<< Int32(Self.shift)) &+ lumaDelta) &>> shift)
                    for lane in 0..<8 {
                        row[2 * lane] = UInt8(truncatingIfNeeded: even[lane])
                        row[2 * lane + 1] = UInt8(truncatingIfNeeded: odd[lane])
                    }
                }
                let cb = Self.clamped8(128 &+ ((cbFromCb &* u &+ cbFromCr &* v &+ round) &>> shift))
                let cr = Self.clamped8(128 &+ ((crFromCb &* u &+ crFromCr &* v &+ round) &>> shift))
                for lane in 0..<8 {
                    out.u.row(cy)[cx + lane] = UInt8(truncatingIfNeeded: cb[lane])
                    out.v.row(cy)[cx + lane] = UInt8(truncatingIfNeeded: cr[lane])
                }
            }
            // What is left of this chroma row: its samples and the pixels they cover.
            for cx in (8 * blocks)..<out.u.width {
                let u = Int32(cbRow[cx]) - 512, v = Int32(crRow[cx]) - 512
                for y in lumaRows {
                    for x in (2 * cx)..<min(2 * cx + 2, out.y.width) {
                        out.y.row(y)[x] = narrowedLuma(Int32(s.y[y * s.yStride + x]), u, v)
                    }
                }
                (out.u.row(cy)[cx], out.v.row(cy)[cx]) = narrowedChroma(u, v)
            }
        }
    }
}
