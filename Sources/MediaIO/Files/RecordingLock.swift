import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock (flock) on a recording's file while it is being written: `finish` and
/// another `record --overwrite` refuse a file a live recording holds, rather than replace
/// it while everything recorded afterwards goes nowhere. The kernel drops the lock when its
/// holder exits, however it exits, so a killed recording's file can be finished at once.
public enum RecordingLock {
    /// Takes the lock on open file `fd`, without waiting; false when another holds it.
    public static func take(_ fd: Int32) -> Bool { (try? systemCall { flock(fd, LOCK_EX | LOCK_NB) }) != nil }

    /// Opens `path` and takes its lock for as long as the returned descriptor stays open;
    /// throws when a recording holds it. A file that cannot be opened holds no lock: nil.
    public static func hold(_ path: String) throws(MediaError) -> Int32? {
        guard let fd = try? systemCall({ open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }) else { return nil }
        guard take(fd) else {
            close(fd)
            throw .cannotWrite(path: path, reason: Self.heldReason)
        }
        return fd
    }

    /// Whether a recording holds `path` now.
    public static func isHeld(_ path: String) -> Bool {
        do {
            if let fd = try hold(path) { close(fd) }
            return false
        } catch {
            return true
        }
    }

    public static let heldReason = "is being recorded right now by another dualcam (it finishes the file itself when it stops)"
}
