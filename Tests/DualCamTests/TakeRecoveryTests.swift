import Foundation
import MediaIO
import Pipeline
import Testing

/// `finish`'s rules for a killed take and its intermediate, each on its own: the files'
/// reading is `Finish`'s, what is done with what they hold is decided here.
@Suite(.timeLimit(.minutes(1))) struct TakeRecoveryTests {
    struct Unreadable: Error {}

    static func take(empty: Bool = false, id: String? = "T1", fragmented: Bool = true, frames: Int? = nil) -> TakeRecovery.Take {
        TakeRecovery.Take(isEmpty: empty, takeID: id, isFragmented: fragmented) {
            guard let frames else { throw Unreadable() }
            return frames
        }
    }
    static func rest(id: String = "T1", from: Int, frames: Int? = nil) -> TakeRecovery.Rest {
        TakeRecovery.Rest(takeID: id, fromFrame: from) {
            guard let frames else { throw Unreadable() }
            return frames
        }
    }
    static func refusal(_ take: TakeRecovery.Take, _ rest: TakeRecovery.Rest, inPlace: Bool = true) -> TakeRecovery.Refusal? {
        do { _ = try TakeRecovery.join(take, rest, inPlace: inPlace); return nil } catch { return error as? TakeRecovery.Refusal }
    }

    @Test func anEmptyTakeIsMadeFromItsIntermediateAloneWithTheFramesBeforeItMissing() throws {
        // Counting frames is never needed: a throwing count would fail the join.
        #expect(try TakeRecovery.join(Self.take(empty: true), Self.rest(from: 0), inPlace: true) == .alone(missing: 0))
        #expect(try TakeRecovery.join(Self.take(empty: true, id: nil), Self.rest(from: 45), inPlace: true) == .alone(missing: 45))
    }

    @Test func anEmptyFileOfAnotherTakeIsNotGivenThisTakesPictures() throws {
        #expect(Self.refusal(Self.take(empty: true, id: "T2"), Self.rest(from: 0)) == .anotherTakesIntermediate)
        // With -o nothing of the other take is replaced: the intermediate alone makes the take.
        #expect(try TakeRecovery.join(Self.take(empty: true, id: "T2"), Self.rest(from: 0), inPlace: false) == .alone(missing: 0))
    }

    @Test func aWholeTakeInTheIntermediateIsJoinedToItsOwnTakeForItsSound() throws {
        // The take's own file may hold the sound its encoder had before the switch.
        #expect(try TakeRecovery.join(Self.take(frames: 0), Self.rest(from: 0, frames: 90), inPlace: true) == .after(missing: 0))
        #expect(Self.refusal(Self.take(id: "T2", frames: 0), Self.rest(from: 0, frames: 90)) == .wholeTakeOfAnother)
        #expect(try TakeRecovery.join(Self.take(id: "T2"), Self.rest(from: 0), inPlace: false) == .alone(missing: 0))
    }

    @Test func theRestOfATakeIsJoinedOnlyToThatTakeStillFragmented() {
        #expect(Self.refusal(Self.take(id: "T2", frames: 30), Self.rest(from: 30, frames: 60)) == .notThatTake)
        #expect(Self.refusal(Self.take(id: nil, frames: 30), Self.rest(from: 30, frames: 60)) == .notThatTake)
        #expect(Self.refusal(Self.take(fragmented: false, frames: 30), Self.rest(from: 30, frames: 60)) == .notThatTake)
    }

    @Test func framesAKillLeftUnwrittenAreCountedMissingUpToItsLimit() throws {
        let limit = TakeRecovery.framesAKillMayLose
        #expect(try TakeRecovery.join(Self.take(frames: 300), Self.rest(from: 300, frames: 60), inPlace: true) == .after(missing: 0))
        #expect(try TakeRecovery.join(Self.take(frames: 280), Self.rest(from: 300, frames: 60), inPlace: true) == .after(missing: 20))
        #expect(try TakeRecovery.join(Self.take(frames: 300 - limit), Self.rest(from: 300, frames: 60), inPlace: true)
                == .after(missing: limit))
        #expect(Self.refusal(Self.take(frames: 299 - limit), Self.rest(from: 300, frames: 60)) == .doNotFit(frames: 299 - limit))
    }

    @Test func framesBothHoldAreAllowedAsFarAsTheIntermediateReaches() throws {
        let limit = TakeRecovery.framesAKillMayLose
        // Packets that came out as it switched, or its encoder's work from the intermediate.
        #expect(try TakeRecovery.join(Self.take(frames: 300 + limit), Self.rest(from: 300), inPlace: true) == .after(missing: 0))
        #expect(try TakeRecovery.join(Self.take(frames: 300 + limit + 60), Self.rest(from: 300, frames: 60), inPlace: true)
                == .after(missing: 0))
        #expect(Self.refusal(Self.take(frames: 300 + limit + 61), Self.rest(from: 300, frames: 60))
                == .doNotFit(frames: 300 + limit + 61))
    }

    @Test func aFinishedTakeHoldsItsIntermediateWhenItHasNearlyAllOfIt() throws {
        let limit = TakeRecovery.framesAKillMayLose
        #expect(try TakeRecovery.holdsItsIntermediate(frames: 360, Self.rest(from: 300, frames: 60)))
        // Up to the frames a kill may lose short of the intermediate's end.
        #expect(try TakeRecovery.holdsItsIntermediate(frames: 480 - limit, Self.rest(from: 300, frames: 180)))
        #expect(try !TakeRecovery.holdsItsIntermediate(frames: 480 - limit - 1, Self.rest(from: 300, frames: 180)))
        // Not more than it held before the intermediate: the join never happened.
        #expect(try !TakeRecovery.holdsItsIntermediate(frames: 300, Self.rest(from: 300, frames: 60)))
        #expect(try !TakeRecovery.holdsItsIntermediate(frames: 400, Self.rest(from: 300, frames: 0)))
    }

    @Test func anEmptyTakeIsAHeaderWithNoPicture() {
        #expect(TakeRecovery.isEmptyTake(size: 0, boxes: nil))
        #expect(TakeRecovery.isEmptyTake(size: 3933, boxes: [("ftyp", 32), ("moov", 3901)]))
        #expect(TakeRecovery.isEmptyTake(size: 4000, boxes: [("ftyp", 32), ("free", 8), ("moov", 3901), ("mfra", 59)]))
        #expect(!TakeRecovery.isEmptyTake(size: 9000, boxes: [("ftyp", 32), ("moov", 3901), ("moof", 500), ("mdat", 4567)]))
        // A bigger index describes samples: a finished movie.
        #expect(!TakeRecovery.isEmptyTake(size: 70_000, boxes: [("ftyp", 32), ("moov", TakeRecovery.emptyIndexBytes + 1)]))
        #expect(!TakeRecovery.isEmptyTake(size: 100, boxes: nil))
        #expect(!TakeRecovery.isEmptyTake(size: 100, boxes: [("moov", 100)]))
    }
}
