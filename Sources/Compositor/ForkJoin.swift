import Dispatch
import Foundation

/// Work split over rows into parts: part 0 on the caller's thread, each other part on a
/// worker thread that sleeps between calls. Cold frames are bound by how many cache misses a
/// core keeps in flight, so a second core nearly halves a frame-sized pass, and a 4K frame
/// has rows enough for more.
public protocol ForkJoinJob: AnyObject {
    /// Does part `part` (0 the top) of `parts`.
    func run(part: Int, of parts: Int)
}

/// Runs `ForkJoinJob`s. A job is an object its owner keeps and refills every frame:
/// nothing is allocated per call (a closure capturing the frame's values was, once per call).
// Sendable: the job is set before `go` is signalled and read after; `done` orders the return (semaphores).
public final class ForkJoin: @unchecked Sendable {
    /// What a worker thread holds: never the ForkJoin itself, so it can be torn down while
    /// the workers sleep.
    // Sendable: as ForkJoin: `job` and `stopping` are written before `go` is signalled.
    private final class Worker: @unchecked Sendable {
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        var stopping = false
        /// The current call's job; set only while `run` waits for it.
        var job: ForkJoinJob?

        init(name: String, part: Int, of parts: Int) {
            let thread = Thread { [self] in
                while true {
                    go.wait()
                    if stopping { done.signal(); return }
                    job?.run(part: part, of: parts)
                    done.signal()
                }
            }
            thread.name = name
            thread.start()
        }
    }

    /// How many parts each job is split into: the caller's and one per worker.
    public let parts: Int
    private let workers: [Worker]

    public init(name: String, parts: Int = 2) {
        let parts = max(2, parts)
        self.parts = parts
        workers = (1..<parts).map { Worker(name: name, part: $0, of: parts) }
    }

    deinit {
        for worker in workers {
            worker.stopping = true
            worker.go.signal()
            worker.done.wait()
        }
    }

    /// Runs part 0 of `job` on this thread and the others on the workers; returns when all have.
    public func run(_ job: ForkJoinJob) {
        for worker in workers {
            worker.job = job
            worker.go.signal()
        }
        job.run(part: 0, of: parts)
        for worker in workers {
            worker.done.wait()
            worker.job = nil
        }
    }

    /// Part `part` of `count` rows split into `parts` as evenly as rows allow.
    public static func rows(_ part: Int, of count: Int, parts: Int = 2) -> Range<Int> {
        count * part / parts..<count * (part + 1) / parts
    }
}
