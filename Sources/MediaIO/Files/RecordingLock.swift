import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock (flock) on a file while dualcam writes it or is about to replace it:
/// `record`, `compose`, `relayout` and `finish` refuse a file another one holds, rather than
/// replace it while everything written afterwards goes nowhere (`OutputClaim`). The kernel
/// drops the lock when its holder exits, however it exits, so a killed recording's file can be
/// finished at once.
public enum RecordingLock {
    /// Takes the lock on open file `fd`, without waiting; false when another holds it.
    public static func take(_ fd: Int32) -> Bool { (try? systemCall { flock(fd, LOCK_EX | LOCK_NB) }) != nil }

    /// Opens `path` and takes its lock for as long as the returned descriptor stays open;
    /// throws when another dualcam holds it. nil when there is no file there.
    /// `waiting`: how long a lock held by another is waited for (a recording killed a moment
    /// ago holds its lock until the kernel has ended it, longer on a loaded machine: finish
    /// right after `kill -9` was refused as "being recorded right now").
    public static func hold(_ path: String, waiting: Double = 0) throws(MediaError) -> Int32? {
        let fd: Int32
        do { fd = try systemCall { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) } } catch {
            if error.rawValue == ENOENT { return nil }
            throw .system(path: path, writing: false, errno: error)
        }
        let deadline = monotonicNow() + waiting
        while !take(fd) {
            guard monotonicNow() < deadline else {
                close(fd)
                throw .cannotWrite(path: path, reason: Self.heldReason)
            }
            usleep(50_000)
        }
        return fd
    }

    /// Whether another dualcam holds `path` now. A file that is there but cannot be opened to
    /// tell counts as held: it is never removed or replaced on a guess.
    public static func isHeld(_ path: String) -> Bool {
        do {
            if let fd = try hold(path) { close(fd) }
            return false
        } catch {
            return true
        }
    }

    public static let heldReason = "is being recorded right now by another dualcam, or written by one (compose, relayout, "
        + "finish): it is left to it"
}

/// Locks kept until the process exits, when the kernel drops them: a finished take stays held
/// through the end of the command (its summary, the windows closing), not only while it is
/// written, so no other dualcam replaces it while the one that made it still runs.
public enum HeldUntilExit {
    /// Keeps the lock taken through `fd`: a duplicate of it is left open (a flock belongs to
    /// the open file, so it lasts while any descriptor of it does).
    public static func keep(_ fd: Int32) { _ = fcntl(fd, F_DUPFD_CLOEXEC, 0) }
}
