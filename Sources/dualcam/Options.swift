import ArgumentParser
import Compositor
import MediaIO

extension Corner: ExpressibleByArgument {}
extension AudioChoiceArgument: ExpressibleByArgument {}

enum AudioChoiceArgument: String, CaseIterable {
    case back, front, none
}

struct LayoutOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Inset size.", valueName: "WxH"))
    var inset: String = "\(PiPLayout.defaultInset)"

    @Option(help: "Corner of the inset: top-right, top-left, bottom-right or bottom-left.")
    var corner: Corner = .topRight

    @Option(help: ArgumentHelp("Distance of the inset from the frame edges.", valueName: "PX"))
    var margin: Int = PiPLayout.defaultMargin

    @Option(help: ArgumentHelp("Radius of the inset's rounded corners; 0 for square corners.", valueName: "PX"))
    var cornerRadius: Int = InsetStyle.rounded.cornerRadius

    @Option(help: ArgumentHelp("Width of a light border inside the inset's edge.", valueName: "PX"))
    var border: Int = InsetStyle.rounded.border

    @Flag(inversion: .prefixedNo,
          help: "A soft drop shadow under the inset (default: on with rounded corners, off with --corner-radius 0).")
    var shadow: Bool?

    func validate() throws {
        _ = try layout()
    }

    var style: InsetStyle {
        InsetStyle(cornerRadius: cornerRadius, border: border, shadow: shadow ?? (cornerRadius > 0))
    }

    func layout() throws -> PiPLayout {
        guard let size = Size(parsing: inset) else {
            throw ValidationError("--inset must be WIDTHxHEIGHT, e.g. 160x213; got '\(inset)'")
        }
        let layout = PiPLayout(inset: size, corner: corner, margin: margin, style: style)
        do { try layout.validate() } catch { throw ValidationError(error.description) }
        return layout
    }
}

struct EncodingOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("The .mov file to write.", valueName: "OUT.mov"))
    var output: String

    @Option(help: ArgumentHelp("x265 preset (ultrafast ... placebo).", valueName: "X265PRESET"))
    var preset: String = "ultrafast"

    @Option(help: "x265 constant rate factor: lower is better quality, 0-51.")
    var crf: Int = 28

    @Flag(help: "Replace OUT if it exists.")
    var overwrite = false

    @OptionGroup var metadataOptions: MetadataOptions

    @Option(help: .hidden)
    var videoEncoder: String = "libx265"

    @Flag(help: "Show FFmpeg's own warnings.")
    var verbose = false

    static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow",
                          "slower", "veryslow", "placebo"]

    func validate() throws {
        guard Self.presets.contains(preset) else {
            throw ValidationError("--preset must be one of \(Self.presets.joined(separator: ", "))")
        }
        guard (0...51).contains(crf) else { throw ValidationError("--crf must be 0-51") }
    }

    var videoSettings: VideoEncoderSettings {
        var s = VideoEncoderSettings()
        s.encoder = videoEncoder
        s.preset = preset
        s.crf = crf
        return s
    }

    var metadata: MovWriter.Metadata { metadataOptions.metadata }
}

/// What the file says about the recording besides its creation time.
struct MetadataOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Recording location for the metadata, ISO 6709 (e.g. +48.8584+002.2945/).",
                               valueName: "ISO6709"))
    var location: String?

    func validate() throws {
        if let location, location.range(of: #"^[+-]\d+(\.\d+)?[+-]\d+(\.\d+)?([+-]\d+(\.\d+)?)?/?$"#,
                                         options: .regularExpression) == nil {
            throw ValidationError("--location must be ISO 6709 like +48.8584+002.2945/")
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

    @Flag(help: "Print the summary as one JSON object (stdout).")
    var json = false

    /// The running progress or status line: on a terminal, unless quiet or JSON is asked.
    var showsLiveLine: Bool { !quiet && !json && TerminalLine.shared.enabled }

    /// Messages while the job runs (start line, events, warnings).
    func note(_ message: String) {
        if !quiet { say(message) }
    }
}
