import Foundation
import MediaIO

/// What the shell completion scripts ask this program for as a user presses Tab (the
/// argument parser's `---completion` calls): cameras, files, controls, microphones. Nothing
/// here may hang or print: it runs on every Tab.
///
/// bash hands what is returned to `compgen -W`, which expands each word as the shell would
/// ($(...), backquotes, variables) and then puts it on the command line unquoted: a file
/// named `a$(rm -rf ~).mp4` would run at Tab and again at Enter. So only words made of
/// characters no shell treats specially are ever offered (`safe`); other names are typed.
enum Completions {
    /// Whether `word` can be offered: letters, digits and . _ - + , @ % / : = (not first "-").
    static func isSafe(_ word: String) -> Bool {
        !word.isEmpty && !word.hasPrefix("-") && word.unicodeScalars.allSatisfy { c in
            (c.properties.isAlphabetic || c.properties.numericType != nil) && c.value > 0x7F
                || (c.value < 0x80 && (CharacterSet.alphanumerics.contains(c) || "._-+,@%/:=".unicodeScalars.contains(c)))
        }
    }

    static func safe(_ words: [String]) -> [String] { words.filter(isSafe) }

    /// The V4L2 device nodes there are, and (unless `filesToo` is false) the files and
    /// folders that start with `prefix`: --back and --front take either.
    static func camerasAndFiles(_ prefix: String, filesToo: Bool = true) -> [String] {
        let cameras = V4L2Device.nodePaths()
        guard filesToo else { return cameras }
        return cameras + safe(files(prefix))
    }

    /// Entries of `prefix`'s folder that start with its last part; folders end in "/".
    static func files(_ prefix: String) -> [String] {
        let slash = prefix.lastIndex(of: "/")
        let folder = slash.map { String(prefix[...$0]) } ?? ""
        let start = slash.map { String(prefix[prefix.index(after: $0)...]) } ?? prefix
        let listed = (try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? []
        return listed.filter { $0.hasPrefix(start) && (start.hasPrefix(".") || !$0.hasPrefix(".")) }.sorted().map { name in
            var isFolder: ObjCBool = false
            let path = folder + name
            return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue ? path + "/" : path
        }
    }

    /// `--control`'s values: back: and front:, then the controls of the camera that role
    /// takes on this command line (or the first and second camera), as ROLE:NAME=.
    static func controls(_ prefix: String, arguments: [String]) -> [String] {
        guard let colon = prefix.firstIndex(of: ":") else { return ["back:", "front:"] }
        let role = String(prefix[..<colon])
        guard role == "back" || role == "front" else { return [] }
        let device: String
        if let i = arguments.lastIndex(of: "--\(role)"), i + 1 < arguments.count {
            device = arguments[i + 1]
        } else {
            let cameras = camerasAndFiles("", filesToo: false)
            let index = role == "back" ? 0 : 1
            guard index < cameras.count else { return [] }
            device = cameras[index]
        }
        return safe(controlNames(device).map { "\(role):\($0)=" })
    }

    /// The controls a camera has (none for a file or a device that cannot be opened). Only a
    /// V4L2 node is opened: opening a serial port resets the board behind it, a watchdog arms.
    static func controlNames(_ device: String) -> [String] {
        guard isVideoNode(device), let camera = try? V4L2Device(path: device) else { return [] }
        return camera.controls().filter { !$0.readOnly && $0.type != "button" }.map(\.name)
    }

    /// What `dualcam bench` takes, asked of the harness itself: its case names after
    /// --cases, else its options.
    static func bench(_ arguments: [String], index: Int, prefix: String) -> [String] {
        let previous = index > 0 && index - 1 < arguments.count ? arguments[index - 1] : ""
        if previous == "--cases" {
            let listed = harnessOutput(["--list-cases"]).split(separator: "\n").dropFirst()
            let names = listed.compactMap { $0.split(separator: " ").first.map(String.init) }
            // A list in progress: complete its last name.
            let done = prefix.contains(",") ? String(prefix[...prefix.lastIndex(of: ",")!]) : ""
            return safe(names.map { done + $0 })
        }
        guard let data = harnessOutput(["--experimental-dump-help"]).data(using: .utf8),
              let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let command = root["command"] as? [String: Any], let options = command["arguments"] as? [[String: Any]]
        else { return [] }
        let shown = options.filter { $0["shouldDisplay"] as? Bool ?? true }
        func name(_ option: [String: Any]) -> String? { ((option["preferredName"] as? [String: Any])?["name"] as? String).map { "--" + $0 } }
        // After an option that takes a value: its values, a file for a FILE, else nothing to offer.
        if let option = shown.first(where: { name($0) == previous }), option["kind"] as? String == "option" {
            if let values = option["allValues"] as? [String] { return safe(values) }
            return option["valueName"] as? String == "FILE" ? safe(files(prefix)) : []
        }
        var names: [String] = []
        for option in shown { if let n = name(option), !names.contains(n) { names.append(n) } }
        return names.filter { $0.hasPrefix("--") && isSafe(String($0.dropFirst(2))) }
    }

    /// What the benchmark harness beside this program prints for `arguments` ("" if it cannot
    /// run), at most a megabyte within two seconds: a Tab must not wait on a harness that hangs.
    private static func harnessOutput(_ arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BenchCommand.harness)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        let reader = pipe.fileHandleForReading
        var data = Data()
        let deadline = Date(timeIntervalSinceNow: 2)
        var descriptor = pollfd(fd: reader.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while data.count < 1 << 20, case let left = deadline.timeIntervalSinceNow, left > 0,
              poll(&descriptor, 1, Int32(left * 1000)) > 0 {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// /dev/videoN itself (no link elsewhere, no `..`), a character device of video4linux's
    /// major number.
    static func isVideoNode(_ path: String) -> Bool {
        guard let real = realpath(path, nil) else { return false }
        defer { free(real) }
        let resolved = String(cString: real)
        var st = stat()
        guard resolved.hasPrefix("/dev/video"), Int(resolved.dropFirst(10)) != nil, stat(resolved, &st) == 0 else { return false }
        // glibc's major(): the device number's bits 8-19 and 32-43.
        let device = UInt64(st.st_rdev)
        let major = (device >> 8) & 0xfff | (device >> 32) & ~UInt64(0xfff)
        return (st.st_mode & S_IFMT) == S_IFCHR && major == 81
    }

    /// `--audio`'s values: the ALSA capture devices, default, none, back and front.
    static func microphones() -> [String] {
        ["default", "none", "back", "front"] + safe(ALSADevices.list().map(\.device))
    }
}
