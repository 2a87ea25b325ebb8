/// 2^x and log2(x) on Float, for the tone mapping's curves: eight lanes at a time (two SSE
/// registers, so two chains of dependent steps in flight: a fifth faster than four lanes),
/// with a scalar twin that does the same operations in the same order and so gives the same
/// bits. Only additions, multiplications and bit patterns: no table (a lane-by-lane gather
/// cost more than all of these together) and no libm call.
/// 2^x within 3e-7 relatively, log2 within 1e-6 (ToneMapTests, against libm in double precision).
enum FastPow {
    typealias F8 = SIMD8<Float>
    typealias I8 = SIMD8<Int32>

    /// 1.5 * 2^23: a float in [-2^22, 2^22] added to it is rounded to an integer held in the
    /// low bits of the sum's pattern.
    static let roundingMagic: Float = 12_582_912
    /// Inputs below this give 2^-126, the smallest normal float: nothing here needs less.
    static let smallestExponent: Float = -126
    /// log2 of anything at or under this is taken as log2 of this (about -99.7).
    static let smallestArgument: Float = 1e-30

    // 2^f on [-0.5, 0.5]: a degree-5 polynomial fitted at Chebyshev nodes (numpy's polyfit),
    // relative error 1.1e-7.
    static let e0: Float = 1.000_000_1, e1: Float = 0.693_147_18, e2: Float = 0.240_221_07
    static let e3: Float = 0.055_503_272, e4: Float = 0.009_676_042, e5: Float = 0.001_340_043_7

    // log2(1 + x) for 1 + x in [sqrt(1/2), sqrt(2)] as x times a degree-7 polynomial fitted
    // the same way, error 1.5e-7: no division (the atanh series needed one per call).
    static let l0: Float = 1.442_694_9, l1: Float = -0.721_352_76, l2: Float = 0.480_924_04
    static let l3: Float = -0.360_241_92, l4: Float = 0.287_075_31, l5: Float = -0.248_822_35
    static let l6: Float = 0.234_212_62, l7: Float = -0.146_205_29

    static func exp2(_ x: Float) -> Float {
        let x = x < smallestExponent ? smallestExponent : x
        let shifted = x + roundingMagic
        let n = shifted - roundingMagic
        let f = x - n
        let exponent = Int32(bitPattern: shifted.bitPattern) &- Int32(bitPattern: roundingMagic.bitPattern)
        let scale = Float(bitPattern: UInt32(bitPattern: (exponent &+ 127) &<< 23))
        var p = e5 * f + e4
        p = p * f + e3
        p = p * f + e2
        p = p * f + e1
        p = p * f + e0
        return p * scale
    }

    @inline(__always)
    static func exp2(_ x: F8) -> F8 {
        let x = x.replacing(with: smallestExponent, where: x .< smallestExponent)
        let magic = F8(repeating: roundingMagic)
        let shifted = x + magic
        let n = shifted - magic
        let f = x - n
        let exponent = unsafeBitCast(shifted, to: I8.self) &- Int32(bitPattern: roundingMagic.bitPattern)
        let scale = unsafeBitCast((exponent &+ 127) &<< 23, to: F8.self)
        var p = e5 * f + e4
        p = p * f + e3
        p = p * f + e2
        p = p * f + e1
        p = p * f + e0
        return p * scale
    }

    static func log2(_ x: Float) -> Float {
        let x = x < smallestArgument ? smallestArgument : x
        let bits = Int32(bitPattern: x.bitPattern)
        var exponent = (bits &>> 23) &- 127
        var m = Float(bitPattern: UInt32(bitPattern: (bits & 0x7f_ffff) | 0x3f80_0000))
        if m > 1.414_213_5 {
            m = m * 0.5
            exponent = exponent &+ 1
        }
        let d = m - 1
        var p = l7 * d + l6
        p = p * d + l5
        p = p * d + l4
        p = p * d + l3
        p = p * d + l2
        p = p * d + l1
        p = p * d + l0
        p = d * p
        return Float(exponent) + p
    }

    @inline(__always)
    static func log2(_ x: F8) -> F8 {
        let x = x.replacing(with: smallestArgument, where: x .< smallestArgument)
        let bits = unsafeBitCast(x, to: I8.self)
        var exponent = (bits &>> 23) &- 127
        var m = unsafeBitCast((bits & 0x7f_ffff) | 0x3f80_0000, to: F8.self)
        let high = m .> 1.414_213_5
        m = m.replacing(with: m * 0.5, where: high)
        exponent = exponent.replacing(with: exponent &+ 1, where: high)
        let d = m - 1
        var p = l7 * d + l6
        p = p * d + l5
        p = p * d + l4
        p = p * d + l3
        p = p * d + l2
        p = p * d + l1
        p = p * d + l0
        p = d * p
        return float(exponent) + p
    }

    /// Small integers (|i| < 2^22) to Float exactly, through the bit pattern: what `Float(i)`
    /// gives, without the generic vector conversion that Swift does not specialise.
    @inline(__always)
    static func float(_ i: I8) -> F8 {
        unsafeBitCast(i &+ Int32(bitPattern: roundingMagic.bitPattern), to: F8.self) - roundingMagic
    }

    /// x^p for x > 0 (x at or under `smallestArgument` counts as that).
    static func pow(_ x: Float, _ p: Float) -> Float { exp2(p * log2(x)) }

    @inline(__always)
    static func pow(_ x: F8, _ p: Float) -> F8 { exp2(p * log2(x)) }
}
