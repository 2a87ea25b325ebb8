import CVectorOps

/// The SIMD side of `ColorConversion.apply`: the coefficients in 16-bit lanes and the row
/// kernels. The cameras' conversions call `apply` on each pair of rows right after writing
/// them, while they are in the L1 cache.
extension ColorConversion.Lanes16 {
    /// Two rows' luma, 32 pixels (16 chroma samples) at a time.
    @inline(never)
    static func convertLuma(_ luma0: UnsafeMutablePointer<UInt8>, _ luma1: UnsafeMutablePointer<UInt8>?,
                            cb: UnsafeMutablePointer<UInt8>, cr: UnsafeMutablePointer<UInt8>,
                            blocks: Int, _ k: Self) {
        let l0 = UnsafeMutableRawPointer(luma0)
        let u = UnsafeRawPointer(cb), v = UnsafeRawPointer(cr)
        // The odd last row of a frame, apart: the common loop then has no test in it.
        guard let luma1 else {
            for block in 0..<blocks {
                let cx = 16 &* block
                let (d0, d1, d2, d3) = deltas(u, v, cx, k)
                adjust(l0, 2 &* cx, d0, d1, d2, d3)
            }
            return
        }
        let l1 = UnsafeMutableRawPointer(luma1)
        for block in 0..<blocks {
            let cx = 16 &* block
            let (d0, d1, d2, d3) = deltas(u, v, cx, k)
            adjust(l0, 2 &* cx, d0, d1, d2, d3)
            adjust(l1, 2 &* cx, d0, d1, d2, d3)
        }
    }

    /// The luma changes of the 32 pixels under the 16 chroma samples at `cx`, in four halves.
    @inline(__always)
    fileprivate static func deltas(_ u: UnsafeRawPointer, _ v: UnsafeRawPointer, _ cx: Int, _ k: Self)
        -> (SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>) {
        let (ub, ut) = centred(u.loadUnaligned(fromByteOffset: cx, as: SIMD16<UInt8>.self))
        let (vb, vt) = centred(v.loadUnaligned(fromByteOffset: cx, as: SIMD16<UInt8>.self))
        let (d0, d1) = ColorConversion.perPixel(k.luma(ub, vb))
        let (d2, d3) = ColorConversion.perPixel(k.luma(ut, vt))
        return (d0, d1, d2, d3)
    }

    @inline(never)
    static func convertChroma(_ cb: UnsafeMutablePointer<UInt8>, _ cr: UnsafeMutablePointer<UInt8>,
                              blocks: Int, _ k: Self) {
        let u = UnsafeMutableRawPointer(cb), v = UnsafeMutableRawPointer(cr)
        for block in 0..<blocks {
            let cx = 16 &* block
            let (ub, ut) = centred(u.loadUnaligned(fromByteOffset: cx, as: SIMD16<UInt8>.self))
            let (vb, vt) = centred(v.loadUnaligned(fromByteOffset: cx, as: SIMD16<UInt8>.self))
            u.storeBytes(of: k.cb(ub, vb, ut, vt), toByteOffset: cx, as: SIMD16<UInt8>.self)
            v.storeBytes(of: k.cr(ub, vb, ut, vt), toByteOffset: cx, as: SIMD16<UInt8>.self)
        }
    }

    /// 16 samples as two halves of signed 16-bit lanes centred on 0.
    @inline(__always)
    fileprivate static func centred(_ x: SIMD16<UInt8>) -> (SIMD8<Int16>, SIMD8<Int16>) {
        let (low, high) = Lanes.widen(x)
        return (low &- 128, high &- 128)
    }

    /// The 32 pixels at `x` changed by four halves of per-pixel deltas, clamped.
    @_transparent
    fileprivate static func adjust(_ row: UnsafeMutableRawPointer, _ x: Int,
                                   _ d0: SIMD8<Int16>, _ d1: SIMD8<Int16>, _ d2: SIMD8<Int16>, _ d3: SIMD8<Int16>) {
        let (a0, a1) = Lanes.widen(row.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self))
        let (b0, b1) = Lanes.widen(row.loadUnaligned(fromByteOffset: x &+ 16, as: SIMD16<UInt8>.self))
        row.storeBytes(of: Lanes.narrowClamped(a0 &+ d0, a1 &+ d1), toByteOffset: x, as: SIMD16<UInt8>.self)
        row.storeBytes(of: Lanes.narrowClamped(b0 &+ d2, b1 &+ d3), toByteOffset: x &+ 16, as: SIMD16<UInt8>.self)
    }
}

extension ColorConversion {
    /// The conversion in 16-bit lanes, exact: each coefficient k split as hi·128 + lo with
    /// 0 <= lo < 128, so that for u, v in -128...127
    ///   (k·u + k'·v + 2^13) >> 14 == (hi·u + hi'·v + ((lo·u + lo'·v) >> 7) + 64) >> 7
    /// (the 2^13 is 64·128, and a floor of a floor by 128 is a floor by 16384). Every term
    /// fits an Int16 when the high parts are small, which `lanes16` checks.
    public struct Lanes16: Sendable, Equatable {
        struct Row: Sendable, Equatable {
            let hiU: Int16, loU: Int16, hiV: Int16, loV: Int16
            init?(_ ku: Int32, _ kv: Int32) {
                let hu = ku >> 7, hv = kv >> 7  // floor division: lo is never negative
                guard (abs(hu) + abs(hv)) * 128 + 320 < Int32(Int16.max) else { return nil }
                hiU = Int16(hu); loU = Int16(ku - hu * 128)
                hiV = Int16(hv); loV = Int16(kv - hv * 128)
            }
            @inline(__always)
            func apply(_ u: SIMD8<Int16>, _ v: SIMD8<Int16>) -> SIMD8<Int16> {
                let high = u &* hiU &+ v &* hiV, low = u &* loU &+ v &* loV
                return (high &+ (low &>> 7) &+ 64) &>> 7
            }
        }
        let lumaRow: Row, cbRow: Row, crRow: Row

        /// nil when a coefficient is too large for 16-bit lanes (none of the matrices here is).
        init?(_ lumaFromCb: Int32, _ lumaFromCr: Int32, _ cbFromCb: Int32, _ cbFromCr: Int32,
              _ crFromCb: Int32, _ crFromCr: Int32) {
            guard let l = Row(lumaFromCb, lumaFromCr), let b = Row(cbFromCb, cbFromCr), let r = Row(crFromCb, crFromCr)
            else { return nil }
            (lumaRow, cbRow, crRow) = (l, b, r)
        }

        /// The luma change of 8 chroma samples (u, v centred on 0).
        @inline(__always)
        func luma(_ u: SIMD8<Int16>, _ v: SIMD8<Int16>) -> SIMD8<Int16> { lumaRow.apply(u, v) }
        // `@_transparent`, as `adjust` is: with `@inline(__always)` the optimiser still left
        // one of each pair a call per 16 samples (record-yuyv-1080p 6.56M -> 5.94M
        // instructions a frame once none was).
        /// 16 samples' new Cb from their (u, v) in two halves.
        @_transparent
        func cb(_ u0: SIMD8<Int16>, _ v0: SIMD8<Int16>, _ u1: SIMD8<Int16>, _ v1: SIMD8<Int16>) -> SIMD16<UInt8> {
            Lanes.narrowClamped(cbRow.apply(u0, v0) &+ 128, cbRow.apply(u1, v1) &+ 128)
        }
        @_transparent
        func cr(_ u0: SIMD8<Int16>, _ v0: SIMD8<Int16>, _ u1: SIMD8<Int16>, _ v1: SIMD8<Int16>) -> SIMD16<UInt8> {
            Lanes.narrowClamped(crRow.apply(u0, v0) &+ 128, crRow.apply(u1, v1) &+ 128)
        }
    }

    /// 8 chroma samples' luma changes, each repeated for the two pixels it covers: 16 lanes
    /// as two halves.
    @inline(__always)
    static func perPixel(_ delta: SIMD8<Int16>) -> (SIMD8<Int16>, SIMD8<Int16>) {
        var low = SIMD8<Int16>(), high = SIMD8<Int16>()
        for i in 0..<4 {
            low[2 &* i] = delta[i]; low[2 &* i &+ 1] = delta[i]
            high[2 &* i] = delta[i &+ 4]; high[2 &* i &+ 1] = delta[i &+ 4]
        }
        return (low, high)
    }
}

/// Lane width changes written as plain lane loops, which LLVM turns into single
/// instructions (pmovzxbw, packuswb, punpcklwd). The standard library's
/// `init(truncatingIfNeeded:)` between vector widths was left as a call per use in the
/// kernels above (64 calls per 32 pixels; record-yuyv-1080p 2.3 -> 5.3 ms).
enum Lanes {
    /// 16 bytes zero-extended to two halves of 16-bit lanes.
    @inline(__always)
    static func widen(_ x: SIMD16<UInt8>) -> (SIMD8<Int16>, SIMD8<Int16>) {
        var low = SIMD8<Int16>(), high = SIMD8<Int16>()
        for i in 0..<8 { low[i] = Int16(x[i]); high[i] = Int16(x[i &+ 8]) }
        return (low, high)
    }

    /// 16 bytes zero-extended to two halves of unsigned 16-bit lanes (for sums of products
    /// of bytes and weights up to 256, which overflow Int16).
    @inline(__always)
    static func widenUnsigned(_ x: SIMD16<UInt8>) -> (SIMD8<UInt16>, SIMD8<UInt16>) {
        var low = SIMD8<UInt16>(), high = SIMD8<UInt16>()
        for i in 0..<8 { low[i] = UInt16(x[i]); high[i] = UInt16(x[i &+ 8]) }
        return (low, high)
    }

    /// Two halves of unsigned 16-bit lanes already within 0...255, as bytes.
    @inline(__always)
    static func narrow(_ low: SIMD8<UInt16>, _ high: SIMD8<UInt16>) -> SIMD16<UInt8> {
        var out = SIMD16<UInt8>()
        for i in 0..<8 {
            out[i] = UInt8(truncatingIfNeeded: low[i])
            out[i &+ 8] = UInt8(truncatingIfNeeded: high[i])
        }
        return out
    }

    /// 32 bytes in two halves split into their even-indexed and odd-indexed bytes.
    @inline(__always)
    static func deinterleave(_ low: SIMD16<UInt8>, _ high: SIMD16<UInt8>) -> (evens: SIMD16<UInt8>, odds: SIMD16<UInt8>) {
        var evens = SIMD16<UInt8>(), odds = SIMD16<UInt8>()
        for i in 0..<8 {
            evens[i] = low[2 &* i]
            odds[i] = low[2 &* i &+ 1]
            evens[i &+ 8] = high[2 &* i]
            odds[i &+ 8] = high[2 &* i &+ 1]
        }
        return (evens, odds)
    }

    /// Two halves of 16-bit lanes clamped to 0...255 and packed into bytes.
    @inline(__always)
    static func narrowClamped(_ low: SIMD8<Int16>, _ high: SIMD8<Int16>) -> SIMD16<UInt8> {
        var out = SIMD16<UInt8>()
        for i in 0..<8 {
            out[i] = UInt8(truncatingIfNeeded: min(max(low[i], 0), 255))
            out[i &+ 8] = UInt8(truncatingIfNeeded: min(max(high[i], 0), 255))
        }
        return out
    }
}

extension ColorConversion {
    /// The conversion as pmaddwd takes it: each output sample is k·U + k'·V of the chroma
    /// pair as the camera sends it (U, V adjacent, 0...255), summed exactly in 32 bits, so the
    /// centring on 128 and the rounding fold into one added constant:
    ///   (k·(U - 128) + k'·(V - 128) + 2^13) >> 14 == (k·U + k'·V + round) >> 14
    /// with round = 2^13 - 128·(k + k'), plus 128·2^14 for Cb and Cr, which are stored
    /// offset by 128. Valid when every coefficient fits an Int16 and a luma change fits a
    /// signed byte (it is added with paddsb); every conversion between the matrices here does.
    public struct PairLanes: Sendable, Equatable {
        let luma: SIMD8<Int16>, cb: SIMD8<Int16>, cr: SIMD8<Int16>
        let lumaRound: SIMD4<Int32>, cbRound: SIMD4<Int32>, crRound: SIMD4<Int32>

        init?(_ lumaFromCb: Int32, _ lumaFromCr: Int32, _ cbFromCb: Int32, _ cbFromCr: Int32,
              _ crFromCb: Int32, _ crFromCr: Int32) {
            let all = [lumaFromCb, lumaFromCr, cbFromCb, cbFromCr, crFromCb, crFromCr]
            guard all.allSatisfy({ abs($0) <= Int32(Int16.max) }),
                  (abs(lumaFromCb) + abs(lumaFromCr)) * 128 + (1 << 13) < 127 << ColorConversion.shift
            else { return nil }
            func pairs(_ k: Int32, _ k2: Int32) -> SIMD8<Int16> {
                SIMD8(Int16(k), Int16(k2), Int16(k), Int16(k2), Int16(k), Int16(k2), Int16(k), Int16(k2))
            }
            func round(_ k: Int32, _ k2: Int32, offset: Int32) -> SIMD4<Int32> {
                SIMD4(repeating: (1 << 13) - 128 * (k + k2) + offset << ColorConversion.shift)
            }
            luma = pairs(lumaFromCb, lumaFromCr)
            cb = pairs(cbFromCb, cbFromCr)
            cr = pairs(crFromCb, crFromCr)
            lumaRound = round(lumaFromCb, lumaFromCr, offset: 0)
            cbRound = round(cbFromCb, cbFromCr, offset: 128)
            crRound = round(crFromCb, crFromCr, offset: 128)
        }

        /// 16 chroma samples' outputs by `k`, from their (U, V) pairs in four vectors of
        /// words, as 16-bit lanes (saturated, which no output reaches).
        @_transparent
        func apply(_ k: SIMD8<Int16>, _ round: SIMD4<Int32>, _ pairs: (SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>))
            -> (SIMD8<Int16>, SIMD8<Int16>) {
            let shift = Int32(ColorConversion.shift)
            let s0 = (dc_multiply_add_pairs(pairs.0, k) &+ round) &>> shift
            let s1 = (dc_multiply_add_pairs(pairs.1, k) &+ round) &>> shift
            let s2 = (dc_multiply_add_pairs(pairs.2, k) &+ round) &>> shift
            let s3 = (dc_multiply_add_pairs(pairs.3, k) &+ round) &>> shift
            return (dc_pack_words_saturated(s0, s1), dc_pack_words_saturated(s2, s3))
        }
    }
}
