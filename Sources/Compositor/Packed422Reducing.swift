/// Packed 4:2:2 camera buffers (YUYV, UYVY) to I420 at 1/2 or 1/4 size, re-encoded to the
/// output matrix in the same pass: for the camera that is the inset. A JPEG decoder gives a
/// reduced picture for less work (its DCT scaling); an uncompressed frame was unpacked and
/// re-encoded whole, 1080p on both cores of its capture thread, for a 160x213 inset that the
/// resampler then shrank from a third of that frame, read again from memory.
///
/// Each output sample is the rounded mean of the block it covers: 2^s x 2^s pixels for luma;
/// for chroma, the 2^s x 2^(s+1) samples of 4:2:2 chroma under an output chroma sample. Only
/// whole blocks are taken (`reduces`); every camera size divides.
extension CameraFormats {
    /// The reductions there are kernels for: 1/2 and 1/4.
    public static let packed422Shifts = 1...2

    /// Whether a frame of `size` can be reduced by 1/2^shift in whole blocks.
    public static func packed422Reduces(_ size: Size, shift: Int) -> Bool {
        packed422Shifts.contains(shift) && size.width % (2 << shift) == 0 && size.height % (2 << shift) == 0
    }

    /// The reference, one output sample at a time, then the matrix.
    public static func packed422ReducedScalar(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, shift: Int,
                                              into out: I420View, converting conversion: ColorConversion?) {
        precondition(packed422Shifts.contains(shift))
        let n = 1 << shift
        let lo = order.lumaOffset, co = order.chromaOffset
        for oy in 0..<out.y.height {
            let luma = out.y.row(oy)
            for ox in 0..<out.y.width {
                var sum = 0
                for dy in 0..<n {
                    let row = src + (oy * n + dy) * stride
                    for dx in 0..<n { sum += Int(row[2 * (ox * n + dx) + lo]) }
                }
                luma[ox] = UInt8((sum + n * n / 2) >> (2 * shift))
            }
        }
        for cy in 0..<out.u.height {
            let u = out.u.row(cy), v = out.v.row(cy)
            for cx in 0..<out.u.width {
                var su = 0, sv = 0
                for dy in 0..<2 * n {
                    let row = src + (cy * 2 * n + dy) * stride
                    for dx in 0..<n {
                        let pair = 4 * (cx * n + dx) + co
                        su += Int(row[pair])
                        sv += Int(row[pair + 2])
                    }
                }
                u[cx] = UInt8((su + n * n) >> (2 * shift + 1))
                v[cx] = UInt8((sv + n * n) >> (2 * shift + 1))
            }
        }
        if let conversion { conversion.applyScalar(to: out, lumaRect: Rect(x: 0, y: 0, width: out.y.width, height: out.y.height)) }
    }

    /// The same result as the reference, to the bit. `chromaRows` limits the work to those
    /// output chroma rows and the luma rows they cover, so two threads can share a frame;
    /// `columns` to the output luma columns the inset reads (`ScalePlan.lumaColumnsRead`),
    /// widened to whole chroma blocks: the other columns are left as they were.
    public static func packed422ReducedSIMD(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, shift: Int,
                                            into whole: I420View, converting conversion: ColorConversion?,
                                            chromaRows: Range<Int>? = nil, columns: Range<Int>? = nil) {
        precondition(packed422Shifts.contains(shift))
        let rows = chromaRows ?? 0..<whole.u.height
        guard !rows.isEmpty else { return }
        let n = 1 << shift
        // Blocks are 16 output samples; a frame narrower than one chroma block (no camera)
        // takes the reference.
        guard whole.u.width >= 16 else {
            packed422ReducedScalar(src + 2 * n * rows.lowerBound * stride, stride: stride, order: order, shift: shift,
                                   into: whole.chromaRows(rows), converting: conversion)
            return
        }
        // Columns from here on count from the first converted one: each output luma sample
        // is n pixels, 2n bytes, of the source, and each chroma sample covers two of them.
        let chroma = blockColumns(columns, chromaWidth: whole.u.width)
        let out = whole.columns(2 * chroma.lowerBound..<2 * chroma.upperBound)
        let raw = UnsafeRawPointer(src) + 2 * n * 2 * chroma.lowerBound
        let lumaOdd = order == .uyvy
        let group = 2 * n, rowBytes = 2 * out.y.width * n
        // The next group of rows is asked for while this one is summed (the hardware
        // prefetcher alone leaves the first rows of each group waiting on memory), a third
        // before each of the three passes over the group rather than all at once, which
        // outran the misses a core keeps in flight; the first group before the loop.
        for r in 0..<group { Prefetch.bytes(raw + (group * rows.lowerBound + r) * stride, count: rowBytes) }
        for cy in rows {
            let top = raw + group * cy * stride
            let next = cy + 1 < rows.upperBound ? top + group * stride : nil
            func prefetchNext(_ part: Int) {
                guard let next else { return }
                for r in group * part / 3..<group * (part + 1) / 3 { Prefetch.bytes(next + r * stride, count: rowBytes) }
            }
            if shift == 1 {
                prefetchNext(0)
                reducedLuma2(top, stride: stride, odd: lumaOdd, into: out.y.row(2 * cy), width: out.y.width)
                prefetchNext(1)
                reducedLuma2(top + n * stride, stride: stride, odd: lumaOdd, into: out.y.row(2 * cy + 1), width: out.y.width)
                prefetchNext(2)
                reducedChroma2(top, stride: stride, odd: !lumaOdd, u: out.u.row(cy), v: out.v.row(cy), width: out.u.width)
            } else {
                prefetchNext(0)
                reducedLuma4(top, stride: stride, odd: lumaOdd, into: out.y.row(2 * cy), width: out.y.width)
                prefetchNext(1)
                reducedLuma4(top + n * stride, stride: stride, odd: lumaOdd, into: out.y.row(2 * cy + 1), width: out.y.width)
                prefetchNext(2)
                reducedChroma4(top, stride: stride, odd: !lumaOdd, u: out.u.row(cy), v: out.v.row(cy), width: out.u.width)
            }
            // Both output rows and their chroma are in the L1 cache: re-encode them now.
            conversion?.apply(to: out, lumaRect: Rect(x: 0, y: 2 * cy, width: out.y.width, height: 2))
        }
    }

    /// The chroma columns that cover luma `columns` (all of them when nil), at least one
    /// block of 16 wide.
    static func blockColumns(_ columns: Range<Int>?, chromaWidth: Int) -> Range<Int> {
        guard let columns else { return 0..<chromaWidth }
        let lower = max(0, columns.lowerBound / 2), upper = min(chromaWidth, (columns.upperBound + 1) / 2)
        guard upper - lower < 16 else { return lower..<upper }
        let start = min(lower, chromaWidth - 16)
        return start..<start + 16
    }

    // The block kernels, one per shift so that every loop below has constant bounds. Each
    // takes 16 output samples at a time and overlaps the last block rather than go scalar.

    /// `body` at the start of each block of 16 of `width` samples, the last moved back to end
    /// at `width` (overlapping the one before: the outputs depend on the source alone).
    @inline(__always)
    static func eachBlock(of width: Int, _ body: (Int) -> Void) {
        var x = 0
        while x < width {
            if x &+ 16 > width { x = width &- 16 }
            body(x)
            x &+= 16
        }
    }

    @inline(__always)
    static func store(means u: SIMD16<UInt8>, _ v: SIMD16<UInt8>, _ uRow: UnsafeMutablePointer<UInt8>,
                      _ vRow: UnsafeMutablePointer<UInt8>, at cx: Int) {
        UnsafeMutableRawPointer(uRow).storeBytes(of: u, toByteOffset: cx, as: SIMD16<UInt8>.self)
        UnsafeMutableRawPointer(vRow).storeBytes(of: v, toByteOffset: cx, as: SIMD16<UInt8>.self)
    }

    /// 1/2: 16 luma from 2 rows of 32 pixels.
    @inline(__always)
    static func reducedLuma2(_ top: UnsafeRawPointer, stride: Int, odd: Bool, into luma: UnsafeMutablePointer<UInt8>,
                             width w: Int) {
        let out = UnsafeMutableRawPointer(luma)
        eachBlock(of: w) { x in
            var a = SIMD16<UInt16>(), b = SIMD16<UInt16>()
            for r in 0..<2 {
                let p = top + r &* stride + 4 &* x
                a &+= samples(p, 0, odd: odd)
                b &+= samples(p, 32, odd: odd)
            }
            let sums = SIMD16<UInt16>(lowHalf: pairSums(a), highHalf: pairSums(b))
            out.storeBytes(of: narrow((sums &+ 2) &>> 2), toByteOffset: x, as: SIMD16<UInt8>.self)
        }
    }

    /// 1/4: 16 luma from 4 rows of 64 pixels.
    @inline(__always)
    static func reducedLuma4(_ top: UnsafeRawPointer, stride: Int, odd: Bool, into luma: UnsafeMutablePointer<UInt8>,
                             width w: Int) {
        let out = UnsafeMutableRawPointer(luma)
        eachBlock(of: w) { x in
            let (a, b, c, d) = columnSums(top + 8 &* x, stride: stride, odd: odd)
            let sums = SIMD16<UInt16>(lowHalf: SIMD8(lowHalf: pairSums(pairSums(a)), highHalf: pairSums(pairSums(b))),
                                      highHalf: SIMD8(lowHalf: pairSums(pairSums(c)), highHalf: pairSums(pairSums(d))))
            out.storeBytes(of: narrow((sums &+ 8) &>> 4), toByteOffset: x, as: SIMD16<UInt8>.self)
        }
    }

    /// 1/2: 16 U and 16 V from 4 rows of 32 chroma pairs (64 pixels).
    @inline(__always)
    static func reducedChroma2(_ top: UnsafeRawPointer, stride: Int, odd: Bool, u: UnsafeMutablePointer<UInt8>,
                               v: UnsafeMutablePointer<UInt8>, width cw: Int) {
        eachBlock(of: cw) { cx in
            // Each group is 8 pairs: U V U V ... in 16 lanes.
            let (s0, s1, s2, s3) = columnSums(top + 8 &* cx, stride: stride, odd: odd)
            let us = SIMD16<UInt16>(lowHalf: SIMD8(lowHalf: pairSums(evenLanes(s0)), highHalf: pairSums(evenLanes(s1))),
                                    highHalf: SIMD8(lowHalf: pairSums(evenLanes(s2)), highHalf: pairSums(evenLanes(s3))))
            let vs = SIMD16<UInt16>(lowHalf: SIMD8(lowHalf: pairSums(oddLanes(s0)), highHalf: pairSums(oddLanes(s1))),
                                    highHalf: SIMD8(lowHalf: pairSums(oddLanes(s2)), highHalf: pairSums(oddLanes(s3))))
            store(means: narrow((us &+ 4) &>> 3), narrow((vs &+ 4) &>> 3), u, v, at: cx)
        }
    }

    /// 1/4: 16 U and 16 V from 8 rows of 64 chroma pairs (128 pixels).
    @inline(__always)
    static func reducedChroma4(_ top: UnsafeRawPointer, stride: Int, odd: Bool, u: UnsafeMutablePointer<UInt8>,
                               v: UnsafeMutablePointer<UInt8>, width cw: Int) {
        eachBlock(of: cw) { cx in
            let q0 = chromaQuarter4(top, 16 &* cx, stride: stride, odd: odd)
            let q1 = chromaQuarter4(top, 16 &* cx &+ 64, stride: stride, odd: odd)
            let q2 = chromaQuarter4(top, 16 &* cx &+ 128, stride: stride, odd: odd)
            let q3 = chromaQuarter4(top, 16 &* cx &+ 192, stride: stride, odd: odd)
            let us = SIMD16<UInt16>(lowHalf: SIMD8(lowHalf: q0.u, highHalf: q1.u), highHalf: SIMD8(lowHalf: q2.u, highHalf: q3.u))
            let vs = SIMD16<UInt16>(lowHalf: SIMD8(lowHalf: q0.v, highHalf: q1.v), highHalf: SIMD8(lowHalf: q2.v, highHalf: q3.v))
            store(means: narrow((us &+ 16) &>> 5), narrow((vs &+ 16) &>> 5), u, v, at: cx)
        }
    }

    /// The even or odd bytes of 4 rows of the 128 bytes at `p`, summed down each column, in
    /// four groups of 16 lanes.
    @inline(__always)
    static func columnSums(_ p: UnsafeRawPointer, stride: Int, odd: Bool)
        -> (SIMD16<UInt16>, SIMD16<UInt16>, SIMD16<UInt16>, SIMD16<UInt16>) {
        var a = SIMD16<UInt16>(), b = SIMD16<UInt16>(), c = SIMD16<UInt16>(), d = SIMD16<UInt16>()
        for r in 0..<4 {
            let row = p + r &* stride
            a &+= samples(row, 0, odd: odd)
            b &+= samples(row, 32, odd: odd)
            c &+= samples(row, 64, odd: odd)
            d &+= samples(row, 96, odd: odd)
        }
        return (a, b, c, d)
    }

    /// 1/4: 4 U and 4 V sums from 8 rows of the 16 chroma pairs at `offset`.
    @inline(__always)
    static func chromaQuarter4(_ top: UnsafeRawPointer, _ offset: Int, stride: Int, odd: Bool)
        -> (u: SIMD4<UInt16>, v: SIMD4<UInt16>) {
        var a = SIMD16<UInt16>(), b = SIMD16<UInt16>()
        for r in 0..<8 {
            let p = top + r &* stride + offset
            a &+= samples(p, 0, odd: odd)
            b &+= samples(p, 32, odd: odd)
        }
        return (pairSums(pairSums(SIMD16(lowHalf: evenLanes(a), highHalf: evenLanes(b)))),
                pairSums(pairSums(SIMD16(lowHalf: oddLanes(a), highHalf: oddLanes(b)))))
    }

    /// The even (`odd` false) or odd bytes of the 32 at `p + offset`, in 16-bit lanes.
    @inline(__always)
    static func samples(_ p: UnsafeRawPointer, _ offset: Int, odd: Bool) -> SIMD16<UInt16> {
        let words = p.loadUnaligned(fromByteOffset: offset, as: Kernels.Words.self)
        return odd ? Kernels.odds(words) : Kernels.evens(words)
    }

    /// Sums of neighbouring lanes.
    @inline(__always)
    static func pairSums(_ v: SIMD16<UInt16>) -> SIMD8<UInt16> {
        var r = SIMD8<UInt16>()
        for i in 0..<8 { r[i] = v[2 &* i] &+ v[2 &* i &+ 1] }
        return r
    }
    @inline(__always)
    static func pairSums(_ v: SIMD8<UInt16>) -> SIMD4<UInt16> {
        var r = SIMD4<UInt16>()
        for i in 0..<4 { r[i] = v[2 &* i] &+ v[2 &* i &+ 1] }
        return r
    }
    /// The even lanes (U of U V U V ...), and the odd ones.
    @inline(__always)
    static func evenLanes(_ v: SIMD16<UInt16>) -> SIMD8<UInt16> {
        var r = SIMD8<UInt16>()
        for i in 0..<8 { r[i] = v[2 &* i] }
        return r
    }
    @inline(__always)
    static func oddLanes(_ v: SIMD16<UInt16>) -> SIMD8<UInt16> {
        var r = SIMD8<UInt16>()
        for i in 0..<8 { r[i] = v[2 &* i &+ 1] }
        return r
    }

    /// 16-bit lanes known to be at most 255, as bytes.
    @inline(__always)
    static func narrow(_ v: SIMD16<UInt16>) -> SIMD16<UInt8> { Lanes.narrow(v.lowHalf, v.highHalf) }
}
