import CFFmpeg
import Foundation

/// The intermediate a recording falls back to when its encoder cannot keep up: every frame
/// from slot `fromFrame` on, encoded fast (H.264 ultrafast at a high quality), and the sound
/// from where the take's file stops, in a fragmented file beside the take
/// (`TAKE.intermediate.mov`). After the stop (or, after a kill, `dualcam finish TAKE.mov`)
/// its pictures are encoded as the take asked and joined to the take's file, its sound
/// copied; then it is removed.
public struct Intermediate: Sendable {
    /// The first slot it holds: the take's file holds those before it.
    public var fromFrame: Int
    /// The take's own encoding, which its pictures are given when joined.
    public var settings: VideoEncoderSettings

    public init(fromFrame: Int, settings: VideoEncoderSettings) {
        self.fromFrame = fromFrame
        self.settings = settings
    }

    /// Beside the take, named for it: TAKE.intermediate.mov.
    public static func path(for take: String) -> String {
        ((take as NSString).deletingPathExtension) + ".intermediate.mov"
    }

    /// How it is encoded: fast enough on a busy two-core machine (12 ms a 1080p frame on one
    /// thread, camera-like noise), fine enough that the final encoding loses nothing visible.
    public static func encoding(for take: VideoEncoderSettings) -> VideoEncoderSettings {
        var s = VideoEncoderSettings()
        s.codec = .h264
        s.size = take.size
        s.framesPerSecond = take.framesPerSecond
        s.preset = "ultrafast"
        s.crf = 17
        s.inOrder = true
        s.lowLatency = true
        s.audioBitrate = take.audioBitrate
        return s
    }

    /// What the file says of itself, in its comment tag.
    public var tag: String {
        "dualcam-intermediate from=\(fromFrame) encoder=\(settings.encoder) preset=\(settings.preset) crf=\(settings.crf) "
            + "bitrate=\(settings.bitrate ?? 0) fps=\(settings.framesPerSecond) audio=\(settings.audioBitrate)"
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
        let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
        guard let from = fields["from"].flatMap(Int.init), from >= 0, from < 100_000_000,
              let encoder = fields["encoder"], allowedEncoders.contains(encoder),
              let preset = fields["preset"], presets.contains(preset),
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
        s.wavefront = false
        self.init(fromFrame: from, settings: s)
    }

    /// The intermediate described by the file at `path`; nil when it is none (no tag).
    public static func read(_ path: String) throws(MediaError) -> Intermediate? {
        let input = try InputContext(path: path)
        guard let entry = av_dict_get(input.pointer.pointee.metadata, "comment", nil, 0),
              let value = entry.pointee.value else { return nil }
        return Intermediate(tag: String(cString: value))
    }
}
