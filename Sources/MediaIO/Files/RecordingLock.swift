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
    /// `waitingForTheDying`: how long a lock is waited for while every process holding it is
    /// dying (killed, exiting): a recording killed a moment ago holds its lock until the kernel
    /// has ended it, longer on a loaded machine (finish right after `kill -9` was refused as
    /// "being recorded right now"). A live holder is refused at once.
    /// `saying` is told once, when it has waited a second, which process it waits for.
    public static func hold(_ path: String, waitingForTheDying waiting: Double = 0,
                            saying: ((Int32) -> Void)? = nil) throws(MediaError) -> Int32? {
        let fd: Int32
        do { fd = try systemCall { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) } } catch {
            if error.rawValue == ENOENT { return nil }
            throw .system(path: path, writing: false, errno: error)
        }
        let start = monotonicNow()
        var said = false
        var noneListedSince: Double?
        while !take(fd) {
            var st = stat()
            let holders = fstat(fd, &st) == 0 ? Self.holders(inode: UInt64(st.st_ino)) : []
            // None listed: let go between the try and the listing (a holder dying then was
            // refused, beside busy loops), so tried again a moment; or held where this process
            // cannot see (another PID namespace), so not for long.
            if holders.isEmpty { noneListedSince = noneListedSince ?? monotonicNow() } else { noneListedSince = nil }
            let unseen = noneListedSince.map { monotonicNow() - $0 > 0.5 } ?? false
            guard monotonicNow() < start + waiting, !unseen, holders.allSatisfy(Self.isDying) else {
                close(fd)
                throw .cannotWrite(path: path, reason: Self.heldReason)
            }
            if !said, monotonicNow() > start + 1, let saying {
                said = true
                saying(holders[0])
            }
            usleep(50_000)
        }
        return fd
    }

    /// The processes holding a flock on the file with inode `inode`, from /proc/locks
    /// ("1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF"; waiters, marked "->", left out).
    static func holders(inode: UInt64) -> [Int32] {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", !line.contains("->"),
                  fields[5].split(separator: ":").last.flatMap({ UInt64($0) }) == inode else { return nil }
            return Int32(fields[4])
        }
    }

    /// Killed or exiting: SIGKILL pending (for it or its group), the kernel's PF_EXITING flag,
    /// a zombie, or gone.
    static func isDying(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        let pending = status.split(separator: "\n").filter { $0.hasPrefix("SigPnd:") || $0.hasPrefix("ShdPnd:") }
            .compactMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        // The fields after the command's closing parenthesis: state, ppid, ..., flags (the 7th).
        let after = stat.lastIndex(of: ")").map { stat[stat.index(after: $0)...].split(separator: " ") } ?? []
        let state = after.first ?? "", flags = after.count > 6 ? UInt64(after[6]) ?? 0 : 0
        return pending.contains { $0 & (1 << (UInt64(SIGKILL) - 1)) != 0 } || flags & 0x4 != 0 || state == "Z" || state == "X"
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
