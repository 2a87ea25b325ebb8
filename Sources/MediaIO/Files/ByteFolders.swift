import CLinuxCalls
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Arguments whose folders are named in bytes that are not UTF-8 (a Latin-1 "café"). Swift's
/// strings cannot hold such a name: `CommandLine.arguments` has already turned its bytes into
/// U+FFFD, and every file call made from a String writes UTF-8. So the folder is opened here
/// from the argument's own bytes, and the argument goes on as a name through that open folder,
/// `/proc/PID/fd/N/take.mov`: the kernel resolves it to the same file for every call, ours,
/// FFmpeg's and a child process's, and renames and locks beside the take stay in its folder.
/// The file's own name must be UTF-8 (a take's companions are named by adding to it); one that
/// is not is refused, naming it. Everything dualcam shows passes through `shown`, which puts
/// the folder back as given, its odd bytes as \xNN.
public enum ByteFolders {
    /// The folders opened, as reached ("/proc/PID/fd/N") and as shown.
    private static let opened = Locked<[(reached: String, shown: String)]>([])

    /// `argv` (without the program's name) as strings, each argument that is not UTF-8
    /// reaching its file through its opened folder; an argument that cannot is the error.
    public static func arguments(_ argv: [[UInt8]]) -> Result<[String], ByteNameRefusal> {
        var out: [String] = []
        for (i, bytes) in argv.enumerated() {
            if let text = String(validating: bytes, as: UTF8.self) {
                out.append(text)
                continue
            }
            // `--output=NAME`: the option's name stays, the rest is the name; so does the @ of
            // `--stream @FILE`.
            var prefix = "", name = bytes[...]
            if bytes.first == UInt8(ascii: "-"), let equals = bytes.firstIndex(of: UInt8(ascii: "=")),
               let option = String(validating: bytes[..<equals], as: UTF8.self) {
                prefix = option + "="
                name = bytes[(equals + 1)...]
            }
            if name.first == UInt8(ascii: "@") {
                prefix += "@"
                name = name.dropFirst()
            }
            switch reach(Array(name)) {
            case let .success(reached): out.append(prefix + reached)
            case let .failure(why): return .failure(ByteNameRefusal(argument: i + 1, shown: escaped(bytes), why: why))
            }
        }
        return .success(out)
    }

    /// `name` through its opened folder, or why it cannot be.
    static func reach(_ name: [UInt8]) -> Result<String, ByteNameRefusal.Why> {
        // A folder itself (`doctor --folder caf\xe9`) is reached as it is.
        if case let .success(reached) = open(folder: name) { return .success(reached) }
        guard let slash = name.lastIndex(of: UInt8(ascii: "/")),
              let file = String(validating: name[(slash + 1)...], as: UTF8.self) else { return .failure(.fileName) }
        let folder = slash == name.startIndex ? [UInt8(ascii: "/")] : Array(name[..<slash])
        return open(folder: folder).map { $0 + "/" + file }
    }

    /// "/proc/PID/fd/N" for `folder`, opened.
    private static func open(folder: [UInt8]) -> Result<String, ByteNameRefusal.Why> {
        let fd = (folder + [0]).withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { dc_open_folder_place($0) }
        }
        guard fd >= 0 else { return .failure(.folder(escaped(folder), String(cString: strerror(errno)))) }
        let reached = "/proc/\(getpid())/fd/\(fd)"
        opened.withLock { $0.append((reached, escaped(folder))) }
        return .success(reached)
    }

    /// `text` with every opened folder's reached name put back as the user gave it, through
    /// `quoting` (inside a JSON string: its backslashes and control characters escaped).
    public static func shown(_ text: String, quoting: (String) -> String = { $0 }) -> String {
        guard text.contains("/proc/") else { return text }
        var out = text
        // The longest first: /proc/1/fd/10 before /proc/1/fd/1.
        for folder in opened.withLock({ $0 }).sorted(by: { $0.reached.count > $1.reached.count }) where out.contains(folder.reached) {
            out = replacing(folder.reached, with: quoting(folder.shown), in: out)
        }
        return out
    }

    /// `text` as it goes inside a JSON string.
    public static func jsonQuoted(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case _ where c.value < 0x20 || c.value == 0x7F: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// Each `reached` not followed by a digit (it is not the start of a longer number).
    private static func replacing(_ reached: String, with shown: String, in text: String) -> String {
        var out = "", rest = text[...]
        while let found = rest.range(of: reached) {
            let next = rest[found.upperBound...].first
            out += rest[..<found.lowerBound]
            out += next?.isNumber == true ? String(rest[found]) : shown
            rest = rest[found.upperBound...]
        }
        return out + rest
    }

    /// The bytes as text, each byte that is not part of a UTF-8 character as \xNN.
    public static func escaped(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        var out = "", i = 0
        while i < bytes.count {
            let length = (1...4).first { n in i + n <= bytes.count && String(validating: bytes[i..<(i + n)], as: UTF8.self) != nil }
            if let length {
                out += String(decoding: bytes[i..<(i + length)], as: UTF8.self)
                i += length
            } else {
                out += String(format: "\\x%02X", bytes[i])
                i += 1
            }
        }
        return out
    }
}

/// An argument that is not UTF-8 and cannot be reached through its folder.
public struct ByteNameRefusal: Error, CustomStringConvertible {
    public enum Why: Error {
        /// The file's own name is not UTF-8.
        case fileName
        /// Its folder (shown) cannot be opened, and why.
        case folder(String, String)
    }
    public let argument: Int
    public let shown: String
    public let why: Why

    public var description: String {
        switch why {
        case .fileName:
            return "argument \(argument) (\(shown)) names a file whose own name is not UTF-8: dualcam takes folders in any bytes but "
                + "file names in UTF-8 (a take's companions are named after it); rename it (convmv -f latin1 -t utf8) or link it "
                + "under a UTF-8 name"
        case let .folder(folder, reason):
            return "argument \(argument) (\(shown)): its folder \(folder) cannot be opened: \(reason)"
        }
    }
}
