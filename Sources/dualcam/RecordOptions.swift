import ArgumentParser
import Foundation
import MediaIO
import Pipeline

/// record's options, in the groups its help shows them in.
struct RecordCameraOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The main camera: /dev/videoN or a video file. (default: the first camera)", valueName: "DEV|FILE"),
            completion: .custom { _, _, prefix in Completions.camerasAndFiles(prefix) })
    var back: String?
    @Option(help: ArgumentHelp("The inset camera: /dev/videoN or a video file. (default: the second camera)", valueName: "DEV|FILE"),
            completion: .custom { _, _, prefix in Completions.camerasAndFiles(prefix) })
    var front: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Capture size asked of the cameras, kept even when they are slow at it. "
                               + "(default: the output's --size, or the largest size at which a camera reaches --fps)", valueName: "WxH"))
    var capture: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Frame rate asked of the cameras; formats and sizes that reach it are "
                               + "chosen first. (default: the output's --rate)", valueName: "FPS"))
    var fps: Double?
    @Option(help: ArgumentHelp("Use only this camera pixel format: \(Self.pixelFormatNames).", valueName: "FOURCC"),
            completion: .list(CameraPixelFormat.names))
    var pixelFormat: String?
    @Option(name: .customLong("control"), help: ArgumentHelp(
        "Camera controls to set when a camera opens, over those saved with dualcam controls (repeatable): "
            + "back:brightness=150,auto_exposure=1 (dualcam controls DEV lists them).", valueName: "back|front:NAME=VALUE,..."),
            completion: .custom { arguments, _, prefix in Completions.controls(prefix, arguments: arguments) })
    var controls: [String] = []

    /// YUYV, UYVY, NV12, YU12 or MJPG: the table's names, in its order.
    static var pixelFormatNames: String {
        let names = CameraPixelFormat.names
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}

struct RecordSoundOption: ParsableArguments {
    @Option(help: ArgumentHelp("An ALSA capture device (hw:1, plughw:CARD=C920, pipewire), none for a silent "
                               + "track, or back/front for the sound of a file given as --back/--front, in sync with "
                               + "its picture. (default: the system's default device, the sound server on a PipeWire or "
                               + "PulseAudio desktop)", valueName: "ALSA_DEVICE|none|back|front"),
            completion: .custom { _, _, _ in Completions.microphones() })
    var audio: String?
}

struct RecordTakeOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp("The .mov or .mp4 file to write; none writes no file, with --virtual-camera, "
                                                      + "--preview or --stream. (default: dualcam-DATE-TIME.mov)",
                                                      valueName: "OUT.mov|none"),
            completion: .file(extensions: ["mov", "mp4"]))
    var output: String?
    @Option(parsing: .unconditional, help: ArgumentHelp("Stop after this many seconds (5, 2.5 or 90s).", valueName: "SECONDS"),
            transform: { text in
                guard let seconds = Double(text.hasSuffix("s") ? String(text.dropLast()) : text) else {
                    throw ValidationError("--duration takes seconds, as a number (5, 2.5 or 90s); got \(text)")
                }
                return seconds
            })
    var duration: Double?
    @Flag(help: "Start with the pictures swapped.") var swap = false
    @Option(help: ArgumentHelp("When the file's pictures are encoded: auto (as recorded while the encoder keeps up; from the moment it "
                               + "cannot, every frame goes to OUT.intermediate.mov (take.mov.intermediate.mov for take.mov), H.264, which the encoder works through as the take goes on; what it has not reached is encoded after the stop), "
                               + "live (as recorded; frames are skipped when the encoder cannot keep up), after (every frame to the "
                               + "intermediate, all encoded after the stop). The intermediate takes about 4 MB a second of disk "
                               + "while it is written. With --stream or -o none, the encoding is live.", valueName: "auto|live|after"))
    var encode: EncodeMode = .auto
    @Flag(help: "Replace OUT if it exists.") var overwrite = false
    @Flag(help: "Once stopped, play the take in a window: k keeps it, d then y discards it.") var review = false
    @Flag(help: ArgumentHelp("Also keep each camera's own picture beside the take, H.264 (take.back.mov and take.front.mov "
                             + "for take.mov), and the swaps (take.dualcam.json), for dualcam relayout.")) var iso = false
}

struct RecordAlsoOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Also show the composed picture as a camera other programs read (a video call): a v4l2loopback "
                               + "device (sudo modprobe v4l2loopback exclusive_caps=1 card_label=DualCam video_nr=10).",
                               valueName: "DEV"),
            completion: .custom { _, _, prefix in Completions.camerasAndFiles(prefix, filesToo: false) })
    var virtualCamera: String?
    @Option(help: ArgumentHelp("Also send the recording live (the same encoding): srt://HOST:PORT (MPEG-TS), rtmp://HOST/APP/KEY "
                               + "(FLV, with --codec h264), udp:// or tcp://. A dropped network or a server that goes away "
                               + "never stops the recording: the stream reconnects with backoff. @FILE reads the URL from "
                               + "FILE, env:NAME from the environment variable NAME: a URL with a key or a password then "
                               + "never shows in the process list.", valueName: "URL"))
    var stream: String?

    /// The stream's URL: as given, read from a file (@FILE, its first line) or from the
    /// environment (env:NAME). Its secrets are remembered, to be masked wherever text is shown.
    func streamURL() throws -> String? {
        guard let stream else { return nil }
        let url: String
        if stream.hasPrefix("@") {
            let file = String(stream.dropFirst())
            var st = stat()
            guard stat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size < 64 * 1024,
                  let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ValidationError("--stream \(stream): \(file) cannot be read as a text file holding the URL")
            }
            url = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        } else if stream.hasPrefix("env:") {
            let name = String(stream.dropFirst(4))
            guard let value = ProcessInfo.processInfo.environment[name] else {
                throw ValidationError("--stream \(stream): the environment variable \(name) is not set")
            }
            url = value.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            url = stream
            // "rtmp:/user:pw@host": a scheme without its // is no URL the masking knows, and
            // its password was shown in the error that followed. Refused without echoing it.
            if let colon = url.firstIndex(of: ":"), url[..<colon].allSatisfy({ $0.isLetter }), colon != url.startIndex,
               !url[colon...].hasPrefix("://") {
                throw ValidationError("--stream: a URL's scheme is followed by ://, as in rtmp://HOST/APP/KEY or srt://HOST:PORT "
                                      + "(what was given is not shown: it may hold a password)")
            }
        }
        guard !url.isEmpty else { throw ValidationError("--stream \(stream): the URL is empty") }
        Secrets.register(url: url)
        // What a file or the environment holds is not shown unless it is a URL (a wrong file,
        // or a bare key, went to stderr as it was).
        guard url.contains("://") || stream == url else {
            throw ValidationError("--stream \(stream): its first line is not a URL (srt://, rtmp://, rtmps://, udp:// or tcp://)")
        }
        return url
    }

}
