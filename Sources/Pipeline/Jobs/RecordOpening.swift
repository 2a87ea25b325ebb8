import Compositor
import Foundation
import MediaIO

/// Opening a recording's sources and its sound.
extension Recorder {
    func makeSource(_ spec: String, controls: [ControlSetting]) -> any FrameSource {
        var st = stat()
        // A named pipe is a stream another program writes (ffmpeg, a network receiver): a file.
        if stat(spec, &st) == 0 && [S_IFREG, S_IFIFO].contains(st.st_mode & S_IFMT) {
            return FileSource(path: spec, log: { [self] in log($0) })
        }
        let request = FormatNegotiation.Request(size: plan.capture, framesPerSecond: plan.framesPerSecond,
                                                sizeGiven: plan.captureGiven)
        return CameraSource(path: spec, request: request, only: plan.pixelFormat, controls: controls,
                            store: plan.controlStore, log: { [self] in log($0) })
    }

    /// The sources asked for, or the first capture devices; those that cannot be opened are
    /// reported and left out. One named and wrong fails the recording.
    func openSources() throws(RecordError) -> [any FrameSource] {
        var specs: [String] = []
        if plan.back == nil || plan.front == nil {
            let found = V4L2Device.list().map(\.path).filter { $0 != plan.back && $0 != plan.front }
            // The back camera first: the first found when none is named.
            specs = [plan.back ?? found.first, plan.front ?? found.dropFirst(plan.back == nil ? 1 : 0).first]
                .compactMap { $0 }
        } else {
            specs = [plan.back!, plan.front!]
        }
        var sources: [any FrameSource] = []
        for (role, spec) in specs.enumerated() {
            let s = makeSource(spec, controls: role == 0 && (plan.back != nil || spec != plan.front)
                               ? plan.backControls : plan.frontControls)
            do {
                try s.open()
                sources.append(s)
            } catch {
                // Single-camera mode is for a second camera that is not there, not for a name
                // that is mistyped or taken.
                if spec == plan.back || spec == plan.front {
                    throw .noCamera("--\(spec == plan.back ? "back" : "front") \(spec): \(error)")
                }
                event("cannot use \(spec): \(error)")
            }
        }
        guard !sources.isEmpty else {
            throw .noCamera(specs.isEmpty ? Self.noCameraFound(lockedOut: V4L2Device.nodesWithoutPermission())
                            : "no usable camera: " + eventsSoFar.joined(separator: "; "))
        }
        if sources.count == 1 { event("single-camera mode: recording \(sources[0].name) alone") }
        for s in sources { describe(s) }
        return sources
    }

    /// The format a source delivers, and why it was chosen when that is worth a warning.
    private func describe(_ s: any FrameSource) {
        let note = (s as? CameraSource)?.choiceNote
        if let note, note.isWarning {
            log("\(s.name): \(s.format)")
            event(note.text)
        } else {
            log("\(s.name): \(s.format)" + (note.map { " (\($0.text))" } ?? ""))
        }
    }

    /// Why no camera was found, and what to do about it.
    static func noCameraFound(lockedOut: [String]) -> String {
        if lockedOut.isEmpty {
            return "no camera found (no V4L2 capture device): plug one in, or give --back FILE to record a file as a camera"
        }
        return "no camera found: \(lockedOut.joined(separator: ", ")) cannot be opened by this user: is the user in the "
            + "'video' group? (`sudo usermod -aG video $USER`, then log in again)"
    }

    func openAudio(sources: [any FrameSource]) throws(RecordError) -> (any SoundSource)? {
        let live: LiveAudio
        switch plan.audio {
        case .none: return nil
        case let .fileSound(back):
            return try openFileSound(back: back, sources: sources)
        case let .device(device):
            do { live = try LiveAudio(device: device) } catch { throw .media(error) }
        case .systemDefault:
            guard let found = openDefaultAudio(sources: sources) else { return nil }
            live = found
        }
        let f = live.capture.deviceFormat
        log("\(live.capture.device): \(f)" + (live.capture.converts ? ", converted to 48 kHz \(live.capture.channels == 1 ? "mono" : "stereo")" : "")
            + (live.capture.hasCard ? "" : " (no sound card behind it: a sound server)"))
        return live
    }

    private func openFileSound(back: Bool, sources: [any FrameSource]) throws(RecordError) -> FileSound {
        let spec = back ? plan.back : plan.front
        guard let file = sources.lazy.compactMap({ $0 as? FileSource }).first(where: { $0.path == spec }) else {
            throw .media(.cannotOpen(path: spec ?? (back ? "--back" : "--front"),
                                     reason: "--audio \(back ? "back" : "front") records the sound of a file given as "
                                     + "--\(back ? "back" : "front"), and it did not open"))
        }
        let sound: FileSound
        do { sound = try FileSound(source: file) } catch { throw .media(error) }
        log("sound: \(sound.kind), in sync with its picture")
        return sound
    }

    /// ALSA's `default`, else the first capture device that opens; nil (having said so in
    /// one line) when there is none: the recording goes on with a silent track.
    private func openDefaultAudio(sources: [any FrameSource]) -> LiveAudio? {
        let why: String
        do { return try LiveAudio(device: "default") } catch {
            if case let .cannotOpen(_, reason) = error { why = reason } else { why = error.description }
        }
        var tried: [String] = []
        for d in ALSADevices.list() where !d.busy {
            if let live = try? LiveAudio(device: d.device) {
                event("microphone: ALSA's default device cannot be opened (\(why)): recording \(d.device) (\(d.card))")
                return live
            }
            tried.append(d.device)
        }
        let others = tried.isEmpty ? "no other capture device" : "nor can \(tried.joined(separator: ", "))"
        // With files as cameras the sound people want is most often the file's own.
        let files = sources.compactMap { $0 as? FileSource }
        let fileSound = files.first { $0.path == plan.back }.map { "--audio back records \(($0.path as NSString).lastPathComponent)'s sound; " }
            ?? files.first { $0.path == plan.front }.map { "--audio front records \(($0.path as NSString).lastPathComponent)'s sound; " }
            ?? ""
        event("no microphone: ALSA's default device cannot be opened (\(why)) and \(others): recording a silent track ("
              + fileSound + "--audio DEVICE picks a microphone, `dualcam devices` lists them; --audio none is silent without this line)")
        return nil
    }
}
