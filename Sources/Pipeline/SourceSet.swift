import Foundation
import MediaIO

/// The live sources of a recording: the one driving the clock and the inset, if any. A
/// source that fails, ends or sends nothing for `lostAfter` seconds is dropped; when the
/// driver goes, the other one takes over full frame.
final class SourceSet {
    static let lostAfter = 1.0
    /// A source that has not started yet gets this much longer (camera start-up).
    static let startGrace = 4.0

    let all: [LiveSource]
    private(set) var driver: LiveSource
    private(set) var other: LiveSource?
    private let startedAt: Double
    /// Signalled by every picture of the driver.
    let arrived = DispatchSemaphore(value: 0)

    init(_ sources: [LiveSource], startedAt: Double = monotonicNow()) {
        precondition(!sources.isEmpty)
        all = sources
        driver = sources[0]
        other = sources.count > 1 ? sources[1] : nil
        self.startedAt = startedAt
        let arrived = self.arrived
        driver.setOnFrame { arrived.signal() }
    }

    func alive(_ s: LiveSource, now: Double = monotonicNow()) -> Bool {
        if case .lost = s.state { return false }
        let last = s.lastArrival
        return last > 0 ? now - last < Self.lostAfter : now - startedAt < Self.lostAfter + Self.startGrace
    }

    func reason(_ s: LiveSource) -> String {
        if case let .lost(why) = s.state { return why }
        return "no frame for \(Int(Self.lostAfter)) s"
    }

    /// Drops what has been lost, logging each change. False when no source is left.
    func dropLost(event: (String) -> Void) -> Bool {
        if let f = other, !alive(f) {
            event("\(f.name) lost (\(reason(f))): recording \(driver.name) alone, full frame")
            f.requestStop()
            other = nil
        }
        guard !alive(driver) else { return true }
        guard let f = other else {
            event("\(driver.name) lost (\(reason(driver))): no camera left, finishing the file")
            return false
        }
        event("\(driver.name) lost (\(reason(driver))): \(f.name) goes on alone, full frame")
        driver.setOnFrame(nil)
        driver.requestStop()
        driver = f
        other = nil
        let arrived = self.arrived
        driver.setOnFrame { arrived.signal() }
        return true
    }

    func startAll() { for s in all { s.start() } }
    func stopAll() { for s in all { s.stop() } }
}
