import CLinuxCalls
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How fast a folder's disk takes what a recording writes (`dualcam doctor`).
public enum DiskSpeed {
    /// 64 MiB written in 4 MiB pieces and put on disk, to a file with no name (gone with
    /// its descriptor): MB per second, or why it could not be written.
    public static func measure(_ folder: String) -> (mbPerSecond: Double?, error: String?) {
        let fd = dc_open_unnamed(folder, 0o600)
        guard fd >= 0 else { return (nil, "cannot write there (\(Errno.current))") }
        defer { close(fd) }
        let piece = [UInt8](repeating: 0x5a, count: 4 << 20)
        let start = monotonicNow()
        for _ in 0..<16 {
            let wrote = piece.withUnsafeBytes { b in (try? systemCall { write(fd, b.baseAddress!, b.count) }) ?? -1 }
            guard wrote == piece.count else { return (nil, "cannot write there (\(Errno.current))") }
        }
        guard fsync(fd) == 0 else { return (nil, "cannot put it on disk (\(Errno.current))") }
        return (Double(16 * piece.count) / 1e6 / max(monotonicNow() - start, 1e-6), nil)
    }
}
