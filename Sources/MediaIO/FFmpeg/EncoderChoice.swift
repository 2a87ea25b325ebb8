import CFFmpeg

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

    /// The encoder for `settings` (its codec, size and rate) when `auto` is asked.
    public static func auto(_ settings: VideoEncoderSettings) -> Decision {
        var passed: [String] = []
        for (name, unsupported) in hardware(settings.codec) {
            guard avcodec_find_encoder_by_name(name) != nil else {
                passed.append("\(name): not in this FFmpeg")
                continue
            }
            if let unsupported {
                passed.append("\(name): \(unsupported)")
                continue
            }
            var trial = settings
            trial.encoder = name
            do {
                _ = try VideoEncoder(settings: trial)
                return Decision(encoder: name, hardware: true, explanation: "encoder: \(name) (hardware)")
            } catch {
                passed.append("\(name): does not open here (\(error))")
            }
        }
        let software = settings.codec.softwareEncoder
        return Decision(encoder: software, hardware: false,
                        explanation: "encoder: \(software) (software; " + passed.joined(separator: "; ") + ")")
    }
}
