import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a system call again while it fails with EINTR (a signal arrived: Ctrl-C, SIGUSR1).
@inline(__always)
public func retryingEINTR<T: BinaryInteger>(_ call: () -> T) -> T {
    while true {
        let rc = call()
        if rc >= 0 || errno != EINTR { return rc }
    }
}
