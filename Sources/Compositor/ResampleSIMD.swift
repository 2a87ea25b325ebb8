/// Working memory for the SIMD resampler, sized when plans are built, reused every frame.
// Sendable: the scratch of one compositor, used by the thread composing with it.
public final class ResampleScratch: @unchecked Sendable {
    /// 16 rows of vertical-pass output, then the same transposed into columns.
    private(set) var band: UnsafeMutablePointer<UInt8>
    private(set) var columns: UnsafeMutablePointer<UInt8>
    /// Output columns of 16 rows, before transposing back.
    private(set) var outColumns: UnsafeMutablePointer<UInt8>
    private(set) var bandWidth = 0
    private(set) var outWidth = 0
    /// Rows filtered across, waiting to be blended down (enlarging), in blocks of 16.
    private(set) var ring: UnsafeMutablePointer<UInt8>
    private(set) var ringBytes = 0
    private(set) var rows: UnsafeMutablePointer<UnsafePointer<UInt8>>
    private(set) var rowCapacity = 0

    public init() {
        band = .allocate(capacity: 16)
        columns = .allocate(capacity: 16)
        outColumns = .allocate(capacity: 16)
        ring = .allocate(capacity: 16)
        rows = .allocate(capacity: 1)
    }

    deinit {
        ring.deallocate()
        rows.deallocate()
        band.deallocate()
        columns.deallocate()
        outColumns.deallocate()
    }

    /// Blocks of 16 rows the ring needs so that rows still to be blended survive the next block.
    static func ringBlocks(taps: Int) -> Int { 2 + taps / 16 }

    /// Grows to fit the tables (never per frame: the compositor calls this when it builds a plan).
    public func reserve(x: FilterTable, y: FilterTable) {
        let ring = 16 * Self.ringBlocks(taps: y.taps) * ((x.count + 15) / 16 * 16)
        if ring > ringBytes {
            self.ring.deallocate()
            ringBytes = ring
            self.ring = .allocate(capacity: ring)
        }
        if y.taps > rowCapacity {
            rows.deallocate()
            rowCapacity = y.taps
            rows = .allocate(capacity: y.taps)
        }
        let span = (x.sourceSpan.count + 15) / 16 * 16
        if span > bandWidth {
            band.deallocate()
            columns.deallocate()
            bandWidth = span
            band = .allocate(capacity: 16 * span)
            columns = .allocate(capacity: 16 * span)
        }
        let out = (x.count + 15) / 16 * 16
        if out > outWidth {
            outColumns.deallocate()
            outWidth = out
            outColumns = .allocate(capacity: 16 * out)
        }
    }
}

extension Resample {
    /// The same result as `scalar`, to the bit. Shrinking works on bands of 16 output rows: the
    /// vertical pass runs 16 lanes across each row; the band is then transposed so the
    /// horizontal pass also runs 16 lanes (one per row) with contiguous loads, and the result
    /// is transposed back. Exact 2:1 rows pair neighbours directly, and 2:1 both ways averages
    /// each row pair and then neighbours in one pass.
    /// `rows` limits the work to those destination rows (two threads can share a plane).
    public static func simd(source: PlaneView, into destination: PlaneView,
                            x xTable: FilterTable, y yTable: FilterTable, rows: Range<Int>? = nil,
                            scratch: ResampleScratch) {
        let rows = rows ?? 0..<destination.height
        precondition(destination.width == xTable.count && destination.height == yTable.count)
        let span = xTable.sourceSpan
        precondition(span.upperBound <= source.width && yTable.sourceSpan.upperBound <= source.height)
        scratch.reserve(x: xTable, y: yTable)
        if horizontalFirst(y: yTable) {
            enlarge(source, destination, xTable, yTable, rows, scratch)
            return
        }
        let bandStride = scratch.bandWidth
        let tiles = (span.count + 15) / 16
        let outTiles = (xTable.count + 15) / 16
        let halving = xTable.isHalving
        yTable.starts.withUnsafeBufferPointer { yStarts in
            yTable.weights.withUnsafeBufferPointer { yWeights in
                let end = rows.upperBound
                var top = rows.lowerBound
                var prefetched = Int(yStarts[top])
                // Before each output row, the source rows of the row a band further down are
                // asked for: a few rows' prefetches at a time, in flight while this row
                // computes. (A band's worth at once, as before, outran the misses a core
                // keeps in flight, and the first band went unasked.)
                func prefetch(ahead dy: Int) {
                    let needed = min(Int(yStarts[min(dy + 16, end - 1)]) + yTable.taps, source.height)
                    if needed > prefetched {
                        Prefetch.rows(source, prefetched..<needed, columns: span)
                        prefetched = needed
                    }
                }
                while top < end {
                    let rows = min(16, end - top)
                    if halving && yTable.isHalving {
                        for r in 0..<rows {
                            prefetch(ahead: top + r)
                            let upper = source.row(Int(yStarts[top + r])) + Int(xTable.starts[0])
                            Kernels.halveRowsSIMD(upper, upper + source.stride, count: xTable.count,
                                                  into: destination.row(top + r))
                        }
                        top += rows
                        continue
                    }
                    if halving {
                        for r in 0..<rows {
                            let dy = top + r
                            prefetch(ahead: dy)
                            Kernels.verticalSIMD(source.row(Int(yStarts[dy])) + span.lowerBound, stride: source.stride,
                                                 taps: yTable.taps, weights: yWeights.baseAddress! + dy * yTable.taps,
                                                 count: span.count, into: scratch.band)
                            Kernels.halveSIMD(scratch.band + (Int(xTable.starts[0]) - span.lowerBound),
                                              count: xTable.count, into: destination.row(dy))
                        }
                        top += rows
                        continue
                    }
                    // Vertical pass into 16 band rows; a short last band repeats its last row.
                    for r in 0..<16 {
                        let dy = top + min(r, rows - 1)
                        prefetch(ahead: dy)
                        Kernels.verticalSIMD(source.row(Int(yStarts[dy])) + span.lowerBound, stride: source.stride,
                                             taps: yTable.taps, weights: yWeights.baseAddress! + dy * yTable.taps,
                                             count: span.count, into: scratch.band + r * bandStride)
                    }
                    for t in 0..<tiles {
                        Kernels.transposeTileSIMD(scratch.band + 16 * t, srcStride: bandStride,
                                                  scratch.columns + 256 * t, dstStride: 16)
                    }
                    Kernels.columnsSIMD(scratch.columns, offset: span.lowerBound, table: xTable, into: scratch.outColumns)
                    writeBand(scratch.outColumns, tiles: outTiles, rows: top..<(top + rows), into: destination)
                    top += rows
                }
            }
        }
    }

    /// A band of output columns (16 rows, transposed) back to rows, writing only the band's
    /// `rows` and the destination's own columns: it is often a region of a larger picture.
    @inline(__always)
    private static func writeBand(_ columns: UnsafeMutablePointer<UInt8>, tiles: Int, rows: Range<Int>, into destination: PlaneView) {
        for t in 0..<tiles {
            let x = 16 * t
            if rows.count == 16 && x + 16 <= destination.width {
                Kernels.transposeTileSIMD(columns + 256 * t, srcStride: 16, destination.row(rows.lowerBound) + x,
                                          dstStride: destination.stride)
            } else {
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { tile in
                    Kernels.transposeTileSIMD(columns + 256 * t, srcStride: 16, tile.baseAddress!, dstStride: 16)
                    let width = min(16, destination.width - x)
                    for r in 0..<rows.count {
                        (destination.row(rows.lowerBound + r) + x).update(from: tile.baseAddress! + 16 * r, count: width)
                    }
                }
            }
        }
    }

    /// Horizontal first (the picture grows taller): source rows are filtered across into a
    /// ring of filtered rows (row by row with byte shuffles when the table has them, else in
    /// bands of 16 transposed into columns and back); each output row then blends its rows
    /// from the ring.
    private static func enlarge(_ source: PlaneView, _ destination: PlaneView, _ xTable: FilterTable,
                                _ yTable: FilterTable, _ rows: Range<Int>, _ scratch: ResampleScratch) {
        let taps = yTable.taps, width = xTable.count
        let ringStride = (width + 15) / 16 * 16
        let blocks = ResampleScratch.ringBlocks(taps: taps)
        let sourceRows = Int(yTable.starts[rows.lowerBound])..<yTable.sourceSpan.upperBound
        var filteredEnd = sourceRows.lowerBound
        func slot(_ r: Int) -> UnsafeMutablePointer<UInt8> {
            let i = r - sourceRows.lowerBound
            return scratch.ring + ((i / 16 % blocks) * 16 + i % 16) * ringStride
        }
        yTable.starts.withUnsafeBufferPointer { yStarts in
            yTable.weights.withUnsafeBufferPointer { yWeights in
                // The first rows now; then, as each row is filtered, the one 16 rows on (a
                // block's worth at once outran the misses a core keeps in flight).
                Prefetch.rows(source, filteredEnd..<min(filteredEnd + 16, sourceRows.upperBound), columns: xTable.sourceSpan)
                for dy in rows {
                    let first = Int(yStarts[dy])
                    while filteredEnd < first + taps {
                        let count = min(16, sourceRows.upperBound - filteredEnd)
                        let next = filteredEnd + count
                        if let shuffled = xTable.shuffled, shuffled.readEnd <= source.width {
                            for r in filteredEnd..<next {
                                if r + 16 < sourceRows.upperBound {
                                    Prefetch.rows(source, r + 16..<r + 17, columns: xTable.sourceSpan)
                                }
                                Kernels.horizontalShuffledSIMD(source.row(r), table: shuffled, taps: xTable.taps, into: slot(r))
                            }
                        } else {
                            Prefetch.rows(source, next..<min(next + 16, sourceRows.upperBound), columns: xTable.sourceSpan)
                            filterAcross(source, rows: filteredEnd, count: count, xTable, scratch, into: slot(filteredEnd),
                                         stride: ringStride)
                        }
                        filteredEnd += count
                    }
                    for k in 0..<taps { scratch.rows[k] = UnsafePointer(slot(first + k)) }
                    Kernels.verticalRowsSIMD(scratch.rows, taps: taps, weights: yWeights.baseAddress! + dy * taps,
                                             count: width, into: destination.row(dy))
                }
            }
        }
    }

    /// Filters `count` (at most 16) source rows from `first` across into 16 rows at `out`.
    private static func filterAcross(_ source: PlaneView, rows first: Int, count: Int, _ xTable: FilterTable,
                                     _ scratch: ResampleScratch, into out: UnsafeMutablePointer<UInt8>, stride: Int) {
        let span = xTable.sourceSpan
        let tiles = (span.count + 15) / 16
        for t in 0..<tiles {
            let x = span.lowerBound + 16 * t
            if count == 16 && x + 16 <= source.width {
                Kernels.transposeTileSIMD(source.row(first) + x, srcStride: source.stride,
                                          scratch.columns + 256 * t, dstStride: 16)
            } else {
                // Past the right edge or the last rows: copy what exists (repeating the last
                // row) so no load reaches beyond the plane, which may end at the row's end.
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { tile in
                    let tileBase = tile.baseAddress!
                    tileBase.initialize(repeating: 0, count: 256)
                    let w = min(16, source.width - x)
                    for r in 0..<16 {
                        (tileBase + 16 * r).update(from: source.row(first + min(r, count - 1)) + x, count: w)
                    }
                    Kernels.transposeTileSIMD(tileBase, srcStride: 16, scratch.columns + 256 * t, dstStride: 16)
                }
            }
        }
        Kernels.columnsSIMD(scratch.columns, offset: span.lowerBound, table: xTable, into: scratch.outColumns)
        for t in 0..<(xTable.count + 15) / 16 {
            Kernels.transposeTileSIMD(scratch.outColumns + 256 * t, srcStride: 16, out + 16 * t, dstStride: stride)
        }
    }
}
