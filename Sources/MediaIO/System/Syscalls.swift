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
