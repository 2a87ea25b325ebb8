import CLinuxCalls
import Foundation

/// A thread its owner starts with a body and joins, with a time limit when it must not wait
/// for ever (a body stuck in a driver call). The body keeps what it captures alive, so a
/// join that gives up frees nothing under it.
// Sendable: `joined` is its owner's alone; the thread and its owner meet through the `ended` semaphore.
public final class OwnedThread: @unchecked Sendable {
    private let ended = DispatchSemaphore(value: 0)
    /// Touched by the owner's thread only.
    private var joined = false

    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let ended = self.ended
        let thread = Thread {
            // Named for the kernel too (Foundation keeps the name to itself here): top -H,
            // /proc and a debugger show what each thread is. Threads it starts inherit it.
            dc_name_thread(name)
            body()
            ended.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits until the body has returned, at most `timeout` seconds (nil: as long as it
    /// takes). False when it has not returned by then.
    @discardableResult
    public func join(timeout: Double? = nil) -> Bool {
        if joined { return true }
        if let timeout {
            guard ended.wait(timeout: .now() + timeout) == .success else { return false }
        } else {
            ended.wait()
        }
        joined = true
        return true
    }
}
