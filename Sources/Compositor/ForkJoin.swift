import Dispatch
import Foundation

/// Work split in two: one half on the caller's thread, the other on a worker thread that
/// sleeps between calls. Cold frames are bound by how many cache misses a core keeps in
/// flight, so a second core nearly halves a frame-sized pass. Nothing is allocated per call.
public final class ForkJoin: @unchecked Sendable {
    /// What the worker thread holds: never the ForkJoin itself, so it can be torn down while
    /// the worker sleeps.
    private final class Worker: @unchecked Sendable {
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        var stopping = false
        /// The current call's body; set only while `run` waits for it.
        var body: ((Int) -> Void)?

        init(name: String) {
            let thread = Thread { [self] in
                while true {
                    go.wait()
                    if stopping { done.signal(); return }
                    body?(1)
                    done.signal()
                }
            }
            thread.name = name
            thread.start()
        }
    }

    private let worker: Worker

    public init(name: String) { worker = Worker(name: name) }

    deinit {
        worker.stopping = true
        worker.go.signal()
        worker.done.wait()
    }

    /// Calls `body(0)` on this thread and `body(1)` on the worker; returns when both have.
    public func run(_ body: (Int) -> Void) {
        withoutActuallyEscaping(body) { body in
            worker.body = body
            worker.go.signal()
            body(0)
            worker.done.wait()
            worker.body = nil
        }
    }
}
