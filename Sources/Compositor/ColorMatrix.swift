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
    }

    /// The conversion between two matrices, nil when they are the same: computed once for
    /// every pair (`init` works through arrays, a hundred allocations, too many per frame).
    public static func between(_ source: YCbCrMatrix, _ target: YCbCrMatrix) -> ColorConversion? {
        table[source]![target]!
    }
    private static let table: [YCbCrMatrix: [YCbCrMatrix: ColorConversion?]] = Dictionary(uniqueKeysWithValues:
        YCbCrMatrix.allCases.map { s in (s, Dictionary(uniqueKeysWithValues: YCbCrMatrix.allCases.map { t in (t, ColorConversion(from: s, to: t)) })) })

    /// Converts the pixels of `lumaRect` (and the chroma samples it uses) in place,
    /// 16 pixels at a time; the same result as `applyScalar`, to the bit.
    public func apply(to image: I420View, lumaRect: Rect) {
        let c = lumaRect.chroma420
        let round32 = SIMD8<Int32>(repeating: 1 << (Int32(Self.shift) - 1))
        for y in lumaRect.y..<lumaRect.maxY {
            let row = image.y.row(y)
            let cb = UnsafeRawPointer(image.u.row(y >> 1)), cr = UnsafeRawPointer(image.v.row(y >> 1))
            var x = lumaRect.x
            // Whole chroma pairs only: start on an even pixel, finish the tail one by one.
            if x & 1 == 1 { convertLuma(row, cb, cr, x); x += 1 }
            x = lumaRowSIMD(row, cb, cr, from: x, to: lumaRect.maxX, round32)
            while x < lumaRect.maxX { convertLuma(row, cb, cr, x); x += 1 }
        }
        for y in c.y..<c.maxY {
            let cb = image.u.row(y), cr = image.v.row(y)
            var x = c.x
            x = chromaRowSIMD(cb, cr, from: x, to: c.maxX, round32)
            while x < c.maxX {
                let u = Int32(cb[x]) - 128, v = Int32(cr[x]) - 128
                cb[x] = clamp8(128 + ((cbFromCb * u + cbFromCr * v + (1 << 13)) >> Self.shift))
                cr[x] = clamp8(128 + ((crFromCb * u + crFromCr * v + (1 << 13)) >> Self.shift))
                x += 1
            }
        }
    }

    /// Luma from `x` in blocks of 16 while they fit; returns where it stopped. Row by row in
    /// functions of their own: in one big function, the compiler left the SIMD conversions
    /// as calls to generic code (with the 8-lane vectors below: record-yuyv-1080p 4.4 -> 3.0 ms p50).
    @inline(never)
    private func lumaRowSIMD(_ row: UnsafeMutablePointer<UInt8>, _ cb: UnsafeRawPointer, _ cr: UnsafeRawPointer,
                             from start: Int, to end: Int, _ round32: SIMD8<Int32>) -> Int {
        var x = start
        while x + 16 <= end {
            let u = SIMD8<Int32>(truncatingIfNeeded: cb.loadUnaligned(fromByteOffset: x >> 1, as: SIMD8<UInt8>.self)) &- 128
            let v = SIMD8<Int32>(truncatingIfNeeded: cr.loadUnaligned(fromByteOffset: x >> 1, as: SIMD8<UInt8>.self)) &- 128
            let delta = Self.mix(u, lumaFromCb, v, lumaFromCr, round32)
            // Each chroma sample serves two luma pixels: put its 16-bit delta in both
            // halves of a 32-bit lane and read the lanes back as 16-bit ones. In 8-lane
            // halves throughout: 16-lane Int16/Int32 vectors were left as calls to
            // generic clamps and conversions (perf showed them as separate functions).
            let half = SIMD8<UInt32>(truncatingIfNeeded: SIMD8<UInt16>(truncatingIfNeeded: delta))
            let pairs = half | (half &<< 16)
            let lumaBytes = UnsafeRawPointer(row).loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self)
            let low = Self.addClamped(lumaBytes.lowHalf, unsafeBitCast(pairs.lowHalf, to: SIMD8<Int16>.self))
            let high = Self.addClamped(lumaBytes.highHalf, unsafeBitCast(pairs.highHalf, to: SIMD8<Int16>.self))
            UnsafeMutableRawPointer(row).storeBytes(of: SIMD16(lowHalf: low, highHalf: high), toByteOffset: x, as: SIMD16<UInt8>.self)
            x += 16
        }
        return x
    }

    /// Chroma from `x` in blocks of 8 while they fit; returns where it stopped.
    @inline(never)
    private func chromaRowSIMD(_ cb: UnsafeMutablePointer<UInt8>, _ cr: UnsafeMutablePointer<UInt8>,
                               from start: Int, to end: Int, _ round32: SIMD8<Int32>) -> Int {
        var x = start
        while x + 8 <= end {
            let u = SIMD8<Int32>(truncatingIfNeeded: UnsafeRawPointer(cb + x).loadUnaligned(as: SIMD8<UInt8>.self)) &- 128
            let v = SIMD8<Int32>(truncatingIfNeeded: UnsafeRawPointer(cr + x).loadUnaligned(as: SIMD8<UInt8>.self)) &- 128
            let nu: SIMD8<Int32> = Self.mix(u, cbFromCb, v, cbFromCr, round32)
            let nv: SIMD8<Int32> = Self.mix(u, crFromCb, v, crFromCr, round32)
            UnsafeMutableRawPointer(cb + x).storeBytes(of: Self.clampToByte(nu &+ 128), as: SIMD8<UInt8>.self)
            UnsafeMutableRawPointer(cr + x).storeBytes(of: Self.clampToByte(nv &+ 128), as: SIMD8<UInt8>.self)
            x += 8
        }
        return x
    }

    /// (a·ka + b·kb + round) >> shift, lane by lane.
    @inline(__always)
    static func mix(_ a: SIMD8<Int32>, _ ka: Int32, _ b: SIMD8<Int32>, _ kb: Int32, _ round: SIMD8<Int32>) -> SIMD8<Int32> {
        let products: SIMD8<Int32> = a &* ka &+ b &* kb
        return (products &+ round) &>> Int32(shift)
    }

    // Clamps and width changes as lane loops (see `Lanes`): `pointwiseMin`/`pointwiseMax`
    // and the conversion initialisers were calls here (perf: 4 per 16 pixels).
    @inline(__always)
    static func addClamped(_ luma: SIMD8<UInt8>, _ delta: SIMD8<Int16>) -> SIMD8<UInt8> {
        var out = SIMD8<UInt8>()
        for i in 0..<8 { out[i] = UInt8(truncatingIfNeeded: min(max(Int16(luma[i]) &+ delta[i], 0), 255)) }
        return out
    }

    @inline(__always)
    static func clampToByte(_ v: SIMD8<Int32>) -> SIMD8<UInt8> {
        var out = SIMD8<UInt8>()
        for i in 0..<8 { out[i] = UInt8(truncatingIfNeeded: min(max(v[i], 0), 255)) }
        return out
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
