import Compositor
import Foundation
import MediaIO

/// `record --review`: the finished take played in the window, over and over, until it is
/// kept (`k`, `q` or closing the window: a take is never thrown away by accident) or
/// discarded (`d`, then `y` to confirm; any other key takes the `d` back). `p` pauses the
/// playback. The question is asked in the window's title and on the terminal.
public final class TakeReview: @unchecked Sendable {
    public enum Outcome: Sendable { case keep, discard }

    public let path: String
    private let window: PreviewWindow
    private let say: (String) -> Void
    private let lock = NSLock()
    private var outcome: Outcome?
    private var confirming = false
    private var paused = false

    public init(path: String, window: PreviewWindow, say: @escaping (String) -> Void) {
        self.path = path
        self.window = window
        self.say = say
    }

    var askTitle: String { "dualcam - review \((path as NSString).lastPathComponent): k keeps it, d discards it" }
    var confirmTitle: String { "dualcam - discard \((path as NSString).lastPathComponent)? y deletes it, any other key keeps it" }

    /// Plays the take until a decision; returns it. A take that cannot be played is kept.
    public func run() -> Outcome {
        window.setTitle(askTitle)
        window.onSwap = {}
        window.onPauseKey = { [self] in lock.withLock { paused.toggle() } }
        window.onQuitKey = { [self] in decide(.keep) }
        window.onClose = { [self] in decide(.keep) }
        window.onOtherKey = { [self] key in pressed(key) }
        say("reviewing \(path): k keeps it, d discards it (in the window)")
        while decision == nil {
            do throws(MediaError) { try playOnce() } catch {
                say("cannot play \(path) back (\(error)): it is kept")
                return .keep
            }
        }
        return decision ?? .keep
    }

    private var decision: Outcome? { lock.withLock { outcome } }

    private func decide(_ o: Outcome) {
        lock.withLock { if outcome == nil { outcome = o } }
    }

    private func pressed(_ key: UInt8) {
        let ask: String? = lock.withLock {
            if confirming {
                confirming = false
                if key == UInt8(ascii: "y") || key == UInt8(ascii: "Y") { outcome = outcome ?? .discard; return nil }
                return askTitle
            }
            switch key {
            case UInt8(ascii: "k"), UInt8(ascii: "K"):
                outcome = outcome ?? .keep
                return nil
            case UInt8(ascii: "d"), UInt8(ascii: "D"):
                confirming = true
                return confirmTitle
            default:
                return nil
            }
        }
        guard let ask else { return }
        window.setTitle(ask)
        if ask == confirmTitle { say("discard \(path)? y (in the window) deletes it, any other key keeps it") }
    }

    /// Plays the take once at its own pace (paused while `p` holds it), or until a decision.
    private func playOnce() throws(MediaError) {
        let reader = try VideoReader(path: path, decoderThreads: 2)
        var start = monotonicNow()
        var shown = 0
        while decision == nil, let picture = try reader.next() {
            while lock.withLock({ paused }) && decision == nil {
                let held = monotonicNow()
                usleep(20_000)
                start += monotonicNow() - held
            }
            let wait = start + picture.time - monotonicNow()
            if wait > 0 { usleep(UInt32(min(wait, 1) * 1e6)) }
            window.offer(picture.picture.image)
            shown += 1
        }
        // An empty take: nothing to loop over, the window waits for the decision.
        if shown == 0 { while decision == nil { usleep(50_000) } }
    }
}
