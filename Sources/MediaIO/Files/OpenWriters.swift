import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The processes that have a file open for writing, found as `fuser` finds them (each
/// process's descriptors under /proc). `finish` must not rewrite a file another program is
/// still writing (OBS's fragmented mode, a download): everything written after that moment
/// would go to a file no longer named (an attacker's trial lost 4.5 s of 8). dualcam's own
/// recordings are found by their lock (`RecordingLock`); this finds any program's.
public enum OpenWriters {
    public struct Writer: Equatable, Sendable {
        public var pid: Int32
        /// The program's name as the kernel keeps it (`comm`, at most 15 bytes).
        public var name: String
    }

    /// Every other process that holds `path` open with write access. Processes whose
    /// descriptors this user may not read are not seen (as `fuser` run by them).
    public static func of(_ path: String) -> [Writer] {
        var target = stat()
        guard stat(path, &target) == 0 else { return [] }
        let me = getpid()
        guard let pids = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var writers: [Writer] = []
        for entry in pids {
            guard let pid = Int32(entry), pid != me else { continue }
            let fds = "/proc/\(pid)/fd"
            guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: fds) else { continue }
            for fd in descriptors {
                var st = stat()
                guard stat("\(fds)/\(fd)", &st) == 0, st.st_dev == target.st_dev, st.st_ino == target.st_ino,
                      writes(pid: pid, fd: fd) else { continue }
                writers.append(Writer(pid: pid, name: name(of: pid)))
                break
            }
        }
        return writers
    }

    /// Whether descriptor `fd` of `pid` was opened for writing: its flags (octal, in fdinfo)
    /// hold O_WRONLY or O_RDWR.
    static func writes(pid: Int32, fd: String) -> Bool {
        guard let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
              let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
              let flags = Int32(line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
        else { return false }
        return flags & O_ACCMODE != O_RDONLY
    }

    static func name(of pid: Int32) -> String {
        let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
        let trimmed = comm.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "a process" : trimmed
    }

    /// "NAME (pid N)", and how many more.
    public static func describe(_ writers: [Writer]) -> String {
        guard let first = writers.first else { return "" }
        return "\(first.name) (pid \(first.pid))" + (writers.count > 1 ? " and \(writers.count - 1) more" : "")
    }
}
