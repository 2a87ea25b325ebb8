import CLinuxCalls
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How fast a folder's disk takes what a recording writes (`dualcam doctor`).
public enum DiskSpeed {
    /// 64 MiB written in 4 MiB pieces and put on disk, to a file with no name (gone with
    /// its descriptor; a named one, removed at once, where the file system has no unnamed
    /// files: FAT, NFS): MB per second, or why it could not be written (a full disk says so).
    public static func measure(_ folder: String) -> (mbPerSecond: Double?, error: String?) {
        var fd = dc_open_unnamed(folder, 0o600)
        if fd < 0 && [EOPNOTSUPP, EISDIR, EINVAL].contains(errno) {
            var template = Array((folder + "/.dualcam-disk-XXXXXX").utf8CString)
            fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            if fd >= 0 { template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) } }
        }
        guard fd >= 0 else { return (nil, "cannot write there (\(Errno.current))") }
        defer { close(fd) }
        let piece = [UInt8](repeating: 0x5a, count: 4 << 20)
        let start = monotonicNow()
        for _ in 0..<16 {
            var done = 0
            while done < piece.count {
                let wrote = piece.withUnsafeBytes { b in
                    Result { () throws(Errno) -> Int in try systemCall { write(fd, b.baseAddress! + done, b.count - done) } }
                }
                switch wrote {
                case let .success(n) where n > 0: done += n
                case .success: return (nil, "cannot write there (\(Errno(ENOSPC)))")
                case let .failure(error): return (nil, "cannot write there (\(error))")
                }
            }
        }
        guard fsync(fd) == 0 else { return (nil, "cannot put it on disk (\(Errno.current))") }
        return (Double(16 * piece.count) / 1e6 / max(monotonicNow() - start, 1e-6), nil)
    }
}
