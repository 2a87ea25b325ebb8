/// Working memory for the SIMD resampler, sized once per plan, reused every frame.
public final class ResampleScratch: @unchecked Sendable {
    private(set) var words: UnsafeMutablePointer<UInt16>
    private(set) var wordCount: Int
    private(set) var rows: UnsafeMutablePointer<UnsafePointer<UInt16>>
    private(set) var rowSlots: UnsafeMutablePointer<Int>
    private(set) var rowCount: Int

    public init(words: Int = 8192, rows: Int = 32) {
        wordCount = words
        self.words = .allocate(capacity: words)
        rowCount = rows
        self.rows = .allocate(capacity: rows)
        rowSlots = .allocate(capacity: rows)
    }

    deinit {
        words.deallocate()
        rows.deallocate()
        rowSlots.deallocate()
    }

    /// Grows (never per frame: plans call this when they are built) to fit `x`/`y` tables.
    public func reserve(x: FilterTable, y: FilterTable) {
        let needWords = max(x.sourceSpan.count + 64, x.count * y.taps + 64)
        if needWords > wordCount {
            words.deallocate()
            wordCount = needWords
            words = .allocate(capacity: needWords)
        }
        if y.taps > rowCount {
            rows.deallocate()
            rowSlots.deallocate()
            rowCount = y.taps
            rows = .allocate(capacity: rowCount)
            rowSlots = .allocate(capacity: rowCount)
        }
    }
}

extension Resample {
    /// The same result as `scalar`, to the bit, from the SIMD kernels. Shrinking goes
    /// vertical-first (the expensive pass runs on the wide source rows, 16 lanes at once);
    /// enlarging goes horizontal-first, filtering each source row once and blending rows,
    /// so the gathering pass runs on the fewer rows.
    public static func simd(source: PlaneView, into destination: PlaneView,
                            x xTable: FilterTable, y yTable: FilterTable, scratch: ResampleScratch) {
        precondition(destination.width == xTable.count && destination.height == yTable.count)
        precondition(xTable.sourceSpan.upperBound <= source.width && yTable.sourceSpan.upperBound <= source.height)
        scratch.reserve(x: xTable, y: yTable)
        yTable.starts.withUnsafeBufferPointer { yStarts in
            yTable.weights.withUnsafeBufferPointer { yWeights in
                if yTable.magnification > 1 {
                    enlarge(source, destination, xTable, yTable, yStarts, yWeights.baseAddress!, scratch)
                } else {
                    shrink(source, destination, xTable, yTable, yStarts, yWeights.baseAddress!, scratch)
                }
            }
        }
    }

    private static func shrink(_ source: PlaneView, _ destination: PlaneView, _ xTable: FilterTable,
                               _ yTable: FilterTable, _ yStarts: UnsafeBufferPointer<Int32>,
                               _ yWeights: UnsafePointer<Int16>, _ scratch: ResampleScratch) {
        let span = xTable.sourceSpan
        let mid = scratch.words
        let taps = yTable.taps
        for dy in 0..<destination.height {
            Kernels.verticalSumSIMD(source.row(Int(yStarts[dy])) + span.lowerBound, stride: source.stride,
                                    taps: taps, weights: yWeights + dy * taps, count: span.count, into: mid)
            Kernels.horizontalRoundSIMD(mid, offset: span.lowerBound, table: xTable, into: destination.row(dy))
        }
    }

    private static func enlarge(_ source: PlaneView, _ destination: PlaneView, _ xTable: FilterTable,
                                _ yTable: FilterTable, _ yStarts: UnsafeBufferPointer<Int32>,
                                _ yWeights: UnsafePointer<Int16>, _ scratch: ResampleScratch) {
        let taps = yTable.taps, width = xTable.count
        // A ring of `taps` filtered rows; source row r lives in slot r % taps. Output rows
        // move down monotonically, so each source row is filtered once.
        let ring = scratch.words, slots = scratch.rowSlots, rows = scratch.rows
        for k in 0..<taps { slots[k] = -1 }
        for dy in 0..<destination.height {
            let first = Int(yStarts[dy])
            for k in 0..<taps {
                let r = first + k, slot = r % taps
                let filtered = ring + slot * width
                if slots[slot] != r {
                    Kernels.horizontalSumSIMD(source.row(r), table: xTable, into: filtered)
                    slots[slot] = r
                }
                rows[k] = UnsafePointer(filtered)
            }
            Kernels.verticalRoundSIMD(rows, taps: taps, weights: yWeights + dy * taps, count: width,
                                      into: destination.row(dy))
        }
    }
}
