import Foundation
import MediaIO

/// The rules `finish` applies to a take a kill left behind and the intermediate beside it,
/// decided from what each file holds: whether the take holds anything, whose it is, how many
/// frames each has. The command reads the files, prints and writes; this decides, and
/// `TakeRecoveryTests` checks each rule on its own.
package enum TakeRecovery {
    /// Frames of the take's own file a kill may leave unwritten before its intermediate
    /// begins: the worker's queue (20) and what x265 holds, with room to spare.
    package static let framesAKillMayLose = 120

    /// More than a fragmented file's index before its first fragment can hold (dualcam's is
    /// under 4 KiB with its metadata): a bigger index describes samples, so it is a movie.
    package static let emptyIndexBytes: Int64 = 64 * 1024

    /// Whether a file of `size` bytes whose top-level boxes are `boxes` (nil: not readable as
    /// QuickTime) is a take as a kill before its first fragment leaves it: nothing, the file
    /// type alone, or the file type and the fragmented file's index with no picture after it
    /// (a take that went to the intermediate at its second frame, killed at 8 s: `finish` called
    /// that 3933-byte header "not that take", and the 7 s its intermediate held were lost).
    package static func isEmptyTake(size: Int64, boxes: [(type: String, size: Int64)]?) -> Bool {
        if size == 0 { return true }
        guard let boxes, boxes.first?.type == "ftyp" else { return false }
        // mfra: the index of fragments a stop writes at the end, here of none (a take all in its
        // intermediate, stopped while that was encoded, was taken for a finished one).
        return boxes.allSatisfy { ["ftyp", "free", "wide", "moov", "mfra"].contains($0.type) }
            && !boxes.contains { $0.type == "moov" && $0.size > emptyIndexBytes }
    }

    /// The take's file, as far as joining its intermediate to it goes.
    package struct Take {
        /// Not there, or holding no picture yet (`isEmptyTake`).
        package var isEmpty: Bool
        /// The identity in its tag; nil when it has none.
        package var takeID: String?
        package var isFragmented: Bool
        /// Its video frames: counted only where a rule needs them (it reads the whole file).
        package var frames: () throws -> Int

        package init(isEmpty: Bool, takeID: String?, isFragmented: Bool, frames: @escaping () throws -> Int) {
            self.isEmpty = isEmpty
            self.takeID = takeID
            self.isFragmented = isFragmented
            self.frames = frames
        }
    }

    /// The intermediate: the take it continues, from which frame, and how many it holds.
    package struct Rest {
        package var takeID: String
        package var fromFrame: Int
        package var frames: () throws -> Int

        package init(takeID: String, fromFrame: Int, frames: @escaping () throws -> Int) {
            self.takeID = takeID
            self.fromFrame = fromFrame
            self.frames = frames
        }
    }

    /// How the take is made: from the intermediate alone (the take's file holds none of it),
    /// or the intermediate's frames after the take's; `missing`: frames a kill left unwritten
    /// before the intermediate begins.
    package enum Join: Equatable {
        case alone(missing: Int)
        case after(missing: Int)
    }

    /// Why the two are not joined; nothing is changed.
    package enum Refusal: Error, Equatable {
        /// The take's file holds no picture yet but is another take's.
        case anotherTakesIntermediate
        /// The intermediate holds a whole take (from frame 0), and the file is not that take.
        case wholeTakeOfAnother
        /// The intermediate continues a take, and the file is not that take (or not fragmented).
        case notThatTake
        /// The file is that take, but its frames and the intermediate's do not fit together.
        case doNotFit(frames: Int)
    }

    /// How `rest` is joined to `take`. `inPlace`: the result takes the take's name (no -o),
    /// so nothing of another take may be replaced.
    package static func join(_ take: Take, _ rest: Rest, inPlace: Bool) throws -> Join {
        let ours = !take.isEmpty && take.takeID == rest.takeID
        // A file with no picture yet is still a take's: another take's is not given this
        // one's pictures (two takes killed early and one renamed over the other were mixed).
        if take.isEmpty, inPlace, let other = take.takeID, other != rest.takeID { throw Refusal.anotherTakesIntermediate }
        // From its first frame the intermediate holds every picture, but the take's own file
        // may hold the sound before it (what its encoder had when the take switched): joined
        // to it then, or that sound was lost (takes killed beside busy loops began at 0.149 s).
        if take.isEmpty || (rest.fromFrame == 0 && !ours) {
            guard take.isEmpty || !inPlace else { throw Refusal.wholeTakeOfAnother }
            return .alone(missing: rest.fromFrame)
        }
        guard ours, take.isFragmented else { throw Refusal.notThatTake }
        // The take's own file may hold frames the intermediate holds too (their packets came
        // out as it switched, and those its encoder went on with from the intermediate while
        // the take went on), or lack a few a kill left inside the encoder.
        let frames = try take.frames()
        let reach = rest.fromFrame + framesAKillMayLose
        guard try frames <= reach || frames <= reach + rest.frames(), rest.fromFrame - frames <= framesAKillMayLose else {
            throw Refusal.doNotFit(frames: frames)
        }
        return .after(missing: max(0, rest.fromFrame - frames))
    }

    /// Whether a finished take of `frames` frames already holds the intermediate's (a stop
    /// or kill came between the finished file taking the take's name and the intermediate's
    /// removal): more than the take held before its intermediate, and nearly all of it.
    package static func holdsItsIntermediate(frames: Int, _ rest: Rest) throws -> Bool {
        let restFrames = try rest.frames()
        return restFrames > 0 && frames > rest.fromFrame && frames + framesAKillMayLose >= rest.fromFrame + restFrames
    }
}
