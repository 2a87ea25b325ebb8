import CVectorOps

/// Two-tap filtering (bilinear: enlarging's both passes) as a rounded difference, through
/// the rounded high multiply Swift cannot spell (`CVectorOps`).
extension Kernels {
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

    /// `verticalRowsSIMD` for two rows (their weights sum to 256, as every table's do),
    /// through `lerp`. Returns where it stopped: the rest is shorter than a block.
    static func verticalLerpRows(_ first: UnsafePointer<UInt8>, _ second: UnsafePointer<UInt8>,
                                 weights: UnsafePointer<Int16>, count: Int,
                                 into out: UnsafeMutablePointer<UInt8>) -> Int {
        var x = 0
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
}
