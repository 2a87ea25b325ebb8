import Foundation
import MediaIO

public struct RecordSummary: Sendable, Codable {
    public var output: String
    public var frames: Int
    public var seconds: Double
    public var singleCamera: Bool
    public var sources: [String]
    public var latencyP50Ms: Double
    public var latencyP99Ms: Double
    public var latencyMaxMs: Double
    /// Output frames that repeat the previous back picture (the camera was slower than 30 fps).
    public var repeatedFrames: Int
    /// Back pictures captured but not shown (the camera was faster than 30 fps, or the encoder behind).
    public var droppedBackFrames: Int
    /// Frames the cameras' drivers report lost (gaps in buffer sequence numbers) or damaged.
    public var cameraDroppedFrames: Int
    /// Of those, frames skipped as damaged: flagged by the driver, cut short, or JPEGs that
    /// would not decode (an MJPEG file's too). None is shown.
    public var cameraDamagedFrames: Int
    /// Times a camera that had gone (unplugged) was found and reopened.
    public var cameraReopened: Int
    /// Camera buffers whose driver stamp lay after they were received (or long before):
    /// timed by when they arrived instead, so latency is never negative.
    public var cameraUntrustedStamps: Int
    /// Output frames whose main picture took the inset where it was captured, with no copy.
    public var composedInPlace: Int
    /// Slots skipped because the encoder was behind (slower than real time, see `skipped`):
    /// the picture before holds longer, the sound is untouched, time and sync are kept.
    public var encoderSkippedFrames: Int
    /// Samples the live audio gained (positive) or lost (negative) to follow the cameras'
    /// clock: a microphone whose clock runs 0.1 % fast loses 48 per second.
    public var audioDriftCorrection: Int
    /// Samples of silence put in where the microphone lost sound (overruns, stalls).
    public var audioSilenceInserted: Int
    public var events: [String]
    /// The virtual camera written beside the file, if one was.
    public var virtualCamera: VirtualCameraSummary?
    /// The live stream sent beside the file, if one was.
    public var stream: LiveStreamSummary?
    /// The cameras' own files written beside it (`--iso`), and the file with the swaps.
    public var isoFiles: [String]?
    /// Times the recording was paused, and the time those pauses left out of the file.
    public var pauses: Int
    public var pausedSeconds: Double
    /// When the file's pictures were encoded (`--encode`): live, after, auto.
    public var encode: String = "live"
    /// Frames that went to the intermediate and were encoded after the stop (0: none did).
    public var framesEncodedAfterStop: Int = 0
    /// Frames that went to the intermediate and were encoded into the take's file while the
    /// take went on (`IntermediateCatchUp`).
    public var framesEncodedDuringTake: Int = 0
    /// The first frame that went to the intermediate (nil: none did); the frames before it
    /// were encoded live.
    public var intermediateFromFrame: Int?
    /// Seconds from the stop to the finished file (encoding what the intermediate held
    /// included).
    public var finishingSeconds: Double = 0
    /// When the pictures were swapped, in seconds of the file; 0 first when it started swapped (--swap).
    public var swaps: [Double] = []
    /// Seconds from the command (the process's start) to the take's first picture; nil
    /// where the process's start cannot be read.
    public var firstFrameSeconds: Double?
}

public struct VirtualCameraSummary: Codable, Sendable {
    public var device: String
    /// Frames written to it, and frames it skipped (no room, or a newer frame came first).
    public var framesWritten: Int
    public var framesSkipped: Int
    /// Why it stopped being written to, if it did (the recording went on).
    public var failure: String?
}

public enum RecordError: Error, CustomStringConvertible {
    case noCamera(String)
    case media(MediaError)
    /// The recording stopped before its first frame: there is no file.
    case nothingRecorded(String)
    /// The recording was cut short by a failure; what was recorded is kept at `path`.
    case cutShort(path: String, seconds: Double, reason: String)
    /// Recorded in full, but the regular file could not be written: the fragmented one is kept.
    case notFinalized(path: String, seconds: Double, reason: String)

    public var description: String {
        switch self {
        case let .noCamera(why): return why
        case let .media(e): return e.description
        case let .nothingRecorded(why): return "\(why): nothing recorded, no file written"
        case let .cutShort(path, seconds, reason):
            return String(format: "%@; recording stopped at %.1f s, ", reason, seconds) + Self.keptFragmented(path)
        case let .notFinalized(path, seconds, reason):
            return String(format: "recorded %.1f s but could not finish the file (%@); ", seconds, reason)
                + Self.keptFragmented(path)
        }
    }

    static func keptFragmented(_ path: String) -> String {
        "it is kept at \(path) as a fragmented file that plays as it is (`dualcam finish \(path)` makes it a regular one)"
    }
}
