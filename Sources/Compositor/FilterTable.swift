/// Which source pixels, with which weights, make each destination pixel along one axis.
///
/// Every destination pixel reads exactly `taps` consecutive source pixels starting at
/// `starts[i]`, with integer weights that sum to `FilterTable.one`. Fixed-width rows and
/// exact integer weights are what let the scalar reference and the SIMD kernel agree to
/// the bit.
public struct FilterTable: Sendable, Equatable {
    /// Weights are in 1/256ths: 8 bits keep the vertical pass inside UInt16
    /// (255 * 256 = 65280), the horizontal pass inside UInt32.
    public static let shift = 8
    public static let one: Int16 = 256

    public let count: Int
    public let taps: Int
    public let starts: [Int32]
    /// `count * taps` weights, row-major per destination pixel.
    public let weights: [Int16]
    /// The same, laid out for the two-columns-per-vector kernel.
    public let pairs: Pairs
    /// Exactly 2:1 with equal weights: kernels can pair neighbours without transposing.
    public let isHalving: Bool
    /// The source range any destination pixel reads. (Stored: the kernels ask for it per
    /// band, and working it out is a pass over `starts`.)
    public let sourceSpan: Range<Int>
    /// The same filter as byte shuffles, when every block of 16 destination pixels reads
    /// within 16 source bytes (enlarging): `Kernels.horizontalShuffledSIMD`. nil otherwise.
    public let shuffled: Shuffled?

    /// Blocks of 16 destination pixels, each made from one 16-byte load: for block b, the
    /// destination x of its first pixel (the last block overlaps the one before it rather
    /// than run short), the source x of its load, and per tap k, at `b * taps + k`, the
    /// loaded byte each pixel takes and the weight it takes it with.
    public struct Shuffled: Sendable, Equatable {
        public let blockStarts: [Int32]
        public let loads: [Int32]
        public let indices: [SIMD16<UInt8>]
        public let weights: [SIMD16<UInt16>]
        /// One past the last source byte any load reads.
        public let readEnd: Int
        /// Two taps whose weights sum to 256 in every pixel (bilinear): per block, the byte of
        /// the larger weight, the other byte and its weight times 128 (`Kernels.lerp`). nil
        /// for other tables.
        public let lerp: [LerpBlock]?

        /// One block's all in one place: the kernel then walks one pointer (with five arrays
        /// it ran out of registers and reloaded their bases every block).
        public struct LerpBlock: Sendable, Equatable {
            public let bases: SIMD16<UInt8>
            public let others: SIMD16<UInt8>
            public let scales: SIMD16<Int16>
            public let load: Int
            public let destination: Int
        }

        init?(count: Int, taps: Int, starts: [Int32], weights: [Int16], upper: Int) {
            guard count >= 16 else { return nil }
            var blockStarts: [Int32] = [], loads: [Int32] = [], indices: [SIMD16<UInt8>] = [], lanes: [SIMD16<UInt16>] = []
            for b in 0..<(count + 15) / 16 {
                let x0 = min(16 * b, count - 16)
                // Near the right edge the load moves left so that it ends inside the row.
                let load = min(Int(starts[x0]), upper - 16)
                guard load >= 0 else { return nil }
                blockStarts.append(Int32(x0))
                loads.append(Int32(load))
                for k in 0..<taps {
                    var index = SIMD16<UInt8>(), weight = SIMD16<UInt16>()
                    for lane in 0..<16 {
                        let i = x0 + lane, byte = Int(starts[i]) + k - load
                        guard (0..<16).contains(byte) else { return nil }
                        index[lane] = UInt8(byte)
                        weight[lane] = UInt16(weights[i * taps + k])
                    }
                    indices.append(index)
                    lanes.append(weight)
                }
            }
            self.blockStarts = blockStarts
            self.loads = loads
            self.indices = indices
            self.weights = lanes
            readEnd = Int(loads.max()!) + 16
            lerp = taps == 2 ? Self.lerp(indices: indices, weights: lanes, loads: loads, blockStarts: blockStarts) : nil
        }

        private static func lerp(indices: [SIMD16<UInt8>], weights: [SIMD16<UInt16>], loads: [Int32],
                                 blockStarts: [Int32]) -> [LerpBlock]? {
            var blocks: [LerpBlock] = []
            for b in 0..<indices.count / 2 {
                var base = SIMD16<UInt8>(), other = SIMD16<UInt8>(), scale = SIMD16<Int16>()
                for lane in 0..<16 {
                    let w0 = weights[2 * b][lane], w1 = weights[2 * b + 1][lane]
                    guard Int(w0) + Int(w1) == Int(FilterTable.one) else { return nil }
                    let firstWeighsMore = w0 >= w1
                    base[lane] = indices[2 * b + (firstWeighsMore ? 0 : 1)][lane]
                    other[lane] = indices[2 * b + (firstWeighsMore ? 1 : 0)][lane]
                    scale[lane] = Int16(firstWeighsMore ? w1 : w0) * 128
                }
                blocks.append(LerpBlock(bases: base, others: other, scales: scale, load: Int(loads[b]),
                                        destination: Int(blockStarts[b])))
            }
            return blocks
        }
    }

    /// Destination pixels in pairs: for pair p and tap k, 16 UInt16 weights at
    /// `(p * taps + k) * 16`, eight of pixel 2p's then eight of pixel 2p+1's. An odd count
    /// is padded with a zero-weight pixel reading the last real pixel's source.
    public struct Pairs: Sendable, Equatable {
        public let count: Int
        public let starts: [Int32]
        public let weights: [UInt16]
    }

    public enum Kernel: Sendable {
        /// Box filter over the exact (sub-pixel) source interval: for shrinking.
        case area
        /// Triangle filter through pixel centres: for enlarging.
        case bilinear
    }

    /// Destination pixel `i` (0-based) covers source interval
    /// `[origin + i*step, origin + (i+1)*step)`; taps never leave `lower..<upper`.
    public init(count: Int, origin: Double, step: Double, lower: Int, upper: Int, kernel: Kernel? = nil) {
        precondition(count > 0 && step > 0 && upper > lower)
        let kernel = kernel ?? (step > 1 ? .area : .bilinear)
        var spans: [(start: Int, weights: [Double])] = []
        spans.reserveCapacity(count)
        for i in 0..<count {
            let a = origin + Double(i) * step
            let b = a + step
            switch kernel {
            case .area:
                let lo = max(Double(lower), min(a, Double(upper)))
                let hi = max(lo, min(b, Double(upper)))
                var first = Int(lo.rounded(.down))
                var last = Int(hi.rounded(.up)) - 1
                first = min(max(first, lower), upper - 1)
                last = max(min(last, upper - 1), first)
                var w: [Double] = []
                for j in first...last {
                    w.append(max(0, min(hi, Double(j + 1)) - max(lo, Double(j))))
                }
                let total = w.reduce(0, +)
                if total <= 0 {  // interval collapsed onto the edge: take the nearest pixel
                    w = [Double](repeating: 0, count: w.count)
                    w[0] = 1
                } else {
                    w = w.map { $0 / total }
                }
                spans.append((first, w))
            case .bilinear:
                let centre = (a + b) / 2 - 0.5
                let j0 = Int(centre.rounded(.down))
                let f = centre - Double(j0)
                let p0 = min(max(j0, lower), upper - 1)
                let p1 = min(max(j0 + 1, lower), upper - 1)
                if p0 == p1 {
                    spans.append((p0, [1]))
                } else {
                    spans.append((p0, [1 - f, f]))
                }
            }
        }
        let taps = spans.map { $0.weights.count }.max()!
        var starts = [Int32](repeating: 0, count: count)
        var weights = [Int16](repeating: 0, count: count * taps)
        for (i, span) in spans.enumerated() {
            let q = Self.quantize(span.weights)
            // Pad to `taps` with zero weights, shifting left where the span ends at the edge
            // so that every tap still reads a pixel inside lower..<upper.
            var start = span.start
            var lead = 0
            if start + taps > upper {
                lead = start + taps - upper
                start -= lead
            }
            precondition(start >= lower, "filter wider than its source")
            starts[i] = Int32(start)
            for (k, w) in q.enumerated() { weights[i * taps + lead + k] = w }
        }
        self.count = count
        self.taps = taps
        self.starts = starts
        self.weights = weights
        let pairCount = (count + 1) / 2
        var pStarts = [Int32](repeating: starts[count - 1], count: 2 * pairCount)
        var pWeights = [UInt16](repeating: 0, count: pairCount * taps * 16)
        for i in 0..<count {
            pStarts[i] = starts[i]
            let p = i / 2, half = (i % 2) * 8
            for k in 0..<taps {
                for lane in 0..<8 { pWeights[(p * taps + k) * 16 + half + lane] = UInt16(weights[i * taps + k]) }
            }
        }
        pairs = Pairs(count: pairCount, starts: pStarts, weights: pWeights)
        isHalving = taps == 2 && weights.allSatisfy { $0 == 128 }
            && starts.indices.allSatisfy { starts[$0] == starts[0] + Int32(2 * $0) }
        shuffled = Shuffled(count: count, taps: taps, starts: starts, weights: weights, upper: upper)
        sourceSpan = Int(starts.min()!)..<Int(starts.max()!) + taps
    }

    /// Destination pixels per source pixel along this axis (above 1: enlarging).
    public var magnification: Double { Double(count) / Double(sourceSpan.count) }

    /// Rounds weights to 1/256ths summing to exactly 256, so flat areas stay flat: each
    /// weight rounded down, then the 1/256ths still missing given to the weights that lost the
    /// most (largest remainder). No weight moves by a whole step, so none of a non-negative
    /// kernel goes below 0 however many taps a strong reduction spreads it over (putting the
    /// whole residual on one tap drove it negative from about 24:1 down).
    static func quantize(_ w: [Double]) -> [Int16] {
        let scaled = w.map { $0 * Double(one) }
        var q = scaled.map { Int16($0.rounded(.down)) }
        var missing = Int(one) - q.reduce(0) { $0 + Int($1) }
        if missing > 0 {
            // Ties go to the earlier tap: the result must not depend on the sort's stability.
            let order = scaled.indices.sorted {
                let a = scaled[$0] - Double(q[$0]), b = scaled[$1] - Double(q[$1])
                return a != b ? a > b : $0 < $1
            }
            for k in order where missing > 0 {
                q[k] += 1
                missing -= 1
            }
        }
        return q
    }

}

/// Everything needed to scale one source picture into one destination rectangle:
/// per-plane tables, computed once per (source size, crop, rect) and reused every frame.
public struct ScalePlan: Sendable {
    public let sourceSize: Size
    public let crop: CropRect
    public let destination: Rect
    public let lumaX: FilterTable
    public let lumaY: FilterTable
    public let chromaX: FilterTable
    public let chromaY: FilterTable
    public let chromaDestination: Rect

    public init(sourceSize: Size, crop: CropRect, destination: Rect) {
        self.sourceSize = sourceSize
        self.crop = crop
        self.destination = destination
        let sx = crop.width / Double(destination.width)
        let sy = crop.height / Double(destination.height)
        lumaX = FilterTable(count: destination.width, origin: crop.x, step: sx, lower: 0, upper: sourceSize.width)
        lumaY = FilterTable(count: destination.height, origin: crop.y, step: sy, lower: 0, upper: sourceSize.height)
        // Chroma sample c covers luma 2c..<2c+2, so the luma mapping carries over at half
        // scale; a destination on odd coordinates starts half a chroma sample early.
        let cd = destination.chroma420
        let cs = sourceSize.chroma420
        chromaDestination = cd
        chromaX = FilterTable(count: cd.width, origin: (crop.x + Double(2 * cd.x - destination.x) * sx) / 2,
                              step: sx, lower: 0, upper: cs.width)
        chromaY = FilterTable(count: cd.height, origin: (crop.y + Double(2 * cd.y - destination.y) * sy) / 2,
                              step: sy, lower: 0, upper: cs.height)
    }

    /// The source's luma columns this placement reads, luma's and chroma's: the only ones a
    /// picture made for it needs (a camera in the inset converts no others).
    public var lumaColumnsRead: Range<Int> {
        min(lumaX.sourceSpan.lowerBound, 2 * chromaX.sourceSpan.lowerBound)
            ..< max(lumaX.sourceSpan.upperBound, 2 * chromaX.sourceSpan.upperBound)
    }

    /// `lumaColumnsRead` of `source` aspect-filled into `destination`, as the compositor
    /// places it (styled or not: a styled inset is scaled into a rect of the same size and
    /// parity).
    public static func lumaColumnsRead(source: Size, aspectFilling destination: Rect) -> Range<Int> {
        ScalePlan(sourceSize: source, crop: .aspectFill(source: source, target: destination.size),
                  destination: destination).lumaColumnsRead
    }

    /// Scratch the scalar resampler needs, in bytes.
    public var scratchCount: Int {
        max(Resample.scalarScratchCount(x: lumaX, y: lumaY), Resample.scalarScratchCount(x: chromaX, y: chromaY))
    }
}
