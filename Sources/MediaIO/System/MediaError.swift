/// Everything that can go wrong reading or writing media, each with the file it concerns,
/// so the CLI can say it in one line.
public enum MediaError: Error, Equatable, CustomStringConvertible, Sendable {
    case cannotOpen(path: String, reason: String)
    case noVideoStream(path: String)
    case unsupportedCodec(path: String, codec: String)
    case undecodable(path: String, reason: String)
    /// The sound of a file that cannot be decoded or converted (a 64-channel track was called
    /// "cannot decode video").
    case undecodableSound(path: String, reason: String)
    case damaged(path: String, reason: String)
    case encoderUnavailable(name: String)
    case encoderFailed(name: String, reason: String)
    case cannotWrite(path: String, reason: String)
    /// A system call on `path` failed (opening it when not `writing`): the errno kept.
    case system(path: String, writing: Bool, errno: Errno, context: String = "")
    case outputExists(path: String)
    /// `--audio back|front` named a file with no sound track.
    case noSound(path: String, asked: String)
    case interrupted
    /// The layout cannot be composed (sizes the compositor cannot place).
    case cannotCompose(reason: String)
    /// An output beside the file (the virtual camera) cannot be used: the line says why.
    case outputUnusable(String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason): return "\(path): cannot open: \(reason)"
        case let .noVideoStream(path): return "\(path): no video stream"
        case let .unsupportedCodec(path, codec): return "\(path): no decoder for codec '\(codec)' in this FFmpeg"
        case let .undecodable(path, reason): return "\(path): cannot decode video: \(reason)"
        case let .undecodableSound(path, reason): return "\(path): cannot decode its sound: \(reason)"
        case let .damaged(path, reason): return "\(path): file is truncated or damaged (\(reason))"
        case let .encoderUnavailable(name):
            return "encoder '\(name)' is not available in this FFmpeg build (Debian's libavcodec59 has libx265)"
        case let .encoderFailed(name, reason): return "encoder '\(name)' failed: \(reason)"
        case let .cannotWrite(path, reason): return "\(path): cannot write: \(reason)"
        case let .system(path, writing, errno, context):
            return "\(path): cannot \(writing ? "write" : "open"): \(context)\(errno)"
        case let .outputExists(path): return "\(path): already exists (use --overwrite to replace it)"
        case let .noSound(path, asked):
            return "\(path) has no sound track: --audio \(asked) takes its sound (--audio none records a silent track)"
        case .interrupted: return "interrupted; no output written"
        case let .cannotCompose(reason): return "cannot compose this layout: \(reason)"
        case let .outputUnusable(why): return why
        }
    }
}
