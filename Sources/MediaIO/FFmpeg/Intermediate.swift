import CFFmpeg
import Foundation

/// The intermediate a recording falls back to when its encoder cannot keep up: every frame
/// from slot `fromFrame` on, encoded fast (H.264 ultrafast at a high quality), and the sound
/// from where the take's file stops, in a fragmented file beside the take
/// (`TAKE.intermediate.mov`, TAKE the take's whole name: take.mov and take.mp4 never share
/// one). Both files carry the take's identity (`takeID`) in their comment tag, so that an
/// intermediate is only ever joined to its own take. After the stop (or, after a kill, `dualcam finish TAKE.mov`)
/// its pictures are encoded as the take asked and joined to the take's file, its sound
/// copied; then it is removed.
public struct Intermediate: Sendable {
    /// The first slot it holds: the take's file holds those before it.
    public var fromFrame: Int
    /// The take's own encoding, which its pictures are given when joined.
    public var settings: VideoEncoderSettings
    /// The take it continues, as the take's file names itself (`takeTag`).
    public var takeID: String

    public init(fromFrame: Int, settings: VideoEncoderSettings, takeID: String) {
        self.fromFrame = fromFrame
        self.settings = settings
        self.takeID = takeID
    }

    public static let suffix = ".intermediate.mov"

    /// Beside the take, named for it: TAKE.intermediate.mov.
    public static func path(for take: String) -> String { take + suffix }

    /// The take an intermediate named as `path(for:)` names it belongs to; nil for another name.
    public static func take(of path: String) -> String? {
        path.hasSuffix(suffix) && path.count > suffix.count ? String(path.dropLast(suffix.count)) : nil
    }

    /// Files beside `path` (in its folder) whose tag names the take `takeID`: its intermediate
    /// (`intermediates`) or the take itself, under whatever names they now have (a take
    /// renamed after a kill left its intermediate under the old name).
    public static func companions(of takeID: String, besides path: String, intermediates: Bool) -> [String] {
        let folder = PathName.folder(of: path)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(suffix) == intermediates && !$0.hasPrefix(".") }.sorted()
            .map { PathName.join(folder, $0) }.filter { candidate in
                guard !OutputPath.isSameFile(candidate, path) else { return false }
                if intermediates, case let .intermediate(info)? = try? read(candidate) { return info.takeID == takeID }
                return !intermediates && Intermediate.takeID(of: candidate) == takeID
            }
    }

    /// A new take's identity.
    public static func newTakeID() -> String { UUID().uuidString.lowercased() }

    /// What a take's file says of itself in its comment tag while it is recorded.
    public static func takeTag(_ id: String) -> String { "dualcam-take id=\(id)" }

    /// The identity a file's comment tag gives it as a take; nil when it gives none.
    public static func takeID(of path: String) -> String? {
        guard isRegularFile(path), let input = try? InputContext(path: path),
              let entry = av_dict_get(input.pointer.pointee.metadata, "comment", nil, 0), let value = entry.pointee.value
        else { return nil }
        let words = String(cString: value).split(separator: " ")
        guard words.count == 2, words[0] == "dualcam-take", words[1].hasPrefix("id=") else { return nil }
        return String(words[1].dropFirst(3))
    }

    /// How it is encoded: fast, fine enough that the final encoding loses nothing visible. A
    /// 1080p frame of camera-like noise takes one thread 12-33 ms (the busy take's noise, the
    /// most), so on a busy two-core machine it needs about a CPU.
    /// Frame threads, not x264's zero-latency slices: a frame's slices wait for each other, so
    /// beside busy programs one descheduled slice holds the frame. Beside two busy loops on two
    /// CPUs, 3 threads, 150 frames of 1080p noise (ffmpeg CLI): 5.5-6.0 s sliced, 4.3-4.6 s
    /// with frame threads (25-27 fps against 33-35). The few frames they hold more (a thread
    /// each) are within what a kill may lose (--max-encoder-lag).
    /// `threads`: x264's (`StagePlan.intermediateThreads`; 0: x264's own choice).
    public static func encoding(for take: VideoEncoderSettings, threads: Int = 0) -> VideoEncoderSettings {
        var s = VideoEncoderSettings()
        s.threading = EncoderThreading(threads: threads)
        s.codec = .h264
        s.size = take.size
        s.framesPerSecond = take.framesPerSecond
        s.preset = "ultrafast"
        s.crf = 17
        s.inOrder = true
        s.audioBitrate = take.audioBitrate
        return s
    }

    /// What the file says of itself, in its comment tag.
    public var tag: String {
        "dualcam-intermediate take=\(takeID) from=\(fromFrame) encoder=\(settings.encoder) preset=\(settings.preset) crf=\(settings.crf) "
            + "bitrate=\(settings.bitrate ?? 0) fps=\(settings.framesPerSecond) audio=\(settings.audioBitrate) "
            + "wpp=\(settings.threading.wavefront ? 1 : 0)"
    }

    /// Read back from the tag; nil when `text` is not one.
    init?(tag text: String) {
        var fields: [String: String] = [:]
        let words = text.split(separator: " ")
        guard words.first == "dualcam-intermediate" else { return nil }
        for word in words.dropFirst() {
            let kv = word.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { fields[String(kv[0])] = String(kv[1]) }
        }
        let allowedEncoders = ["libx265", "libx264", "mpeg4"]
        guard let take = fields["take"], (1...64).contains(take.count),
              take.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "-") }),
              let from = fields["from"].flatMap(Int.init), from >= 0, from < 100_000_000,
              let encoder = fields["encoder"], allowedEncoders.contains(encoder),
              let preset = fields["preset"], VideoEncoderSettings.presets.contains(preset),
              let crf = fields["crf"].flatMap(Int.init), (0...51).contains(crf),
              let bitrate = fields["bitrate"].flatMap(Int.init), (0...1_000_000_000).contains(bitrate),
              let fps = fields["fps"].flatMap(Int32.init), (1...240).contains(fps),
              let audio = fields["audio"].flatMap(Int.init), (8_000...1_000_000).contains(audio) else { return nil }
        var s = VideoEncoderSettings()
        s.codec = encoder == "libx264" ? .h264 : .hevc
        s.encoder = encoder
        s.preset = preset
        s.crf = crf
        s.bitrate = bitrate > 0 ? bitrate : nil
        s.framesPerSecond = fps
        s.audioBitrate = audio
        s.inOrder = true
        // The pictures encoded after the stop continue the take's track, so their parameter
        // sets must be the take's: x265's wavefront is in them (an intermediate from before
        // the tag said so was made with it off). The rest of the threading is this machine's
        // now: nothing else runs while a take is finished.
        s.threading = EncoderThreading(threads: CPUAllowance.current().wholeCPUs, wavefront: fields["wpp"] == "1")
        self.init(fromFrame: from, settings: s, takeID: take)
    }

    /// What a file's comment tag says it is.
    public enum Reading: Sendable {
        /// No intermediate's tag.
        case none
        /// A tag that begins as an intermediate's but does not hold (`text`).
        case unreadable(String)
        case intermediate(Intermediate)
    }

    /// What the file at `path` is, as its tag says.
    public static func read(_ path: String) throws(MediaError) -> Reading {
        guard isRegularFile(path) else { return .none }
        let input = try InputContext(path: path)
        guard let entry = av_dict_get(input.pointer.pointee.metadata, "comment", nil, 0),
              let value = entry.pointee.value else { return .none }
        let text = String(cString: value)
        guard text.hasPrefix("dualcam-intermediate") else { return .none }
        return Intermediate(tag: text).map { .intermediate($0) } ?? .unreadable(String(text.prefix(200)))
    }

    /// Whether `path` is a regular file (not followed if a link): only those are opened to
    /// read a tag, as a named pipe's open waits for a writer.
    static func isRegularFile(_ path: String) -> Bool {
        guard let st = OutputPath.entry(path) else { return false }
        return (st.st_mode & S_IFMT) == S_IFREG
    }
}
