import Foundation
import MediaIO

/// The live sources of a recording and their roles. The first is the back camera: full
/// frame, driving the clock, whenever it delivers; the second is the inset. A source that
/// fails or sends nothing for `lostAfter` seconds leaves the picture and the other goes on
/// alone, full frame; one that comes back (a camera plugged in again, a stream that
/// resumes) takes its role back at its first frame. Sources gone for good are stopped.
final class SourceSet {
    static let lostAfter = 1.0
    /// A source that has not started yet gets this much longer (camera start-up).
    static let startGrace = 4.0

    let all: [any FrameSource]
    private(set) var driver: any FrameSource
    private(set) var other: (any FrameSource)?
    /// Sources out of the picture, whose leaving has been told.
    private var out = Set<ObjectIdentifier>()
    private var stopped = Set<ObjectIdentifier>()
    private let startedAt: Double
    private let clock: any EngineClock
    /// Signalled by every picture of the driver.
    let arrived = DispatchSemaphore(value: 0)

    init(_ sources: [any FrameSource], clock: any EngineClock = MonotonicClock.shared) {
        precondition(!sources.isEmpty)
        self.clock = clock
        startedAt = clock.now()
        all = sources
        driver = sources[0]
        other = sources.count > 1 ? sources[1] : nil
        let arrived = self.arrived
        driver.setOnFrame { arrived.signal() }
    }

    func alive(_ s: any FrameSource) -> Bool { alive(s, now: clock.now()) }

    func alive(_ s: any FrameSource, now: Double) -> Bool {
        switch s.state {
        case .lost, .away: return false
        case .starting, .running:
            let last = s.lastArrival
            return last > 0 ? now - last < Self.lostAfter : now - startedAt < Self.lostAfter + Self.startGrace
        }
    }

    /// Gone for good: failed for good, or never delivered a picture in its start-up time.
    private func finished(_ s: any FrameSource) -> Bool {
        if case .lost = s.state { return true }
        return s.state == .starting && !alive(s)
    }

    /// Whether any source is in the picture (delivering) now.
    var anyInPicture: Bool { all.contains { alive($0) } }

    func reason(_ s: any FrameSource) -> String {
        if case let .lost(why) = s.state { return why }
        if case let .away(why) = s.state { return why }
        return s.lastArrival > 0 ? "no frame for \(Int(Self.lostAfter)) s" : "no frame since it started"
    }

    /// Re-deals the roles after sources left or came back, telling each change (`seconds`:
    /// where the recording is). False when no source is left nor can come back.
    func update(at seconds: Double, event: (String) -> Void) -> Bool {
        let now = clock.now()
        let inPicture = all.filter { alive($0, now: now) }
        let time = String(format: "at %.2f s", seconds)
        let leaving = all.filter { s in !inPicture.contains(where: { $0 === s }) && out.insert(ObjectIdentifier(s)).inserted }
        for s in leaving {
            // What follows is said once, after the last of the sources that left together.
            let rest = inPicture.first.map { "\($0.name) goes on alone, full frame" }
                ?? (all.contains { !finished($0) } ? "waiting for a camera to come back" : "no camera left, finishing the file")
            event("\(time) \(s.name) lost (\(reason(s)))" + (s === leaving.last ? ": \(rest)" : ""))
        }
        for s in all where finished(s) && stopped.insert(ObjectIdentifier(s)).inserted { s.requestStop() }
        for s in inPicture where out.remove(ObjectIdentifier(s)) != nil {
            event("\(time) \(s.name) is back: " + (s === all[0] ? "full frame again" : "in the inset again"))
        }
        guard let main = inPicture.first else { return all.contains { !finished($0) } }
        setDriver(main)
        other = inPicture.count > 1 ? inPicture[1] : nil
        return true
    }

    private func setDriver(_ s: any FrameSource) {
        guard s !== driver else { return }
        driver.setOnFrame(nil)
        driver = s
        let arrived = self.arrived
        s.setOnFrame { arrived.signal() }
    }

    func startAll() { for s in all { s.start() } }
    /// Stops every source; returns the names of those whose capture thread did not stop.
    func stopAll() -> [String] { all.filter { !$0.stop() }.map(\.name) }
}
