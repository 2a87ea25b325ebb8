import CLinuxCalls
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An errno value, kept as it is: a caller tells a full disk (ENOSPC) from a missing folder
/// (ENOENT) by value, and the text is made only when it is shown.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }
    /// The calling thread's errno now.
    public static var current: Errno { Errno(errno) }
    public var description: String { String(cString: strerror(rawValue)) }
}

/// The one place a system call is retried on EINTR (a signal arrived: Ctrl-C, SIGUSR1):
/// its result, or the errno it failed with, thrown.
@inline(__always)
public func systemCall<T: BinaryInteger>(_ call: () -> T) throws(Errno) -> T {
    while true {
        let rc = call()
        if rc >= 0 { return rc }
        let e = errno
        if e != EINTR { throw Errno(e) }
    }
}

/// Writes all of `bytes` to `fd` (stdout, stderr), retried on EINTR; an error ends it quietly.
/// A closed or broken stdout (`| true`, `>&-`, a hung-up terminal) must not stop a job or
/// crash it, as Foundation's `FileHandle.write(_:)` does (its `try!`).
public func writeAll(_ bytes: [UInt8], to fd: Int32) {
    bytes.withUnsafeBytes { b in
        var done = 0
        while done < b.count {
            guard let n = try? systemCall({ write(fd, b.baseAddress! + done, b.count - done) }), n > 0 else { return }
            done += n
        }
    }
}

/// `text` to standard error, as `writeAll` writes.
public func writeToStandardError(_ text: String) { writeAll(Array(text.utf8), to: 2) }

/// Has this process stopped, as by Ctrl-C (SIGINT), when `parent` ends, however it ends (a
/// SIGKILL, the OOM killer): a batch's compositions must not outlive it and hold their
/// outputs from the next run. False when `parent` had already gone.
public func stopWithParent(_ parent: pid_t) -> Bool { dc_stop_with_parent(parent, SIGINT) == 0 }
