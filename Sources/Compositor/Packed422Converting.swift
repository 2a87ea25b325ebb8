import CVectorOps

/// Packed 4:2:2 camera buffers (YUYV, UYVY) to I420 re-encoded to another matrix in the
/// same pass. A webcam says BT.601 and the output is BT.709: converting the layout and then
/// the matrix walked a 1080p frame twice, and the second pass cost more than the first
/// (record-yuyv-1080p). Here each pair of rows is unpacked and re-encoded in registers, and
/// the frame is read from memory once.
extension CameraFormats {
    /// The reference: the layout converted, then the matrix, one pixel at a time.
    public static func packed422Scalar(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, into out: I420View,
                                       converting conversion: ColorConversion) {
        packed422Scalar(src, stride: stride, order: order, into: out)
        conversion.applyScalar(to: out, lumaRect: Rect(x: 0, y: 0, width: out.y.width, height: out.y.height))
    }

    /// The same result as the reference, to the bit. `chromaRows` limits the work to those
    /// chroma rows and the luma rows they cover, so two threads can share a frame.
    public static func packed422SIMD(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, into out: I420View,
                                     converting conversion: ColorConversion, chromaRows: Range<Int>? = nil) {
        let w = out.y.width, h = out.y.height
        let rows = chromaRows ?? 0..<out.u.height
        guard !rows.isEmpty else { return }
        // Odd widths and narrow frames (no camera sends them) take the two passes, as would a
        // conversion without pmaddwd's coefficients (none between the matrices here).
        guard w >= 32, w % 2 == 0, let lanes = conversion.pairLanes else {
            let part = out.chromaRows(rows)
            packed422SIMD(src + 2 * rows.lowerBound * stride, stride: stride, order: order, into: part)
            conversion.apply(to: part, lumaRect: Rect(x: 0, y: 0, width: w, height: part.y.height))
            return
        }
        let raw = UnsafeRawPointer(src)
        let lastRow = min(2 * rows.upperBound, h) - 1
        for cy in rows {
            let y0 = 2 * cy, y1 = min(y0 + 1, h - 1)
            let r0 = raw + y0 * stride, r1 = raw + y1 * stride
            // The next pair but one, asked for now: the hardware prefetcher alone left a cold
            // 1080p frame at 1.9 ms; two pairs ahead, 1.4 (four, 2.1: evicted before use).
            if y0 + 4 <= lastRow { Prefetch.bytes(raw + (y0 + 4) * stride, count: 2 * w * min(2, lastRow - y0 - 3)) }
            // An odd last row is its own pair: the same row twice, written twice.
            packed422ConvertedRows(r0, r1, lumaOdd: order == .uyvy, into: out.y.row(y0), out.y.row(y1),
                                   u: out.u.row(cy), v: out.v.row(cy), width: w, lanes)
        }
    }

    /// Two rows of a packed 4:2:2 buffer unpacked and re-encoded in registers, 32 pixels at a
    /// time: each output byte is written once, and nothing is read back (unpacking, then
    /// re-encoding the pair in place, took about 140 instructions for every 32 pixels of a
    /// pair of rows; this, about 70). `width` is even and at least 32.
    @inline(never)
    static func packed422ConvertedRows(_ r0: UnsafeRawPointer, _ r1: UnsafeRawPointer, lumaOdd: Bool,
                                       into luma0: UnsafeMutablePointer<UInt8>, _ luma1: UnsafeMutablePointer<UInt8>,
                                       u: UnsafeMutablePointer<UInt8>, v: UnsafeMutablePointer<UInt8>,
                                       width w: Int, _ k: ColorConversion.PairLanes) {
        // Read once here: a static read in the loop is a call (swift_once) per block.
        let twice = (Self.firstEightTwice, Self.lastEightTwice)
        // Two loops, so that neither tests the order inside.
        if lumaOdd {
            var x = 0
            while x < w {
                if x &+ 32 > w { x = w &- 32 }  // overlap the last block: it is read from the source again
                packed422ConvertedBlock(r0, r1, x, lumaOdd: true, luma0, luma1, u, v, k, twice)
                x &+= 32
            }
        } else {
            var x = 0
            while x < w {
                if x &+ 32 > w { x = w &- 32 }
                packed422ConvertedBlock(r0, r1, x, lumaOdd: false, luma0, luma1, u, v, k, twice)
                x &+= 32
            }
        }
    }

    /// The 32 pixels at `x` of both rows: luma as bytes, chroma as (U, V) words of the two
    /// rows' rounded means; the luma change added with a signed saturating add around 128,
    /// which is the clamp to 0...255 (y + d clamped == ((y - 128) + d clamped to a signed
    /// byte) + 128).
    @inline(__always)
    private static func packed422ConvertedBlock(_ r0: UnsafeRawPointer, _ r1: UnsafeRawPointer, _ x: Int, lumaOdd: Bool,
                                                _ luma0: UnsafeMutablePointer<UInt8>, _ luma1: UnsafeMutablePointer<UInt8>,
                                                _ u: UnsafeMutablePointer<UInt8>, _ v: UnsafeMutablePointer<UInt8>,
                                                _ k: ColorConversion.PairLanes, _ twice: (SIMD16<UInt8>, SIMD16<UInt8>)) {
        typealias Bytes = SIMD16<UInt8>
        let s = 2 &* x
        let a0 = r0.loadUnaligned(fromByteOffset: s, as: Bytes.self), a1 = r0.loadUnaligned(fromByteOffset: s &+ 16, as: Bytes.self)
        let a2 = r0.loadUnaligned(fromByteOffset: s &+ 32, as: Bytes.self), a3 = r0.loadUnaligned(fromByteOffset: s &+ 48, as: Bytes.self)
        let b0 = r1.loadUnaligned(fromByteOffset: s, as: Bytes.self), b1 = r1.loadUnaligned(fromByteOffset: s &+ 16, as: Bytes.self)
        let b2 = r1.loadUnaligned(fromByteOffset: s &+ 32, as: Bytes.self), b3 = r1.loadUnaligned(fromByteOffset: s &+ 48, as: Bytes.self)
        // A pixel pair's bytes as words: luma in one half of each, chroma in the other.
        @inline(__always) func low(_ b: Bytes) -> SIMD8<Int16> { unsafeBitCast(b, to: SIMD8<Int16>.self) & 0x00FF }
        @inline(__always) func high(_ b: Bytes) -> SIMD8<Int16> {
            unsafeBitCast(unsafeBitCast(b, to: SIMD8<UInt16>.self) &>> 8, to: SIMD8<Int16>.self)
        }
        @inline(__always) func luma(_ b: Bytes) -> SIMD8<Int16> { lumaOdd ? high(b) : low(b) }
        @inline(__always) func chroma(_ b: Bytes) -> SIMD8<Int16> { lumaOdd ? low(b) : high(b) }

        let pairs = (chroma(Kernels.average(a0, b0)), chroma(Kernels.average(a1, b1)),
                     chroma(Kernels.average(a2, b2)), chroma(Kernels.average(a3, b3)))
        let (cb0, cb1) = k.apply(k.cb, k.cbRound, pairs)
        let (cr0, cr1) = k.apply(k.cr, k.crRound, pairs)
        UnsafeMutableRawPointer(u).storeBytes(of: dc_pack_bytes_saturated(cb0, cb1), toByteOffset: x &>> 1, as: Bytes.self)
        UnsafeMutableRawPointer(v).storeBytes(of: dc_pack_bytes_saturated(cr0, cr1), toByteOffset: x &>> 1, as: Bytes.self)

        let (d0, d1) = k.apply(k.luma, k.lumaRound, pairs)
        let deltas = dc_pack_signed_bytes_saturated(d0, d1)
        let leftDeltas = dc_shuffle_bytes(unsafeBitCast(deltas, to: Bytes.self), twice.0)
        let rightDeltas = dc_shuffle_bytes(unsafeBitCast(deltas, to: Bytes.self), twice.1)
        @inline(__always) func adjusted(_ y: Bytes, _ d: Bytes) -> Bytes {
            let centred = unsafeBitCast(y ^ 0x80, to: SIMD16<Int8>.self)
            return unsafeBitCast(dc_add_bytes_saturated(centred, unsafeBitCast(d, to: SIMD16<Int8>.self)), to: Bytes.self) ^ 0x80
        }
        let o0 = UnsafeMutableRawPointer(luma0), o1 = UnsafeMutableRawPointer(luma1)
        o0.storeBytes(of: adjusted(dc_pack_bytes_saturated(luma(a0), luma(a1)), leftDeltas), toByteOffset: x, as: Bytes.self)
        o0.storeBytes(of: adjusted(dc_pack_bytes_saturated(luma(a2), luma(a3)), rightDeltas), toByteOffset: x &+ 16, as: Bytes.self)
        o1.storeBytes(of: adjusted(dc_pack_bytes_saturated(luma(b0), luma(b1)), leftDeltas), toByteOffset: x, as: Bytes.self)
        o1.storeBytes(of: adjusted(dc_pack_bytes_saturated(luma(b2), luma(b3)), rightDeltas), toByteOffset: x &+ 16, as: Bytes.self)
    }

    /// pshufb indices repeating each of the first (last) eight bytes: a chroma sample's luma
    /// change for both pixels it covers.
    private static let firstEightTwice = SIMD16<UInt8>(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7)
    private static let lastEightTwice = SIMD16<UInt8>(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15)
}

extension CameraFormats {
    /// A packed 4:2:2 camera buffer as the picture its role needs: reduced by `shift`
    /// (`packed422ReducedSIMD`) or whole, re-encoded by `conversion` or (nil) in the camera's
    /// matrix; `chromaRows` limits the work to those output chroma rows and the luma rows
    /// they cover, so two threads can share a frame; `columns`, for a reduced picture, to the
    /// luma columns the inset reads.
    public static func packed422Picture(_ src: UnsafePointer<UInt8>, stride: Int, order: Packed422, shift: Int,
                                        into out: I420View, converting conversion: ColorConversion?,
                                        chromaRows: Range<Int>? = nil, columns: Range<Int>? = nil) {
        if shift > 0 {
            packed422ReducedSIMD(src, stride: stride, order: order, shift: shift, into: out, converting: conversion,
                                 chromaRows: chromaRows, columns: columns)
        } else if let conversion {
            packed422SIMD(src, stride: stride, order: order, into: out, converting: conversion, chromaRows: chromaRows)
        } else {
            let rows = chromaRows ?? 0..<out.u.height
            packed422SIMD(src + 2 * rows.lowerBound * stride, stride: stride, order: order, into: out.chromaRows(rows))
        }
    }

    /// One camera buffer's `packed422Picture` for `ForkJoin`: each half does half the chroma
    /// rows. The camera's capture thread keeps one and refills it for every buffer.
    public final class Packed422Job: ForkJoinJob {
        public var source: UnsafePointer<UInt8>?, stride = 0, order = Packed422.yuyv, shift = 0
        public var output: I420View?, conversion: ColorConversion?, columns: Range<Int>?
        public init() {}
        public func run(part: Int, of parts: Int) {
            guard let source, let output else { return }
            packed422Picture(source, stride: stride, order: order, shift: shift, into: output, converting: conversion,
                             chromaRows: ForkJoin.rows(part, of: output.u.height, parts: parts), columns: columns)
        }
    }
}
