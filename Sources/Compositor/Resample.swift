/// Separable resampling of one plane through a pair of filter tables, each pass rounded to
/// 8 bits (see `Kernels`). The first pass is the vertical one, except when the picture grows
/// taller: then the horizontal pass goes first, so it runs on the fewer source rows.
public enum Resample {
    /// Plain reference implementation; the definition of the right answer.
    public static func scalar(source: PlaneView, into destination: PlaneView,
                              x xTable: FilterTable, y yTable: FilterTable,
                              scratch: UnsafeMutablePointer<UInt8>) {
        precondition(destination.width == xTable.count && destination.height == yTable.count)
        let span = xTable.sourceSpan
        precondition(span.upperBound <= source.width && yTable.sourceSpan.upperBound <= source.height)
        yTable.weights.withUnsafeBufferPointer { yWeights in
            if horizontalFirst(y: yTable) {
                // Each output row: filter its source rows across, then blend them down.
                let width = xTable.count
                for dy in 0..<destination.height {
                    for k in 0..<yTable.taps {
                        Kernels.horizontalScalar(source.row(Int(yTable.starts[dy]) + k), offset: 0, table: xTable,
                                                 into: scratch + k * width)
                    }
                    Kernels.verticalScalar(scratch, stride: width, taps: yTable.taps,
                                           weights: yWeights.baseAddress! + dy * yTable.taps, count: width,
                                           into: destination.row(dy))
                }
                return
            }
            for dy in 0..<destination.height {
                Kernels.verticalScalar(source.row(Int(yTable.starts[dy])) + span.lowerBound, stride: source.stride,
                                       taps: yTable.taps, weights: yWeights.baseAddress! + dy * yTable.taps,
                                       count: span.count, into: scratch)
                Kernels.horizontalScalar(scratch, offset: span.lowerBound, table: xTable, into: destination.row(dy))
            }
        }
    }

    /// The pass order, part of the definition of the result (8-bit rounding between passes).
    public static func horizontalFirst(y: FilterTable) -> Bool { y.magnification > 1 }

    /// Bytes of scratch `scalar` needs for these tables.
    public static func scalarScratchCount(x: FilterTable, y: FilterTable) -> Int {
        max(x.sourceSpan.count, x.count * y.taps) + 64
    }
}
