/// The row kernels of the styled inset: a picture or a flat colour laid over a row through
/// a coverage mask. Scalar references and SIMD versions that must agree bit for bit.
///
/// Fixed point: a mask byte `a` (0-255) weighs `w = a + a >> 7` (0-256, so 255 is exactly
/// all), and `out = (top * w + bottom * (256 - w) + 128) >> 8`; at most 255 * 256 + 128,
/// which fits the 16-bit lanes.
extension Kernels {
    @inline(__always) static func weight(_ a: Int) -> Int { a + a >> 7 }

    /// `row[x]` becomes `top[x]` over it through `mask[x]`, for x in 0..<count.
    public static func blendScalar(_ top: UnsafePointer<UInt8>, mask: UnsafePointer<UInt8>, count: Int,
                                   into row: UnsafeMutablePointer<UInt8>) {
        for x in 0..<count {
            let w = weight(Int(mask[x]))
            row[x] = UInt8((Int(top[x]) * w + Int(row[x]) * (256 - w) + 128) >> 8)
        }
    }

    public static func blendSIMD(_ top: UnsafePointer<UInt8>, mask: UnsafePointer<UInt8>, count: Int,
                                 into row: UnsafeMutablePointer<UInt8>) {
        var x = 0
        let t = UnsafeRawPointer(top), m = UnsafeRawPointer(mask), r = UnsafeMutableRawPointer(row)
        while x &+ 32 <= count {
            let a = m.loadUnaligned(fromByteOffset: x, as: Words.self)
            let top = t.loadUnaligned(fromByteOffset: x, as: Words.self)
            let under = r.loadUnaligned(fromByteOffset: x, as: Words.self)
            let we = weights(evens(a)), wo = weights(odds(a))
            let even = evens(top) &* we &+ evens(under) &* (256 &- we) &+ round
            let odd = odds(top) &* wo &+ odds(under) &* (256 &- wo) &+ round
            r.storeBytes(of: pack(even: even, odd: odd), toByteOffset: x, as: Words.self)
            x &+= 32
        }
        // No overlapping last block here: the row is read and written in place.
        if x < count { blendScalar(top + x, mask: mask + x, count: count - x, into: row + x) }
    }

    /// `row[x]` becomes `value` over it through `mask[x]`: the border's and the shadow's colour.
    public static func blendConstantScalar(_ value: UInt8, mask: UnsafePointer<UInt8>, count: Int,
                                           into row: UnsafeMutablePointer<UInt8>) {
        for x in 0..<count {
            let w = weight(Int(mask[x]))
            row[x] = UInt8((Int(value) * w + Int(row[x]) * (256 - w) + 128) >> 8)
        }
    }

    public static func blendConstantSIMD(_ value: UInt8, mask: UnsafePointer<UInt8>, count: Int,
                                         into row: UnsafeMutablePointer<UInt8>) {
        var x = 0
        let m = UnsafeRawPointer(mask), r = UnsafeMutableRawPointer(row)
        let top = Words(repeating: UInt16(value))
        while x &+ 32 <= count {
            let a = m.loadUnaligned(fromByteOffset: x, as: Words.self)
            let under = r.loadUnaligned(fromByteOffset: x, as: Words.self)
            let we = weights(evens(a)), wo = weights(odds(a))
            let even = top &* we &+ evens(under) &* (256 &- we) &+ round
            let odd = top &* wo &+ odds(under) &* (256 &- wo) &+ round
            r.storeBytes(of: pack(even: even, odd: odd), toByteOffset: x, as: Words.self)
            x &+= 32
        }
        if x < count { blendConstantScalar(value, mask: mask + x, count: count - x, into: row + x) }
    }

    @inline(__always) static func weights(_ a: Words) -> Words { a &+ (a &>> 7) }
}
