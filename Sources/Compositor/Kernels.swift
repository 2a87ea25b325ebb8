/// The row kernels the resampler is built from, each as a plain scalar reference and a
/// SIMD version that must agree with it bit for bit (tests run both, benchmarks time both).
///
/// Fixed-point contract (weights in 1/256ths summing to 256, see `FilterTable`): each pass
/// computes `(sum of weight * pixel + 128) >> 8`, vertical first, then horizontal. All
/// arithmetic fits 16-bit lanes (at most 255 * 256 + 128), so SIMD16<UInt16> carries it.
public enum Kernels {
    public static let lanes = 16
    typealias Bytes = SIMD16<UInt8>
    typealias Words = SIMD16<UInt16>

    // MARK: Vertical pass: `taps` rows -> one row.

    /// `out[x] = (sum_k weights[k] * first[k * stride + x] + 128) >> 8` for x in 0..<count.
    public static func verticalScalar(_ first: UnsafePointer<UInt8>, stride: Int, taps: Int,
                                      weights: UnsafePointer<Int16>, count: Int,
                                      into out: UnsafeMutablePointer<UInt8>) {
        for x in 0..<count {
            var acc = 128
            for k in 0..<taps { acc += Int(weights[k]) * Int(first[k * stride + x]) }
            out[x] = UInt8(acc >> 8)
        }
    }

    public static func verticalSIMD(_ first: UnsafePointer<UInt8>, stride: Int, taps: Int,
                                    weights: UnsafePointer<Int16>, count: Int,
                                    into out: UnsafeMutablePointer<UInt8>) {
        var x = 0
        let raw = UnsafeRawPointer(first)
        let dst = UnsafeMutableRawPointer(out)
        if taps == 2 {  // bilinear and 2:1: the common case, unrolled
            let w0 = Words(repeating: UInt16(weights[0])), w1 = Words(repeating: UInt16(weights[1]))
            while x < count && count >= 32 {
                // The last block overlaps the one before rather than going scalar: it
                // rewrites a few pixels with the same values.
                if x &+ 32 > count { x = count &- 32 }
                dst.storeBytes(of: blend2(raw.loadUnaligned(fromByteOffset: x, as: Words.self),
                                          raw.loadUnaligned(fromByteOffset: stride &+ x, as: Words.self), w0, w1),
                               toByteOffset: x, as: Words.self)
                x &+= 32
            }
        } else if count >= 32 {
            // Each tap's weight spread over the lanes once per row, not once per block: the
            // spreading (four instructions and a sign check) was a fifth of the tap loop.
            withUnsafeTemporaryAllocation(of: Words.self, capacity: taps) { spread in
                let w = spread.baseAddress!
                for k in 0..<taps { (w + k).initialize(to: Words(repeating: UInt16(truncatingIfNeeded: weights[k]))) }
                while x < count {
                    if x &+ 32 > count { x = count &- 32 }
                    var even = round, odd = round
                    var row = raw + x
                    for k in 0..<taps {
                        let v = row.loadUnaligned(as: Words.self)
                        even &+= evens(v) &* w[k]
                        odd &+= odds(v) &* w[k]
                        row += stride
                    }
                    dst.storeBytes(of: pack(even: even, odd: odd), toByteOffset: x, as: Words.self)
                    x &+= 32
                }
            }
        }
        if x < count {
            verticalScalar(first + x, stride: stride, taps: taps, weights: weights, count: count - x, into: out + x)
        }
    }

    // 32 pixels in sixteen 16-bit lanes: the even pixels are the low bytes, the odd ones the
    // high bytes. Working on the two halves separately widens and narrows with AND, shift
    // and OR only (Swift's SIMD conversion initialisers can end up as calls, not vpmovzx).
    @inline(__always) static var round: Words { Words(repeating: 128) }  // not a stored global: those need swift_once on every use
    @inline(__always) static func evens(_ v: Words) -> Words { v & 0x00FF }
    @inline(__always) static func odds(_ v: Words) -> Words { v &>> 8 }
    /// 32 pixels of row `a` and row `b` weighted `w0`/`w1` and rounded, back in byte order.
    @inline(__always) static func blend2(_ a: Words, _ b: Words, _ w0: Words, _ w1: Words) -> Words {
        pack(even: evens(a) &* w0 &+ evens(b) &* w1 &+ round, odd: odds(a) &* w0 &+ odds(b) &* w1 &+ round)
    }
    /// Sums with 8 fraction bits back to 32 bytes in order: even sums to the low bytes.
    @inline(__always) static func pack(even: Words, odd: Words) -> Words { (even &>> 8) | (odd & 0xFF00) }

    /// The same over `taps` rows given by pointer (rows of a ring buffer are not evenly spaced).
    public static func verticalRowsSIMD(_ rows: UnsafePointer<UnsafePointer<UInt8>>, taps: Int,
                                        weights: UnsafePointer<Int16>, count: Int,
                                        into out: UnsafeMutablePointer<UInt8>) {
        var x = 0
        let dst = UnsafeMutableRawPointer(out)
        if taps == 2 {
            x = verticalLerpRows(rows[0], rows[1], weights: weights, count: count, into: out)
        } else {
            while x < count && count >= 32 {
                if x &+ 32 > count { x = count &- 32 }
                var even = round, odd = round
                for k in 0..<taps {
                    let v = UnsafeRawPointer(rows[k]).loadUnaligned(fromByteOffset: x, as: Words.self)
                    let w = Words(repeating: UInt16(weights[k]))
                    even &+= evens(v) &* w
                    odd &+= odds(v) &* w
                }
                dst.storeBytes(of: pack(even: even, odd: odd), toByteOffset: x, as: Words.self)
                x &+= 32
            }
        }
        while x < count {
            var acc = 128
            for k in 0..<taps { acc += Int(weights[k]) * Int(rows[k][x]) }
            out[x] = UInt8(acc >> 8)
            x += 1
        }
    }

    // MARK: Horizontal pass, row by row (the reference).

    /// `out[i] = (sum_k w[i][k] * row[starts[i] - offset + k] + 128) >> 8`.
    public static func horizontalScalar(_ row: UnsafePointer<UInt8>, offset: Int, table: FilterTable,
                                        into out: UnsafeMutablePointer<UInt8>) {
        let t = table.taps
        table.starts.withUnsafeBufferPointer { starts in
            table.weights.withUnsafeBufferPointer { w in
                for i in 0..<table.count {
                    var acc = 128
                    let s = Int(starts[i]) - offset
                    for k in 0..<t { acc += Int(w[i * t + k]) * Int(row[s + k]) }
                    out[i] = UInt8(acc >> 8)
                }
            }
        }
    }

    // MARK: Horizontal pass on transposed columns: 16 rows at once, no gathers.

    /// `columns` holds 16 rows transposed: the 16 pixels of source column x at
    /// `columns[(x - offset) * 16 ..< +16]`. Writes output column i of the 16 rows at
    /// `out[i * 16 ..< +16]`, by the same arithmetic as `horizontalScalar`.
    public static func columnsScalar(_ columns: UnsafePointer<UInt8>, offset: Int, table: FilterTable,
                                     into out: UnsafeMutablePointer<UInt8>) {
        let t = table.taps
        for i in 0..<table.count {
            let s = Int(table.starts[i]) - offset
            for r in 0..<16 {
                var acc = 128
                for k in 0..<t { acc += Int(table.weights[i * t + k]) * Int(columns[(s + k) * 16 + r]) }
                out[i * 16 + r] = UInt8(acc >> 8)
            }
        }
    }

    public static func columnsSIMD(_ columns: UnsafePointer<UInt8>, offset: Int, table: FilterTable,
                                   into out: UnsafeMutablePointer<UInt8>) {
        let t = table.taps
        let src = UnsafeRawPointer(columns), dst = UnsafeMutableRawPointer(out)
        let pairs = table.pairs
        // Two output columns per vector: lanes 0-7 hold column i's 16 rows as 8 byte pairs,
        // lanes 8-15 column i+1's; the weights are laid out to match (see FilterTable.pairs).
        pairs.starts.withUnsafeBufferPointer { starts in
            pairs.weights.withUnsafeBufferPointer { weights in
                let w = UnsafeRawPointer(weights.baseAddress!)
                if t == 2 {
                    for p in 0..<pairs.count {
                        let a = src + (Int(starts[2 &* p]) &- offset) &* 16
                        let b = src + (Int(starts[2 &* p &+ 1]) &- offset) &* 16
                        let v0 = Words(lowHalf: a.loadUnaligned(as: SIMD8<UInt16>.self),
                                       highHalf: b.loadUnaligned(as: SIMD8<UInt16>.self))
                        let v1 = Words(lowHalf: a.loadUnaligned(fromByteOffset: 16, as: SIMD8<UInt16>.self),
                                       highHalf: b.loadUnaligned(fromByteOffset: 16, as: SIMD8<UInt16>.self))
                        let w0 = w.load(fromByteOffset: p &* 64, as: Words.self)
                        let w1 = w.load(fromByteOffset: p &* 64 &+ 32, as: Words.self)
                        let even = evens(v0) &* w0 &+ evens(v1) &* w1 &+ round
                        let odd = odds(v0) &* w0 &+ odds(v1) &* w1 &+ round
                        let result = pack(even: even, odd: odd)
                        if 2 &* p &+ 1 < table.count {
                            dst.storeBytes(of: result, toByteOffset: p &* 32, as: Words.self)
                        } else {
                            dst.storeBytes(of: result.lowHalf, toByteOffset: p &* 32, as: SIMD8<UInt16>.self)
                        }
                    }
                    return
                }
                for p in 0..<pairs.count {
                    var a = src + (Int(starts[2 &* p]) &- offset) &* 16
                    var b = src + (Int(starts[2 &* p &+ 1]) &- offset) &* 16
                    var even = round, odd = round
                    var wk = w + p &* t &* 32
                    for _ in 0..<t {
                        let v = Words(lowHalf: a.loadUnaligned(as: SIMD8<UInt16>.self),
                                      highHalf: b.loadUnaligned(as: SIMD8<UInt16>.self))
                        let weight = wk.load(as: Words.self)
                        even &+= evens(v) &* weight
                        odd &+= odds(v) &* weight
                        a += 16
                        b += 16
                        wk += 32
                    }
                    let result = pack(even: even, odd: odd)
                    if 2 &* p &+ 1 < table.count {
                        dst.storeBytes(of: result, toByteOffset: p &* 32, as: Words.self)
                    } else {
                        dst.storeBytes(of: result.lowHalf, toByteOffset: p &* 32, as: SIMD8<UInt16>.self)
                    }
                }
            }
        }
    }

    // MARK: Exactly 2:1 (`FilterTable.isHalving`): neighbours pair up, no transposes needed.

    /// `out[i] = (128 * row[2i] + 128 * row[2i+1] + 128) >> 8`, i.e. the rounded-up mean.
    public static func halveScalar(_ row: UnsafePointer<UInt8>, count: Int, into out: UnsafeMutablePointer<UInt8>) {
        for i in 0..<count { out[i] = UInt8((Int(row[2 * i]) + Int(row[2 * i + 1]) + 1) >> 1) }
    }

    public static func halveSIMD(_ row: UnsafePointer<UInt8>, count: Int, into out: UnsafeMutablePointer<UInt8>) {
        var i = 0
        let src = UnsafeRawPointer(row)
        let dst = UnsafeMutableRawPointer(out)
        while i < count && count >= 16 {
            if i &+ 16 > count { i = count &- 16 }
            let pairs = src.loadUnaligned(fromByteOffset: 2 &* i, as: SIMD32<UInt8>.self)
            let a = pairs.evenHalf, b = pairs.oddHalf
            dst.storeBytes(of: average(a, b), toByteOffset: i, as: Bytes.self)
            i &+= 16
        }
        if i < count { halveScalar(row + 2 * i, count: count - i, into: out + i) }
    }

    /// 2:1 both ways: each pixel of a row pair's vertical means (`halveScalar`'s rounding,
    /// the vertical pass's answer for weights 128/128), then neighbours' means across. The
    /// same bytes as `verticalSIMD` into a band and `halveSIMD` from it.
    public static func halveRowsScalar(_ top: UnsafePointer<UInt8>, _ bottom: UnsafePointer<UInt8>, count: Int,
                                       into out: UnsafeMutablePointer<UInt8>) {
        for i in 0..<count {
            let left = (Int(top[2 * i]) + Int(bottom[2 * i]) + 1) >> 1
            let right = (Int(top[2 * i + 1]) + Int(bottom[2 * i + 1]) + 1) >> 1
            out[i] = UInt8((left + right + 1) >> 1)
        }
    }

    /// Two averages of bytes per 16 output pixels instead of the general vertical pass's
    /// widening multiplies (4K into 1080p: 52 instructions per 32 source bytes down to a few)
    /// and without the band written and read back between the passes.
    public static func halveRowsSIMD(_ top: UnsafePointer<UInt8>, _ bottom: UnsafePointer<UInt8>, count: Int,
                                     into out: UnsafeMutablePointer<UInt8>) {
        var i = 0
        let upper = UnsafeRawPointer(top), lower = UnsafeRawPointer(bottom)
        let dst = UnsafeMutableRawPointer(out)
        while i < count && count >= 16 {
            if i &+ 16 > count { i = count &- 16 }
            let at = 2 &* i
            // Halves of 16 bytes: a byte shift of SIMD32 scalarises, and SIMD32's evenHalf of
            // a vector built here stayed a call.
            let low = average(upper.loadUnaligned(fromByteOffset: at, as: Bytes.self),
                              lower.loadUnaligned(fromByteOffset: at, as: Bytes.self))
            let high = average(upper.loadUnaligned(fromByteOffset: at &+ 16, as: Bytes.self),
                               lower.loadUnaligned(fromByteOffset: at &+ 16, as: Bytes.self))
            let (left, right) = Lanes.deinterleave(low, high)
            dst.storeBytes(of: average(left, right), toByteOffset: i, as: Bytes.self)
            i &+= 16
        }
        if i < count { halveRowsScalar(top + 2 * i, bottom + 2 * i, count: count - i, into: out + i) }
    }

    /// (a + b + 1) >> 1 without leaving 8 bits (the identity behind pavgb and urhadd).
    @inline(__always) static func average(_ a: Bytes, _ b: Bytes) -> Bytes { (a | b) &- ((a ^ b) &>> 1) }

    // MARK: Copy

    public static func copyScalar(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, count: Int) {
        for i in 0..<count { dst[i] = src[i] }
    }

    public static func copySIMD(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, count: Int) {
        dst.update(from: src, count: count)  // memcpy: already the widest moves the CPU has
    }
}
