import Foundation
import Synchronization

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
        guard let info = pactl(["info"]) else { return nil }
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

    /// pactl's output, or nil when it is not installed, no server answers, or it takes
    /// more than two seconds.
    private static func pactl(_ arguments: [String]) -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/pactl" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let path else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { return nil }
        // A server that hangs must not hang `devices`: pactl is killed after two seconds.
        let pid = p.processIdentifier
        let finished = Mutex(false)
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
            finished.withLock { done in if !done { kill(pid, SIGKILL) } }
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        finished.withLock { $0 = true }
        return p.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }
}
