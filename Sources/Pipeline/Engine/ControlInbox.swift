import Compositor
import Synchronization

/// What a running recording is asked to do, wherever the asking comes from: a signal
/// (SIGUSR1 swaps, SIGUSR2 pauses, SIGINT stops), a key on the terminal, a click or a drag
/// in the preview. The `Timeline` takes them one stream.
public enum ControlEvent: Equatable, Sendable {
    case swap
    /// Pauses when recording, resumes when paused (one key, one signal for both).
    case pauseOrResume
    case stop
    case moveInset(Corner)
}

/// Where control events wait for the recording's loop. Sending is a few atomic adds and
/// stores, so a signal handler may send (no lock, no allocation); the loop drains the
/// inbox between pictures (`ControlReader`). Events of one kind keep their count; between
/// kinds, a drain gives them in a fixed order (inset moves, swaps, pauses, stop), which is
/// all a person pressing keys or sending signals can tell apart within one frame.
public final class ControlInbox: Sendable {
    private let swaps = Atomic<Int>(0)
    private let pauses = Atomic<Int>(0)
    private let stops = Atomic<Int>(0)
    private let moves = Atomic<Int>(0)
    /// The corner of the newest inset move (its index in Corner.allCases).
    private let corner = Atomic<Int>(0)

    public init() {}

    /// Signal-safe.
    public func send(_ event: ControlEvent) {
        switch event {
        case .swap: swaps.add(1, ordering: .relaxed)
        case .pauseOrResume: pauses.add(1, ordering: .relaxed)
        case .stop: stops.add(1, ordering: .relaxed)
        case let .moveInset(to):
            corner.store(Corner.allCases.firstIndex(of: to) ?? 0, ordering: .relaxed)
            moves.add(1, ordering: .releasing)
        }
    }

    /// Whether a stop has been asked for (what a job with no timeline, `compose`, reads).
    public var stopRequested: Bool { stops.load(ordering: .relaxed) > 0 }

    fileprivate var counts: (swaps: Int, pauses: Int, stops: Int, moves: Int) {
        (swaps.load(ordering: .relaxed), pauses.load(ordering: .relaxed), stops.load(ordering: .relaxed),
         moves.load(ordering: .acquiring))
    }

    fileprivate var newestCorner: Corner { Corner.allCases[corner.load(ordering: .relaxed)] }
}

/// The loop's side of an inbox: what came since the last drain.
public struct ControlReader {
    public let inbox: ControlInbox
    private var seen = (swaps: 0, pauses: 0, stops: 0, moves: 0)

    public init(_ inbox: ControlInbox) { self.inbox = inbox }

    /// The events sent since the last drain. Several moves of the inset give the newest
    /// corner once (a drag ends where it ends).
    public mutating func drain() -> [ControlEvent] {
        let now = inbox.counts
        var events: [ControlEvent] = []
        if now.moves != seen.moves { events.append(.moveInset(inbox.newestCorner)) }
        events += Array(repeating: .swap, count: now.swaps - seen.swaps)
        events += Array(repeating: .pauseOrResume, count: now.pauses - seen.pauses)
        if now.stops != seen.stops { events.append(.stop) }
        seen = now
        return events
    }
}
