/// When the two pictures exchange roles: each time in the list toggles the swap, at the
/// first output frame at or after it.
public struct SwapSchedule: Sendable, Equatable {
    public let times: [Double]

    public init(_ times: [Double]) { self.times = times.sorted() }

    /// Whether frame `index` of a `fps` timeline shows the swapped layout.
    public func isSwapped(frame index: Int, fps: Int) -> Bool {
        // Compare in whole frames so that T = n/fps swaps exactly at frame n.
        var toggles = 0
        for t in times where Double(index) >= (t * Double(fps)).rounded(.up) - 1e-9 { toggles += 1 }
        return toggles % 2 == 1
    }
}
