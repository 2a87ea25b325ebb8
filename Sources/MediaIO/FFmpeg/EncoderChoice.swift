import CFFmpeg
import Foundation

/// Which video encoder to use: the software one (libx265, libx264), or with `auto` the first
/// hardware encoder FFmpeg has that opens on this machine with our frames. Hardware
/// encoders that cannot take dualcam's frames (system-memory I420) are passed over, and why
/// is said.
public enum EncoderChoice {
    public struct Decision: Sendable {
        public var encoder: String
        public var hardware: Bool
        /// One line for the user: what was chosen and why the others were not.
        public var explanation: String
    }

    /// Hardware encoders of `codec` in the order they are tried, with nil when dualcam can
    /// feed them, or why it cannot.
    static func hardware(_ codec: VideoEncoderSettings.Codec) -> [(name: String, unsupported: String?)] {
        let prefix = codec == .hevc ? "hevc" : "h264"
        return [("\(prefix)_nvenc", nil),
                ("\(prefix)_qsv", "takes NV12 or QSV surfaces, not dualcam's I420 frames"),
                ("\(prefix)_vaapi", "takes VAAPI surfaces, which dualcam does not upload to")]
    }

    /// Each hardware encoder of `settings.codec`: whether it opens here with our frames, and
    /// why not when it does not (`auto` takes the first that does; `dualcam doctor` lists them).
    public static func survey(_ settings: VideoEncoderSettings, stopAtFirstUsable: Bool = false)
        -> [(name: String, usable: Bool, why: String)] {
        var found: [(name: String, usable: Bool, why: String)] = []
        for (name, unsupported) in hardware(settings.codec) {
            guard avcodec_find_encoder_by_name(name) != nil else {
                found.append((name, false, "not in this FFmpeg"))
                continue
            }
            if let unsupported {
                found.append((name, false, unsupported))
                continue
            }
            // FFmpeg's own word for a missing driver is "Operation not permitted".
            if name.hasSuffix("_nvenc"), dlopen("libcuda.so.1", RTLD_LAZY) == nil {
                found.append((name, false, "no NVIDIA driver here (libcuda.so.1 does not load)"))
                continue
            }
            var trial = settings
            trial.encoder = name
            do {
                _ = try VideoEncoder(settings: trial)
                found.append((name, true, "opens here"))
                if stopAtFirstUsable { break }
            } catch {
                found.append((name, false, "does not open here (\(error))"))
            }
        }
        return found
    }

    /// The encoder for `settings` (its codec, size and rate) when `auto` is asked.
    public static func auto(_ settings: VideoEncoderSettings) -> Decision {
        let found = survey(settings, stopAtFirstUsable: true)
        if let usable = found.first(where: \.usable) {
            return Decision(encoder: usable.name, hardware: true, explanation: "encoder: \(usable.name) (hardware)")
        }
        let passed = found.map { "\($0.name): \($0.why)" }
        let software = settings.codec.softwareEncoder
        return Decision(encoder: software, hardware: false,
                        explanation: "encoder: \(software) (software; " + passed.joined(separator: "; ") + ")")
    }
}
