import ArgumentParser
import Compositor
import MediaIO
import Pipeline

extension Corner: ExpressibleByArgument {}
extension Arrangement: ExpressibleByArgument {}
extension EncodeMode: ExpressibleByArgument {}
extension AudioChoiceArgument: ExpressibleByArgument {}
extension VideoEncoderSettings.Codec: ExpressibleByArgument {
    /// Either case, and the names people also use (h265, x265, avc, x264).
    public init?(argument: String) {
        switch argument.lowercased() {
        case "hevc", "h265", "h.265", "x265": self = .hevc
        case "h264", "h.264", "avc", "x264": self = .h264
        default: return nil
        }
    }
}

enum AudioChoiceArgument: String, CaseIterable {
    case back, front, none
}

/// `--swap-at`, as compose and relayout take it.
struct SwapTimes: ParsableArguments {
    @Option(name: .customLong("swap-at"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Swap the two pictures from this time on; repeat to swap back.", valueName: "SECONDS"))
    var swapAt: [Double] = []

    func validate() throws {
        if let bad = swapAt.first(where: { !$0.isFinite || $0 < 0 }) {
            throw ValidationError("--swap-at must be 0 or more seconds, got \(bad)")
        }
        // Two swaps at one time cancel out: surely not what was meant.
        if let twice = swapAt.first(where: { time in swapAt.filter { $0 == time }.count > 1 }) {
            throw ValidationError("--swap-at \(String(format: "%g", twice)) is given twice: each --swap-at swaps once, at its own time")
        }
    }
}

/// compose's `--audio`: which file's sound.
struct FileSoundOption: ParsableArguments {
    @Option(help: ArgumentHelp("Sound from back, front, or none (a silent track); a file named here must have sound. "
                               + "(default: BACK's, a silent track when it has none)", valueName: "back|front|none"))
    var audio: AudioChoiceArgument?
}

struct LayoutOptions: ParsableArguments {
    @Option(name: .customLong("layout"), help: ArgumentHelp("pip (FRONT, or the front camera, in an inset) or side-by-side (each "
            + "aspect-filled into half of the frame, BACK on the left; the inset's options do not apply).",
            valueName: "pip|side-by-side"))
    var arrangement: Arrangement = .pip

    @Option(parsing: .unconditional, help: ArgumentHelp("Inset size, at least \(PiPLayout.minimumInset). (default: 160x213 at 1080p, in proportion at "
                               + "other --size)", valueName: "WxH"))
    var inset: String?

    @Option(help: "Corner of the inset.")
    var corner: Corner = .topRight

    @Option(parsing: .unconditional, help: ArgumentHelp("Distance of the inset from the frame edges. (default: 16 at 1080p)",
                                                         valueName: "PX"))
    var margin: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Radius of the inset's rounded corners; 0 for square corners. (default: "
                                                         + "12 at 1080p, at most a quarter of a small inset's shorter side)",
                                                         valueName: "PX"))
    var cornerRadius: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Width of a light border inside the inset's edge.", valueName: "PX"))
    var border: Int = InsetStyle.rounded.border

    @Flag(inversion: .prefixedNo,
          help: "A soft drop shadow under the inset. (default: on with rounded corners, off with --corner-radius 0)")
    var shadow: Bool?

    /// What can be checked without the canvas; the command checks the whole layout on it.
    func validate() throws {
        if let inset { _ = try Self.insetSize(inset) }
    }

    /// `--inset`'s value: WIDTHxHEIGHT, each side at least the minimum's.
    static func insetSize(_ text: String) throws -> Size {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else {
            throw ValidationError("--inset must be WIDTHxHEIGHT, e.g. 160x213; got '\(text)'")
        }
        let least = PiPLayout.minimumInset
        guard w >= least.width && h >= least.height else {
            throw ValidationError("--inset must be at least \(least) (a smaller one shows nothing); got \(text)")
        }
        return Size(width: w, height: h)
    }

    /// The defaults keep their share of the frame: the 1080p figures, scaled with the
    /// canvas's shorter side.
    static func scaled(_ value: Int, to canvas: Size) -> Int {
        max(1, Int((Double(value) * Double(min(canvas.width, canvas.height)) / 1080).rounded()))
    }

    /// The style on `canvas` for an inset of `inset`: the default radius never more than a
    /// quarter of a small inset's shorter side (one asked for is taken as it is, and checked).
    func style(canvas: Size, inset: Size) -> InsetStyle {
        let radius = cornerRadius ?? min(Self.scaled(InsetStyle.rounded.cornerRadius, to: canvas), min(inset.width, inset.height) / 4)
        return InsetStyle(cornerRadius: radius, border: border, shadow: shadow ?? (radius > 0))
    }

    /// The layout on `canvas`; `scaleDefaults` false keeps the 1080p defaults whatever the
    /// canvas (the hidden test canvas of `record`).
    func layout(canvas: Size = PiPLayout.defaultCanvas, scaleDefaults: Bool = true) throws -> PiPLayout {
        let reference = scaleDefaults ? canvas : PiPLayout.defaultCanvas
        let size: Size
        if let inset {
            size = try Self.insetSize(inset)
        } else {
            size = Size(width: Self.scaled(PiPLayout.defaultInset.width, to: reference),
                        height: Self.scaled(PiPLayout.defaultInset.height, to: reference))
        }
        var layout = PiPLayout(canvas: canvas, inset: size, corner: corner,
                               margin: margin ?? Self.scaled(PiPLayout.defaultMargin, to: reference),
                               style: style(canvas: reference, inset: size))
        layout.arrangement = arrangement
        do { try layout.validate() } catch { throw ValidationError(error.description) }
        return layout
    }
}

/// What the file holds: picture size and rate, how players turn the picture; how it is
/// encoded is a group of its own (help shows it under Encoding).
struct OutputFormatOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("Output picture size, even sides from 64x64 to 7680x4320.", valueName: "WxH"))
    var size = "\(PiPLayout.defaultCanvas)"

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Output frames per second, up to 120 and a divisor of 48000: 24, 25, 30, 50, 60, ...", valueName: "FPS"),
            transform: { text in
                // A whole number; said with what is taken (ArgumentParser's own line named none).
                guard let fps = Int(text) else {
                    // Only for a rate a source could have (a huge one trapped, rounded to Int).
                    let near = Double(text).flatMap { $0 > 0 && $0 <= 1000 ? ", for \($0) fps sources \(Int($0.rounded()))" : nil } ?? ""
                    throw ValidationError("--rate takes a whole number of frames per second that divides 48000 "
                                          + "(24, 25, 30, 48, 50, 60, ...\(near)); got \(text)")
                }
                return fps
            })
    var rate = 30

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Degrees players turn the picture clockwise: 0, 90, 180 or 270 (display matrix, no re-encode).",
                               valueName: "DEGREES"))
    var rotate = 0

    static let largest = Size(width: 7680, height: 4320)

    func validate() throws {
        guard let s = Size(parsing: size) else { throw ValidationError("--size must be WIDTHxHEIGHT with even sides from 64 to \(Self.largest), e.g. 1280x720; got '\(size)'") }
        guard s.width % 2 == 0, s.height % 2 == 0, s.width >= 64, s.height >= 64,
              s.width <= Self.largest.width, s.height <= Self.largest.height else {
            throw ValidationError("--size must have even sides from 64 to \(Self.largest.width)x\(Self.largest.height); got \(size)")
        }
        guard (1...120).contains(rate) else { throw ValidationError("--rate must be from 1 to 120 frames per second; got \(rate)") }
        guard 48_000 % rate == 0 else {
            throw ValidationError("--rate must divide 48000 (a whole number of sound samples per picture): 24, 25, 30, 48, 50, 60, "
                                  + "75, 80, 96, 100 or 120 (or one below 24 that does); got \(rate)")
        }
        guard [0, 90, 180, 270].contains(rotate) else { throw ValidationError("--rotate must be 0, 90, 180 or 270; got \(rotate)") }
    }

    var canvas: Size { Size(parsing: size) ?? PiPLayout.defaultCanvas }

    /// The settings, with the encoder `--encoder` chooses (`hiddenEncoder`, a test knob,
    /// overrides both); for auto, a line says which and why (unless quiet).
    func videoSettings(_ encoding: EncoderOptions, hiddenEncoder: String?, reporting: ReportingOptions) -> VideoEncoderSettings {
        var s = videoSettings(encoding, encoder: hiddenEncoder)
        guard hiddenEncoder == nil, encoding.encoder == .auto else { return s }
        let decision = EncoderChoice.auto(s)
        s.encoder = decision.encoder
        reporting.note(decision.explanation)
        return s
    }

    func videoSettings(_ encoding: EncoderOptions, encoder: String?) -> VideoEncoderSettings {
        var s = VideoEncoderSettings()
        s.codec = encoding.codec
        if let encoder { s.encoder = encoder }
        s.size = canvas
        s.framesPerSecond = Int32(rate)
        s.preset = encoding.preset.lowercased()
        s.crf = encoding.crf ?? 28
        s.bitrate = encoding.bitrate.flatMap(EncoderOptions.bits)
        s.audioBitrate = EncoderOptions.bits(encoding.audioBitrate) ?? 160_000
        return s
    }

    /// The metadata asked for, with the rotation players apply.
    func metadata(_ asked: MetadataOptions) -> MovWriter.Metadata {
        var m = asked.metadata
        m.rotation = rotate
        return m
    }

    /// "1280x720 H.264 25 fps"
    func description(_ encoding: EncoderOptions) -> String { "\(canvas) \(encoding.codec.displayName) \(rate) fps" }
}

/// Which encoder, and how hard it compresses.
struct EncoderOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Video codec: hevc (libx265, tagged hvc1) or h264 (libx264, tagged avc1).", valueName: "hevc|h264"))
    var codec: VideoEncoderSettings.Codec = .hevc

    @Option(help: ArgumentHelp("software (libx265/libx264), or auto: a hardware encoder that works on this machine (NVENC), else software; says which.", valueName: "software|auto"))
    var encoder: EncoderKind = .software

    enum EncoderKind: String, CaseIterable, ExpressibleByArgument { case software, auto }

    @Option(help: ArgumentHelp("Encoder preset, fastest first: \(VideoEncoderSettings.presets.joined(separator: ", ")).",
                               valueName: "PRESET"),
            completion: .list(VideoEncoderSettings.presets))
    var preset: String = "ultrafast"

    @Option(parsing: .unconditional, help: ArgumentHelp("Constant rate factor, 0-51: lower is better quality. (default: 28)",
                                                         valueName: "CRF"))
    var crf: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Average video bitrate instead of --crf, e.g. 6M or 800k.", valueName: "RATE"))
    var bitrate: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("AAC bitrate, 32k-512k.", valueName: "RATE"))
    var audioBitrate = "160k"

    static let presets = VideoEncoderSettings.presets

    func validate() throws {
        guard Self.presets.contains(preset.lowercased()) else {
            let near = CommandWord.nearest(to: preset, among: Self.presets).map { "did you mean \($0)? " } ?? ""
            throw ValidationError("--preset \(preset): \(near)--preset is one of \(Self.presets.joined(separator: ", "))")
        }
        if let crf, !(0...51).contains(crf) { throw ValidationError("--crf must be 0-51; got \(crf)") }
        if bitrate != nil && crf != nil { throw ValidationError("--bitrate and --crf exclude each other: give one") }
        if let bitrate {
            guard let b = Self.bits(bitrate), (100_000...200_000_000).contains(b) else {
                throw ValidationError("--bitrate must be 100k to 200M (e.g. 6M, 800k); got \(bitrate)")
            }
        }
        guard let a = Self.bits(audioBitrate), (32_000...512_000).contains(a) else {
            throw ValidationError("--audio-bitrate must be 32k to 512k; got \(audioBitrate)")
        }
    }

    /// "6M", "800k", "2500000" in bits per second.
    static func bits(_ text: String) -> Int? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let scale = t.hasSuffix("m") ? 1_000_000.0 : t.hasSuffix("k") ? 1000.0 : 1.0
        guard let number = Double(scale == 1 ? t : String(t.dropLast())), number.isFinite, number > 0,
              number * scale < 1e12 else { return nil }
        return Int(number * scale)
    }

}

struct EncodingOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("The file to write: .mov (QuickTime) or .mp4 (MP4).", valueName: "OUT.mov"),
            completion: .file(extensions: ["mov", "mp4"]))
    var output: String

    @OptionGroup var format: OutputFormatOptions

    @Flag(help: "Replace OUT if it exists.")
    var overwrite = false

    @OptionGroup var metadataOptions: MetadataOptions

    @Option(help: .hidden)
    var videoEncoder: String?

    func videoSettings(_ encoding: EncoderOptions, reporting: ReportingOptions) -> VideoEncoderSettings {
        format.videoSettings(encoding, hiddenEncoder: videoEncoder, reporting: reporting)
    }

    var metadata: MovWriter.Metadata { format.metadata(metadataOptions) }

    func validate() throws { try OutputName.validate(output) }
}

/// OUT's name checked before any work: a wrong one is a usage error (exit 64), as a wrong
/// --size is, not a failure found once inputs were opened.
enum OutputName {
    static func validate(_ output: String) throws {
        if let problem = OutputPath.nameProblem(output) { throw ValidationError("\(problem.shownPath): cannot write: \(problem.reason)") }
    }
}

/// What the file says about the recording besides its creation time.
struct MetadataOptions: ParsableArguments {
    // Unconditional: a southern latitude starts with '-' and is still this option's value.
    @Option(parsing: .unconditional, help: ArgumentHelp("Recording location for the metadata, ISO 6709 (e.g. +48.8584+002.2945/).",
                               valueName: "ISO6709"))
    var location: String?

    func validate() throws {
        guard let location else { return }
        if location.range(of: #"^[+-]\d+(\.\d+)?[+-]\d+(\.\d+)?([+-]\d+(\.\d+)?)?/?$"#, options: .regularExpression) == nil {
            throw ValidationError("--location must be ISO 6709 like +48.8584+002.2945/")
        }
        let parts = location.split(whereSeparator: { "+-/".contains($0) })
        guard let latitude = Self.degrees(parts[0], degreeDigits: 2), abs(latitude) <= 90,
              let longitude = Self.degrees(parts[1], degreeDigits: 3), abs(longitude) <= 180 else {
            throw ValidationError("--location must be a place on Earth, latitude up to 90 and longitude up to 180 degrees "
                                  + "(minutes and seconds under 60), like +48.8584+002.2945/; got \(location)")
        }
    }

    /// Degrees of an ISO 6709 coordinate without its sign: D.D, or DDMM.M / DDMMSS.S when its
    /// whole part has two or four digits more than `degreeDigits`; nil for minutes or
    /// seconds of 60 or more.
    static func degrees(_ text: Substring, degreeDigits: Int) -> Double? {
        let whole = text.prefix { $0 != "." }, fraction = Double("0" + text.dropFirst(whole.count)) ?? 0
        guard let number = Int(whole) else { return nil }
        switch whole.count - degreeDigits {
        case 2:
            let minutes = Double(number % 100) + fraction
            return minutes < 60 ? Double(number / 100) + minutes / 60 : nil
        case 4:
            let (minutes, seconds) = (number / 100 % 100, Double(number % 100) + fraction)
            return minutes < 60 && seconds < 60 ? Double(number / 10000) + Double(minutes) / 60 + seconds / 3600 : nil
        default: return Double(number) + fraction
        }
    }

    var metadata: MovWriter.Metadata {
        var m = MovWriter.Metadata()
        if let location { m.location = location.hasSuffix("/") ? location : location + "/" }
        return m
    }
}

/// What is printed while a job runs and when it ends.
struct ReportingOptions: ParsableArguments {
    @Flag(help: "Print errors only: no progress, no summary.")
    var quiet = false

    @Flag(help: "Print the summary as one line of JSON on stdout, for scripts.")
    var json = false

    @Flag(help: "Show FFmpeg's own warnings, and how the work is spread over the CPUs (threads per stage, the live encoder's settings).")
    var verbose = false

    /// The running progress or status line: on a terminal, unless quiet or JSON is asked.
    var showsLiveLine: Bool { !quiet && !json && TerminalLine.shared.enabled }

    /// Messages while the job runs (start line, events, warnings).
    func note(_ message: String) {
        if !quiet { say(message) }
    }
}
