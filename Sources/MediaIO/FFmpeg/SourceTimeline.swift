import Foundation

/// One file's clock, shared by the readers of its video and audio streams. Time zero is
/// the first video frame, whatever the container's start time (MPEG-TS starts at ~1.4 s,
/// edit lists, cameras that stamp from power-on). Where a stream's timestamps jump back
/// (concatenated MPEG-TS, a reset) or forward by more than `maxGap` (a broken clock, hours
/// of nothing), the new segment is made to follow on from the previous one. The offset of
/// each segment is fixed by whichever stream reaches the jump first and used by the other
/// when it gets there, so within every segment audio and picture keep the sync they had.
///
/// The video stream may be decoded on a thread of its own: the state is under a lock.
public final class SourceTimeline: Sendable {
    /// Forward jumps longer than this are closed up rather than shown as a frozen picture
    /// and silence.
    public static let maxGap = 1.0
    /// Backward steps up to this are ordinary (overlapping frames, rounding), not resets.
    public static let backwardTolerance = 0.1

    /// The first video frame's time on the file's own clock (seconds), and the seconds added
    /// to the raw time of segment k+1.
    private let state = Locked<(origin: Double?, offsets: [Double])>((nil, []))
    public var origin: Double? { state.withLock { $0.origin } }

    public init() {}

    /// Where one stream has got to.
    public struct Cursor: Sendable {
        var segment = 0
        var offset = 0.0
        /// The raw time at which the next item is expected (the end of the last one).
        var expected: Double?
        public init() {}
    }

    /// Called with the first video frame's raw time.
    public func setOrigin(_ t: Double) { state.withLock { if $0.origin == nil { $0.origin = t } } }

    /// Seconds from time zero for an item of `duration` at raw time `t` (seconds on the
    /// stream's clock) of the stream at `cursor`.
    public func place(_ t: Double, duration: Double, cursor: inout Cursor) -> Double {
        state.withLock { state in Self.place(t, duration: duration, cursor: &cursor, in: &state) }
    }

    private static func place(_ t: Double, duration: Double, cursor: inout Cursor,
                              in state: inout (origin: Double?, offsets: [Double])) -> Double {
        let end = t + max(duration, 0)
        if let expected = cursor.expected {
            let step = t - expected
            if step < -Self.backwardTolerance || step > Self.maxGap {
                let k = cursor.segment
                if state.offsets.count <= k { state.offsets.append(expected + cursor.offset - t) }
                cursor.segment = k + 1
                cursor.offset = state.offsets[k]
                cursor.expected = end
            } else {
                cursor.expected = max(expected, end)
            }
        } else {
            cursor.expected = end
        }
        return t + cursor.offset - (state.origin ?? t)
    }
}
