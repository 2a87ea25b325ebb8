import Foundation
@testable import Compositor
import Testing

@Suite(.timeLimit(.minutes(10))) struct ForkJoinTests {
    /// The halves run at the same time: each writes only its own counters (one array for
    /// both was a data race, which ThreadSanitizer reported).
    final class Counting: ForkJoinJob {
        let caller = pthread_self()
        var topRuns = 0, bottomRuns = 0, bottomOnTheWorker = 0
        func run(part half: Int, of parts: Int) {
            if half == 0 { topRuns += 1; return }
            bottomRuns += 1
            if pthread_equal(pthread_self(), caller) == 0 { bottomOnTheWorker += 1 }
        }
    }

    /// Each call runs both halves, the second on another thread, and returns after both.
    @Test func bothHalvesRunAndFinishBeforeTheCallReturns() {
        let fork = ForkJoin(name: "dualcam-test")
        let job = Counting()
        for i in 1...1000 {
            fork.run(job)
            // Both halves are done when `run` returns.
            if job.topRuns != i || job.bottomRuns != i { break }
        }
        #expect(job.topRuns == 1000 && job.bottomRuns == 1000)
        #expect(job.bottomOnTheWorker == 1000)
        #expect(ForkJoin.rows(0, of: 135) == 0..<67 && ForkJoin.rows(1, of: 135) == 67..<135)
    }
}

extension ForkJoinTests {
    /// Each part on its own thread, every part once per call, done when the call returns; the
    /// parts' rows cover a count once, in order, whatever it is. Each part writes its own
    /// cells of memory allocated once: an array written by all of them is one variable, which
    /// ThreadSanitizer reports as a race.
    final class Parts: ForkJoinJob {
        let runs: UnsafeMutableBufferPointer<Int>, threads: UnsafeMutableBufferPointer<pthread_t>
        init(_ parts: Int) {
            runs = .allocate(capacity: parts)
            runs.initialize(repeating: 0)
            threads = .allocate(capacity: parts)
            threads.initialize(repeating: 0)
        }
        deinit {
            runs.deallocate()
            threads.deallocate()
        }
        func run(part: Int, of parts: Int) {
            runs[part] += 1
            threads[part] = pthread_self()
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: [3, 4, 8])
    func everyPartRunsOnItsOwnThread(parts: Int) {
        let fork = ForkJoin(name: "dualcam-test", parts: parts)
        let job = Parts(parts)
        for i in 1...500 {
            fork.run(job)
            if job.runs.contains(where: { $0 != i }) { break }
        }
        #expect(Array(job.runs) == Array(repeating: 500, count: parts))
        let distinct = Set(job.threads)  // pthread_t: an unsigned long on Linux
        #expect(distinct.count == parts)
        for count in [0, 1, 7, 135, 2160] {
            let rows = (0..<parts).map { ForkJoin.rows($0, of: count, parts: parts) }
            #expect(rows.first?.lowerBound == 0 && rows.last?.upperBound == count)
            #expect(zip(rows, rows.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        }
    }
}
