import Foundation

/// A value behind a lock, used as the standard library's `Mutex` is (`withLock`), but over a
/// pthread mutex (NSLock). On Linux `Mutex` hands a contended lock over inside the kernel
/// (priority-inheritance futexes), where ThreadSanitizer cannot see the handover: two
/// threads taking turns at the frame exchange were reported as a data race, and the
/// sanitizer stage of CI failed on it now and then. This one it sees.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
