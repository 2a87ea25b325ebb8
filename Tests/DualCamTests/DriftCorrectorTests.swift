import Foundation
import MediaIO
@testable import Pipeline
import Testing

@Suite(.timeLimit(.minutes(10))) struct DriftCorrectorTests {
    /// A device whose clock runs `ppm` fast or slow, stamped with a few ms of jitter (as
    /// snd-aloop's 4 ms jiffies give), over `seconds`: how far the placed samples end from
    /// where the monotonic clock says, in samples, and how many corrections were made. Every
    /// `lateEvery` periods one stamp is `late` seconds late (a thread stalled while stamping).
    static func simulate(ppm: Double, seconds: Double, jitter: Double = 0.004,
                         lateEvery: Int = 0, late: Double = 0) -> (error: Double, corrected: Int, silenced: Int) {
        var corrector = DriftCorrector()
        var rng = SplitMix(seed: 42)
        let period = 480
        let periods = Int(seconds * 100)
        var samples = 0
        for p in 0..<periods {
            // The device has produced `samples` at its own rate: that is this much real time.
            let truth = Double(samples) / (48_000 * (1 + ppm / 1e6))
            var stamp = truth + Double.random(in: -jitter...jitter, using: &rng)
            if lateEvery > 0 && p % lateEvery == lateEvery - 1 { stamp += late }
            _ = corrector.place(count: period, capturedAt: 1000 + stamp)
            samples += period
        }
        let now = Double(samples) / (48_000 * (1 + ppm / 1e6))
        return (Double(corrector.placed) - now * 48_000, corrector.corrected, corrector.silenced)
    }

    @Test(arguments: [1000.0, -1000.0, 100.0, -50.0, 5000.0, -5000.0])
    func aDriftingClockIsFollowedForAnHour(ppm: Double) {
        let (error, corrected, _) = Self.simulate(ppm: ppm, seconds: 3600)
        // Uncorrected, 1000 ppm is 3.6 s after an hour; held within 3 ms (144 samples).
        #expect(abs(error) < 144, "\(ppm) ppm: \(error) samples off after an hour")
        // What the device delivered in an hour, less what an hour at 48 kHz holds.
        let delivered = 3600.0 * 48_000
        let expected = delivered / (1 + ppm / 1e6) - delivered
        #expect(abs(Double(corrected) - expected) < 500, "\(ppm) ppm: corrected \(corrected), expected about \(expected)")
    }

    @Test func aTrueClockIsLeftAlone() {
        let (error, corrected, _) = Self.simulate(ppm: 0, seconds: 600)
        #expect(abs(error) < 100 && abs(corrected) < 20, "error \(error), \(corrected) corrections")
    }

    @Test func aGapAfterAnOverrunIsFilledAtOnceAndALongOneStartsAfresh() {
        var c = DriftCorrector()
        _ = c.place(count: 480, capturedAt: 5)
        let gap = c.place(count: 480, capturedAt: 5.11, afterLoss: true)  // 100 ms lost
        #expect(gap.silence == 5280 - 480, "\(gap)")
        let slept = c.place(count: 480, capturedAt: 5000)  // the machine slept
        #expect(slept.silence == 0, "an hour and more of silence: \(slept.silence)")
    }

    @Test func aShortfallThatLastsIsFilledOnceWithoutAnOverrun() {
        var c = DriftCorrector()
        var t = 5.0
        for _ in 0..<100 { _ = c.place(count: 480, capturedAt: t); t += 0.01 }
        t += 0.1  // 100 ms the device never delivered, and said nothing
        var silences: [Int] = []
        for _ in 0..<10 { silences.append(c.place(count: 480, capturedAt: t).silence); t += 0.01 }
        #expect(silences.filter { $0 > 0 }.count == 1 && abs(silences.reduce(0, +) - 4800) <= 10, "\(silences)")
    }

    /// A sound server's stream: its stamps step forward 16 ms and stay there (its graph ran
    /// late, as PipeWire's does on a busy machine) while no sample is lost. No silence goes
    /// in (that was a click in continuous sound); the loop takes the step up, at most three
    /// samples a period, and within 10 s the placement follows the stamps again.
    @Test func aSoundServersStampStepIsTakenUpWithoutSilence() {
        var c = DriftCorrector(fillsUnreportedGaps: false)
        var t = 5.0
        var silences = 0, steepest = 0
        for i in 0..<1_500 {
            if i == 300 { t += 0.016 }
            let placed = c.place(count: 480, capturedAt: t)
            silences += placed.silence
            steepest = max(steepest, abs(placed.length - 480))
            t += 0.01
        }
        let behind = (t - 0.01 - 5.0) * 48_000 - Double(c.placed - 480)
        #expect(silences == 0, "\(silences) samples of silence")
        #expect(steepest <= DriftCorrector.maxStep)
        #expect(abs(behind) < 96, "still \(behind) samples off the stamps")
        // The same step on a card's stream is lost sound: filled once.
        var card = DriftCorrector()
        t = 5.0
        var filled = 0
        for i in 0..<400 {
            if i == 300 { t += 0.016 }
            filled += card.place(count: 480, capturedAt: t).silence
            t += 0.01
        }
        #expect(abs(filled - 768) <= 10, "\(filled)")
    }

    @Test func aLateStampIsNotTakenForLostSound() {
        var c = DriftCorrector()
        var t = 5.0
        for i in 0..<500 {
            // Every 50th stamp 20-35 ms late, as the emulated VM's were.
            let late = i % 50 == 49 ? 0.02 + Double(i % 4) * 0.005 : 0
            let placed = c.place(count: 480, capturedAt: t + late)
            #expect(placed.silence == 0, "period \(i): \(placed)")
            t += 0.01
        }
        #expect(abs(c.corrected) < 30, "a true clock corrected by \(c.corrected) samples")
    }

    /// With a late stamp every 3 s, a 3000 ppm drift is followed as without: the correction
    /// matches the drift, and nothing is filled with silence.
    @Test func lateStampsDoNotBendTheCorrection() {
        let (error, corrected, silenced) = Self.simulate(ppm: -3000, seconds: 70, lateEvery: 300, late: 0.03)
        let clean = Self.simulate(ppm: -3000, seconds: 70)
        #expect(silenced == 0 && abs(error) < 240, "error \(error), silence \(silenced)")
        #expect(abs(corrected - clean.corrected) < 300, "corrected \(corrected), without late stamps \(clean.corrected)")
    }

    @Test func stretchingKeepsTheEndsAndInterpolates() {
        let source: [Float] = [0, 1, 2, 3, 4]
        var longer = [Float](repeating: -1, count: 9), shorter = [Float](repeating: -1, count: 3)
        DriftCorrector.stretch(source, count: 5, into: &longer, length: 9)
        DriftCorrector.stretch(source, count: 5, into: &shorter, length: 3)
        #expect(longer == [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4])
        #expect(shorter == [0, 2, 4])
    }
}
