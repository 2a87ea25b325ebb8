/// The Y'CbCr matrices a source may be encoded with.
public enum YCbCrMatrix: String, Sendable, CaseIterable {
    case bt601
    case bt709
    case bt2020

    /// Luma weights of red and blue.
    var kr: Double {
        switch self {
        case .bt601: return 0.299
        case .bt709: return 0.2126
        case .bt2020: return 0.2627
        }
    }
    var kb: Double {
        switch self {
        case .bt601: return 0.114
        case .bt709: return 0.0722
        case .bt2020: return 0.0593
        }
    }

    /// R'G'B' -> (Y', Pb, Pr), Y' in 0...1 and Pb, Pr in -0.5...0.5.
    var forward: [[Double]] {
        let kg = 1 - kr - kb
        return [
            [kr, kg, kb],
            [-kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5],
            [0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr))],
        ]
    }
}

/// Re-encodes limited-range 4:2:0 Y'CbCr from one matrix to another, in place.
///
/// Grey stays grey under any change of matrix, so the conversion is
///   Y'  = Y + a*(Cb-128) + b*(Cr-128)
///   Cb' = 128 + c*(Cb-128) + d*(Cr-128)
///   Cr' = 128 + e*(Cb-128) + f*(Cr-128)
/// in 14-bit fixed point. Luma uses the chroma sample that covers it, as a decoder would.
public struct ColorConversion: Sendable, Equatable {
    public static let shift = 14
    public let lumaFromCb: Int32, lumaFromCr: Int32
    public let cbFromCb: Int32, cbFromCr: Int32
    public let crFromCb: Int32, crFromCr: Int32
    /// The same coefficients for the SIMD kernels; nil if they do not fit 16-bit lanes.
    public let lanes16: Lanes16?
    /// The same again for kernels that convert as they unpack (`PairLanes`); nil if they do
    /// not fit.
    public let pairLanes: PairLanes?

    public init?(from source: YCbCrMatrix, to target: YCbCrMatrix) {
        guard source != target else { return nil }
        let m = Self.multiply(target.forward, Self.invert(source.forward))
        let one = Double(1 << Self.shift)
        // Y is coded over 219 levels and chroma over 224, hence the 219/224 on luma rows.
        func q(_ v: Double) -> Int32 { Int32((v * one).rounded()) }
        lumaFromCb = q(m[0][1] * 219 / 224)
        lumaFromCr = q(m[0][2] * 219 / 224)
        cbFromCb = q(m[1][1]); cbFromCr = q(m[1][2])
        crFromCb = q(m[2][1]); crFromCr = q(m[2][2])
        lanes16 = Lanes16(lumaFromCb, lumaFromCr, cbFromCb, cbFromCr, crFromCb, crFromCr)
        pairLanes = PairLanes(lumaFromCb, lumaFromCr, cbFromCb, cbFromCr, crFromCb, crFromCr)
    }

    /// The conversion between two matrices, nil when they are the same: computed once for
    /// every pair (`init` works through arrays, a hundred allocations, too many per frame).
    public static func between(_ source: YCbCrMatrix, _ target: YCbCrMatrix) -> ColorConversion? {
        table[source]![target]!
    }
    private static let table: [YCbCrMatrix: [YCbCrMatrix: ColorConversion?]] = Dictionary(uniqueKeysWithValues:
        YCbCrMatrix.allCases.map { s in (s, Dictionary(uniqueKeysWithValues: YCbCrMatrix.allCases.map { t in (t, ColorConversion(from: s, to: t)) })) })

    /// Converts the pixels of `lumaRect` (and the chroma samples it uses) in place; the same
    /// result as `applyScalar`, to the bit. Luma rows sharing a chroma row go together, 32
    /// pixels at a time in 16-bit lanes (`Lanes16`), then the chroma 16 samples at a time;
    /// an odd first pixel and what is left after the last whole block go one by one.
    public func apply(to image: I420View, lumaRect: Rect) {
        guard let lanes = lanes16 else { return applyScalar(to: image, lumaRect: lumaRect) }
        let c = lumaRect.chroma420
        let first = lumaRect.x + (lumaRect.x & 1)  // whole chroma pairs only: from an even pixel
        let blocks = max(0, lumaRect.maxX - first) / 32, simdEnd = first + 32 * blocks
        var y = lumaRect.y
        while y < lumaRect.maxY {
            let pair = y & 1 == 0 && y + 1 < lumaRect.maxY
            let cb = image.u.row(y >> 1), cr = image.v.row(y >> 1)
            for row in y...(pair ? y + 1 : y) {
                let luma = image.y.row(row)
                if first > lumaRect.x { convertLuma(luma, cb, cr, lumaRect.x) }
                for x in simdEnd..<lumaRect.maxX { convertLuma(luma, cb, cr, x) }
            }
            Lanes16.convertLuma(image.y.row(y) + first, pair ? image.y.row(y + 1) + first : nil,
                                cb: cb + first / 2, cr: cr + first / 2, blocks: blocks, lanes)
            y += pair ? 2 : 1
        }
        let chromaBlocks = c.width / 16
        for y in c.y..<c.maxY {
            let cb = image.u.row(y), cr = image.v.row(y)
            Lanes16.convertChroma(cb + c.x, cr + c.x, blocks: chromaBlocks, lanes)
            for x in (c.x + 16 * chromaBlocks)..<c.maxX {
                let u = Int32(cb[x]) - 128, v = Int32(cr[x]) - 128
                cb[x] = clamp8(128 + ((cbFromCb * u + cbFromCr * v + (1 << 13)) >> Self.shift))
                cr[x] = clamp8(128 + ((crFromCb * u + crFromCr * v + (1 << 13)) >> Self.shift))
            }
        }
    }

    @inline(__always)
    private func convertLuma(_ row: UnsafeMutablePointer<UInt8>, _ cb: UnsafeRawPointer, _ cr: UnsafeRawPointer, _ x: Int) {
        let u = Int32(cb.load(fromByteOffset: x >> 1, as: UInt8.self)) - 128
        let v = Int32(cr.load(fromByteOffset: x >> 1, as: UInt8.self)) - 128
        row[x] = clamp8(Int32(row[x]) + ((lumaFromCb * u + lumaFromCr * v + (1 << 13)) >> Self.shift))
    }

    /// The reference: one pixel at a time.
    public func applyScalar(to image: I420View, lumaRect: Rect) {
        let c = lumaRect.chroma420
        let round = Int32(1 << (Self.shift - 1))
        for y in lumaRect.y..<lumaRect.maxY {
            let row = image.y.row(y)
            let cb = image.u.row(y >> 1), cr = image.v.row(y >> 1)
            for x in lumaRect.x..<lumaRect.maxX {
                let u = Int32(cb[x >> 1]) - 128, v = Int32(cr[x >> 1]) - 128
                let delta = (lumaFromCb * u + lumaFromCr * v + round) >> Self.shift
                row[x] = clamp8(Int32(row[x]) + delta)
            }
        }
        for y in c.y..<c.maxY {
            let cb = image.u.row(y), cr = image.v.row(y)
            for x in c.x..<c.maxX {
                let u = Int32(cb[x]) - 128, v = Int32(cr[x]) - 128
                cb[x] = clamp8(128 + ((cbFromCb * u + cbFromCr * v + round) >> Self.shift))
                cr[x] = clamp8(128 + ((crFromCb * u + crFromCr * v + round) >> Self.shift))
            }
        }
    }

    static func multiply(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
        (0..<3).map { i in (0..<3).map { j in (0..<3).reduce(0) { $0 + a[i][$1] * b[$1][j] } } }
    }

    static func invert(_ m: [[Double]]) -> [[Double]] {
        let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        func cof(_ r: Int, _ c: Int) -> Double {
            let rows = (0..<3).filter { $0 != r }, cols = (0..<3).filter { $0 != c }
            let d = m[rows[0]][cols[0]] * m[rows[1]][cols[1]] - m[rows[0]][cols[1]] * m[rows[1]][cols[0]]
            return ((r + c) % 2 == 0 ? d : -d)
        }
        return (0..<3).map { i in (0..<3).map { j in cof(j, i) / det } }
    }
}

@inline(__always)
func clamp8(_ v: Int32) -> UInt8 { UInt8(truncatingIfNeeded: min(max(v, 0), 255)) }
