import Foundation

/// The desktop's sound server (PipeWire or PulseAudio), when one answers: ALSA's `default`
/// device is then the server's default source, shared with every other program. Asked
/// through `pactl` (pulseaudio-utils; PipeWire answers it through pipewire-pulse).
struct SoundServer: Encodable {
    var name: String
    var defaultSource: String?
    var sources: [String]

    /// How `--audio` reaches one of its sources through ALSA.
    var howToPick: String {
        name.contains("PipeWire") ? "--audio pipewire:NODE=SOURCE records one of them"
            : "PULSE_SOURCE=SOURCE dualcam record --audio pulse records one of them"
    }

    static func find() -> SoundServer? {
        guard serverSocketExists(), let info = pactl(["info"]) else { return nil }
        func field(_ key: String) -> String? {
            info.split(separator: "\n").first { $0.hasPrefix(key + ": ") }.map { String($0.dropFirst(key.count + 2)) }
        }
        guard let name = field("Server Name") else { return nil }
        // "45\tspk.monitor\tPipeWire\tfloat32le 2ch 48000Hz\tSUSPENDED"
        let sources = (pactl(["list", "short", "sources"]) ?? "").split(separator: "\n").compactMap { line -> String? in
            let columns = line.split(separator: "\t")
            return columns.count > 1 ? String(columns[1]) : nil
        }
        return SoundServer(name: name, defaultSource: field("Default Source"), sources: sources)
    }

    /// Whether a PulseAudio-protocol server (pipewire-pulse or PulseAudio) can be there:
    /// without one, pactl is not even started (it might try to spawn a server of its own).
    static func serverSocketExists(environment env: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        if let server = env["PULSE_SERVER"], !server.isEmpty { return true }
        let runtime = env["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user/\(getuid())"
        return FileManager.default.fileExists(atPath: runtime + "/pulse/native")
    }

    /// pactl's output, or nil when it is not installed, fails, or takes more than two
    /// seconds (then it is killed). Its output goes to a file, not a pipe: a process it
    /// leaves behind cannot hold `devices` up.
    private static func pactl(_ arguments: [String]) -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/pactl" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else { return nil }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dualcam-pactl-\(getpid())-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let out = try? FileHandle(forWritingTo: file) else {
            return nil
        }
        defer {
            try? out.close()
            try? FileManager.default.removeItem(at: file)
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { return nil }
        let deadline = Date().addingTimeInterval(2)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        guard p.terminationStatus == 0, let data = FileManager.default.contents(atPath: file.path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
