import Compositor
import Foundation
import MediaIO

/// `record --review`: the finished take played in the window, over and over, until it is
/// kept (`k`, `q` or closing the window: a take is never thrown away by accident) or
/// discarded (`d`, then `y` to confirm; any other key takes the `d` back). `p` pauses the
/// playback. The question is asked in the window's title and on the terminal. The sound
/// plays through ALSA's default device, and each picture is shown once its sound is heard;
/// with no device to play on, the picture alone (said once).
// Sendable: its state under `lock`.
public final class TakeReview: @unchecked Sendable {
    public enum Outcome: Sendable { case keep, discard }

    public let path: String
    private let window: PreviewWindow
    private let say: (String) -> Void
    private let lock = NSLock()
    private var outcome: Outcome?
    private var confirming = false
    private var paused = false
    /// Nil with no device to play on, or once it failed.
    private var player: SoundPlayer?

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
        do throws(MediaError) { player = try SoundPlayer() } catch {
            say("no sound device to play the take's sound on (\(error)): the picture alone")
        }
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
        let sound = player == nil ? nil : try AudioReader(path: path, timeline: reader.timeline)
        let queue = SampleQueue()
        let rate = Double(OutputAudio.sampleRate)
        player?.restart()
        var start = monotonicNow()
        var shown = 0
        while decision == nil, let picture = try reader.next() {
            start += holdWhilePaused()
            feedSound(from: sound, into: queue, upTo: Int((picture.time + Self.soundLead) * rate))
            // Its time on the clock, and its sound heard: a device's own delay is waited for.
            while decision == nil && (monotonicNow() < start + picture.time
                                      || (player.map { $0.played < Int(picture.time * rate) } ?? false)) {
                usleep(2_000)
            }
            window.offer(picture.picture.image)
            shown += 1
        }
        // An empty take: nothing to loop over, the window waits for the decision.
        if shown == 0 { while decision == nil { usleep(50_000) } }
    }

    /// How far ahead of the picture the sound is handed to ALSA, within its buffer.
    static let soundLead = 0.2

    /// Plays the take's sound up to output sample `target` (silence past its end).
    private func feedSound(from sound: AudioReader?, into queue: SampleQueue, upTo target: Int) {
        guard let player else { return }
        let missing = target - player.queuedUpTo - queue.count
        guard missing > 0 else { return }
        do throws(MediaError) {
            try sound?.fill(queue, upTo: queue.count + missing)
            if player.queuedUpTo + queue.count < target { queue.appendSilence(target - player.queuedUpTo - queue.count) }
            try player.play(from: queue, count: queue.count)
        } catch {
            say("the take's sound stopped playing (\(error)): the picture alone")
            self.player = nil
        }
    }

    /// Waits while `p` holds the playback (the sound held too); returns how long.
    private func holdWhilePaused() -> Double {
        guard lock.withLock({ paused }) else { return 0 }
        let began = monotonicNow()
        player?.hold(true)
        while lock.withLock({ paused }) && decision == nil { usleep(20_000) }
        player?.hold(false)
        return monotonicNow() - began
    }
}
