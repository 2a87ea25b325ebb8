import CVectorOps

/// The horizontal pass straight along a row, for enlarging: each block of 16 destination
/// pixels reads within 16 source bytes, so one load and one byte shuffle per tap give every
/// pixel its source bytes, where the general kernel transposes 16x16 tiles to filter
/// columns and transposes them back (about two thirds of a 720p-to-1080p enlargement).
extension Kernels {
    /// The same result as `horizontalScalar` with offset 0, to the bit (weights are at most
    /// 256 and sum to 256: every sum fits 16 bits and needs no clamping).
    public static func horizontalShuffledSIMD(_ row: UnsafePointer<UInt8>, table: FilterTable.Shuffled, taps: Int,
                                              into out: UnsafeMutablePointer<UInt8>) {
        if let blocks = table.lerp {
            shuffledLerpBlocks(row, blocks, out)
            return
        }
        switch taps {
        case 1: shuffledBlocks(row, table, taps: 1, out)
        case 2: shuffledBlocks(row, table, taps: 2, out)
        default: shuffledBlocks(row, table, taps: taps, out)
        }
    }

    /// Two taps whose weights sum to 256 (bilinear) as one rounded difference:
    /// `(a * w0 + b * w1 + 128) >> 8` is `a + ((b - a) * w1 + 128) >> 8`, and that shift is
    /// `pmulhrsw(b - a, w1 * 128)` exactly, with `a` the pixel of the larger weight so that
    /// `w1 * 128` fits 16 bits. Two multiplies per 16 pixels instead of four, and no rounding
    /// term or even/odd split.
    @inline(__always)
    static func lerp(_ base: SIMD16<UInt8>, _ other: SIMD16<UInt8>, scale: SIMD16<Int16>) -> SIMD16<UInt8> {
        let (base0, base1) = Lanes.widen(base), (other0, other1) = Lanes.widen(other)
        return Lanes.narrowClamped(base0 &+ dc_multiply_high_rounded(other0 &- base0, scale.lowHalf),
                                   base1 &+ dc_multiply_high_rounded(other1 &- base1, scale.highHalf))
    }

    /// The two-tap shuffled kernel through `lerp`, for tables that have `FilterTable.Shuffled.lerp`.
    static func shuffledLerpBlocks(_ row: UnsafePointer<UInt8>, _ blocks: [FilterTable.Shuffled.LerpBlock],
                                   _ out: UnsafeMutablePointer<UInt8>) {
        let src = UnsafeRawPointer(row), dst = UnsafeMutableRawPointer(out)
        blocks.withUnsafeBufferPointer { blocks in
            for block in blocks {
                let bytes = src.loadUnaligned(fromByteOffset: block.load, as: SIMD16<UInt8>.self)
                let result = lerp(dc_shuffle_bytes(bytes, block.bases), dc_shuffle_bytes(bytes, block.others),
                                  scale: block.scales)
                dst.storeBytes(of: result, toByteOffset: block.destination, as: SIMD16<UInt8>.self)
            }
        }
    }

    /// `verticalRowsSIMD` for two rows whose weights sum to 256, through `lerp`; the pixels
    /// from `x` on. Returns where it stopped (the rest is shorter than a block).
    static func verticalLerpRows(_ first: UnsafePointer<UInt8>, _ second: UnsafePointer<UInt8>,
                                 weights: UnsafePointer<Int16>, from x: Int, count: Int,
                                 into out: UnsafeMutablePointer<UInt8>) -> Int {
        var x = x
        let firstWeighsMore = weights[0] >= weights[1]
        let base = UnsafeRawPointer(firstWeighsMore ? first : second)
        let other = UnsafeRawPointer(firstWeighsMore ? second : first)
        let scale = SIMD16<Int16>(repeating: (firstWeighsMore ? weights[1] : weights[0]) &* 128)
        let dst = UnsafeMutableRawPointer(out)
        if weights[0] == weights[1] {
            // Halfway (a third of the rows of a 1.5x enlargement): the rounded mean, one pavgb.
            while x < count && count >= 16 {
                if x &+ 16 > count { x = count &- 16 }
                dst.storeBytes(of: average(base.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self),
                                           other.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self)),
                               toByteOffset: x, as: SIMD16<UInt8>.self)
                x &+= 16
            }
            return x
        }
        while x < count && count >= 16 {
            if x &+ 16 > count { x = count &- 16 }
            dst.storeBytes(of: lerp(base.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self),
                                    other.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self), scale: scale),
                           toByteOffset: x, as: SIMD16<UInt8>.self)
            x &+= 16
        }
        return x
    }

    /// `taps` constant at the call sites above, so that the tap loop unrolls.
    @inline(__always)
    private static func shuffledBlocks(_ row: UnsafePointer<UInt8>, _ table: FilterTable.Shuffled, taps: Int,
                                       _ out: UnsafeMutablePointer<UInt8>) {
        let src = UnsafeRawPointer(row), dst = UnsafeMutableRawPointer(out)
        table.loads.withUnsafeBufferPointer { loads in
            table.blockStarts.withUnsafeBufferPointer { blockStarts in
                table.indices.withUnsafeBufferPointer { indices in
                    table.weights.withUnsafeBufferPointer { weights in
                        for b in 0..<loads.count {
                            let bytes = src.loadUnaligned(fromByteOffset: Int(loads[b]), as: SIMD16<UInt8>.self)
                            var low = SIMD8<UInt16>(repeating: 128), high = SIMD8<UInt16>(repeating: 128)
                            for k in 0..<taps {
                                let picked = dc_shuffle_bytes(bytes, indices[b &* taps &+ k])
                                let weight = weights[b &* taps &+ k]
                                let (pickedLow, pickedHigh) = Lanes.widenUnsigned(picked)
                                low &+= pickedLow &* weight.lowHalf
                                high &+= pickedHigh &* weight.highHalf
                            }
                            dst.storeBytes(of: Lanes.narrow(low &>> 8, high &>> 8), toByteOffset: Int(blockStarts[b]),
                                           as: SIMD16<UInt8>.self)
                        }
                    }
                }
            }
        }
    }

}
