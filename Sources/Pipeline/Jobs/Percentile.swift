extension Array where Element == Double {
    /// The nearest-rank `q` quantile of this sorted array (0 when empty): the one definition
    /// of p50/p99 that benchmarks, the live status line and the summary all report.
    package func nearestRank(_ q: Double) -> Double {
        isEmpty ? 0 : self[Swift.min(count - 1, Swift.max(0, Int((q * Double(count)).rounded(.up)) - 1))]
    }
}
