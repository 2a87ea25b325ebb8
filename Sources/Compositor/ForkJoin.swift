import Dispatch
import Foundation

/// Work split in two, over rows: one half on the caller's thread, the other on a worker
/// thread that sleeps between calls. Cold frames are bound by how many cache misses a core
/// keeps in flight, so a second core nearly halves a frame-sized pass.
public protocol ForkJoinJob: AnyObject {
    /// Does half 0 (the top) or 1 (the bottom) of the work.
    func run(half: Int)
}

/// Runs `ForkJoinJob`s. A job is an object its owner keeps and refills every frame:
/// nothing is allocated per call (a closure capturing the frame's values was, once per call).
// Sendable: the job is set before `go` is signalled and read after; `done` orders the return (semaphores).
public final class ForkJoin: @unchecked Sendable {
    /// What the worker thread holds: never the ForkJoin itself, so it can be torn down while
    /// the worker sleeps.
    // Sendable: as ForkJoin: `job` and `stopping` are written before `go` is signalled.
    private final class Worker: @unchecked Sendable {
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        var stopping = false
        /// The current call's job; set only while `run` waits for it.
        var job: ForkJoinJob?

        init(name: String) {
            let thread = Thread { [self] in
                while true {
                    go.wait()
                    if stopping { done.signal(); return }
                    job?.run(half: 1)
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

    /// Runs half 0 of `job` on this thread and half 1 on the worker; returns when both have.
    public func run(_ job: ForkJoinJob) {
        worker.job = job
        worker.go.signal()
        job.run(half: 0)
        worker.done.wait()
        worker.job = nil
    }

    /// Half `half` of `count` rows split in two.
    public static func rows(_ half: Int, of count: Int) -> Range<Int> { half == 0 ? 0..<count / 2 : count / 2..<count }
}
