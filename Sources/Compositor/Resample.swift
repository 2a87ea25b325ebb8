/// Separable resampling of one plane through a pair of filter tables: a vertical pass
/// into a UInt16 row (value * 256, exact), then a horizontal pass with rounding.
public enum Resample {
    /// Plain reference implementation; the definition of the right answer.
    public static func scalar(source: PlaneView, into destination: PlaneView,
                              x xTable: FilterTable, y yTable: FilterTable,
                              scratch: UnsafeMutablePointer<UInt16>) {
        precondition(destination.width == xTable.count && destination.height == yTable.count)
        let span = xTable.sourceSpan
        precondition(span.upperBound <= source.width && yTable.sourceSpan.upperBound <= source.height)
        let xTaps = xTable.taps, yTaps = yTable.taps
        xTable.starts.withUnsafeBufferPointer { xStarts in
        xTable.weights.withUnsafeBufferPointer { xWeights in
        yTable.starts.withUnsafeBufferPointer { yStarts in
        yTable.weights.withUnsafeBufferPointer { yWeights in
            for dy in 0..<destination.height {
                let firstRow = Int(yStarts[dy])
                for sx in span {
                    var acc = 0
                    for k in 0..<yTaps {
                        acc += Int(yWeights[dy * yTaps + k]) * Int(source[sx, firstRow + k])
                    }
                    scratch[sx - span.lowerBound] = UInt16(acc)
                }
                let out = destination.row(dy)
                for dx in 0..<destination.width {
                    let first = Int(xStarts[dx]) - span.lowerBound
                    var acc = 0
                    for k in 0..<xTaps {
                        acc += Int(xWeights[dx * xTaps + k]) * Int(scratch[first + k])
                    }
                    out[dx] = UInt8((acc + (1 << 15)) >> 16)
                }
            }
        }}}}
    }
}
