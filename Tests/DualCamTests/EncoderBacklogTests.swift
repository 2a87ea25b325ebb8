@testable import Pipeline
import Testing

/// The recorder's rule for an encoder behind real time, driven by a model of the encode
/// queue: slots at 30 fps, an encoder whose frames take given times, the real estimator of
/// its speed and the real rule; the model keeps the true cost of what waits.
@Suite(.timeLimit(.minutes(1))) struct EncoderBacklogTests {
    struct Run {
        var skipped = 0, encoded = 0
        /// The most encoder time ever waiting (queued frames and what is left of the one
        /// being encoded), at its true cost: what a stop waits for, and about what a kill loses.
        var mostWaiting = 0.0
    }

    /// `seconds` of slots given to an encoder whose n-th frame takes `cost(n)`.
    static func record(seconds: Double, fps: Double = 30, cost: (Int) -> Double) -> Run {
        var run = Run(), backlog = EncoderBacklog(), speed = RecentFrameTimes()
        var queued: [(slot: Int, cost: Double)] = []
        var encoding: (slot: Int, endsAt: Double)?
        var freeAt = 0.0
        for slot in 0..<Int(seconds * fps) {
            let now = Double(slot) / fps
            // The encoder works through what waits, up to now.
            while true {
                if let current = encoding {
                    guard current.endsAt <= now else { break }
                    freeAt = current.endsAt
                    encoding = nil
                    run.encoded += 1
                }
                guard !queued.isEmpty else { break }
                let next = queued.removeFirst()
                let took = cost(run.encoded + 1)
                encoding = (next.slot, max(freeAt, Double(next.slot) / fps) + took)
                if next.slot > 0 { speed.add(took) }
            }
            backlog.note(secondsPerFrame: speed.secondsPerFrame, fps: fps)
            if backlog.isSlower {
                // The queue's trim: the oldest go until what is left takes half a second.
                let estimate = speed.secondsPerFrame
                while queued.count > 1 && Double(queued.count + (encoding == nil ? 0 : 1)) * estimate > EncoderBacklog.drainLimitSeconds {
                    queued.removeFirst()
                    run.skipped += 1
                }
            }
            let oldest = encoding?.slot ?? queued.first?.slot
            let lagSlots = oldest.map { slot - $0 } ?? 0
            let lagSeconds = Double(queued.count + (encoding == nil ? 0 : 1)) * speed.secondsPerFrame
            if slot > 0 && backlog.isFull(slots: lagSlots, seconds: lagSeconds, fps: fps, maxLag: 1) {
                run.skipped += 1
            } else {
                queued.append((slot, 0))
            }
            let waiting = (encoding.map { max(0, $0.endsAt - now) } ?? 0)
                + (0..<queued.count).reduce(0.0) { sum, k in sum + cost(run.encoded + 2 + k) }
            run.mostWaiting = max(run.mostWaiting, waiting)
        }
        return run
    }

    /// A fixed sequence of frame times between `low` and `high` (a small linear congruential
    /// generator: the same every run).
    static func jittered(low: Double, high: Double) -> (Int) -> Double {
        { n in
            let r = Double((UInt64(truncatingIfNeeded: n) &* 6364136223846793005 &+ 1442695040888963407) >> 33) / Double(1 << 31)
            return low + (high - low) * r
        }
    }

    /// Beside two busy processes x265 took 0.086-0.22 s a frame, so its estimated speed
    /// (the second shortest of nine) wandered across the 0.1 s line that makes it "slower".
    /// Each time it fell under the line, a second of slots could queue: 3 s of its time,
    /// and a stop took 3.5 s instead of 1.2. What waits must stay near half a second.
    @Test func anEncoderAroundTheLineKeepsLittleWaiting() {
        let run = Self.record(seconds: 60, cost: Self.jittered(low: 0.085, high: 0.22))
        #expect(run.mostWaiting < 1.0, "\(run)")
        #expect(run.skipped > 0 && run.encoded > 60 * 4, "\(run)")
    }

    /// An encoder a little slower than real time (20 fps) is never allowed a second of slots of
    /// backlog that takes it 1.5 s: a second of its own time at most.
    @Test func anEncoderSomewhatSlowerThanRealTimeKeepsASecondOfItsTime() {
        let run = Self.record(seconds: 30, cost: { _ in 0.05 })
        #expect(run.mostWaiting <= 1.05, "\(run)")
        #expect(run.skipped > 0, "\(run)")
    }

    /// An encoder that keeps up (30 ms a frame, the emulated VM's) and stalls once for 0.6 s
    /// catches up by itself: nothing is skipped.
    @Test func anEncoderThatKeepsUpSkipsNothingAfterAStall() {
        let run = Self.record(seconds: 10, cost: { n in n == 100 ? 0.6 : 0.03 })
        #expect(run.skipped == 0, "\(run)")
    }

    /// "Slower" turns on above three slots a frame and off only under two.
    @Test func slowerHasAGap() {
        var backlog = EncoderBacklog()
        let fps = 30.0
        let seen = [0.09, 0.11, 0.09, 0.07, 0.06, 0.09].map { spf -> Bool in
            backlog.note(secondsPerFrame: spf, fps: fps)
            return backlog.isSlower
        }
        #expect(seen == [false, true, true, true, false, false])
    }
}
