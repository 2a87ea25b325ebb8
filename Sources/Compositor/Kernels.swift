/// The row kernels the resampler is built from, each as a plain scalar reference and a
/// SIMD version that must agree with it bit for bit (tests run both, benchmarks time both).
///
/// Fixed-point contract (weights in 1/256ths summing to 256, see `FilterTable`):
/// - a first pass sums `weight * pixel` exactly into UInt16 (at most 255 * 256);
/// - a second pass sums `weight * first` into UInt32 and rounds: `(sum + 32768) >> 16`.
/// Which axis goes first changes nothing: integer sums commute, only the end rounds.
public enum Kernels {
    public static let lanes = 16
    typealias Bytes = SIMD16<UInt8>
    typealias Words = SIMD16<UInt16>
    typealias Longs = SIMD16<UInt32>

    // MARK: First pass, vertical: rows of bytes -> one row of UInt16 sums.

    /// `out[x] = sum_k weights[k] * rows[k][x]` for x in 0..<count, rows `stride` apart.
    public static func verticalSumScalar(_ first: UnsafePointer<UInt8>, stride: Int, taps: Int,
                                         weights: UnsafePointer<Int16>, count: Int,
                                         into out: UnsafeMutablePointer<UInt16>) {
        for x in 0..<count {
            var acc = 0
            for k in 0..<taps { acc += Int(weights[k]) * Int(first[k * stride + x]) }
            out[x] = UInt16(acc)
        }
    }

    public static func verticalSumSIMD(_ first: UnsafePointer<UInt8>, stride: Int, taps: Int,
                                       weights: UnsafePointer<Int16>, count: Int,
                                       into out: UnsafeMutablePointer<UInt16>) {
        var x = 0
        let raw = UnsafeRawPointer(first)
        let dst = UnsafeMutableRawPointer(out)
        if taps == 2 {  // bilinear and 2:1 area: the common case, unrolled
            let w0 = Words(repeating: UInt16(weights[0])), w1 = Words(repeating: UInt16(weights[1]))
            while x + lanes <= count {
                let a = Words(truncatingIfNeeded: raw.loadUnaligned(fromByteOffset: x, as: Bytes.self))
                let b = Words(truncatingIfNeeded: raw.loadUnaligned(fromByteOffset: stride + x, as: Bytes.self))
                dst.storeBytes(of: a &* w0 &+ b &* w1, toByteOffset: 2 * x, as: Words.self)
                x += lanes
            }
        } else {
            while x + lanes <= count {
                var acc = Words(repeating: 0)
                for k in 0..<taps {
                    let v = raw.loadUnaligned(fromByteOffset: k * stride + x, as: Bytes.self)
                    acc &+= Words(truncatingIfNeeded: v) &* Words(repeating: UInt16(weights[k]))
                }
                dst.storeBytes(of: acc, toByteOffset: 2 * x, as: Words.self)
                x += lanes
            }
        }
        if x < count {
            verticalSumScalar(first + x, stride: stride, taps: taps, weights: weights, count: count - x, into: out + x)
        }
    }

    // MARK: First pass, horizontal: one row of bytes -> UInt16 sums (for enlarging).

    /// `out[i] = sum_k w[i][k] * row[starts[i] + k]`.
    public static func horizontalSumScalar(_ row: UnsafePointer<UInt8>, table: FilterTable,
                                           into out: UnsafeMutablePointer<UInt16>) {
        let t = table.taps
        table.starts.withUnsafeBufferPointer { starts in
            table.weights.withUnsafeBufferPointer { w in
                for i in 0..<table.count {
                    var acc = 0
                    let s = Int(starts[i])
                    for k in 0..<t { acc += Int(w[i * t + k]) * Int(row[s + k]) }
                    out[i] = UInt16(acc)
                }
            }
        }
    }

    public static func horizontalSumSIMD(_ row: UnsafePointer<UInt8>, table: FilterTable,
                                         into out: UnsafeMutablePointer<UInt16>) {
        let t = table.taps
        let blocks = table.blocked
        let dst = UnsafeMutableRawPointer(out)
        blocks.starts.withUnsafeBufferPointer { starts in
            blocks.weights.withUnsafeBufferPointer { weights in
                let sw = UnsafeRawPointer(weights.baseAddress!)
                for b in 0..<blocks.count {
                    let s = starts.baseAddress! + b * lanes
                    var acc = Words(repeating: 0)
                    for k in 0..<t {
                        var g = Words()
                        for j in 0..<lanes { g[j] = UInt16(row[Int(s[j]) + k]) }
                        acc &+= g &* sw.load(fromByteOffset: (b * t + k) * 2 * lanes, as: Words.self)
                    }
                    let i = b * lanes
                    if i + lanes <= table.count {
                        dst.storeBytes(of: acc, toByteOffset: 2 * i, as: Words.self)
                    } else {
                        for j in 0..<(table.count - i) { out[i + j] = acc[j] }
                    }
                }
            }
        }
    }

    // MARK: Second pass, horizontal: UInt16 sums -> bytes (for shrinking).

    /// `out[i] = (sum_k w[i][k] * mid[starts[i] - offset + k] + 32768) >> 16`.
    public static func horizontalRoundScalar(_ mid: UnsafePointer<UInt16>, offset: Int, table: FilterTable,
                                             into out: UnsafeMutablePointer<UInt8>) {
        let t = table.taps
        table.starts.withUnsafeBufferPointer { starts in
            table.weights.withUnsafeBufferPointer { w in
                for i in 0..<table.count {
                    var acc = 0
                    let s = Int(starts[i]) - offset
                    for k in 0..<t { acc += Int(w[i * t + k]) * Int(mid[s + k]) }
                    out[i] = UInt8((acc + 32768) >> 16)
                }
            }
        }
    }

    public static func horizontalRoundSIMD(_ mid: UnsafePointer<UInt16>, offset: Int, table: FilterTable,
                                           into out: UnsafeMutablePointer<UInt8>) {
        if table.isHalving {
            halveRoundSIMD(mid + Int(table.starts[0]) - offset, count: table.count, into: out)
            return
        }
        let t = table.taps
        let blocks = table.blocked
        let dst = UnsafeMutableRawPointer(out)
        let round = Longs(repeating: 32768)
        blocks.starts.withUnsafeBufferPointer { starts in
            blocks.weights.withUnsafeBufferPointer { weights in
                let sw = UnsafeRawPointer(weights.baseAddress!)
                let m = mid - offset
                for b in 0..<blocks.count {
                    let s = starts.baseAddress! + b * lanes
                    var acc = round
                    for k in 0..<t {
                        var g = Longs()
                        for j in 0..<lanes { g[j] = UInt32(m[Int(s[j]) + k]) }
                        let w = Longs(truncatingIfNeeded: sw.load(fromByteOffset: (b * t + k) * 2 * lanes, as: Words.self))
                        acc &+= g &* w
                    }
                    let bytes = Bytes(truncatingIfNeeded: acc &>> 16)
                    let i = b * lanes
                    if i + lanes <= table.count {
                        dst.storeBytes(of: bytes, toByteOffset: i, as: Bytes.self)
                    } else {
                        for j in 0..<(table.count - i) { out[i + j] = bytes[j] }
                    }
                }
            }
        }
    }

    /// The 2:1 area case (`FilterTable.isHalving`): `out[i] = (128 * (m[2i] + m[2i+1]) + 32768) >> 16`,
    /// i.e. `(m[2i] + m[2i+1] + 256) >> 9`. Pairs split with even/odd lanes, no gathers.
    public static func halveRoundScalar(_ mid: UnsafePointer<UInt16>, count: Int, into out: UnsafeMutablePointer<UInt8>) {
        for i in 0..<count { out[i] = UInt8((Int(mid[2 * i]) + Int(mid[2 * i + 1]) + 256) >> 9) }
    }

    public static func halveRoundSIMD(_ mid: UnsafePointer<UInt16>, count: Int, into out: UnsafeMutablePointer<UInt8>) {
        var i = 0
        let src = UnsafeRawPointer(mid)
        let dst = UnsafeMutableRawPointer(out)
        let round = Longs(repeating: 256)
        while i + lanes <= count {
            let lo = src.loadUnaligned(fromByteOffset: 4 * i, as: Words.self)
            let hi = src.loadUnaligned(fromByteOffset: 4 * i + 2 * lanes, as: Words.self)
            let pairs = SIMD32<UInt16>(lowHalf: lo, highHalf: hi)
            let sum = Longs(truncatingIfNeeded: pairs.evenHalf) &+ Longs(truncatingIfNeeded: pairs.oddHalf) &+ round
            dst.storeBytes(of: Bytes(truncatingIfNeeded: sum &>> 9), toByteOffset: i, as: Bytes.self)
            i += lanes
        }
        if i < count { halveRoundScalar(mid + 2 * i, count: count - i, into: out + i) }
    }

    // MARK: Second pass, vertical: rows of UInt16 sums -> bytes (for enlarging).

    /// `out[x] = (sum_k weights[k] * rows[k][x] + 32768) >> 16`.
    public static func verticalRoundScalar(_ rows: UnsafePointer<UnsafePointer<UInt16>>, taps: Int,
                                           weights: UnsafePointer<Int16>, count: Int,
                                           into out: UnsafeMutablePointer<UInt8>) {
        for x in 0..<count {
            var acc = 0
            for k in 0..<taps { acc += Int(weights[k]) * Int(rows[k][x]) }
            out[x] = UInt8((acc + 32768) >> 16)
        }
    }

    public static func verticalRoundSIMD(_ rows: UnsafePointer<UnsafePointer<UInt16>>, taps: Int,
                                         weights: UnsafePointer<Int16>, count: Int,
                                         into out: UnsafeMutablePointer<UInt8>) {
        var x = 0
        let dst = UnsafeMutableRawPointer(out)
        let round = Longs(repeating: 32768)
        if taps == 2 {
            let r0 = UnsafeRawPointer(rows[0]), r1 = UnsafeRawPointer(rows[1])
            let w0 = Longs(repeating: UInt32(weights[0])), w1 = Longs(repeating: UInt32(weights[1]))
            while x + lanes <= count {
                let a = Longs(truncatingIfNeeded: r0.loadUnaligned(fromByteOffset: 2 * x, as: Words.self))
                let b = Longs(truncatingIfNeeded: r1.loadUnaligned(fromByteOffset: 2 * x, as: Words.self))
                let sum = a &* w0 &+ b &* w1 &+ round
                dst.storeBytes(of: Bytes(truncatingIfNeeded: sum &>> 16), toByteOffset: x, as: Bytes.self)
                x += lanes
            }
        } else {
            while x + lanes <= count {
                var acc = round
                for k in 0..<taps {
                    let v = UnsafeRawPointer(rows[k]).loadUnaligned(fromByteOffset: 2 * x, as: Words.self)
                    acc &+= Longs(truncatingIfNeeded: v) &* Longs(repeating: UInt32(weights[k]))
                }
                dst.storeBytes(of: Bytes(truncatingIfNeeded: acc &>> 16), toByteOffset: x, as: Bytes.self)
                x += lanes
            }
        }
        if x < count {
            for x in x..<count {
                var acc = 0
                for k in 0..<taps { acc += Int(weights[k]) * Int(rows[k][x]) }
                out[x] = UInt8((acc + 32768) >> 16)
            }
        }
    }

    // MARK: Copy

    public static func copyScalar(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, count: Int) {
        for i in 0..<count { dst[i] = src[i] }
    }

    public static func copySIMD(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, count: Int) {
        dst.update(from: src, count: count)  // memcpy: already the widest moves the CPU has
    }
}
